import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { member } from '../http/manager-helpers.ts';

const hasPoppler = spawnSync('pdftotext', ['-v']).status === 0 && spawnSync('pdftoppm', ['-v']).status === 0;
const SKIP = hasPoppler
  ? false
  : process.env.CI === 'true'
    ? false
    : 'poppler-utils (pdftotext, pdftoppm) is missing: apt-get install -y poppler-utils (.ci/run does) to render the statement PDF';

/** SPEC §15: the monthly statement as a PDF, rendered to an image by poppler and its text read back. */
describe('the statement PDF, rendered and read back (poppler)', { skip: SKIP }, () => {
  it('renders a page and carries the opening balance, each transaction and the closing balance', async (c) => {
    assert.ok(hasPoppler, 'poppler-utils must be installed where CI=true (.ci/run installs it)');
    const t = await buildTestApp(c, 'sqlite');
    await loadCatalogue(t, ORDER_CATALOGUE);
    const m = await newMerchant(t, 'PDF Shop');
    await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/account/top-ups`, { environment: 'sandbox', amount: '250.00', reference: 'WIRE-PDF-1' });
    const order = await placeOrder(t, m.token, [{ sku: 'C', quantity: 3 }]);
    const viewer = await member(t, m.merchantId, 'pdf-viewer@example.com', 'viewer');
    const month = new Date().toISOString().slice(0, 7);
    const r = await viewer.get(`/manager/balance/statement?month=${month}&format=pdf`);
    assert.equal(r.statusCode, 200);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-pdf-'));
    c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'statement.pdf');
    fs.writeFileSync(file, r.rawPayload);
    execFileSync('pdftoppm', ['-png', '-r', '60', '-f', '1', '-l', '1', file, path.join(dir, 'page')]);
    const png = fs.readdirSync(dir).find((f) => f.endsWith('.png'));
    assert.ok(png, 'poppler rendered the first page');
    assert.ok(fs.statSync(path.join(dir, png)).size > 1000, 'a page with something on it');
    const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
    assert.match(text, new RegExp(`Statement ${month}`));
    assert.match(text, /PDF Shop · sandbox account · USD/);
    assert.match(text, /Opening balance\s+0\.00/);
    assert.match(text, /Payment received: WIRE-PDF-1\s+250\.00\s+250\.00/);
    const closing = (250 - order.finalAmount).toFixed(2);
    assert.match(text, new RegExp(`Order ${order.id}\\s+-${order.finalAmount.toFixed(2).replace('.', '\\.')}\\s+${closing.replace('.', '\\.')}`));
    assert.match(text, new RegExp(`Closing balance\\s+${closing.replace('.', '\\.')}`));
  });
});
