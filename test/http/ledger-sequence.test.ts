import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/db.ts';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';
import { ADMIN_KEY, DIALECTS, PG_SKIP, PG_URL, TEST_POOL_WAIT_MS, buildTestApp, loadCatalogue, newMerchant, testConfig, type TestApp } from '../helpers.ts';

/**
 * A merchant's transactions in the order postings changed its account (docs/money.md, "The
 * account's sequence"): with postings from two app instances on one database, each balanceAfter is
 * the one before it plus its amount, the newest is the balance, and a walk by cursor sees every
 * entry once.
 */
const DE = { country: 'DE', phone: '1', recipient: 'R', province: 'P' };

interface Transaction {
  id: string;
  type: string;
  amount: number;
  balanceAfter: number;
}

const cents = (amount: number) => Math.round(amount * 100);

/** A second app on the test app's database, with its own connection pool: another server. */
async function secondApp(c: { after(fn: () => Promise<void>): void }, t: TestApp): Promise<FastifyInstance> {
  const store =
    t.store.dialect === 'postgres'
      ? await openStore(PG_URL!, {
          schema: (await t.store.db.selectNoFrom((eb) => eb.fn<string>('current_schema', []).as('s')).executeTakeFirstOrThrow()).s,
          poolSize: 10,
          connectTimeoutMs: TEST_POOL_WAIT_MS,
        })
      : await openStore(t.config.databaseUrl);
  const app = await buildApp({ config: testConfig(), store, adminApiKey: ADMIN_KEY }, { logger: false });
  c.after(async () => {
    await app.close();
    await store.close();
  });
  return app;
}

async function walk(t: TestApp, token: string): Promise<Transaction[]> {
  const seen: Transaction[] = [];
  let query = '?pageSize=25';
  for (;;) {
    const page = await t.merchant(token, 'GET', `/openapi/v1/account/transactions${query}`);
    assert.equal(page.status, 200, page.raw);
    seen.push(...page.body.data.list);
    if (page.body.data.nextCursor === null) return seen;
    query = `?cursor=${encodeURIComponent(page.body.data.nextCursor)}`;
  }
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`transactions in the account's sequence, two app instances (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('concurrent orders, top-ups and adjustments through two servers: the chain holds, the newest is the balance, the walk sees each once', async (c) => {
      const t = await buildTestApp(c, dialect);
      await loadCatalogue(t, ORDER_CATALOGUE);
      const m = await newMerchant(t, 'Sequenced');
      const apps = [t.app, await secondApp(c, t)];
      const call = (i: number, method: 'GET' | 'POST', url: string, payload: object | undefined, token: string) =>
        apps[i % 2].inject({ method, url, payload, headers: { authorization: `Bearer ${token}` } }).then((r) => ({ status: r.statusCode, body: r.body }));
      const N = 90;
      const results = await Promise.all(
        Array.from({ length: N }, (_, i) => {
          if (i % 3 === 0) return call(i, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 + (i % 4) }], { orderAddress: DE }), m.token);
          const base = `/admin/v1/merchants/${m.merchantId}/account`;
          if (i % 3 === 1) return call(i, 'POST', `${base}/top-ups`, { environment: 'sandbox', amount: `${i}.25`, reference: `wire-${i}` }, ADMIN_KEY);
          return call(i, 'POST', `${base}/adjustments`, { environment: 'sandbox', amount: `-${i % 7}.10`, reason: `fee ${i}` }, ADMIN_KEY);
        }),
      );
      for (const r of results) assert.equal(r.status, 200, r.body);

      const list = await walk(t, m.token);
      assert.equal(list.length, N, 'every posting once');
      assert.equal(new Set(list.map((e) => e.id)).size, N);
      // Newest first: each row's balanceAfter is the next older row's plus its amount; the oldest starts from 0.
      const breaks = list.filter((e, i) => cents(e.balanceAfter) !== (i + 1 < list.length ? cents(list[i + 1].balanceAfter) : 0) + cents(e.amount));
      assert.deepEqual(breaks, [], `${breaks.length} chain breaks in ${N} rows`);
      const account = (await t.merchant(m.token, 'GET', '/openapi/v1/account')).body.data;
      assert.equal(list[0].balanceAfter, account.balance, 'the newest balanceAfter is the balance');
      // Numbered pages show the same order.
      const pages = [];
      for (let n = 1; n <= Math.ceil(N / 40); n++)
        pages.push(...(await t.merchant(m.token, 'GET', `/openapi/v1/account/transactions?pageSize=40&pageNumber=${n}`)).body.data.list);
      assert.deepEqual(
        pages.map((e: Transaction) => e.id),
        list.map((e) => e.id),
      );
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);
    });

    it('a sync by afterSeq while two servers post sees every entry once, in sequence; bad afterSeq is a 400 that changes nothing', async (c) => {
      const t = await buildTestApp(c, dialect);
      await loadCatalogue(t, ORDER_CATALOGUE);
      const m = await newMerchant(t, 'Synced');
      const apps = [t.app, await secondApp(c, t)];
      const N = 60;
      let writing = true;
      const writers = Promise.all(
        Array.from({ length: N }, (_, i) =>
          i % 2 === 0
            ? apps[i % 2].inject({
                method: 'POST',
                url: '/openapi/v1/order/orders',
                payload: order([{ sku: 'C', quantity: 1 }], { orderAddress: DE }),
                headers: { authorization: `Bearer ${m.token}` },
              })
            : apps[i % 2].inject({
                method: 'POST',
                url: `/admin/v1/merchants/${m.merchantId}/account/top-ups`,
                payload: { environment: 'sandbox', amount: 1, reference: `sync-${i}` },
                headers: { authorization: `Bearer ${ADMIN_KEY}` },
              }),
        ),
      ).finally(() => {
        writing = false;
      });
      const seen: (Transaction & { seq: number })[] = [];
      const sync = async () => {
        for (;;) {
          const after = seen.at(-1)?.seq ?? 0;
          const page = await t.merchant(m.token, 'GET', `/openapi/v1/account/transactions?afterSeq=${after}&pageSize=7`);
          assert.equal(page.status, 200, page.raw);
          seen.push(...page.body.data.list);
          if (page.body.data.list.length === 0) return;
        }
      };
      while (writing) {
        await sync();
        await new Promise((r) => setImmediate(r));
      }
      for (const r of await writers) assert.equal(r.statusCode, 200, r.body);
      await sync();
      assert.deepEqual(
        seen.map((e) => e.seq),
        Array.from({ length: N }, (_, i) => i + 1),
        'every entry once, in sequence',
      );
      const all = await walk(t, m.token);
      assert.deepEqual(
        seen.map((e) => e.id).reverse(),
        all.map((e) => e.id),
      );

      const before = await t.merchant(m.token, 'GET', '/openapi/v1/account');
      const cursor = (await t.merchant(m.token, 'GET', '/openapi/v1/account/transactions?pageSize=5')).body.data.nextCursor;
      for (const [query, field] of [
        ['afterSeq=-1', 'afterSeq'],
        ['afterSeq=x', 'afterSeq'],
        ['afterSeq=1&pageNumber=2', 'afterSeq'],
        [`afterSeq=1&cursor=${encodeURIComponent(cursor)}`, 'afterSeq'],
      ]) {
        const r = await t.merchant(m.token, 'GET', `/openapi/v1/account/transactions?${query}`);
        assert.equal(r.status, 400, `${query}: ${r.raw}`);
        assert.equal(r.body.code, 40000);
        assert.ok(
          r.body.errors.some((e: { field: string }) => e.field === field),
          r.raw,
        );
      }
      assert.deepEqual((await t.merchant(m.token, 'GET', '/openapi/v1/account')).body, before.body);
    });
  });
}
