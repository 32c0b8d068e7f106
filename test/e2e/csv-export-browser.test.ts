import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { parse } from 'csv-parse/sync';
import type { Page } from 'playwright-core';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot, consoleSignIn } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the CSV export browser test');
const PASSWORD = 'csv export passphrase';
const PHONE_WIDTH = 390;
const FORMULA_NAME = '=HYPERLINK("http://evil.example/","click")';

/** Clicks the page's "Download CSV" link and parses the file the browser saved (header row → field names). */
async function downloadCsv(page: Page, expectedName: RegExp): Promise<Record<string, string>[]> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-action="export-csv"]')]);
  assert.match(download.suggestedFilename(), expectedName);
  const chunks = (await (await download.createReadStream()).toArray()) as Buffer[];
  const file = Buffer.concat(chunks);
  assert.deepEqual([...file.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'the saved file starts with the UTF-8 byte order mark');
  return parse(file.toString('utf8'), { columns: true, bom: true }) as Record<string, string>[];
}

/** Screenshots at 1280 and 390 px, axe-core, and no sideways scrolling on a phone. */
async function looked(page: Page, name: string) {
  await screenshot(page, 'csv-export', name);
  await checkAccessibility(page);
  const original = page.viewportSize();
  await page.setViewportSize({ width: PHONE_WIDTH, height: 900 });
  const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
  if (original) await page.setViewportSize(original);
  assert.ok(width <= PHONE_WIDTH, `${name}: the page is ${width} px wide on a ${PHONE_WIDTH} px screen`);
}

/**
 * Issue 29, item 7, in Chromium: each list's "Download CSV" saves a file that parses, holds the
 * rows the page's filters select (every page of them), names merchants (formula-like text
 * defused), and the list says where its page stands; the business manager's files hold only the
 * user's merchant. Screenshots of the changed pages go to test-output/csv-export/.
 */
describe('CSV downloads in a real browser', { skip: SKIP }, () => {
  it('console (owner) and business manager (admin): every list downloads as CSV with its filters', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite', { REFUND_REVIEW: 'manual' });
    await loadCatalogue(app, ORDER_CATALOGUE);
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'owner@example.com', role: 'owner', password: PASSWORD },
      Date.now(),
    );
    const shop = await newMerchant(app, FORMULA_NAME);
    const other = await newMerchant(app, 'Shop Two');
    const shopOrders: string[] = [];
    for (let i = 1; i <= 3; i++) shopOrders.unshift((await placeOrder(app, shop.token, [{ sku: 'C', quantity: i }], { customOrderId: `SHOP-${i}` })).id);
    const otherOrder = (await placeOrder(app, other.token, [{ sku: 'A', quantity: 1 }])).id;
    const refund = await app.merchant(shop.token, 'POST', `/openapi/v2/order/orders/${shopOrders[2]}/refund`, {
      skuCode: 'C',
      quantity: 1,
      refundReason: 'Other',
    });
    assert.equal(refund.status, 200, refund.raw);
    const topUp = await app.admin('POST', `/admin/v1/merchants/${shop.merchantId}/account/top-ups`, {
      environment: 'sandbox',
      amount: 100,
      reference: 'WIRE-1',
    });
    assert.equal(topUp.status, 200, topUp.raw);

    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });

    await consoleSignIn(page, origin, 'owner@example.com', PASSWORD);

    // Orders: filter by merchant through the form, then download what the page shows (every page of it).
    await page.goto(`${origin}/console/orders`);
    assert.equal(await page.textContent('[data-counts]'), '1–4 of 4');
    await page.fill('#merchant', shop.merchantId);
    await Promise.all([page.waitForURL(/\/console\/orders\?/), page.click('form.filters button[type=submit]')]);
    assert.equal(await page.textContent('[data-counts]'), '1–3 of 3');
    assert.equal(await page.textContent(`tr[data-order="${shopOrders[0]}"] td:nth-child(3)`), FORMULA_NAME, 'the merchant by name');
    const orders = await downloadCsv(page, /^orders-\d{4}-\d{2}-\d{2}\.csv$/);
    assert.deepEqual(
      orders.map((o) => o.order_id),
      shopOrders,
    );
    assert.equal(orders[0].merchant, `'${FORMULA_NAME}`, 'a formula-like cell is prefixed with a quote');
    await looked(page, 'console-orders');

    await page.goto(`${origin}/console/refunds`);
    assert.equal(await page.textContent('[data-counts]'), '1–1 of 1');
    const refunds = await downloadCsv(page, /^refund-review-/);
    assert.deepEqual(
      refunds.map((r) => [r.order_id, r.status]),
      [[shopOrders[2], 'pending_review']],
    );
    await looked(page, 'console-refunds');

    // Every refund, whatever its state (issue 29, item 7): reached from the navigation, filtered
    // through the form, merchants named and linked, downloaded with the filters applied.
    const rejected = await app.merchant(other.token, 'POST', `/openapi/v2/order/orders/${otherOrder}/refund`, {
      skuCode: 'A',
      quantity: 1,
      refundReason: 'Other',
    });
    assert.equal(rejected.status, 200, rejected.raw);
    assert.equal((await app.admin('POST', `/admin/v1/refunds/${rejected.body.data}/reject`, { reason: 'used' })).status, 200);
    await Promise.all([page.waitForURL(`${origin}/console/refunds/all`), page.click('nav a[href="/console/refunds/all"]')]);
    assert.equal(await page.textContent('[data-counts]'), '1–2 of 2');
    await page.selectOption('#status', 'refund_failed');
    await Promise.all([page.waitForURL(/\/console\/refunds\/all\?/), page.click('form.filters button[type=submit]')]);
    assert.equal(await page.textContent('[data-counts]'), '1–1 of 1');
    assert.equal(await page.textContent(`tr[data-refund="${rejected.body.data}"] a[data-merchant]`), 'Shop Two');
    const allRefunds = await downloadCsv(page, /^refunds-\d{4}-\d{2}-\d{2}\.csv$/);
    assert.deepEqual(
      allRefunds.map((r) => [r.refund_no, r.merchant, r.status]),
      [[String(rejected.body.data), 'Shop Two', 'refund_failed']],
    );
    await looked(page, 'console-all-refunds');
    await page.goto(`${origin}/console/refunds/all`);
    const everyRefund = await downloadCsv(page, /^refunds-/);
    assert.deepEqual(
      everyRefund.map((r) => r.merchant),
      ['Shop Two', `'${FORMULA_NAME}`],
      'no filter: both, newest first, a formula-like name defused',
    );
    // The order page names the merchant and links its page.
    await page.goto(`${origin}/console/orders/${shopOrders[2]}`);
    await Promise.all([page.waitForURL(`${origin}/console/merchants/${shop.merchantId}`), page.click('dd a[data-merchant]')]);
    assert.equal(await page.textContent('h1'), `Merchant ${FORMULA_NAME}`);

    await page.goto(`${origin}/console/products?q=bowl`);
    const stock = await downloadCsv(page, /^stock-/);
    assert.deepEqual(
      stock.map((s) => [s.sku, s.warehouse, s.quantity]),
      [['C', 'G007', String(1000 - 6)]],
    );
    await looked(page, 'console-products');

    await page.goto(`${origin}/console/audit?action=merchant.create`);
    assert.equal(await page.textContent('[data-counts]'), '1–2 of 2');
    const audit = await downloadCsv(page, /^audit-log-/);
    assert.deepEqual(audit.map((a) => a.action).sort(), ['merchant.create', 'merchant.create']);
    await looked(page, 'console-audit');

    await page.goto(`${origin}/console/merchants/${shop.merchantId}/transactions?environment=sandbox`);
    const transactions = await downloadCsv(page, new RegExp(`^transactions-${shop.merchantId}-sandbox-`));
    assert.deepEqual(
      transactions.map((r) => r.type),
      ['top_up', 'order_charge', 'order_charge', 'order_charge'],
    );
    await looked(page, 'console-transactions');

    await page.goto(`${origin}/console/webhooks`);
    await looked(page, 'console-webhooks');

    // The business manager, as the shop's admin: its own orders, transactions and audit log only.
    const invited = await app.admin('POST', `/admin/v1/merchants/${shop.merchantId}/users`, { email: 'admin@shop.example', role: 'admin' });
    assert.equal(invited.status, 200, invited.raw);
    await page.goto(`${origin}${new URL(invited.body.data.invitationUrl).pathname}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);

    await page.goto(`${origin}/manager/orders?status=processing`);
    assert.equal(await page.textContent('[data-counts]'), '1–3 of 3');
    const mine = await downloadCsv(page, /^orders-/);
    assert.deepEqual(
      mine.map((o) => o.order_id),
      shopOrders,
    );
    assert.ok(!mine.some((o) => o.order_id === otherOrder));
    await looked(page, 'manager-orders');

    await page.goto(`${origin}/manager/balance`);
    const balance = await downloadCsv(page, /^transactions-sandbox-/);
    assert.equal(balance.length, 4);
    assert.equal(balance[0].reference, 'WIRE-1');
    await looked(page, 'manager-balance');

    await page.goto(`${origin}/manager/audit`);
    const log = await downloadCsv(page, /^audit-log-/);
    assert.ok(log.length > 0 && log.every((row) => row.actor !== 'owner@example.com'));
    await looked(page, 'manager-audit');

    assert.deepEqual(foreign, [], 'everything the pages need comes from this server');
    assert.deepEqual(consoleErrors, []);
  });
});
