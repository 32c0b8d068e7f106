import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/db.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';
import { ADMIN_KEY, DIALECTS, PG_SKIP, PG_URL, TEST_POOL_WAIT_MS, buildTestApp, loadCatalogue, newMerchant, testConfig } from '../helpers.ts';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';

/** SPEC §4.3/§4.4 under load: never oversell, never two orders for one key or customOrderId. */
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`order concurrency (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it(`sells exactly the stock there is to 200 concurrent buyers${dialect === 'postgres' ? ' through two app instances' : ''}`, async (t) => {
      const a = await buildTestApp(t, dialect);
      await loadCatalogue(a, ORDER_CATALOGUE);
      await a.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'B', warehouseCode: 'G006', qty: 50 }] });
      const { token } = await newMerchant(a);
      const apps: FastifyInstance[] = [a.app];
      if (dialect === 'postgres') {
        // A second instance with its own connection pool on the same schema, like a second process.
        const schema = (await a.store.db.selectNoFrom((eb) => eb.fn<string>('current_schema', []).as('s')).executeTakeFirstOrThrow()).s;
        const store2 = await openStore(PG_URL!, { schema, poolSize: 10, connectTimeoutMs: TEST_POOL_WAIT_MS });
        const app2 = await buildApp({ config: testConfig(), store: store2, adminApiKey: ADMIN_KEY }, { logger: false });
        t.after(async () => {
          await app2.close();
          await store2.close();
        });
        apps.push(app2);
      }
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          apps[i % apps.length].inject({
            method: 'POST',
            url: '/openapi/v1/order/orders',
            payload: order([{ sku: 'B', quantity: 1 }]),
            headers: { authorization: `Bearer ${token}` },
          }),
        ),
      );
      const codes = results.map((r) => r.json().code);
      assert.equal(codes.filter((c) => c === 10000).length, 50, `codes: ${codes.join(',')}`);
      assert.ok(
        codes.every((c) => c === 10000 || c === 42201),
        `codes: ${codes.join(',')}`,
      );
      const stock = await a.store.db
        .selectFrom('stocks')
        .innerJoin('products', 'products.id', 'stocks.product_id')
        .select('qty')
        .where('sku', '=', 'B')
        .executeTakeFirstOrThrow();
      assert.equal(stock.qty, 0);
      const sold = await a.store.db
        .selectFrom('order_items')
        .select((eb) => eb.fn.sum<number>('quantity').as('n'))
        .where('sku', '=', 'B')
        .executeTakeFirstOrThrow();
      assert.equal(Number(sold.n), 50);
      assert.deepEqual(await ledgerMismatches(a.store.db), []);
      const negative = await a.store.db.selectFrom('stocks').select('qty').where('qty', '<', 0).execute();
      assert.deepEqual(negative, []);
    });

    it('creates one order for 20 concurrent requests with one Idempotency-Key, and one per customOrderId', async (t) => {
      const a = await buildTestApp(t, dialect);
      await loadCatalogue(a, ORDER_CATALOGUE);
      const { token } = await newMerchant(a);
      const send = (headers: Record<string, string>, body: object) =>
        a.app.inject({ method: 'POST', url: '/openapi/v1/order/orders', payload: body, headers: { authorization: `Bearer ${token}`, ...headers } });

      const keyed = await Promise.all(Array.from({ length: 20 }, () => send({ 'idempotency-key': 'same-key' }, order([{ sku: 'C', quantity: 1 }]))));
      const ok = keyed.filter((r) => r.statusCode === 200);
      assert.ok(ok.length >= 1);
      assert.ok(
        keyed.every((r) => r.statusCode === 200 || r.json().code === 40900),
        'the rest are told the key is in flight',
      );
      assert.equal(new Set(ok.map((r) => r.json().data)).size, 1);

      const custom = await Promise.all(Array.from({ length: 20 }, () => send({}, order([{ sku: 'C', quantity: 1 }], { customOrderId: 'same-custom' }))));
      assert.ok(
        custom.every((r) => r.statusCode === 200),
        JSON.stringify(custom.map((r) => r.statusCode)),
      );
      assert.equal(new Set(custom.map((r) => r.json().data)).size, 1);

      const orders = await a.store.db.selectFrom('orders').select('id').execute();
      assert.equal(orders.length, 2);
      const c = await a.store.db
        .selectFrom('stocks')
        .innerJoin('products', 'products.id', 'stocks.product_id')
        .select('qty')
        .where('sku', '=', 'C')
        .executeTakeFirstOrThrow();
      assert.equal(c.qty, 998);
      assert.deepEqual(await ledgerMismatches(a.store.db), []);
    });
  });
}
