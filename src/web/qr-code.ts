import QRCode from 'qrcode';

/**
 * A QR code as inline SVG markup, made on the server (`qrcode`, docs/decisions.md "Two-factor: QR
 * code and recovery codes"): no image request, no script, nothing the page's CSP refuses — the
 * markup is paths with fill and stroke attributes only. `label` names it for screen readers.
 * Medium error correction and the standard four-module quiet zone, so phone cameras read it off a
 * screen.
 */
export async function qrCodeSvg(text: string, label: string): Promise<string> {
  const svg = await QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 4, width: 200 });
  const escaped = label.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return svg.replace('<svg ', `<svg role="img" aria-label="${escaped}" class="qr-code" `);
}
