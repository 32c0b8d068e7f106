/**
 * The order's statements (docs/performance.md, "An order in five statements"): on PostgreSQL an
 * order with an Idempotency-Key is five statements — the key's lookup, its lock, the savepoint,
 * one read (products, locked stock rows, channels, the new order's id) and one write (order,
 * split orders, items, decrements, stock ledger rows, the charge and the key row) — and without
 * a key two. On both databases the rows are what the separate statements wrote: split by
 * warehouse, items under their split order, one charge, stock = stock ledger, the key's response
 * replayed.
 */
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { statementCounter } from '../../bench/statement-counter.ts';
import { DIALECTS, PG_SKIP, buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';
import { placeOrder } from '../../src/services/orders.service.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';
import type { CreateOrderBody } from '../../src/schemas/orders.ts';

const LINES = [
  { sku: 'A', quantity: 2, warehouseCode: 'G007' },
  { sku: 'B', quantity: 1 },
  { sku: 'A', quantity: 1, warehouseCode: 'US01' },
];

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`an order's statements (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect);
      await loadCatalogue(t, ORDER_CATALOGUE);
      const shop = await newMerchant(t, 'Shop');
      const counter = statementCounter();
      const store = { ...t.store, db: t.store.db.withPlugin(counter) };
      const place = (key: string | null, lines: unknown[] = LINES) =>
        placeOrder(
          { store, config: t.config },
          forMerchant(store.db, Number(shop.merchantId)),
          order(lines) as unknown as CreateOrderBody,
          key,
          'req-statements',
        );
      return { t, shop, counter, place };
    };

    it('writes the split order, its items, the stock ledger, one charge and the key row; a repeat is replayed', async (ctx) => {
      const { t, counter, place } = await build(ctx);
      // The merchant's first order opens its ledger account (the charge is posted after the order's statement).
      const first = await place('k-first', [{ sku: 'C', quantity: 1 }]);
      assert.equal(first.status, 200);
      const firstId = Number((first.body as { data: string }).data);
      assert.equal((await t.store.db.selectFrom('journal_entries').select('id').where('order_id', '=', firstId).execute()).length, 1, 'charged once');
      assert.equal(
        JSON.parse(
          (await t.store.db.selectFrom('idempotency_keys').select('response_body').where('idempotency_key', '=', 'k-first').executeTakeFirstOrThrow())
            .response_body!,
        ).data,
        String(firstId),
      );
      const before = counter.n;
      const placed = await place('k-1');
      const statements = counter.n - before;
      if (dialect === 'postgres') assert.equal(statements, 5, 'key lookup, key lock, savepoint, one read, one write');
      assert.equal(placed.status, 200);
      assert.equal(placed.replayed, false);
      const orderId = Number((placed.body as { data: string }).data);

      const splits = await t.store.db.selectFrom('split_orders').select(['id', 'warehouse_code']).where('order_id', '=', orderId).orderBy('id').execute();
      assert.deepEqual(
        splits.map((s) => s.warehouse_code),
        ['G007', 'G006', 'US01'],
      );
      const items = await t.store.db
        .selectFrom('order_items')
        .innerJoin('split_orders', 'split_orders.id', 'order_items.split_order_id')
        .select(['order_items.sku', 'order_items.quantity', 'order_items.line_index', 'split_orders.warehouse_code', 'split_orders.order_id'])
        .where('order_items.order_id', '=', orderId)
        .orderBy('order_items.id')
        .execute();
      assert.deepEqual(
        items.map((i) => [i.line_index, i.sku, Number(i.quantity), i.warehouse_code, i.order_id]),
        [
          [0, 'A', 2, 'G007', orderId],
          [1, 'B', 1, 'G006', orderId],
          [2, 'A', 1, 'US01', orderId],
        ],
      );
      const ledger = await t.store.db.selectFrom('stock_ledger').select(['delta', 'kind']).where('order_id', '=', orderId).orderBy('id').execute();
      assert.deepEqual(
        ledger.map((l) => [Number(l.delta), l.kind]),
        [
          [-2, 'sale'],
          [-1, 'sale'],
          [-1, 'sale'],
        ],
      );
      const charges = await t.store.db.selectFrom('journal_entries').select(['amount_cents', 'type']).where('order_id', '=', orderId).execute();
      assert.equal(charges.length, 1);
      assert.equal(charges[0].type, 'order_charge');
      assert.deepEqual(await ledgerMismatches(t.store.db), []);

      const key = await t.store.db
        .selectFrom('idempotency_keys')
        .select(['state', 'response_status', 'response_body'])
        .where('idempotency_key', '=', 'k-1')
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        { state: key.state, status: key.response_status, body: JSON.parse(key.response_body!) },
        { state: 'done', status: 200, body: placed.body },
      );
      const repeat = await place('k-1');
      assert.deepEqual({ status: repeat.status, replayed: repeat.replayed, body: repeat.body }, { status: 200, replayed: true, body: placed.body });
      await assert.rejects(place('k-1', [{ sku: 'C', quantity: 3 }]), (e: { code?: number }) => e.code === 40900);
      const orders = await t.store.db.selectFrom('orders').select('id').execute();
      assert.equal(orders.length, 2, 'the repeat and the conflict placed nothing');
    });

    it('without a key: the read and the write; a refused order writes nothing', async (ctx) => {
      const { t, counter, place } = await build(ctx);
      await place(null, [{ sku: 'C', quantity: 1 }]);
      const before = counter.n;
      const placed = await place(null);
      if (dialect === 'postgres') assert.equal(counter.n - before, 2);
      assert.equal(placed.status, 200);
      const stock = () => t.store.db.selectFrom('stocks').select(['product_id', 'warehouse_id', 'qty']).orderBy('product_id').orderBy('warehouse_id').execute();
      const stockBefore = await stock();
      // B has 7 in stock, one was taken: 7 more is short (42201), nothing written.
      await assert.rejects(place('k-short', [{ sku: 'B', quantity: 7 }]), (e: { code?: number }) => e.code === 42201);
      assert.deepEqual(await stock(), stockBefore);
      assert.equal((await t.store.db.selectFrom('orders').select('id').execute()).length, 2);
      assert.deepEqual(await ledgerMismatches(t.store.db), []);
    });
  });
}
