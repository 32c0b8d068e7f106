import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the console operator-day browser test');
const PASSWORD = 'operator day passphrase';

/**
 * Issue 16's operator day, as far as the catalogue, stock, import, staff and audit pages go, in
 * Chromium against a real server: sign in → dashboard (the chart drawn) → adjust stock → import a
 * CSV with one bad row (its line shown, nothing written) → fix and import → every action on the
 * audit page. Then the defences: a cross-site form post, a signed-out cookie, the sign-in limit.
 * Every page is checked with axe-core and screenshotted at 1280 and 390 px (test-output/console-day/).
 */
describe('operator console: a day at the console in a real browser', { skip: SKIP }, () => {
  it('dashboard, stock adjustment, import refused then fixed, audit log; CSRF, sign-out and the sign-in limit hold', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite', { REFUND_REVIEW: 'manual', LOW_STOCK_THRESHOLD: '6' });
    const cli = { kind: 'cli' as const, id: 'test', requestId: null };
    await createStaff(app.store.db, cli, { email: 'owner@example.com', role: 'owner', password: PASSWORD }, Date.now());
    await createStaff(app.store.db, cli, { email: 'target@example.com', role: 'support', password: PASSWORD }, Date.now());
    await loadCatalogue(app, ORDER_CATALOGUE);
    const m = await newMerchant(app, 'Day shop');
    await placeOrder(app, m.token, [{ sku: 'C', quantity: 2 }]);
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.app.server.address() as AddressInfo).port;
    const origin = `http://127.0.0.1:${port}`;
    const stock = async (sku: string, warehouseCode: string) =>
      (
        await app.store.db
          .selectFrom('stocks')
          .innerJoin('products', 'products.id', 'stocks.product_id')
          .innerJoin('warehouses', 'warehouses.id', 'stocks.warehouse_id')
          .select('stocks.qty')
          .where('products.sku', '=', sku)
          .where('warehouses.code', '=', warehouseCode)
          .executeTakeFirst()
      )?.qty ?? null;

    // Another site, for the CSRF check: a page with a form that posts to the console.
    const attacker = http.createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end(
        `<!doctype html><html lang="en"><head><title>Win a prize</title></head><body><form method="post" action="${origin}/console/staff"><input type="hidden" name="email" value="evil@example.com"><input type="hidden" name="role" value="owner"><button id="go">Claim</button></form></body></html>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, 'localhost', resolve));
    t.after(() => new Promise<void>((resolve) => attacker.close(() => resolve())));
    const attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 }, [attackerOrigin]);
    /** axe-core, screenshots at 1280 and 390 px, and no sideways scrolling of the page on a phone. */
    const look = async (name: string) => {
      await checkAccessibility(page);
      await screenshot(page, 'console-day', name);
      await page.setViewportSize({ width: 390, height: 900 });
      assert.ok(((await page.evaluate('document.documentElement.scrollWidth')) as number) <= 390, `${name}: no wider than a 390 px screen`);
      await page.setViewportSize({ width: 1280, height: 900 });
    };

    // Sign in.
    await page.goto(`${origin}/console/products`);
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    await page.fill('#email', 'owner@example.com');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/console`), page.click('main button[type=submit]')]);

    // Dashboard: uPlot draws the chart from the data attribute (no inline script).
    await page.waitForSelector('#daily-chart[data-chart-rendered="true"] canvas');
    const today = new Date().toISOString().slice(0, 10);
    assert.equal(await page.textContent(`tr[data-day="${today}"] [data-orders]`), '1');
    assert.ok(await page.isVisible('tr[data-low-stock="A@US01"]'), 'A in US01 (5) is at or below LOW_STOCK_THRESHOLD=6');
    await look('dashboard');

    // Catalogue: search, open a SKU, adjust with a reason.
    await Promise.all([page.waitForURL(`${origin}/console/products`), page.click('nav a[href="/console/products"]')]);
    await page.fill('#q', 'plate');
    await Promise.all([page.waitForURL(/\/console\/products\?q=plate/), page.click('main form[role=search] button')]);
    await look('products');
    await Promise.all([page.waitForURL(`${origin}/console/products/B`), page.click('tr[data-sku="B"] a')]);
    await page.selectOption('#warehouseCode', 'G006');
    await page.fill('#delta', '-2');
    await page.fill('#reason', 'two broken at the count');
    await Promise.all([page.waitForURL(`${origin}/console/products/B/adjust`), page.click('main form.form-grid button[type=submit]')]);
    assert.match((await page.textContent('#adjusted')) ?? '', /by -2: now 5/);
    assert.equal(await page.textContent('tr[data-warehouse="G006"] [data-qty]'), '5');
    assert.equal(await stock('B', 'G006'), 5);
    await look('product');

    // Import: a CSV with one bad row is refused with its line; nothing is written.
    await Promise.all([page.waitForURL(`${origin}/console/import`), page.click('nav a[href="/console/import"]')]);
    await look('import');
    const csv = 'sku,warehouseCode,qty\nA,G007,40\nA,NOPE,3\nC,US01,4\n';
    await page.setInputFiles('#file', { name: 'stock.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.waitForFunction(() => (document.getElementById('fileName') as HTMLInputElement).value === 'stock.csv');
    assert.equal(await page.inputValue('#fileText'), csv, 'the file picker filled in the text');
    await Promise.all([page.waitForURL(/\/console\/import\/[A-Za-z0-9]{24}$/), page.click('#import-form button[type=submit]')]);
    await page.waitForSelector('#import-job[data-state="refused"]', { timeout: 60_000 });
    assert.equal(await page.locator('#import-problems tbody tr').count(), 1);
    assert.match((await page.textContent('#import-problems tr[data-line="3"]')) ?? '', /warehouseCode\s*unknown warehouse NOPE/);
    assert.equal(await stock('A', 'G007'), 10, 'nothing was written');
    await look('import-refused');

    // Fixed and imported.
    await Promise.all([page.waitForURL(`${origin}/console/import`), page.click('a[href="/console/import"] >> text=Import another file')]);
    await page.setInputFiles('#file', { name: 'stock.csv', mimeType: 'text/csv', buffer: Buffer.from(csv.replace('NOPE', 'G006')) });
    await page.waitForFunction(() => (document.getElementById('fileName') as HTMLInputElement).value === 'stock.csv');
    await Promise.all([page.waitForURL(/\/console\/import\/[A-Za-z0-9]{24}$/), page.click('#import-form button[type=submit]')]);
    await page.waitForSelector('#import-job[data-state="done"]', { timeout: 60_000 });
    assert.deepEqual([await stock('A', 'G007'), await stock('A', 'G006'), await stock('C', 'US01')], [40, 3, 4]);
    await look('import-done');

    // Staff: reset a password (shown once).
    await Promise.all([page.waitForURL(`${origin}/console/staff`), page.click('nav a[href="/console/staff"]')]);
    await Promise.all([
      page.waitForURL(/\/console\/staff\/\d+\/reset-password$/),
      page.click('tr[data-staff="target@example.com"] button[data-action="reset-password"]'),
    ]);
    assert.match((await page.textContent('[data-password]')) ?? '', /^[A-Za-z0-9]{20}$/);
    await look('staff');

    // Every action of the day is on the audit page.
    await Promise.all([page.waitForURL(`${origin}/console/audit`), page.click('nav a[href="/console/audit"]')]);
    const actions = await page.locator('#audit-log tr[data-action]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action')));
    for (const action of ['staff.sign_in', 'stock.adjust', 'catalog.import', 'staff.reset_password'])
      assert.ok(actions.includes(action), `${action} is on the audit page (${actions.join(', ')})`);
    assert.equal(
      await page.locator('#audit-log tr[data-action="catalog.import"]', { hasText: 'stock.csv' }).count(),
      1,
      'the refused import wrote no audit row either',
    );
    assert.match((await page.textContent('#audit-log tr[data-action="stock.adjust"]')) ?? '', /two broken at the count/);
    await page.selectOption('#action', 'stock.adjust');
    await Promise.all([page.waitForURL(/action=stock\.adjust/), page.click('main form[role=search] button')]);
    assert.equal(await page.locator('#audit-log tr[data-action]').count(), 1);
    await look('audit');

    // A cross-site form post (another site's page posting to the console with the session cookie) is refused.
    await page.goto(attackerOrigin);
    const [refused] = await Promise.all([page.waitForResponse(`${origin}/console/staff`), page.click('#go')]);
    assert.equal(refused.status(), 403);
    const evilStaff = await app.store.db.selectFrom('staff_users').select('id').where('email_key', '=', 'evil@example.com').executeTakeFirst();
    assert.equal(evilStaff, undefined, 'no account was created');
    await page.goto(`${origin}/console`);
    assert.equal(new URL(page.url()).pathname, '/console', 'still signed in');

    // Signing out ends the session on the server: the old cookie no longer opens anything.
    const cookies = await page.context().cookies(origin);
    await Promise.all([page.waitForURL(`${origin}/console/sign-in`), page.click('.who button[type=submit]')]);
    await page.context().addCookies(cookies);
    await page.goto(`${origin}/console/audit`);
    assert.equal(new URL(page.url()).pathname, '/console/sign-in', 'the replayed cookie is refused');
    await look('sign-in');

    // The sign-in limit: after five wrong passwords for one account the sixth try is refused (429).
    let status = 0;
    for (let i = 0; i < 6; i++) {
      await page.fill('#email', 'target@example.com');
      await page.fill('#password', `wrong password ${i}`);
      const [response] = await Promise.all([page.waitForResponse(`${origin}/console/sign-in`), page.click('main button[type=submit]')]);
      status = response.status();
    }
    assert.equal(status, 429);
    assert.match((await page.textContent('p.error')) ?? '', /Too many sign-in attempts/);

    assert.deepEqual(foreign, [], 'no request leaves the server');
    assert.deepEqual(
      consoleErrors.filter((e) => !/status of (401|403|429)/.test(e)),
      [],
    );
  });
});
