import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the console orders browser test');
const PASSWORD = 'browser test passphrase';
const PHONE_WIDTH = 390;

/**
 * The page as it stands: no serious or critical axe-core violation; screenshots at 1280 and 390 px
 * (test-output/console/<name>-<width>.png); and at 390 px nothing wider than the screen (tables
 * scroll inside their own region).
 */
async function look(page: Page, name: string) {
  await checkAccessibility(page);
  await screenshot(page, 'console', name);
  const original = page.viewportSize()!;
  await page.setViewportSize({ width: PHONE_WIDTH, height: original.height });
  const width = await page.evaluate('document.documentElement.scrollWidth');
  await page.setViewportSize(original);
  assert.ok((width as number) <= PHONE_WIDTH, `${name}: the page is ${width} px wide on a ${PHONE_WIDTH} px screen`);
}

describe('console orders, merchants and webhooks in a real browser', { skip: SKIP }, () => {
  it('finds an order, ships and delivers it, creates a merchant, issues a token once and revokes it; support cannot', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    const cli = { kind: 'cli' as const, id: 'test', requestId: null };
    await createStaff(app.store.db, cli, { email: 'owner@example.com', role: 'owner', password: PASSWORD }, Date.now());
    await createStaff(app.store.db, cli, { email: 'agent@example.com', role: 'support', password: PASSWORD }, Date.now());
    await loadCatalogue(app, ORDER_CATALOGUE);
    const shop = await newMerchant(app, 'Browser shop');
    const hook = await app.merchant(shop.token, 'POST', '/openapi/v1/webhooks', {
      url: 'http://127.0.0.1:9/hook',
      events: ['split_order.shipped', 'split_order.delivered'],
    });
    assert.equal(hook.status, 200, hook.raw);
    await placeOrder(app, shop.token, [{ sku: 'B', quantity: 1 }]);
    const o = await placeOrder(app, shop.token, [{ sku: 'C', quantity: 2 }], { customOrderId: 'WEB-42' });
    const splitId = o.splitOrders[0].id as string;
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });

    const signIn = async (email: string) => {
      await page.goto(`${origin}/console/sign-in`);
      await page.fill('#email', email);
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL(`${origin}/console`), page.click('main button[type=submit]')]);
    };
    await signIn('owner@example.com');

    // Find the order by its id.
    await Promise.all([page.waitForURL(`${origin}/console/orders`), page.click('nav a[href="/console/orders"]')]);
    await page.fill('#q', o.id);
    await Promise.all([page.waitForURL(/\/console\/orders\?/), page.click('form[role=search] button[type=submit]')]);
    assert.deepEqual(await page.locator('tr[data-order]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-order'))), [o.id]);
    await look(page, 'orders');
    await Promise.all([page.waitForURL(`${origin}/console/orders/${o.id}`), page.click(`a[href="/console/orders/${o.id}"]`)]);
    await look(page, 'order');

    // Ship with a tracking number, then deliver: htmx swaps the page's main part in place.
    // A mark on the window survives an htmx swap, not a page load.
    await page.evaluate('window.stillThisPage = true');
    const split = page.locator(`#split-${splitId}`);
    await split.locator('input[name=trackingCode]').fill('1ZBROWSER0001');
    await split.locator('button[data-action=ship]').click();
    await page.waitForSelector(`#split-${splitId} [data-split-status]:text("shipped")`, { timeout: 30_000 });
    assert.equal(await page.textContent(`#split-${splitId} [data-tracking]`), '1ZBROWSER0001');
    assert.equal(new URL(page.url()).pathname, `/console/orders/${o.id}`);
    await page.locator(`#split-${splitId} button[data-action=deliver]`).click();
    await page.waitForSelector(`#split-${splitId} [data-split-status]:text("completed")`, { timeout: 30_000 });
    assert.equal(await page.textContent('[data-field="status"]'), 'completed');
    const stored = await app.store.db
      .selectFrom('split_orders')
      .select(['status', 'tracking_code'])
      .where('id', '=', Number(splitId))
      .executeTakeFirstOrThrow();
    assert.deepEqual(stored, { status: 'completed', tracking_code: '1ZBROWSER0001' });
    assert.equal(await page.evaluate('window.stillThisPage'), true, 'shipped and delivered in place, without a page load');

    // The webhook pages: the endpoint, its delivery log (the shipped and delivered events), a retry.
    await Promise.all([page.waitForURL(`${origin}/console/webhooks`), page.click('nav a[href="/console/webhooks"]')]);
    await look(page, 'webhooks');
    await Promise.all([page.waitForURL(`${origin}/console/webhooks/${hook.body.data.id}`), page.click(`a[href="/console/webhooks/${hook.body.data.id}"]`)]);
    assert.equal(await page.locator('tr[data-delivery]').count(), 2);
    await look(page, 'webhook');

    // Create a merchant: the client secret is on the page that created it, and on no other.
    await Promise.all([page.waitForURL(`${origin}/console/merchants`), page.click('nav a[href="/console/merchants"]')]);
    await look(page, 'merchants');
    await page.fill('#name', 'Made in the browser');
    await Promise.all([page.waitForURL(`${origin}/console/merchants`), page.click('button[data-action=create-merchant]')]);
    const clientSecret = (await page.textContent('[data-secret]'))!;
    assert.match(clientSecret, /^sks_/);
    await look(page, 'secret-shown');
    await Promise.all([page.waitForURL(/\/console\/merchants\/\d+$/), page.click('main a[href^="/console/merchants/"]')]);
    const merchantUrl = page.url();
    assert.ok(!(await page.content()).includes(clientSecret), 'the client secret is not shown again');
    await look(page, 'merchant');

    // Issue a token (shown once), then revoke it.
    await page.check('input[name=scopes][value="orders:read"]');
    await Promise.all([page.waitForURL(`${merchantUrl}/tokens`), page.click('button[data-action=issue-token]')]);
    const token = (await page.textContent('[data-secret]'))!;
    assert.ok(token.length > 20);
    assert.equal((await app.merchant(token, 'GET', '/openapi/v2/order/orders')).status, 200, 'the token works');
    await Promise.all([page.waitForURL(merchantUrl), page.click('main a[href^="/console/merchants/"]')]);
    assert.ok(!(await page.content()).includes(token), 'the token is not shown again');
    const tokenRow = page.locator('tr[data-token]').first();
    const tokenId = await tokenRow.getAttribute('data-token');
    await tokenRow.locator('button[data-action=revoke]').click();
    await page.waitForSelector(`tr[data-token="${tokenId}"] [data-state="revoked"]`, { timeout: 30_000 });
    assert.equal((await app.merchant(token, 'GET', '/openapi/v2/order/orders')).status, 401, 'the revoked token no longer works');

    // Support: reads the merchant, has no token button, and a hand-made token POST is refused.
    await Promise.all([page.waitForURL(`${origin}/console/sign-in`), page.click('.who button[type=submit]')]);
    await signIn('agent@example.com');
    await page.goto(merchantUrl);
    assert.equal(await page.locator('button[data-action=issue-token]').count(), 0);
    assert.equal(await page.locator('button[data-action=revoke]').count(), 0);
    const tokensBefore = await app.store.db
      .selectFrom('api_tokens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    const status = await page.evaluate(async (url) => {
      const csrf = (document.querySelector('input[name=_csrf]') as HTMLInputElement).value;
      const r = await fetch(`${url}/tokens`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf=${csrf}` });
      return r.status;
    }, merchantUrl);
    assert.equal(status, 403);
    const tokensAfter = await app.store.db
      .selectFrom('api_tokens')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(tokensAfter.n), Number(tokensBefore.n), 'nothing written');
    await Promise.all([page.waitForURL(`${origin}/console/orders/${o.id}`), page.goto(`${origin}/console/orders/${o.id}`)]);
    assert.equal(await page.locator('button[data-action=ship], button[data-action=deliver]').count(), 0, 'support reads orders but does not ship');

    assert.deepEqual(foreign, [], 'no request leaves the server');
    assert.deepEqual(
      consoleErrors.filter((e) => !/status of 403/.test(e)),
      [],
    );
  });
});
