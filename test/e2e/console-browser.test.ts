import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the console browser test');
const PASSWORD = 'browser test passphrase';

describe('operator console in a real browser', { skip: SKIP }, () => {
  it('signs in, shows the dashboard, approves a refund in place (htmx), all from local assets', { timeout: 180_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite', { REFUND_REVIEW: 'manual' });
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'agent@example.com', role: 'support', password: PASSWORD },
      Date.now(),
    );
    await loadCatalogue(app, ORDER_CATALOGUE);
    const m = await newMerchant(app, 'Browser shop');
    const o = await placeOrder(app, m.token, [{ sku: 'C', quantity: 2 }]);
    const refundNo = (await app.merchant(m.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, { skuCode: 'C', quantity: 1, refundReason: 'Other' })).body
      .data as string;
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;

    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });

    await page.goto(`${origin}/console`);
    assert.equal(new URL(page.url()).pathname, '/console/sign-in', 'without a session the console sends you to sign in');
    await checkAccessibility(page);
    await screenshot(page, 'console', 'sign-in');
    await page.fill('#email', 'agent@example.com');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/console`), page.click('button[type=submit]')]);
    assert.equal(await page.textContent('[data-stat="pending"]'), '1');
    await checkAccessibility(page);
    await screenshot(page, 'console', 'dashboard');

    await Promise.all([page.waitForURL(`${origin}/console/refunds`), page.click('a[href="/console/refunds"] >> nth=0')]);
    const row = page.locator(`#refund-${refundNo}`);
    assert.equal(await row.count(), 1);
    await checkAccessibility(page);
    // htmx posts the form with the session's token header and swaps the row in place: no page load.
    await row.locator('button[data-action="approve"]').click();
    await page.waitForSelector(`#refund-${refundNo}[class="decided"]`, { timeout: 30_000 });
    assert.equal(await page.getAttribute(`#refund-${refundNo} [data-status]`, 'data-status'), 'refund_successfully');
    assert.equal(new URL(page.url()).pathname, '/console/refunds');
    const status = await app.store.db.selectFrom('refunds').select('status').where('id', '=', Number(refundNo)).executeTakeFirstOrThrow();
    assert.equal(status.status, 'refund_successfully');

    await checkAccessibility(page);
    await screenshot(page, 'console', 'refunds');
    await Promise.all([page.waitForURL(`${origin}/console/sign-in`), page.click('.who button[type=submit]')]);
    assert.deepEqual(foreign, [], 'no request leaves the server');
    assert.deepEqual(consoleErrors, []);
  });
});
