import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createStaff } from '../../src/services/staff.service.ts';
import { buildTestApp, newMerchant } from '../helpers.ts';
import { checkAccessibility, chromiumSkip, consoleSignIn, localOnlyPage, screenshot } from './browser.ts';

const SKIP = chromiumSkip('the Books page browser test');
const PASSWORD = 'books browser passphrase';

/**
 * Issue 41, 9, in Chromium against a real server: the owner finds Books in the navigation, sees the
 * supplier's accounts, downloads this month's journal, chooses a bank statement file (the page's
 * script puts its name and text into the form) and reads the report. axe-core finds nothing serious
 * or critical, before and after; at 390 px nothing scrolls sideways. Screenshots in test-output/books/.
 */
describe('console: the Books page in a real browser', { skip: SKIP }, () => {
  it('accounts, the journal download, a bank statement matched', { timeout: 300_000 }, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-books-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const app = await buildTestApp(t, 'sqlite');
    const cli = { kind: 'cli' as const, id: 'test', requestId: null };
    await createStaff(app.store.db, cli, { email: 'owner@example.com', role: 'owner', password: PASSWORD }, Date.now());
    const environment = app.config.env;
    for (const [name, amount, reference] of [
      ['Harbour Supplies', '120.00', 'BANK-2001'],
      ['山田商店 (Yamada)', '80.50', 'BANK-2002'],
    ] as const) {
      const m = await newMerchant(app, name);
      const r = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/account/top-ups`, { environment, amount, reference });
      assert.equal(r.status, 200, r.raw);
    }
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;

    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await consoleSignIn(page, origin, 'owner@example.com', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/console/books`), page.click('nav a[href="/console/books"]')]);
    assert.equal(await page.textContent('tr[data-account="cash"] td:last-child'), '-200.50 USD');
    assert.equal(await page.textContent('[data-field="total"]'), '0.00 USD');
    await checkAccessibility(page);
    await screenshot(page, 'books', 'accounts');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('a[data-action="journal-this-month"]')]);
    const saved = path.join(dir, 'journal.csv');
    await download.saveAs(saved);
    const csv = fs.readFileSync(saved);
    assert.ok(csv.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])), 'a UTF-8 byte order mark');
    assert.match(csv.toString('utf8'), /山田商店 \(Yamada\)/);
    assert.equal(csv.toString('utf8').trim().split('\r\n').length, 3, 'the header and two entries');

    const today = new Date().toISOString().slice(0, 10);
    const statement = path.join(dir, 'statement.csv');
    fs.writeFileSync(statement, `reference,amount,date\r\nbank-2001,120.00,${today}\r\nBANK-9999,15.00,${today}\r\n`);
    await page.setInputFiles('#statement-file', statement);
    await page.waitForFunction(() => (document.querySelector('#statement-text') as HTMLTextAreaElement).value.includes('BANK-9999'));
    assert.equal(await page.inputValue('#statement-name'), 'statement.csv');
    await Promise.all([page.waitForURL(`${origin}/console/books/bank-match#match-h`), page.click('button[data-action="match"]')]);
    assert.equal(await page.textContent('[data-field="matched"]'), '1 · 120.00');
    assert.equal(await page.textContent('[data-field="missing"]'), '1 · 80.50');
    assert.equal(await page.textContent('[data-field="unexpected"]'), '1 · 15.00');
    await checkAccessibility(page);
    await screenshot(page, 'books', 'matched');

    await page.setViewportSize({ width: 390, height: 844 });
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), 0, 'nothing scrolls sideways at 390 px');
    await checkAccessibility(page);

    assert.deepEqual(foreign, [], 'nothing was loaded from another origin');
    assert.deepEqual(consoleErrors, []);
  });
});
