import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot, consoleSignIn } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the times, stock history and audit log browser test');
const PASSWORD = 'times browser passphrase';
const PHONE = 390;

/** What a person in Tokyo (UTC+9, no daylight saving) should read for an instant: the one format, in their zone. */
function tokyoText(datetime: string): string {
  const local = new Date(Date.parse(datetime) + 9 * 3_600_000).toISOString();
  return `${local.slice(0, 10)} ${local.slice(11, 16)} GMT+9`;
}
const utcTitle = (datetime: string) => `${datetime.slice(0, 10)} ${datetime.slice(11, 19)} UTC`;

/** Every <time> of the page reads in Tokyo's zone, with the UTC time on hover; returns how many there are. */
async function timesAreLocal(page: Page, where: string): Promise<number> {
  // The page's script rewrites the server's UTC text once the document has loaded; a page reached by
  // a form's redirect may be read before that (a loaded machine): wait for it (never converted: times out).
  await page.waitForFunction(() => [...document.querySelectorAll('time[datetime$="Z"]')].every((e) => !e.textContent?.endsWith(' UTC')));
  const times = (await page.$$eval('time[datetime]', (all) =>
    all.map((e) => ({ datetime: e.getAttribute('datetime')!, text: e.textContent, title: e.getAttribute('title') })),
  )) as {
    datetime: string;
    text: string;
    title: string;
  }[];
  assert.ok(times.length > 0, `${where}: shows a time`);
  for (const time of times) {
    assert.equal(time.text, tokyoText(time.datetime), `${where}: ${time.datetime} in the viewer's zone`);
    assert.equal(time.title, utcTitle(time.datetime), `${where}: the UTC time on hover`);
  }
  return times.length;
}

/** Axe-clean and not wider than a phone; screenshots at 1280 and 390 px into test-output/times/. */
async function look(page: Page, name: string) {
  await checkAccessibility(page);
  await screenshot(page, 'times', name);
  const original = page.viewportSize();
  await page.setViewportSize({ width: PHONE, height: 900 });
  const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
  await checkAccessibility(page);
  if (original) await page.setViewportSize(original);
  assert.ok(width <= PHONE, `${name}: the page is ${width} px wide on a ${PHONE} px screen`);
}

/** Issue 29, items 8, 11 and 16, as a person in Tokyo sees them in Chromium. */
describe('times, the stock history and the audit log in a real browser', { skip: SKIP }, () => {
  it('shows every time in the viewer’s zone with UTC on hover, takes +20 with its reason into the stock history, and reads the audit log by email and field', {
    timeout: 300_000,
  }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    await loadCatalogue(app, ORDER_CATALOGUE);
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'owner@times.example', role: 'owner', password: PASSWORD },
      Date.now(),
    );
    const m = await newMerchant(app, 'Times shop');
    const order = await placeOrder(app, m.token, [{ sku: 'C', quantity: 1 }]);
    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'admin@times-shop.example', role: 'admin' });
    assert.equal(invited.status, 200, invited.raw);
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 }, [], { timezoneId: 'Asia/Tokyo' });

    // Item 8: the console's pages in Tokyo's zone.
    await consoleSignIn(page, origin, 'owner@times.example', PASSWORD);
    await page.goto(`${origin}/console/orders/${order.id}`);
    await timesAreLocal(page, 'console order');
    await look(page, 'console-order-tokyo');
    await page.goto(`${origin}/console/account`);
    await timesAreLocal(page, 'console account');
    await look(page, 'console-account-tokyo');

    // Item 11: "+20" with a reason; the history shows the reason. A mistyped change comes back with why.
    await page.goto(`${origin}/console/products/C`);
    await page.selectOption('#warehouseCode', 'G006');
    await page.fill('#delta', '2.5');
    await page.fill('#reason', 'found in the back room');
    await Promise.all([page.waitForLoadState(), page.click('form[action$="/adjust"] button[type=submit]')]);
    assert.equal(await page.textContent('#adjust-error'), 'Not adjusted: “2.5” is not a change of stock: give a whole number such as +20 or -5');
    assert.equal(await page.getAttribute('#delta', 'aria-invalid'), 'true');
    assert.equal(await page.inputValue('#delta'), '2.5', 'the form keeps what was typed');
    assert.equal(await page.inputValue('#reason'), 'found in the back room');
    await look(page, 'console-product-refused');
    const qtyBefore = Number(await page.textContent('[data-warehouse="G006"] [data-qty]'));
    await page.fill('#delta', '+20');
    await Promise.all([page.waitForLoadState(), page.click('form[action$="/adjust"] button[type=submit]')]);
    assert.match((await page.textContent('#adjusted'))!, /by \+20: now/);
    assert.equal(Number(await page.textContent('[data-warehouse="G006"] [data-qty]')), qtyBefore + 20);
    const newest = page.locator('#stock-history tbody tr').first();
    assert.equal(await newest.locator('[data-delta]').textContent(), '+20');
    assert.equal(await newest.locator('[data-reason]').textContent(), 'found in the back room');
    await timesAreLocal(page, 'console stock history');
    await look(page, 'console-product-adjusted');

    // Item 16: the console's audit log: emails, fields, times as times.
    await page.goto(`${origin}/console/audit`);
    const adjust = page.locator('tr[data-action="stock.adjust"]').first();
    assert.equal((await adjust.locator('[data-actor]').textContent())!.replace(/\s+/g, ' ').trim(), 'owner@times.example (staff)');
    assert.equal(await adjust.locator('[data-field="C@G006"]').textContent(), `C@G006: ${qtyBefore} → ${qtyBefore + 20}`);
    assert.equal(await adjust.locator('[data-field="reason"]').textContent(), 'reason: found in the back room');
    const invite = page.locator('tr[data-action="merchant_user.invite"]').first();
    const expires = invite.locator('[data-field="expiresAt"] time');
    assert.equal(await expires.textContent(), tokyoText((await expires.getAttribute('datetime'))!), 'a time inside a change reads like every other time');
    await timesAreLocal(page, 'console audit');
    await look(page, 'console-audit-tokyo');

    // The business manager: the invitation, its pages in Tokyo's zone, its audit log.
    await page.goto(`${origin}${new URL(invited.body.data.invitationUrl).pathname}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);
    await page.goto(`${origin}/manager/orders`);
    await timesAreLocal(page, 'manager orders');
    await look(page, 'manager-orders-tokyo');
    await page.goto(`${origin}/manager/audit`);
    const accepted = page.locator('tr[data-audit="merchant_user.accept"]').first();
    assert.equal((await accepted.locator('[data-actor]').textContent())!.trim(), 'admin@times-shop.example');
    assert.equal(await accepted.locator('[data-field="role"]').textContent(), 'role: admin');
    assert.equal((await page.locator('tr[data-audit="merchant.create"] [data-actor]').textContent())!.trim(), 'the operator');
    await timesAreLocal(page, 'manager audit');
    await look(page, 'manager-audit-tokyo');
    assert.deepEqual(foreign, [], 'everything the pages need comes from this server');
    assert.deepEqual(consoleErrors, ['Failed to load resource: the server responded with a status of 400 (Bad Request)'], 'only the refused form (a 400 page)');
  });
});
