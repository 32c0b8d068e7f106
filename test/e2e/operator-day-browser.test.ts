import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant, stockQty } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the operator-day browser test');
const PASSWORD = 'operator day passphrase';
const PHONE_WIDTH = 390;

/**
 * Issue 16's whole operator day in one Chromium, against a real server: sign in → dashboard (the
 * chart drawn) → find an order → ship and deliver it in place (htmx) → approve a refund in place →
 * the webhook pages → adjust stock → import a CSV with one bad row (its line shown, nothing
 * written) → fix and import → create a merchant and issue a token (each secret shown once) → reset
 * a password → every one of those actions on the audit page, one row each. Then the defences: a
 * cross-site form post, a replayed signed-out cookie, what support may not do, the sign-in limit.
 * Every page is checked with axe-core, screenshotted at 1280 and 390 px
 * (test-output/operator-day/) and must not scroll sideways on a phone.
 */
describe('operator console: a whole operator day in a real browser', { skip: SKIP }, () => {
  it('sign in, dashboard, ship, refund, stock, import refused then fixed, merchant and token, audit; CSRF, sign-out, roles and the sign-in limit hold', {
    timeout: 600_000,
  }, async (t) => {
    const app = await buildTestApp(t, 'sqlite', { REFUND_REVIEW: 'manual', LOW_STOCK_THRESHOLD: '6' });
    const cli = { kind: 'cli' as const, id: 'test', requestId: null };
    await createStaff(app.store.db, cli, { email: 'owner@example.com', role: 'owner', password: PASSWORD }, Date.now());
    await createStaff(app.store.db, cli, { email: 'agent@example.com', role: 'support', password: PASSWORD }, Date.now());
    await createStaff(app.store.db, cli, { email: 'target@example.com', role: 'support', password: PASSWORD }, Date.now());
    await loadCatalogue(app, ORDER_CATALOGUE);
    const shop = await newMerchant(app, 'Day shop');
    const hook = await app.merchant(shop.token, 'POST', '/openapi/v1/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['split_order.shipped', 'split_order.delivered'],
    });
    assert.equal(hook.status, 200, hook.raw);
    const refunded = await placeOrder(app, shop.token, [{ sku: 'C', quantity: 2 }]);
    const refundNo = (
      await app.merchant(shop.token, 'POST', `/openapi/v2/order/orders/${refunded.id}/refund`, { skuCode: 'C', quantity: 1, refundReason: 'Other' })
    ).body.data as string;
    const o = await placeOrder(app, shop.token, [{ sku: 'C', quantity: 2 }], { customOrderId: 'WEB-42' });
    const splitId = o.splitOrders[0].id as string;
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const stock = (sku: string, warehouseCode: string) => stockQty(app, sku, warehouseCode);
    const tokenCount = async () =>
      Number(
        (
          await app.store.db
            .selectFrom('api_tokens')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

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

    // The one browser of this suite.
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 }, [attackerOrigin]);
    /** axe-core, screenshots at 1280 and 390 px, and no sideways scrolling of the page on a phone. */
    const look = async (name: string) => {
      await checkAccessibility(page);
      await screenshot(page, 'operator-day', name);
      await page.setViewportSize({ width: PHONE_WIDTH, height: 900 });
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      await page.setViewportSize({ width: 1280, height: 900 });
      assert.ok(width <= PHONE_WIDTH, `${name}: the page is ${width} px wide on a ${PHONE_WIDTH} px screen`);
    };
    const go = (path: string) => Promise.all([page.waitForURL(`${origin}${path}`), page.click(`nav a[href="${path}"]`)]);
    const signIn = async (email: string) => {
      await page.fill('#email', email);
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL(`${origin}/console`), page.click('main button[type=submit]')]);
    };

    // Sign in: without a session the console sends you to the sign-in page.
    await page.goto(`${origin}/console/products`);
    assert.equal(new URL(page.url()).pathname, '/console/sign-in');
    await signIn('owner@example.com');

    // Dashboard: uPlot draws the chart from the data attribute (no inline script).
    await page.waitForSelector('#daily-chart[data-chart-rendered="true"] canvas');
    const today = new Date().toISOString().slice(0, 10);
    assert.equal(await page.textContent(`tr[data-day="${today}"] [data-orders]`), '2');
    assert.equal(await page.textContent('[data-stat="pending"]'), '1');
    assert.ok(await page.isVisible('tr[data-low-stock="A@US01"]'), 'A in US01 (5) is at or below LOW_STOCK_THRESHOLD=6');
    await look('dashboard');

    // Find the order by its id, open it.
    await go('/console/orders');
    await page.fill('#q', o.id);
    await Promise.all([page.waitForURL(/\/console\/orders\?/), page.click('form[role=search] button[type=submit]')]);
    assert.deepEqual(await page.locator('tr[data-order]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-order'))), [o.id]);
    await look('orders');
    await Promise.all([page.waitForURL(`${origin}/console/orders/${o.id}`), page.click(`a[href="/console/orders/${o.id}"]`)]);
    await look('order');

    // Ship with a tracking number, then deliver: htmx swaps the page's main part in place.
    // A mark on the window survives an htmx swap, not a page load.
    await page.evaluate('window.stillThisPage = true');
    const split = page.locator(`#split-${splitId}`);
    // The fixture's channel lists no carriers: the carrier is typed in (no longer prefilled with the channel's code).
    assert.equal(await split.locator('input[name=carrier]').inputValue(), '');
    await split.locator('input[name=carrier]').fill('UPS');
    await split.locator('input[name=trackingCode]').fill('1ZBROWSER0001');
    await split.locator('button[data-action=ship]').click();
    await page.waitForSelector(`#split-${splitId} [data-split-status]:text("shipped")`, { timeout: 30_000 });
    assert.equal(await page.textContent(`#split-${splitId} [data-tracking]`), '1ZBROWSER0001');
    await page.locator(`#split-${splitId} button[data-action=deliver]`).click();
    await page.waitForSelector(`#split-${splitId} [data-split-status]:text("completed")`, { timeout: 30_000 });
    assert.equal(await page.textContent('[data-field="status"]'), 'Completed');
    assert.deepEqual(
      await app.store.db.selectFrom('split_orders').select(['status', 'tracking_code']).where('id', '=', Number(splitId)).executeTakeFirstOrThrow(),
      { status: 'completed', tracking_code: '1ZBROWSER0001' },
    );
    assert.equal(new URL(page.url()).pathname, `/console/orders/${o.id}`);
    assert.equal(await page.evaluate('window.stillThisPage'), true, 'shipped and delivered in place, without a page load');

    // Approve the refund: htmx posts with the session's token header and swaps the row in place.
    await go('/console/refunds');
    const row = page.locator(`#refund-${refundNo}`);
    assert.equal(await row.count(), 1);
    await look('refunds');
    // Approving asks first: the button shows once its confirmation is opened.
    await row.locator('summary[data-confirm-open="approve"]').click();
    await row.locator('button[data-action="approve"]').click();
    await page.waitForSelector(`#refund-${refundNo}[class="decided"]`, { timeout: 30_000 });
    assert.equal(await page.getAttribute(`#refund-${refundNo} [data-status]`, 'data-status'), 'refund_successfully');
    assert.equal(new URL(page.url()).pathname, '/console/refunds');
    const refund = await app.store.db.selectFrom('refunds').select('status').where('id', '=', Number(refundNo)).executeTakeFirstOrThrow();
    assert.equal(refund.status, 'refund_successfully');
    await look('refund-decided');

    // The webhook pages: the endpoint and its delivery log (the shipped and delivered events).
    await go('/console/webhooks');
    await look('webhooks');
    await Promise.all([page.waitForURL(`${origin}/console/webhooks/${hook.body.data.id}`), page.click(`a[href="/console/webhooks/${hook.body.data.id}"]`)]);
    assert.equal(await page.locator('tr[data-delivery]').count(), 2);
    await look('webhook');

    // Catalogue: search, open a SKU, adjust with a reason.
    await go('/console/products');
    await page.fill('#q', 'plate');
    await Promise.all([page.waitForURL(/\/console\/products\?q=plate/), page.click('main form[role=search] button')]);
    await look('products');
    await Promise.all([page.waitForURL(`${origin}/console/products/B`), page.click('tr[data-sku="B"] a')]);
    await page.selectOption('#warehouseCode', 'G006');
    await page.fill('#delta', '-2');
    await page.fill('#reason', 'two broken at the count');
    await Promise.all([page.waitForNavigation(), page.click('main form.form-grid button[type=submit]')]);
    assert.equal(page.url(), `${origin}/console/products/B`, 'the adjustment answers 303 to the product page');
    assert.match((await page.textContent('#adjusted')) ?? '', /by -2: now 5/);
    assert.equal(await page.textContent('tr[data-warehouse="G006"] [data-qty]'), '5');
    assert.equal(await stock('B', 'G006'), 5);
    await look('product');

    // Import: a CSV with one bad row is refused with its line; nothing is written.
    await go('/console/import');
    await look('import');
    const csv = 'sku,warehouseCode,qty\nA,G007,40\nA,NOPE,3\nC,US01,4\n';
    await page.setInputFiles('#file', { name: 'stock.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.waitForFunction(() => (document.getElementById('fileName') as HTMLInputElement).value === 'stock.csv');
    assert.equal(await page.inputValue('#fileText'), csv, 'the file picker filled in the text');
    await Promise.all([page.waitForURL(/\/console\/import\/[A-Za-z0-9]{24}$/), page.click('#import-form button[data-action="import"]')]);
    await page.waitForSelector('#import-job[data-state="refused"]', { timeout: 60_000 });
    assert.equal(await page.locator('#import-problems tbody tr').count(), 1);
    assert.match((await page.textContent('#import-problems tr[data-line="3"]')) ?? '', /warehouseCode\s*unknown warehouse NOPE/);
    assert.equal(await stock('A', 'G007'), 10, 'nothing was written');
    await look('import-refused');

    // Fixed and imported.
    await Promise.all([page.waitForURL(`${origin}/console/import`), page.click('a[href="/console/import"] >> text=Import another file')]);
    await page.setInputFiles('#file', { name: 'stock.csv', mimeType: 'text/csv', buffer: Buffer.from(csv.replace('NOPE', 'G006')) });
    await page.waitForFunction(() => (document.getElementById('fileName') as HTMLInputElement).value === 'stock.csv');
    await Promise.all([page.waitForURL(/\/console\/import\/[A-Za-z0-9]{24}$/), page.click('#import-form button[data-action="import"]')]);
    await page.waitForSelector('#import-job[data-state="done"]', { timeout: 60_000 });
    assert.deepEqual([await stock('A', 'G007'), await stock('A', 'G006'), await stock('C', 'US01')], [40, 3, 4]);
    await look('import-done');

    // Create a merchant: the form answers 303 to the merchant's page, which shows the client secret once.
    await go('/console/merchants');
    await look('merchants');
    await page.fill('#name', 'Made in the browser');
    await Promise.all([page.waitForURL(/\/console\/merchants\/\d+$/), page.click('button[data-action=create-merchant]')]);
    const clientSecret = (await page.textContent('[data-secret]'))!;
    assert.match(clientSecret, /^sks_/);
    await look('secret-shown');
    const merchantUrl = page.url();
    const merchantId = new URL(merchantUrl).pathname.split('/').at(-1)!;
    await page.reload();
    assert.ok(!(await page.content()).includes(clientSecret), 'the client secret is not shown again');
    await look('merchant');

    // Issue a token (shown once), then revoke it.
    await page.check('input[name=scopes][value="orders:read"]');
    await Promise.all([page.waitForNavigation(), page.click('button[data-action=issue-token]')]);
    assert.equal(page.url(), merchantUrl);
    const token = (await page.textContent('[data-secret]'))!;
    assert.ok(token.length > 20);
    assert.equal((await app.merchant(token, 'GET', '/openapi/v2/order/orders')).status, 200, 'the token works');
    await page.reload();
    assert.ok(!(await page.content()).includes(token), 'the token is not shown again');
    const tokenRow = page.locator('tr[data-token]').first();
    const tokenId = (await tokenRow.getAttribute('data-token'))!;
    // Revoking asks first: the summary opens what will happen and the real button.
    await tokenRow.locator('summary[data-confirm-open=revoke]').click();
    await tokenRow.locator('button[data-action=revoke]').click();
    await page.waitForSelector(`tr[data-token="${tokenId}"] [data-state="revoked"]`, { timeout: 30_000 });
    assert.equal((await app.merchant(token, 'GET', '/openapi/v2/order/orders')).status, 401, 'the revoked token no longer works');

    // Staff: a password reset link (shown once; test/e2e/staff-reset-browser.test.ts uses one).
    await go('/console/staff');
    await Promise.all([page.waitForNavigation(), page.click('tr[data-staff="target@example.com"] button[data-action="reset-password"]')]);
    assert.match((await page.textContent('[data-reset-url]')) ?? '', /\/console\/password-reset\/[A-Za-z0-9]{43}$/);
    await look('staff');

    // Every action of the day is on the audit page: one row each, by the owner, naming its target.
    await go('/console/audit');
    const day: [action: string, target: string, also?: RegExp][] = [
      ['staff.sign_in', 'staff:owner@example.com'],
      ['split_order.ship', `split_order:${splitId}`, /1ZBROWSER0001/],
      ['split_order.deliver', `split_order:${splitId}`],
      ['refund.approve', `refund:${refundNo}`, /Waiting for review → Refunded/],
      ['stock.adjust', 'B', /two broken at the count/],
      ['catalog.import', 'catalog:import', /stock\.csv/],
      // A merchant target is named, linked to its page, not `merchant:<id>` (issue 29, items 7 and 16).
      ['merchant.create', 'merchant Made in the browser', /client id/],
      ['token.issue', `token:${tokenId}`],
      ['token.revoke', `token:${tokenId}`],
      ['staff.create_password_reset', 'staff:target@example.com'],
    ];
    for (const [action, target, also] of day) {
      // The setup's own writes (the catalogue, the merchant) were the admin API's and the CLI's.
      const rows = page.locator(`#audit-log tr[data-action="${action}"]`, { hasText: 'owner@example.com' });
      assert.equal(await rows.count(), 1, `one ${action} row by the owner (the refused import wrote none)`);
      const text = (await rows.textContent()) ?? '';
      assert.ok(text.includes(target), `${action}: names ${target} (${text})`);
      if (also) assert.match(text, also, action);
    }
    assert.equal(
      await page.locator(`#audit-log tr[data-action="merchant.create"] [data-target] a[href="/console/merchants/${merchantId}"]`).count(),
      1,
      'the merchant target links its page',
    );
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

    // Support: reads the merchant, has no token button, and a hand-made token POST is refused; reads orders, does not ship.
    await signIn('agent@example.com');
    await page.goto(merchantUrl);
    assert.equal(await page.locator('button[data-action=issue-token], button[data-action=revoke]').count(), 0);
    const tokensBefore = await tokenCount();
    const status = await page.evaluate(async (url) => {
      const csrf = (document.querySelector('input[name=_csrf]') as HTMLInputElement).value;
      const r = await fetch(`${url}/tokens`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf=${csrf}` });
      return r.status;
    }, merchantUrl);
    assert.equal(status, 403);
    assert.equal(await tokenCount(), tokensBefore, 'nothing written');
    await page.goto(`${origin}/console/orders/${refunded.id}`);
    assert.equal(new URL(page.url()).pathname, `/console/orders/${refunded.id}`);
    assert.equal(await page.locator('button[data-action=ship], button[data-action=deliver]').count(), 0, 'support reads orders but does not ship');
    for (const path of ['/console/staff', '/console/audit', '/console/products', '/console/import']) {
      const response = await page.goto(`${origin}${path}`);
      assert.equal(response?.status(), 403, `support may not open ${path}`);
    }
    await page.goto(`${origin}/console`);
    await Promise.all([page.waitForURL(`${origin}/console/sign-in`), page.click('.who button[type=submit]')]);

    // The sign-in limit: after five wrong passwords for one account the sixth try is refused (429).
    let lastStatus = 0;
    for (let i = 0; i < 6; i++) {
      await page.fill('#email', 'target@example.com');
      await page.fill('#password', `wrong password ${i}`);
      const [response] = await Promise.all([page.waitForResponse(`${origin}/console/sign-in`), page.click('main button[type=submit]')]);
      lastStatus = response.status();
    }
    assert.equal(lastStatus, 429);
    assert.match((await page.textContent('p.error')) ?? '', /Too many sign-in attempts/);

    assert.deepEqual(foreign, [], 'no request leaves the server');
    assert.deepEqual(
      consoleErrors.filter((e) => !/status of (401|403|429)/.test(e)),
      [],
    );
  });
});
