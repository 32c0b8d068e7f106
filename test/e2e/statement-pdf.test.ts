import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fillStatement } from '../../bench/generate.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { buildTestApp, DIALECTS, loadCatalogue, newMerchant, type TestApp } from '../helpers.ts';
import { member } from '../http/manager-helpers.ts';

const hasPoppler = spawnSync('pdftotext', ['-v']).status === 0 && spawnSync('pdftoppm', ['-v']).status === 0;
const SKIP = hasPoppler
  ? false
  : process.env.CI === 'true'
    ? false
    : 'poppler-utils (pdftotext, pdftoppm) is missing: apt-get install -y poppler-utils (.ci/run does) to render the statement PDF';

const ISSUER = { SUPPLIER_NAME: 'Harbour Supplies Ltd', SUPPLIER_ADDRESS: '12 Harbour Road\\nSingapore 018956' };
const CHINESE = '上海星辰贸易有限公司';
const ARABIC = 'متجر النور';
const HEBREW = 'חנות הכל בע״מ';
/** Right edge of the page's text (A4 is 595.28 pt wide, 48 pt margins), and a little for rounding. */
const RIGHT_EDGE = 595.28 - 48 + 1;

const now = new Date();
const month = now.toISOString().slice(0, 7);
const today = now.toISOString().slice(0, 10);
const previous = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
const previousLastDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)).toISOString().slice(0, 10);
const regexpText = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The statement PDF of a month, written to a file; poppler reads it back. */
async function statementPdf(c: { after(fn: () => void): void }, viewer: Awaited<ReturnType<typeof member>>, which: string) {
  const r = await viewer.get(`/manager/balance/statement?month=${which}&format=pdf`);
  assert.equal(r.statusCode, 200, r.body.slice(0, 300));
  assert.equal(r.headers['content-type'], 'application/pdf');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-pdf-'));
  c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'statement.pdf');
  fs.writeFileSync(file, r.rawPayload);
  const text = (...args: string[]) => execFileSync('pdftotext', [...args, file, '-'], { encoding: 'utf8' });
  return { file, dir, text };
}

/** Every word's right edge on every page (pdftotext -bbox): nothing may pass the right margin. */
function widestWord(file: string): { word: string; xMax: number } {
  const html = execFileSync('pdftotext', ['-bbox', file, '-'], { encoding: 'utf8' });
  let widest = { word: '', xMax: 0 };
  for (const m of html.matchAll(/<word xMin="[\d.]+" yMin="[\d.]+" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)<\/word>/g)) {
    if (Number(m[1]) > widest.xMax) widest = { word: m[2], xMax: Number(m[1]) };
  }
  return widest;
}

async function merchantWithViewer(t: TestApp, name: string, email: string) {
  const m = await newMerchant(t, name);
  const viewer = await member(t, m.merchantId, email, 'viewer');
  return { ...m, viewer };
}

/** SPEC §15, issue 41 item 8: the monthly statement as a PDF, rendered to an image by poppler and its text read back. */
for (const dialect of DIALECTS) {
  describe(`the statement PDF, rendered and read back (poppler, ${dialect})`, { skip: SKIP }, () => {
    it('names the issuer, the merchant (in Chinese), the period and when it was made; sums the month; numbers every page and repeats the header', async (c) => {
      assert.ok(hasPoppler, 'poppler-utils must be installed where CI=true (.ci/run installs it)');
      const t = await buildTestApp(c, dialect, ISSUER);
      await loadCatalogue(t, ORDER_CATALOGUE);
      const m = await merchantWithViewer(t, CHINESE, 'pdf-viewer@example.com');
      // 120 payments (1.00 to 9.99 each) before today's: more than a page of lines.
      const monthStart = Date.parse(`${month}-01T00:00:00Z`);
      const filled = await fillStatement(t.store, Number(m.merchantId), 120, monthStart, Math.max(monthStart + 1, Date.now() - 60_000));
      const admin = (p: string, body: unknown) => t.admin('POST', `/admin/v1/merchants/${m.merchantId}/account/${p}`, body);
      assert.equal((await admin('top-ups', { environment: 'sandbox', amount: '2500.00', reference: 'WIRE-PDF-1' })).status, 200);
      const order = await placeOrder(t, m.token, [{ sku: 'C', quantity: 3 }]);
      const reason = `${ARABIC} ${HEBREW} 🧾`;
      assert.equal((await admin('adjustments', { environment: 'sandbox', amount: '-1.50', reason })).status, 200);

      const pdf = await statementPdf(c, m.viewer, month);
      // Fonts: every one embedded and subsetted, and a face for each script on the page.
      const fonts = execFileSync('pdffonts', [pdf.file], { encoding: 'utf8' }).trim().split('\n').slice(2);
      assert.ok(fonts.length >= 4, fonts.join('\n'));
      for (const font of fonts) assert.match(font, /\s+yes\s+yes\s+(yes|no)\s+\d+\s+\d+$/, `embedded and subsetted: ${font}`);
      for (const face of ['NotoSans-', 'NotoSansHans', 'NotoNaskhArabic', 'NotoSansHebrew', 'NotoEmoji']) {
        assert.ok(
          fonts.some((f) => f.includes(face)),
          `${face} in ${fonts.join('\n')}`,
        );
      }

      const page1 = pdf.text('-layout', '-f', '1', '-l', '1');
      assert.match(page1, /Harbour Supplies Ltd/);
      assert.match(page1, /12 Harbour Road/);
      assert.match(page1, /Singapore 018956/);
      assert.match(page1, /Statement of account/);
      assert.match(page1, new RegExp(`Period ${month}-01 to ${today}`));
      assert.match(page1, new RegExp(`Generated ${today} \\d\\d:\\d\\d:\\d\\d UTC`));
      assert.match(page1, new RegExp(CHINESE), 'the merchant’s name in Chinese');
      assert.match(page1, new RegExp(`Merchant ${m.merchantId}`));
      assert.match(page1, /sandbox account · amounts in USD/);
      // The summary, with thousands separators; the month still running says "so far".
      const topUps = (filled + 250_000) / 100;
      const charges = -order.finalAmount;
      const closing = topUps + charges - 1.5;
      const money = (n: number) => regexpText(n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }));
      assert.match(page1, new RegExp(`Opening balance on ${month}-01\\s+0\\.00`));
      assert.match(page1, new RegExp(`Charges \\(orders\\)\\s+${money(charges)}`));
      assert.match(page1, /Credits \(refunds and cancellations\)\s+0\.00/);
      assert.match(page1, new RegExp(`Top-ups \\(payments received\\)\\s+${money(topUps)}`));
      assert.ok(topUps >= 1000, 'an amount with a thousands separator');
      assert.match(page1, /Adjustments\s+-1\.50/);
      assert.match(page1, new RegExp(`Balance so far on ${today}\\s+${money(closing)}`));
      assert.doesNotMatch(page1, /Closing balance/);
      assert.match(page1, /123 transactions in the period/);
      assert.match(page1, /Date \(UTC\)\s+Description\s+Amount\s+Balance/);

      // Page 2 and on: the table's header again, the merchant named, the page's number.
      const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [pdf.file], { encoding: 'utf8' }))![1]);
      assert.ok(pages >= 3, `${pages} pages`);
      assert.match(page1, new RegExp(`Page 1 of ${pages}\\b`));
      for (let p = 2; p <= pages; p++) {
        const page = pdf.text('-layout', '-f', String(p), '-l', String(p));
        assert.match(page, /Date \(UTC\)\s+Description\s+Amount\s+Balance/, `the header on page ${p}`);
        assert.match(page, new RegExp(`Statement ${month} — ${CHINESE}`), `the merchant on page ${p}`);
        assert.match(page, new RegExp(`Page ${p} of ${pages}\\b`), `page ${p} numbered, of ${pages}`);
      }
      const all = pdf.text('-layout');
      assert.match(all, /Payment received: WIRE-PDF-1\s+2,500\.00/);
      assert.match(all, new RegExp(`Order ${order.id}\\s+${money(charges)}`));
      // The adjustment's reason: Arabic and Hebrew (read back in their logical order) and an emoji.
      const reasonLine = all.split('\n').find((l) => l.includes('Adjustment:'));
      assert.ok(reasonLine, 'the adjustment is listed');
      for (const part of [ARABIC, 'חנות הכל', '🧾']) assert.ok(reasonLine.includes(part), `${part} in "${reasonLine}"`);
      assert.match(all, new RegExp(`${today}\\s+Balance so far\\s+${money(closing)}`));
      assert.match(all, new RegExp(`End of statement · ${pages} pages`));

      // The first page as an image: poppler draws it.
      execFileSync('pdftoppm', ['-png', '-r', '60', '-f', '1', '-l', '1', pdf.file, path.join(pdf.dir, 'page')]);
      const png = fs.readdirSync(pdf.dir).find((f) => f.endsWith('.png'));
      assert.ok(png, 'poppler rendered the first page');
      assert.ok(fs.statSync(path.join(pdf.dir, png)).size > 10_000, 'a page with something on it');

      // A month that is over: its last balance is the closing one, dated its last day.
      const past = (await statementPdf(c, m.viewer, previous)).text('-layout');
      assert.match(past, new RegExp(`Closing balance on ${previousLastDay}\\s+0\\.00`));
      assert.match(past, new RegExp(`${previousLastDay}\\s+Closing balance\\s+0\\.00`));
      assert.doesNotMatch(past, /so far/);
    });

    it('prints Arabic and Hebrew merchant names, and wraps a long name instead of running off the page', async (c) => {
      const t = await buildTestApp(c, dialect);
      const arabic = await merchantWithViewer(t, ARABIC, 'arabic-viewer@example.com');
      const hebrew = await merchantWithViewer(t, HEBREW, 'hebrew-viewer@example.com');
      // 125 characters (the most is 128): one word far wider than the page, then Chinese without spaces.
      const long = await merchantWithViewer(t, `${'Ausfuhrgenehmigungsverfahren'.repeat(3)} ${CHINESE}${CHINESE} Handelsgesellschaft`, 'long@example.com');
      const arabicText = (await statementPdf(c, arabic.viewer, month)).text('-f', '1', '-l', '1');
      assert.ok(arabicText.includes(ARABIC), arabicText.slice(0, 600));
      const hebrewText = (await statementPdf(c, hebrew.viewer, month)).text('-f', '1', '-l', '1');
      assert.ok(hebrewText.includes('חנות הכל'), hebrewText.slice(0, 600));
      assert.match(hebrewText, /Statement for/);

      const longPdf = await statementPdf(c, long.viewer, month);
      const widest = widestWord(longPdf.file);
      assert.ok(widest.xMax <= RIGHT_EDGE, `"${widest.word}" ends at ${widest.xMax} pt, past the margin`);
      const text = longPdf.text('-f', '1', '-l', '1').replace(/\s+/g, '');
      assert.ok(text.includes(`Ausfuhrgenehmigungsverfahren`.repeat(3)), 'the long word is all there, over two lines');
      // The default issuer (SUPPLIER_NAME unset).
      assert.match(text, /StockistSupplier/);
    });
  });
}
