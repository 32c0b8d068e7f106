import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';
import { signedIn, staff } from './console-client.ts';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, stockQty, tableDigests, useApp, type TestApp } from '../helpers.ts';

/**
 * The operator cancels a split order that has not shipped (the supplier cannot fulfil it): stock
 * back, the units and the split's freight credited to the merchant (`cancellation_credit`, SPEC §15),
 * `order.cancelled` when nothing is left; refused, writing nothing, for a split that shipped, has a
 * refund pending or is already cancelled.
 */
const DE = { country: 'DE', phone: '1', recipient: 'R', province: 'P' };

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`operator cancels an unshipped split order (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);

    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      await t.admin('PUT', '/admin/v1/stocks', {
        items: [
          { sku: 'A', warehouseCode: 'G007', qty: 1000 },
          { sku: 'B', warehouseCode: 'G006', qty: 1000 },
        ],
      });
    });

    /** A merchant with a webhook endpoint for order.cancelled, and an order of two splits (A from G007, B from G006). */
    async function twoSplitOrder(t: TestApp, name: string) {
      const m = await newMerchant(t, name);
      const hook = await t.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['order.cancelled'] });
      assert.equal(hook.status, 200, hook.raw);
      const placed = await t.merchant(
        m.token,
        'POST',
        '/openapi/v1/order/orders',
        order(
          [
            { sku: 'A', quantity: 2 },
            { sku: 'B', quantity: 3 },
          ],
          { orderAddress: DE },
        ),
      );
      assert.equal(placed.status, 200, placed.raw);
      const orderId = placed.body.data as string;
      const record = async () => (await t.merchant(m.token, 'GET', `/openapi/v2/order/orders/${orderId}`)).body.data;
      const placedRecord = await record();
      const split = (warehouseCode: string) => placedRecord.splitOrders.find((s: { warehouseCode: string }) => s.warehouseCode === warehouseCode);
      return { m, orderId, record, a: split('G007'), b: split('G006'), placedRecord };
    }
    const cancel = (id: string, body: unknown = { reason: 'warehouse flooded' }) => t.admin('POST', `/admin/v1/split-orders/${id}/cancel`, body);
    const balance = async (token: string) => (await t.merchant(token, 'GET', '/openapi/v1/account')).body.data.balance as number;
    const cancelledEvents = async (merchantId: number) =>
      (await t.store.db.selectFrom('webhook_events').select('payload').where('merchant_id', '=', merchantId).where('type', '=', 'order.cancelled').execute())
        .length;

    it('returns the split’s units to stock, credits them and its freight, and cancels the order with its last split', async () => {
      const { m, orderId, record, a, b, placedRecord } = await twoSplitOrder(t, 'Cancelled');
      const stockA = await stockQty(t, 'A', 'G007');
      const charged = await balance(m.token);
      assert.equal(charged, -placedRecord.finalAmount);

      const r = await cancel(a.id);
      assert.equal(r.status, 200, r.raw);
      const after = await record();
      const splitA = after.splitOrders.find((s: { id: string }) => s.id === a.id);
      assert.equal(splitA.status, 'cancelled');
      const lineA = after.orderItems.find((i: { skuCode: string }) => i.skuCode === 'A');
      assert.equal(lineA.refundedQuantity, 2);
      const credit = Math.round(lineA.amount * 2 * 100 + a.freightAmount * 100) / 100;
      assert.equal(after.refundedAmount, credit);
      assert.equal(after.status, 'processing', 'the other split is still to ship');
      assert.equal(await stockQty(t, 'A', 'G007'), stockA! + 2);
      assert.equal(await balance(m.token), Math.round((charged + credit) * 100) / 100);
      const list = (await t.merchant(m.token, 'GET', '/openapi/v1/account/transactions?type=cancellation_credit')).body.data.list;
      assert.equal(list.length, 1);
      assert.equal(list[0].amount, credit);
      assert.equal(list[0].orderId, orderId);
      assert.equal(await cancelledEvents(Number(m.merchantId)), 0, 'no order.cancelled while a split is left');
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);

      assert.equal((await cancel(b.id)).status, 200);
      const last = await record();
      assert.equal(last.status, 'cancel');
      assert.equal(last.refundableAmount, 0);
      assert.equal(await balance(m.token), 0, 'everything charged came back');
      assert.equal(await cancelledEvents(Number(m.merchantId)), 1);
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);

      const audit = await t.store.db.selectFrom('audit_log').select(['action', 'after_summary']).where('target', '=', `split_order:${a.id}`).execute();
      assert.deepEqual(
        audit.map((row) => row.action),
        ['split_order.cancel'],
      );
      assert.match(String(audit[0].after_summary), /warehouse flooded/);
    });

    it('ledger verify names a cancellation credit whose split order is not cancelled', async () => {
      const { a } = await twoSplitOrder(t, 'Uncancelled');
      assert.equal((await cancel(a.id)).status, 200);
      await t.store.db.updateTable('split_orders').set({ status: 'waiting_to_ship' }).where('id', '=', Number(a.id)).execute();
      const entry = await t.store.db.selectFrom('journal_entries').select('id').where('split_order_id', '=', Number(a.id)).executeTakeFirstOrThrow();
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, [
        {
          rule: 'cancellation_credit',
          message: `entry ${entry.id}: credits the cancellation of split order ${a.id}, which is not a cancelled split of its order`,
        },
      ]);
      await t.store.db.updateTable('split_orders').set({ status: 'cancelled' }).where('id', '=', Number(a.id)).execute();
    });

    it('refuses a refund of a cancelled split’s lines: nothing is left of them (409/40902)', async () => {
      const { m, orderId, a } = await twoSplitOrder(t, 'NoRefundAfter');
      assert.equal((await cancel(a.id)).status, 200);
      const r = await t.merchant(m.token, 'POST', `/openapi/v2/order/orders/${orderId}/refund`, { orderItems: [{ skuCode: 'A', quantity: 1 }] });
      assert.equal(r.status, 409, r.raw);
      assert.equal(r.body.code, 40902);
    });

    it('refuses, writing nothing, a shipped split, a split with a refund pending, a cancelled one, a missing reason and an unknown id', async () => {
      const { m, orderId, a, b } = await twoSplitOrder(t, 'Refused');
      assert.equal((await t.admin('POST', `/admin/v1/split-orders/${a.id}/ship`, { carrier: 'DHL', trackingCode: 'T1' })).status, 200);
      const pending = await t.merchant(m.token, 'POST', `/openapi/v2/order/orders/${orderId}/refund`, { orderItems: [{ skuCode: 'B', quantity: 1 }] });
      assert.equal(pending.status, 200, pending.raw);

      const before = await tableDigests(t.store);
      for (const [id, body, status, code] of [
        [a.id, undefined, 409, 40903],
        [b.id, undefined, 409, 40903],
        [b.id, {}, 400, 40000],
        [b.id, { reason: '' }, 400, 40000],
        [b.id, { reason: 'x'.repeat(501) }, 400, 40000],
        ['999999999', undefined, 404, 40400],
        ['nope', undefined, 400, 40000],
      ] as const) {
        const r = await cancel(id, body);
        assert.equal(r.status, status, `${id} ${JSON.stringify(body)}: ${r.raw}`);
        assert.equal(r.body.code, code, r.raw);
      }
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
    });

    it('cancels a split once: a second cancel is 409/40903 and credits nothing more', async () => {
      const { m, a } = await twoSplitOrder(t, 'Twice');
      assert.equal((await cancel(a.id)).status, 200);
      const credited = await balance(m.token);
      const again = await cancel(a.id);
      assert.equal(again.status, 409, again.raw);
      assert.equal(again.body.code, 40903);
      assert.equal(await balance(m.token), credited);
    });

    it('in the console: a confirmation page says what will happen, its form cancels (303 to the order), and the warehouse role may not', async () => {
      const { m, orderId, a, b, placedRecord } = await twoSplitOrder(t, 'ConsoleCancel');
      await staff(t, `owner-${dialect}@example.com`, 'owner');
      await staff(t, `warehouse-${dialect}@example.com`, 'warehouse');
      const owner = await signedIn(t, `owner-${dialect}@example.com`);
      const warehouse = await signedIn(t, `warehouse-${dialect}@example.com`);

      const orderPage = await owner.get(`/console/orders/${orderId}`);
      assert.match(orderPage.body, new RegExp(`href="/console/splits/${a.id}/cancel"`));
      assert.doesNotMatch((await warehouse.get(`/console/orders/${orderId}`)).body, /\/cancel"/, 'no cancel link for the warehouse');

      const confirm = await owner.get(`/console/splits/${a.id}/cancel`);
      assert.equal(confirm.statusCode, 200, confirm.body);
      const lineA = placedRecord.orderItems.find((i: { skuCode: string }) => i.skuCode === 'A');
      const credit = (Math.round(lineA.amount * 200) + Math.round(a.freightAmount * 100)) / 100;
      assert.match(confirm.body, new RegExp(`data-field="credit">${credit.toFixed(2)} USD`));
      assert.match(confirm.body, /returns its 2 units to the stock of warehouse G007/);
      const balanceBefore = await balance(m.token);

      assert.equal((await warehouse.get(`/console/splits/${a.id}/cancel`)).statusCode, 403);
      const refused = await warehouse.post(`/console/splits/${a.id}/cancel`, { _csrf: await warehouse.csrf(), reason: 'no' });
      assert.equal(refused.statusCode, 403);
      assert.equal(await balance(m.token), balanceBefore, 'the refused cancel changed nothing');

      const missing = await owner.post(`/console/splits/${a.id}/cancel`, { _csrf: await owner.csrf(), reason: '' });
      assert.equal(missing.statusCode, 400);
      const done = await owner.post(`/console/splits/${a.id}/cancel`, { _csrf: await owner.csrf(), reason: 'out of stock at the supplier' });
      assert.equal(done.statusCode, 303);
      assert.equal(done.headers.location, `/console/orders/${orderId}`);
      assert.equal(await balance(m.token), Math.round((balanceBefore + credit) * 100) / 100);
      const shown = await owner.get(`/console/orders/${orderId}`);
      assert.doesNotMatch(shown.body, new RegExp(`href="/console/splits/${a.id}/cancel"`), 'a cancelled split offers no cancel');
      assert.match(shown.body, new RegExp(`href="/console/splits/${b.id}/cancel"`));
    });

    it('is the operator’s: a merchant token cannot cancel a split', async () => {
      const { m, a } = await twoSplitOrder(t, 'NotYours');
      const r = await t.merchant(m.token, 'POST', `/admin/v1/split-orders/${a.id}/cancel`, { reason: 'mine' });
      assert.ok([401, 403].includes(r.status), r.raw);
    });
  });
}
