import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { RefundWorker } from '../../src/jobs/refund.worker.ts';
import { decideRefund } from '../../src/services/refunds.service.ts';
import { refundableOrderOf, resolveRefund, writeRefundRequest } from '../../src/store/refunds.repository.ts';
import { allMerchants, outsideTransaction } from '../../src/store/tenancy.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, stockQty, useApp, type TestApp } from '../helpers.ts';

const worker = (t: TestApp) => new RefundWorker({ store: t.store, config: { refundReview: 'auto', refundAutoDelayMs: 0 } });

async function qty(t: TestApp, sku: string, warehouseCode: string) {
  const q = await stockQty(t, sku, warehouseCode);
  assert.notEqual(q, null, `a stock row for ${sku} in ${warehouseCode}`);
  return q as number;
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`refunds and fulfilment (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);
    let token: string;
    let other: string;
    const refund = (orderId: string, body: unknown, as = token, headers: Record<string, string> = {}) =>
      t.app
        .inject({
          method: 'POST',
          url: `/openapi/v2/order/orders/${orderId}/refund`,
          payload: body as object,
          headers: { authorization: `Bearer ${as}`, ...headers },
        })
        .then((r) => ({ status: r.statusCode, headers: r.headers, body: r.json() }));
    const getOrder = async (id: string) => (await t.merchant(token, 'GET', `/openapi/v2/order/orders/${id}`)).body.data;
    const refundsOf = async (id: string) => (await t.merchant(token, 'GET', `/openapi/v2/order/orders/refund/${id}`)).body.data;
    /** Each line's pending refund quantity, by SKU: what the reservations took. */
    const pendingBySku = async (orderId: string | number) =>
      (
        await t.store.db
          .selectFrom('order_items')
          .select(['sku', 'pending_refund_quantity as pending'])
          .where('order_id', '=', Number(orderId))
          .orderBy('sku')
          .execute()
      ).map((r) => [r.sku, Number(r.pending)]);
    const ship = (splitId: string) => t.admin('POST', `/admin/v1/split-orders/${splitId}/ship`, { carrier: 'UPS', trackingCode: `1Z${splitId}` });

    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      await t.admin('PUT', '/admin/v1/stocks', {
        items: [
          { sku: 'A', warehouseCode: 'G007', qty: 1000 },
          { sku: 'A', warehouseCode: 'US01', qty: 1000 },
          { sku: 'B', warehouseCode: 'G006', qty: 1000 },
        ],
      });
      token = (await newMerchant(t, 'Shop')).token;
      other = (await newMerchant(t, 'Other')).token;
    });

    it('refunds part of an order, then the rest, with stock, amounts and statuses following', async () => {
      // Ship to DE: A comes from G007 (default), B from G006 — two split orders.
      const o = await placeOrder(
        t,
        token,
        [
          { sku: 'A', quantity: 3 },
          { sku: 'B', quantity: 2 },
        ],
        { orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'P' } },
      );
      const a = o.orderItems.find((i: any) => i.skuCode === 'A');
      const before = await qty(t, 'A', 'G007');
      const r1 = await refund(o.id, { orderItems: [{ itemId: a.itemId, quantity: 2 }], refundReason: "don't want anymore", remark: 'too many' });
      assert.equal(r1.status, 200, JSON.stringify(r1.body));
      assert.match(r1.body.data, /^\d{13}$/);
      let order = await getOrder(o.id);
      assert.equal(order.refundStatus, 'refunding');
      assert.equal(order.orderItems.find((i: any) => i.itemId === a.itemId).refundStatus, 'refunding');
      const pending = (await refundsOf(o.id)).list[0];
      assert.deepEqual(
        { ...pending, createDate: undefined, updateDate: undefined },
        {
          refundNo: r1.body.data,
          id: o.id,
          remark: 'too many',
          refundReason: "Don't Want Anymore",
          refundStatus: 'pending_review',
          failureReason: null,
          amount: 18.64,
          items: [{ itemId: a.itemId, skuCode: 'A', quantity: 2, countryCode: 'CN' }],
          createDate: undefined,
          updateDate: undefined,
        },
      );

      assert.equal(await worker(t).runOnce(), 1);
      const done = (await refundsOf(o.id)).list[0];
      assert.equal(done.refundStatus, 'refund_successfully');
      assert.equal(done.amount, 18.64);
      assert.equal(await qty(t, 'A', 'G007'), before + 2);
      order = await getOrder(o.id);
      assert.equal(order.refundStatus, 'partial_refund');
      assert.equal(order.refundedAmount, 18.64);
      assert.equal(order.refundableAmount, Math.round((order.finalAmount - 18.64) * 100) / 100);
      assert.ok(order.refundDate);
      assert.equal(order.status, 'processing');
      assert.equal(order.orderItems.find((i: any) => i.itemId === a.itemId).refundedQuantity, 2);

      // The rest, as a whole-order refund: the last A, both B, and both splits' freight.
      const r2 = await refund(o.id, { remark: 'cancel it all' });
      assert.equal(r2.status, 200, JSON.stringify(r2.body));
      await worker(t).runOnce();
      order = await getOrder(o.id);
      const freight = order.splitOrders.reduce((s: number, x: any) => s + x.freightAmount, 0);
      const second = (await refundsOf(o.id)).list[0];
      assert.equal(second.refundNo, r2.body.data, 'newest first');
      assert.equal(second.amount, Math.round((9.32 + 2 * 4.5 + freight) * 100) / 100);
      assert.equal(order.status, 'cancel');
      assert.ok(order.cancelDate);
      assert.equal(order.refundStatus, 'refunded');
      assert.equal(order.refundableAmount, 0);
      assert.equal(order.refundedAmount, order.finalAmount);
      assert.ok(order.splitOrders.every((s: any) => s.status === 'cancelled'));
      assert.deepEqual(await ledgerMismatches(t.store.db), []);

      const nothing = await refund(o.id, {});
      assert.equal(nothing.status, 409);
      assert.equal(nothing.body.code, 40902);
    });

    it('names lines by itemId, by skuCode (+countryCode), or flat; refuses the ambiguous and the wrong', async () => {
      // Ship to US with 1005 A: US01 has 1000, so A is split across US01 and G007.
      const o = await placeOrder(t, token, [
        { sku: 'A', quantity: 1005 },
        { sku: 'B', quantity: 1 },
      ]);
      assert.equal(new Set(o.orderItems.filter((i: any) => i.skuCode === 'A').map((i: any) => i.countryCode)).size, 2);
      const ambiguous = await refund(o.id, { orderItems: [{ skuCode: 'A', quantity: 1 }] });
      assert.equal(ambiguous.status, 400);
      assert.equal(ambiguous.body.errors[0].field, 'orderItems[0].skuCode');
      const bad: [unknown, string][] = [
        [{ orderItems: [{ skuCode: 'A', countryCode: 'DE' }] }, 'orderItems[0].countryCode'],
        [{ orderItems: [{ itemId: '1' }] }, 'orderItems[0].itemId'],
        [{ orderItems: [{ skuCode: 'NOPE' }] }, 'orderItems[0].skuCode'],
        [{ orderItems: [{ quantity: 1 }] }, 'orderItems[0].itemId'],
        [{ orderItems: [{ skuCode: 'B', quantity: 0 }] }, 'orderItems[0].quantity'],
        [{ orderItems: [{ skuCode: 'B', quantity: 1.5 }] }, 'orderItems[0].quantity'],
        [{ refundReason: 'Changed my mind' }, 'refundReason'],
        [{ remark: 'r'.repeat(501) }, 'remark'],
      ];
      for (const [body, field] of bad) {
        const r = await refund(o.id, body);
        assert.equal(r.status, 400, `${field}: ${JSON.stringify(r.body)}`);
        assert.ok(
          r.body.errors.some((e: any) => e.field === field),
          `${field}: ${JSON.stringify(r.body.errors)}`,
        );
      }
      const reason = await refund(o.id, { refundReason: 'nope' });
      assert.match(reason.body.message, /Out Of Stock/);
      const us = await refund(o.id, { orderItems: [{ skuCode: 'A', countryCode: 'us', quantity: 3 }] });
      assert.equal(us.status, 200, JSON.stringify(us.body));
      const flat = await refund(o.id, { skuCode: 'B', refundReason: 'OUT OF STOCK' });
      assert.equal(flat.status, 200, JSON.stringify(flat.body));
      const list = (await refundsOf(o.id)).list;
      assert.deepEqual(
        list[0].items.map((i: any) => [i.skuCode, i.quantity]),
        [['B', 1]],
        'default quantity: all that remains',
      );
      assert.equal(list[0].refundReason, 'Out Of Stock');
      assert.deepEqual(
        list[1].items.map((i: any) => [i.skuCode, i.countryCode, i.quantity]),
        [['A', 'US', 3]],
      );
      // Pending quantities count at once: 997 left on the US line.
      const usItem = o.orderItems.find((i: any) => i.skuCode === 'A' && i.countryCode === 'US');
      const tooMuch = await refund(o.id, { orderItems: [{ itemId: usItem.itemId, quantity: 998 }] });
      assert.equal(tooMuch.status, 409);
      assert.equal(tooMuch.body.code, 40902);
      assert.equal(tooMuch.body.errors[0].refundable, 997);
      const twice = await refund(o.id, {
        orderItems: [
          { itemId: usItem.itemId, quantity: 500 },
          { itemId: usItem.itemId, quantity: 498 },
        ],
      });
      assert.equal(twice.body.code, 40902, 'entries for one line count together');
      await worker(t).runOnce();
    });

    it('refunds the whole order only for a body with no item field at all (Hardening III)', async () => {
      const o = await placeOrder(t, token, [
        { sku: 'A', quantity: 2 },
        { sku: 'B', quantity: 2 },
      ]);
      // Item fields that name no line, or orderItems that is not a list: 400 naming the field, nothing reserved.
      const refused: [unknown, string][] = [
        [{ quantity: 1 }, 'itemId'],
        [{ itemId: null }, 'itemId'],
        [{ skuCode: null }, 'itemId'],
        [{ skuCode: '  ' }, 'itemId'],
        [{ countryCode: 'CN', remark: 'r' }, 'itemId'],
        [{ itemId: null, skuCode: null, quantity: null, countryCode: null }, 'itemId'],
        [{ orderItems: null }, 'orderItems'],
        [{ orderItems: {} }, 'orderItems'],
        [{ orderItems: 'all' }, 'orderItems'],
      ];
      for (const [body, field] of refused) {
        const r = await refund(o.id, body);
        assert.equal(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 40000, JSON.stringify(body));
        assert.deepEqual(
          r.body.errors.map((e: any) => e.field),
          [field],
          JSON.stringify(body),
        );
      }
      const order = await getOrder(o.id);
      assert.equal(order.refundStatus, null, 'nothing was reserved');
      assert.ok(order.orderItems.every((i: any) => i.refundStatus === null));
      assert.deepEqual((await refundsOf(o.id)).list, [], 'no refund was written');
      // A body with only remark / reason refunds every line.
      const whole = await refund(o.id, { remark: 'all of it', refundReason: 'Other' });
      assert.equal(whole.status, 200, JSON.stringify(whole.body));
      assert.deepEqual((await refundsOf(o.id)).list[0].items.map((i: any) => [i.skuCode, i.quantity]).sort(), [
        ['A', 2],
        ['B', 2],
      ]);
      await worker(t).runOnce();
    });

    it('refuses refunds of shipped lines (40901) and ships only without a pending refund (40903)', async () => {
      const o = await placeOrder(
        t,
        token,
        [
          { sku: 'A', quantity: 2 },
          { sku: 'B', quantity: 2 },
        ],
        { orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'P' } },
      );
      const splitA = o.splitOrders.find((s: any) => s.warehouseCode === 'G007');
      const splitB = o.splitOrders.find((s: any) => s.warehouseCode === 'G006');
      // A refund is pending on B's split: shipping it is refused until the refund is decided.
      const pendingB = await refund(o.id, { skuCode: 'B', quantity: 1 });
      assert.equal(pendingB.status, 200);
      const refused = await ship(splitB.id);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, 40903);
      // Ship A's split: refunds of its line are refused, and so is a whole-order refund.
      const shipped = await ship(splitA.id);
      assert.equal(shipped.status, 200, JSON.stringify(shipped.body));
      assert.equal(shipped.body.data.fulfillmentStatus, 'partially_shipped');
      assert.equal(shipped.body.data.fulfillments.length, 1);
      assert.deepEqual([shipped.body.data.fulfillments[0].carrier, shipped.body.data.fulfillments[0].status], ['UPS', 'shipped']);
      const lineA = await refund(o.id, { skuCode: 'A', quantity: 1 });
      assert.equal(lineA.status, 409);
      assert.equal(lineA.body.code, 40901);
      const whole = await refund(o.id, {});
      assert.equal(whole.body.code, 40901);
      await worker(t).runOnce();
      assert.equal((await ship(splitB.id)).status, 200);
      assert.equal((await ship(splitB.id)).body.code, 40903, 'shipping twice is refused');
      const full = await getOrder(o.id);
      assert.equal(full.fulfillmentStatus, 'fully_shipped');
      assert.equal(full.splitOrders.find((s: any) => s.id === splitA.id).trackingCode, `1Z${splitA.id}`);
      assert.equal(
        (await t.admin('POST', `/admin/v1/split-orders/${splitA.id}/deliver`)).body.data.fulfillmentStatus,
        'partially_shipped'.replace('partially_shipped', 'fully_shipped'),
      );
      const delivered = await t.admin('POST', `/admin/v1/split-orders/${splitB.id}/deliver`);
      assert.equal(delivered.body.data.fulfillmentStatus, 'completed');
      assert.equal(delivered.body.data.status, 'completed');
      assert.ok(delivered.body.data.completedDate);
      assert.equal((await t.admin('POST', `/admin/v1/split-orders/${splitB.id}/deliver`)).body.code, 40903);
      assert.equal((await t.admin('POST', '/admin/v1/split-orders/5999999999999/ship', { carrier: 'x', trackingCode: 'y' })).status, 404);
      assert.equal((await t.admin('POST', `/admin/v1/split-orders/${splitB.id}/ship`, { carrier: '' })).status, 400);
    });

    it('refuses refunds after the split shipped and after it was delivered: one line and the whole order, 409/40901, nothing written', async () => {
      // Ship to DE: A from G007, B from G006 — two split orders; A's goes out and arrives.
      const o = await placeOrder(
        t,
        token,
        [
          { sku: 'A', quantity: 2 },
          { sku: 'B', quantity: 2 },
        ],
        { orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'P' } },
      );
      const splitA = o.splitOrders.find((s: any) => s.warehouseCode === 'G007');
      const a = o.orderItems.find((i: any) => i.skuCode === 'A');
      const refusedEverywhere = async (state: string) => {
        const bodies: [string, unknown][] = [
          ['one line by itemId', { orderItems: [{ itemId: a.itemId, quantity: 1 }] }],
          ['one line flat by skuCode', { skuCode: 'A' }],
          ['the whole order', {}],
          ['the whole order, remark only', { remark: 'all of it' }],
        ];
        for (const [what, body] of bodies) {
          const r = await refund(o.id, body);
          assert.equal(r.status, 409, `${state}, ${what}: ${JSON.stringify(r.body)}`);
          assert.equal(r.body.code, 40901, `${state}, ${what}`);
          assert.ok(
            r.body.errors.some((e: any) => e.itemId === a.itemId),
            `${state}, ${what}: names item ${a.itemId}: ${JSON.stringify(r.body.errors)}`,
          );
        }
        const order = await getOrder(o.id);
        assert.equal(order.refundStatus, null, `${state}: nothing reserved`);
        assert.deepEqual((await refundsOf(o.id)).list, [], `${state}: no refund written`);
        const pending = await t.store.db.selectFrom('order_items').select('pending_refund_quantity as p').where('order_id', '=', Number(o.id)).execute();
        assert.ok(
          pending.every((r) => Number(r.p) === 0),
          `${state}: no pending quantity`,
        );
      };
      assert.equal((await ship(splitA.id)).status, 200);
      await refusedEverywhere('shipped');
      const delivered = await t.admin('POST', `/admin/v1/split-orders/${splitA.id}/deliver`);
      assert.equal(delivered.status, 200, JSON.stringify(delivered.body));
      assert.equal(delivered.body.data.splitOrders.find((s: any) => s.id === splitA.id).status, 'completed');
      await refusedEverywhere('delivered');
      // B's split is still waiting: its line may be refunded.
      const lineB = await refund(o.id, { skuCode: 'B', quantity: 1 });
      assert.equal(lineB.status, 200, JSON.stringify(lineB.body));
      await worker(t).runOnce();
    });

    it('fails a pending refund whose split was delivered before the decision', async () => {
      const o = await placeOrder(t, token, [{ sku: 'C', quantity: 2 }]);
      const stock = await qty(t, 'C', 'G007');
      const r = await refund(o.id, { skuCode: 'C', quantity: 1 });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      // As if a ship and a delivery had slipped in between the request and the decision.
      await t.store.db
        .updateTable('split_orders')
        .set({ status: 'completed', shipped_at: Date.now(), delivered_at: Date.now() })
        .where('order_id', '=', Number(o.id))
        .execute();
      await worker(t).runOnce();
      const decided = (await refundsOf(o.id)).list[0];
      assert.equal(decided.refundStatus, 'refund_failed');
      assert.match(decided.failureReason, /shipped before the refund was decided/);
      assert.equal(await qty(t, 'C', 'G007'), stock, 'nothing returned to stock');
      assert.equal((await getOrder(o.id)).orderItems[0].refundedQuantity, 0);
    });

    it('fails a refund whose split shipped before the decision, returning nothing to stock', async () => {
      const o = await placeOrder(t, token, [{ sku: 'C', quantity: 2 }]);
      const stock = await qty(t, 'C', 'G007');
      const r = await refund(o.id, {});
      // As if a ship had slipped in between the request and the decision.
      await t.store.db.updateTable('split_orders').set({ status: 'shipped', shipped_at: Date.now() }).where('order_id', '=', Number(o.id)).execute();
      await worker(t).runOnce();
      const decided = (await refundsOf(o.id)).list[0];
      assert.equal(decided.refundNo, r.body.data);
      assert.equal(decided.refundStatus, 'refund_failed');
      assert.match(decided.failureReason, /shipped before the refund was decided/);
      assert.equal(await qty(t, 'C', 'G007'), stock);
      const order = await getOrder(o.id);
      assert.equal(order.refundStatus, null, 'a failed refund leaves the status as it was');
      assert.equal(order.orderItems[0].refundedQuantity, 0);
    });

    it('accepts one of two concurrent refunds for the last unit', async () => {
      const o = await placeOrder(t, token, [{ sku: 'C', quantity: 1 }]);
      const results = await Promise.all([refund(o.id, { skuCode: 'C', quantity: 1 }), refund(o.id, { skuCode: 'C', quantity: 1 })]);
      assert.deepEqual(results.map((r) => r.body.code).sort(), [10000, 40902]);
      await worker(t).runOnce();
    });

    it('takes every one of 20 concurrent one-unit refunds of one order when there is enough (none lost to the race)', async () => {
      const o = await placeOrder(t, token, [
        { sku: 'C', quantity: 12 },
        { sku: 'B', quantity: 12 },
      ]);
      const results = await Promise.all(Array.from({ length: 20 }, (_, n) => refund(o.id, { skuCode: n % 2 ? 'C' : 'B', quantity: 1 })));
      assert.deepEqual(
        results.map((r) => r.status),
        Array(20).fill(200),
        JSON.stringify(results.find((r) => r.status !== 200)?.body),
      );
      assert.equal(new Set(results.map((r) => r.body.data)).size, 20, 'twenty refunds');
      assert.deepEqual(await pendingBySku(o.id), [
        ['B', 10],
        ['C', 10],
      ]);
      for (let n = 0; n < 3; n++) await worker(t).runOnce();
    });

    it('reserves several lines together: concurrent two-line refunds never take more than was bought', async () => {
      const o = await placeOrder(t, token, [
        { sku: 'A', quantity: 2 },
        { sku: 'B', quantity: 2 },
      ]);
      const both = {
        orderItems: [
          { skuCode: 'A', quantity: 1 },
          { skuCode: 'B', quantity: 1 },
        ],
      };
      const results = await Promise.all(Array.from({ length: 5 }, () => refund(o.id, both)));
      assert.deepEqual(results.map((r) => r.body.code).sort(), [10000, 10000, 40902, 40902, 40902]);
      assert.deepEqual(await pendingBySku(o.id), [
        ['A', 2],
        ['B', 2],
      ]);
      assert.equal((await getOrder(o.id)).refundStatus, 'refunding');
      await worker(t).runOnce();
    });

    it('refunds through a split order id as through its order id', async () => {
      const o = await placeOrder(t, token, [
        { sku: 'A', quantity: 1 },
        { sku: 'B', quantity: 1 },
      ]);
      const split = o.splitOrders.find((s: any) => s.warehouseCode === 'G006');
      const r = await refund(split.id, { skuCode: 'A' });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const list = (await refundsOf(o.id)).list;
      assert.deepEqual(
        list.map((x: any) => [x.refundNo, x.id, x.items.map((i: any) => i.skuCode)]),
        [[r.body.data, o.id, ['A']]],
        'the refund belongs to the parent order, whichever split order named it',
      );
      const theirs = await refund(split.id, {}, other);
      assert.equal(theirs.status, 404, 'another merchant’s split order id is not found');
      await worker(t).runOnce();
    });

    /** The refund row a request writes, for the store-level cases below. */
    const requestedRefund = (orderId: number, now: number) => ({
      order_id: orderId,
      status: 'pending_review' as const,
      reason: 'Other' as const,
      remark: null,
      failure_reason: null,
      amount_cents: 0,
      whole_order: 0,
      decided_by: null,
      claimed_by: null,
      claimed_until: null,
      decided_at: null,
      created_at: now,
      updated_at: now,
    });
    const refundItemRows = (items: any[]) =>
      items.map((i) => ({
        order_item_id: Number(i.itemId),
        split_order_id: Number(i.splitOrderId),
        sku: i.skuCode,
        country_code: i.countryCode,
        quantity: 1,
      }));

    it('writes nothing a caller may keep when one line is no longer refundable (the reservation’s own check)', async () => {
      const o = await placeOrder(t, token, [
        { sku: 'A', quantity: 1 },
        { sku: 'B', quantity: 1 },
      ]);
      const [a, b] = ['A', 'B'].map((sku) => o.orderItems.find((i: any) => i.skuCode === sku));
      const orderId = Number(o.id);
      const rolledBack = new Error('rolled back');
      // What a request that planned wrongly would write: B's line is short.
      await assert.rejects(
        t.store.db.transaction().execute(async (trx) => {
          const { merchant_id } = await trx.selectFrom('orders').select('merchant_id').where('id', '=', orderId).executeTakeFirstOrThrow();
          const scope = forMerchant(trx, merchant_id);
          const now = Date.now();
          const refundId = await writeRefundRequest(
            scope,
            t.store.dialect,
            {
              lines: [
                { itemId: Number(a.itemId), quantity: 1 },
                { itemId: Number(b.itemId), quantity: 2 },
              ],
              refund: requestedRefund(orderId, now),
              items: refundItemRows([a, b]),
              asRead: (await refundableOrderOf(scope, orderId))!,
              order: { status: 'processing', refundStatus: 'refunding', fulfillment: null },
            },
            now,
          );
          // PostgreSQL checks the lines before it writes anything; SQLite's caller rolls back.
          assert.equal(refundId, t.store.dialect === 'postgres' ? 'changed' : null, 'a line short refuses the request');
          throw rolledBack;
        }),
        rolledBack,
      );
      const order = await getOrder(o.id);
      assert.equal(order.refundStatus, null);
      assert.deepEqual((await refundsOf(o.id)).list, []);
      assert.equal((await refund(o.id, {})).status, 200, 'all of it is still refundable');
      await worker(t).runOnce();
    });

    it('writes nothing when the order changed after the request read it (PostgreSQL: the write checks the rows it was planned from)', async () => {
      const o = await placeOrder(t, token, [
        { sku: 'A', quantity: 1 },
        { sku: 'B', quantity: 1 },
      ]);
      const b = o.orderItems.find((i: any) => i.skuCode === 'B');
      const orderId = Number(o.id);
      const { merchant_id } = await t.store.db.selectFrom('orders').select('merchant_id').where('id', '=', orderId).executeTakeFirstOrThrow();
      const scope = outsideTransaction(forMerchant(t.store.db, merchant_id), t.store.db);
      const asRead = (await refundableOrderOf(scope, orderId))!;
      assert.deepEqual(
        asRead.items.map((i) => [i.sku, i.refunded, i.pending]),
        [
          ['A', 0, 0],
          ['B', 0, 0],
        ],
      );
      // Another request reserves A after the read: B's line is still refundable, but what the
      // order's statuses were planned from is not what is there.
      assert.equal((await refund(o.id, { skuCode: 'A', quantity: 1 })).status, 200);
      const now = Date.now();
      const write = writeRefundRequest(
        scope,
        t.store.dialect,
        {
          lines: [{ itemId: Number(b.itemId), quantity: 1 }],
          refund: requestedRefund(orderId, now),
          items: refundItemRows([b]),
          asRead,
          order: { status: 'processing', refundStatus: 'refunding', fulfillment: null },
        },
        now,
      );
      if (t.store.dialect === 'postgres') assert.equal(await write, 'changed');
      // SQLite keeps the rows as read only inside the write transaction that read them.
      else await assert.rejects(write, /runs in the transaction that read the rows/);
      assert.equal((await refundsOf(o.id)).list.length, 1, 'only the other request’s refund');
      assert.deepEqual(await pendingBySku(orderId), [
        ['A', 1],
        ['B', 0],
      ]);
      // The request itself reads again and succeeds.
      assert.equal((await refund(o.id, { skuCode: 'B', quantity: 1 })).status, 200);
      await worker(t).runOnce();
    });

    it('replays a refund with the same Idempotency-Key', async () => {
      const o = await placeOrder(t, token, [{ sku: 'C', quantity: 3 }]);
      const first = await refund(o.id, { skuCode: 'C', quantity: 1 }, token, { 'idempotency-key': 'r-1' });
      const again = await refund(o.id, { skuCode: 'C', quantity: 1 }, token, { 'idempotency-key': 'r-1' });
      assert.equal(again.body.data, first.body.data);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.equal((await refundsOf(o.id)).total, 1);
      assert.equal((await refund(o.id, { skuCode: 'C', quantity: 2 }, token, { 'idempotency-key': 'r-1' })).body.code, 40900);
      await worker(t).runOnce();
    });

    it('pages an order’s refunds and refuses paging out of range with 400/40000', async () => {
      const o = await placeOrder(t, token, [{ sku: 'C', quantity: 3 }]);
      const numbers = [];
      for (let i = 0; i < 3; i++) numbers.push((await refund(o.id, { skuCode: 'C', quantity: 1 })).body.data);
      const page = async (query: string) => t.merchant(token, 'GET', `/openapi/v2/order/orders/refund/${o.id}?${query}`);
      const second = await page('pageSize=1&pageNumber=2');
      assert.equal(second.status, 200);
      assert.deepEqual([second.body.data.total, second.body.data.pageNumber, second.body.data.pageSize], [3, 2, 1]);
      assert.deepEqual(
        second.body.data.list.map((r: any) => r.refundNo),
        [numbers[1]],
        'newest first: the middle one',
      );
      assert.equal((await page('pageSize=250&pageNumber=1')).body.data.list.length, 3, 'the bounds themselves are accepted');
      const outOfRange = [
        ['pageSize=0', 'pageSize'],
        ['pageSize=251', 'pageSize'],
        ['pageNumber=0', 'pageNumber'],
        ['pageSize=-1', 'pageSize'],
        ['pageNumber=1.5', 'pageNumber'],
      ];
      for (const [query, field] of outOfRange) {
        const r = await page(query);
        assert.equal(r.status, 400, query);
        assert.equal(r.body.code, 40000, query);
        assert.deepEqual(
          r.body.errors.map((e: any) => e.field),
          [field],
          query,
        );
        const queue = await t.admin('GET', `/admin/v1/refunds?${query}`);
        assert.equal(queue.status, 400, `operator queue: ${query}`);
      }
      await worker(t).runOnce();
    });

    it('answers another merchant’s order like a missing one', async () => {
      const o = await placeOrder(t, token, [{ sku: 'C', quantity: 1 }]);
      const theirs = await refund(o.id, {}, other);
      const none = await refund('1999999999999', {}, other);
      assert.equal(theirs.status, 404);
      assert.deepEqual({ ...theirs.body, requestId: 0 }, { ...none.body, requestId: 0 });
      assert.equal((await t.merchant(other, 'GET', `/openapi/v2/order/orders/refund/${o.id}`)).status, 404);
      const scoped = (await newMerchant(t, 'NoRefunds', { scopes: ['orders:read', 'orders:write'] })).token;
      assert.equal((await refund(o.id, {}, scoped)).status, 403);
    });
  });

  describe(`manual review and the worker (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect, { REFUND_REVIEW: 'manual', REFUND_SLA_HOURS: '1' });
    let token: string;
    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      token = (await newMerchant(t, 'Shop')).token;
    });
    const refund = (orderId: string, body: unknown) => t.merchant(token, 'POST', `/openapi/v2/order/orders/${orderId}/refund`, body);

    it('waits for the operator, who approves or rejects once', async () => {
      const o = await placeOrder(t, token, [{ sku: 'C', quantity: 4 }]);
      const r1 = (await refund(o.id, { skuCode: 'C', quantity: 1 })).body.data;
      const r2 = (await refund(o.id, { skuCode: 'C', quantity: 1 })).body.data;
      assert.equal(await new RefundWorker({ store: t.store, config: { refundReview: 'manual', refundAutoDelayMs: 0 } }).runOnce(), 0);
      await t.store.db
        .updateTable('refunds')
        .set({ created_at: Date.now() - 2 * 3600_000 })
        .where('id', '=', Number(r1))
        .execute();
      const queue = await t.admin('GET', '/admin/v1/refunds?status=pending_review');
      assert.deepEqual(
        queue.body.data.list.map((r: any) => [r.refundNo, r.overSla]),
        [
          [r1, true],
          [r2, false],
        ],
        'oldest pending first, with the SLA flag',
      );
      const approved = await t.admin('POST', `/admin/v1/refunds/${r1}/approve`, {});
      assert.equal(approved.body.data.refundStatus, 'refund_successfully');
      const rejected = await t.admin('POST', `/admin/v1/refunds/${r2}/reject`, { reason: 'used item' });
      assert.deepEqual([rejected.body.data.refundStatus, rejected.body.data.failureReason], ['refund_failed', 'used item']);
      assert.equal((await t.admin('POST', `/admin/v1/refunds/${r1}/approve`, {})).body.code, 40903);
      assert.equal((await t.admin('POST', '/admin/v1/refunds/8999999999999/approve', {})).status, 404);
      const order = (await t.merchant(token, 'GET', `/openapi/v2/order/orders/${o.id}`)).body.data;
      assert.equal(order.orderItems[0].refundedQuantity, 1);
      assert.equal(order.refundStatus, 'partial_refund');
      // Approval re-checks shipping.
      const r3 = (await refund(o.id, { skuCode: 'C', quantity: 1 })).body.data;
      await t.store.db.updateTable('split_orders').set({ status: 'shipped' }).where('order_id', '=', Number(o.id)).execute();
      const late = await t.admin('POST', `/admin/v1/refunds/${r3}/approve`, {});
      assert.equal(late.body.data.refundStatus, 'refund_failed');
      assert.deepEqual(await ledgerMismatches(t.store.db), []);
    });

    it('survives a worker dying mid-decision: decided exactly once after restart', async () => {
      const o = await placeOrder(t, token, [{ sku: 'C', quantity: 2 }]);
      const refundNo = Number((await refund(o.id, { skuCode: 'C', quantity: 2 })).body.data);
      let clock = Date.now();
      const config = { refundReview: 'auto' as const, refundAutoDelayMs: 0 };
      const crashing = new RefundWorker({
        store: t.store,
        config,
        now: () => clock,
        hooks: {
          record: async () => {
            throw new Error('killed');
          },
        },
      });
      assert.equal(await crashing.runOnce(), 0);
      const claimed = await t.store.db.selectFrom('refunds').select(['status', 'claimed_by']).where('id', '=', refundNo).executeTakeFirstOrThrow();
      assert.deepEqual(claimed, { status: 'pending_review', claimed_by: crashing.id }, 'nothing of the decision was kept');
      const restarted = new RefundWorker({ store: t.store, config, now: () => clock });
      assert.equal(await restarted.runOnce(), 0, 'the dead worker’s claim still holds');
      clock += 31_000;
      assert.equal(await restarted.runOnce(), 1);
      assert.equal(await restarted.runOnce(), 0);
      const returns = await t.store.db.selectFrom('stock_ledger').select('delta').where('refund_id', '=', refundNo).execute();
      assert.deepEqual(
        returns.map((r) => r.delta),
        [2],
        'stock returned once',
      );
      assert.deepEqual(await ledgerMismatches(t.store.db), []);
    });

    if (dialect === 'postgres') {
      it('has two workers decide 200 pending refunds, each exactly once', { timeout: 300_000 }, async () => {
        const { openStore } = await import('../../src/store/db.ts');
        const { PG_URL, TEST_POOL_WAIT_MS } = await import('../helpers.ts');
        await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'C', warehouseCode: 'G007', qty: 1000 }] });
        const ids: number[] = [];
        for (let i = 0; i < 200; i++) {
          const o = await t.merchant(token, 'POST', '/openapi/v1/order/orders', {
            orderAddress: { country: 'US', phone: '1', recipient: 'R', province: 'P' },
            orderItemsList: [{ sku: 'C', quantity: 1 }],
          });
          ids.push(Number((await refund(o.body.data, {})).body.data));
        }
        const schema = (await t.store.db.selectNoFrom((eb) => eb.fn<string>('current_schema', []).as('s')).executeTakeFirstOrThrow()).s;
        const second = await openStore(PG_URL!, { schema, connectTimeoutMs: TEST_POOL_WAIT_MS });
        const config = { refundReview: 'auto' as const, refundAutoDelayMs: 0 };
        const workers = [new RefundWorker({ store: t.store, config, batchSize: 7 }), new RefundWorker({ store: second, config, batchSize: 7 })];
        // How the 200 are shared out depends on scheduling; the property is that each is decided once.
        const decided = [0, 0];
        await Promise.all(
          workers.map(async (w, i) => {
            for (let n: number; (n = await w.runOnce()) > 0; ) decided[i] += n;
          }),
        );
        assert.equal(decided[0] + decided[1], 200, `decisions reported: ${decided}`);
        const rows = await t.store.db.selectFrom('refunds').select(['id', 'status', 'decided_by']).where('id', 'in', ids).execute();
        assert.equal(rows.length, 200);
        assert.ok(
          rows.every((r) => r.status === 'refund_successfully' && r.decided_by === 'auto'),
          'every refund decided',
        );
        const returns = await t.store.db
          .selectFrom('stock_ledger')
          .select(['refund_id', (eb) => eb.fn.countAll<number>().as('n')])
          .where('refund_id', 'in', ids)
          .groupBy('refund_id')
          .execute();
        assert.equal(returns.length, 200);
        assert.ok(
          returns.every((r) => Number(r.n) === 1),
          'stock returned once per refund',
        );

        // Two deciders on the very same refund, every time: whatever the interleaving, one decides it.
        const contested: number[] = [];
        const oneC = { orderAddress: { country: 'US', phone: '1', recipient: 'R', province: 'P' }, orderItemsList: [{ sku: 'C', quantity: 1 }] };
        for (let i = 0; i < 20; i++) {
          const o = await t.merchant(token, 'POST', '/openapi/v1/order/orders', oneC);
          contested.push(Number((await refund(o.body.data, {})).body.data));
        }
        // Resolved as the operator's decision resolves it, then decided twice at once.
        const both = async (id: number) => {
          const refundId = (await resolveRefund(allMerchants(t.store.db), id))!.id;
          return Promise.all([t.store.db, second.db].map((db) => decideRefund(db, refundId, { approve: true }, 'auto')));
        };
        const outcomes = await Promise.all(contested.map(both));
        await second.close();
        const deciders = outcomes.map((pair) => pair.filter((x) => x !== null).length);
        assert.deepEqual(
          deciders,
          contested.map(() => 1),
          'exactly one of the two deciders decided each refund',
        );
        const contestedReturns = await t.store.db.selectFrom('stock_ledger').select('refund_id').where('refund_id', 'in', contested).execute();
        assert.deepEqual(
          contestedReturns.map((r) => r.refund_id).sort((a, b) => a! - b!),
          contested,
        );
        assert.deepEqual(await ledgerMismatches(t.store.db), []);
      });
    }
  });
}
