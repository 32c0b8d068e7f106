/**
 * A QR code as inline SVG markup, made on the server (`qrcode`, docs/decisions.md "Two-factor: QR
 * code and recovery codes"): no image request, no script, nothing the page's CSP refuses — the
 * markup is paths with fill and stroke attributes only. `label` names it for screen readers.
 * Medium error correction and the standard four-module quiet zone, so phone cameras read it off a
 * screen.
 */
export async function qrCodeSvg(text: string, label: string): Promise<string> {
  // Loaded at first use: only the two-factor set-up page draws one, and qrcode + pngjs are ~0.3 MB
  // of code the server would otherwise hold from start (docs/performance.md, "Memory on Node 24").
  const { default: QRCode } = await import('qrcode');
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 4, width: 200 });
  const escaped = label.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return svg.replace('<svg ', `<svg role="img" aria-label="${escaped}" class="qr-code" `);
}
