import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, consoleSignIn, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the refund review browser test');
const PASSWORD = 'refund review passphrase';

/**
 * The console's refund review queue in Chromium: approve and reject are hidden until their
 * confirmation is opened; a rejection needs a reason (the browser's `required`, and a reason of
 * spaces refused by the server in the row, in place); each decision swaps its row and the count of
 * refunds waiting without a page load. axe-core on each state; screenshots at 1280 and 390 px.
 */
describe('console refund review queue in a real browser', { skip: SKIP }, () => {
  it('asks before approving or rejecting, refuses a rejection without a reason in place, and counts down', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite', { REFUND_REVIEW: 'manual' });
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'agent@example.com', role: 'support', password: PASSWORD },
      Date.now(),
    );
    await loadCatalogue(app, ORDER_CATALOGUE);
    const shop = await newMerchant(app, 'Review shop');
    const o = await placeOrder(app, shop.token, [{ sku: 'C', quantity: 3 }]);
    const refundNos: string[] = [];
    for (const remark of ['arrived broken', 'ordered twice']) {
      const r = await app.merchant(shop.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, { skuCode: 'C', quantity: 1, refundReason: 'Other', remark });
      assert.equal(r.status, 200, r.raw);
      refundNos.push(r.body.data as string);
    }
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await consoleSignIn(page, origin, 'agent@example.com', PASSWORD);
    const look = async (name: string) => {
      await checkAccessibility(page);
      await screenshot(page, 'refund-review', name);
    };
    const status = async (refundNo: string) =>
      await app.store.db.selectFrom('refunds').select(['status', 'failure_reason']).where('id', '=', Number(refundNo)).executeTakeFirstOrThrow();

    await page.goto(`${origin}/console/refunds`);
    await page.evaluate('window.stillThisPage = true');
    assert.equal((await page.textContent('#queue-summary'))!.trim(), '2 refunds waiting, oldest first.');
    const [first, second] = refundNos.map((n) => page.locator(`#refund-${n}`));
    assert.match((await first.locator('[data-remark]').textContent())!, /arrived broken/);
    // Nothing to click by accident: the buttons show only inside an opened confirmation.
    for (const action of ['approve', 'reject']) assert.equal(await first.locator(`button[data-action="${action}"]`).isVisible(), false, `${action} hidden`);
    await look('queue');

    // Opened and closed again: nothing happens.
    await first.locator('summary[data-confirm-open="approve"]').click();
    assert.equal(await first.locator('button[data-action="approve"]').isVisible(), true);
    await first.locator('summary[data-confirm-open="approve"]').click();
    assert.equal(await first.locator('button[data-action="approve"]').isVisible(), false);
    assert.equal((await status(refundNos[0])).status, 'pending_review');

    // Reject without a reason: the browser does not send it (required).
    await first.locator('summary[data-confirm-open="reject"]').click();
    await first.locator('button[data-action="reject"]').click();
    assert.equal(await first.locator('input[name=reason]').evaluate((el) => (el as HTMLInputElement).validity.valueMissing), true);
    assert.equal((await status(refundNos[0])).status, 'pending_review');
    // A reason of spaces passes the browser and is refused by the server, in the row, which stays open.
    await first.locator('input[name=reason]').fill('   ');
    await first.locator('button[data-action="reject"]').click();
    await page.waitForSelector(`#refund-${refundNos[0]} [data-refused]`, { timeout: 30_000 });
    assert.match((await page.textContent(`#refund-${refundNos[0]} [data-refused]`))!, /say why the refund is rejected/);
    assert.equal(await page.locator(`#refund-${refundNos[0]} button[data-action="reject"]`).isVisible(), true, 'the rejection stays open');
    assert.equal((await status(refundNos[0])).status, 'pending_review');
    await look('reject-refused');

    // With a reason: rejected in place, and the count follows.
    await page.locator(`#refund-${refundNos[0]} input[name=reason]`).fill('Opened and used');
    await page.locator(`#refund-${refundNos[0]} button[data-action="reject"]`).click();
    await page.waitForSelector(`#refund-${refundNos[0]}.decided`, { timeout: 30_000 });
    assert.match((await page.textContent(`#refund-${refundNos[0]} [data-status]`))!, /Rejected: Opened and used/);
    assert.equal((await page.textContent('#queue-summary'))!.trim(), '1 refund waiting, oldest first.');
    assert.deepEqual(await status(refundNos[0]), { status: 'refund_failed', failure_reason: 'Opened and used' });

    await second.locator('summary[data-confirm-open="approve"]').click();
    await second.locator('button[data-action="approve"]').click();
    await page.waitForSelector(`#refund-${refundNos[1]}.decided`, { timeout: 30_000 });
    assert.equal((await page.textContent('#queue-summary'))!.trim(), '0 refunds waiting, oldest first.');
    assert.equal((await status(refundNos[1])).status, 'refund_successfully');
    assert.equal(await page.evaluate('window.stillThisPage'), true, 'decided in place, without a page load');
    await look('decided');
    assert.deepEqual(foreign, []);
    assert.deepEqual(
      consoleErrors.filter((e) => !/status of 400/.test(e)),
      [],
    );
  });
});
