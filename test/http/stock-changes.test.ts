import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestApp, DIALECTS, PG_SKIP, loadCatalogue, newMerchant, type TestApp } from '../helpers.ts';
import { addQty, ledgerMismatches, type StockKey } from '../../src/store/stocks.repository.ts';

const FEED = '/openapi/v1/product/stocks/changes';

interface Change {
  sku: string;
  warehouseCode: string;
  countryCode: string;
  qty: number;
  delta: number;
  kind: string;
  changedAt: string;
}

/** Follows the feed from `cursor` until it reports no more, returning the changes and the last cursor. */
async function drain(t: TestApp, token: string, cursor: string | null, limit: number, query = ''): Promise<{ changes: Change[]; cursor: string }> {
  const changes: Change[] = [];
  for (;;) {
    const r = await t.merchant(token, 'GET', `${FEED}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}${query}`);
    assert.equal(r.status, 200, r.raw);
    changes.push(...r.body.data.changes);
    cursor = r.body.data.nextCursor;
    if (!r.body.data.hasMore) return { changes, cursor: cursor! };
  }
}

/**
 * Every ledger row in id order, shaped like the feed's entries. Only for a ledger written by one
 * writer at a time, where commit order is id order; concurrent writers are checked against their
 * own record of what they committed, never against the feed's ordering column.
 */
async function ledgerInIdOrder(t: TestApp): Promise<Omit<Change, 'changedAt' | 'countryCode'>[]> {
  return t.store.db
    .selectFrom('stock_ledger')
    .innerJoin('products', 'products.id', 'stock_ledger.product_id')
    .innerJoin('warehouses', 'warehouses.id', 'stock_ledger.warehouse_id')
    .select([
      'products.sku as sku',
      'warehouses.code as warehouseCode',
      'stock_ledger.qty_after as qty',
      'stock_ledger.delta as delta',
      'stock_ledger.kind as kind',
    ])
    .orderBy('stock_ledger.id')
    .execute();
}

const shape = (c: Change) => ({ sku: c.sku, warehouseCode: c.warehouseCode, qty: c.qty, delta: c.delta, kind: c.kind });

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`stock change feed (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    /** Each test on an app and a database of its own (closed when the test ends), so any one runs alone: a merchant, no catalogue yet. */
    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect);
      return { t, token: (await newMerchant(t)).token };
    };

    it('starts empty, then lists changes in commit order without internal references', async (ctx) => {
      const { t, token } = await build(ctx);
      const empty = await t.merchant(token, 'GET', FEED);
      assert.equal(empty.status, 200);
      assert.deepEqual({ ...empty.body.data, nextCursor: typeof empty.body.data.nextCursor }, { changes: [], nextCursor: 'string', hasMore: false });
      await loadCatalogue(t);
      const r = await t.merchant(token, 'GET', FEED);
      assert.deepEqual(
        r.body.data.changes.map((c: Change) => ({ ...c, changedAt: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(c.changedAt) })),
        [
          { sku: 'SKU-A', warehouseCode: 'G007', countryCode: 'CN', qty: 10, delta: 10, kind: 'restock', changedAt: true },
          { sku: 'SKU-A', warehouseCode: 'US01', countryCode: 'US', qty: 5, delta: 5, kind: 'restock', changedAt: true },
          { sku: 'SKU-B', warehouseCode: 'G006', countryCode: 'CN', qty: 7, delta: 7, kind: 'restock', changedAt: true },
        ],
      );
      assert.equal(r.body.data.hasMore, false);
      const again = await t.merchant(token, 'GET', `${FEED}?cursor=${r.body.data.nextCursor}`);
      assert.deepEqual(again.body.data, { changes: [], nextCursor: r.body.data.nextCursor, hasMore: false });
    });

    it('pages with limit and a cursor, each change exactly once', async (ctx) => {
      const { t, token } = await build(ctx);
      await loadCatalogue(t);
      const first = await t.merchant(token, 'GET', `${FEED}?limit=2`);
      assert.equal(first.body.data.changes.length, 2);
      assert.equal(first.body.data.hasMore, true);
      const second = await t.merchant(token, 'GET', `${FEED}?limit=2&cursor=${first.body.data.nextCursor}`);
      assert.deepEqual(
        second.body.data.changes.map((c: Change) => c.sku),
        ['SKU-B'],
      );
      assert.equal(second.body.data.hasMore, false);
      assert.deepEqual((await drain(t, token, null, 1)).changes.map(shape), await ledgerInIdOrder(t));
    });

    it('cursor=now returns the head, then only later changes; kinds follow the change', async (ctx) => {
      const { t, token } = await build(ctx);
      await loadCatalogue(t);
      const now = await t.merchant(token, 'GET', `${FEED}?cursor=now`);
      assert.deepEqual(now.body.data.changes, []);
      assert.equal(now.body.data.hasMore, false);
      await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'SKU-A', warehouseCode: 'G007', delta: -4 }] });
      await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'SKU-C', warehouseCode: 'US01', qty: 2 }] });
      const after = await t.merchant(token, 'GET', `${FEED}?cursor=${now.body.data.nextCursor}`);
      assert.deepEqual(after.body.data.changes.map(shape), [
        { sku: 'SKU-A', warehouseCode: 'G007', qty: 6, delta: -4, kind: 'adjustment' },
        { sku: 'SKU-C', warehouseCode: 'US01', qty: 2, delta: 2, kind: 'restock' },
      ]);
    });

    it('filters by warehouseCode and answers under the /openapi/openapi alias', async (ctx) => {
      const { t, token } = await build(ctx);
      // The catalogue, then SKU-C stocked in US01.
      await loadCatalogue(t);
      await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'SKU-C', warehouseCode: 'US01', qty: 2 }] });
      const us = await drain(t, token, null, 500, '&warehouseCode=US01');
      assert.deepEqual(
        us.changes.map((c) => [c.sku, c.delta]),
        [
          ['SKU-A', 5],
          ['SKU-C', 2],
        ],
      );
      const alias = await t.merchant(token, 'GET', `/openapi${FEED}?warehouseCode=G006`);
      assert.equal(alias.status, 200);
      assert.deepEqual(
        alias.body.data.changes.map((c: Change) => c.sku),
        ['SKU-B'],
      );
      const unknown = await t.merchant(token, 'GET', `${FEED}?warehouseCode=MARS`);
      assert.deepEqual(unknown.body.data.changes, []);
    });

    it('refuses bad parameters and tokens without stock:read', async (ctx) => {
      const { t, token } = await build(ctx);
      for (const [query, field] of [
        ['limit=0', 'limit'],
        ['limit=1001', 'limit'],
        ['limit=ten', 'limit'],
        ['cursor=abc', 'cursor'],
        ['cursor=sc1_!!', 'cursor'],
      ]) {
        const r = await t.merchant(token, 'GET', `${FEED}?${query}`);
        assert.equal(r.status, 400, query);
        assert.equal(r.body.code, 40000);
        assert.deepEqual(
          r.body.errors.map((e: { field: string }) => e.field),
          [field],
          query,
        );
      }
      const catalogOnly = (await newMerchant(t, 'Reader', { scopes: ['catalog:read'] })).token;
      assert.equal((await t.merchant(catalogOnly, 'GET', FEED)).status, 403);
      assert.equal((await t.app.inject({ method: 'GET', url: FEED })).statusCode, 401);
    });

    it('a reader following the feed during concurrent writers sees every committed change exactly once, in commit order', async (ctx) => {
      const { t, token } = await build(ctx);
      await loadCatalogue(t);
      await t.admin('PUT', '/admin/v1/stocks', {
        items: ['G007', 'G006', 'US01'].flatMap((w) => ['SKU-A', 'SKU-B', 'SKU-C'].map((sku) => ({ sku, warehouseCode: w, qty: 1_000_000 }))),
      });
      const { cursor: start } = await drain(t, token, null, 1000);
      const rows = await t.store.db
        .selectFrom('stocks')
        .innerJoin('products', 'products.id', 'stocks.product_id')
        .innerJoin('warehouses', 'warehouses.id', 'stocks.warehouse_id')
        .select(['stocks.product_id as productId', 'stocks.warehouse_id as warehouseId', 'products.sku as sku', 'warehouses.code as warehouseCode'])
        .orderBy('stocks.product_id')
        .orderBy('stocks.warehouse_id')
        .execute();
      const keys: StockKey[] = rows.map((r) => ({ productId: r.productId, warehouseId: r.warehouseId }));
      const random = (n: number) => Math.floor(Math.random() * n);

      // The writers' own record, the reference the feed is checked against: each commit's changes
      // (every delta is unique, so a change in the feed names its commit) and two points on one
      // logical clock, taken just before the transaction began and just after its commit returned.
      // A commit that returned before another began is earlier in commit order.
      let tick = 0;
      let nextDelta = 1;
      const commits: { began: number; committed: number; changes: ReturnType<typeof shape>[] }[] = [];
      const writer = async () => {
        for (let i = 0; i < 12; i++) {
          // Sorted keys: writers that touch the same rows lock them in one order (no deadlocks).
          const picked = [...new Set([random(keys.length), random(keys.length), random(keys.length)])].sort((a, b) => a - b);
          const changes: ReturnType<typeof shape>[] = [];
          const began = ++tick;
          await t.store.db.transaction().execute(async (trx) => {
            for (const k of picked) {
              await sleep(random(8));
              const delta = random(2) ? nextDelta++ : -nextDelta++;
              const applied = await addQty(trx, keys[k], delta, { kind: delta > 0 ? 'return' : 'sale' }, Date.now());
              assert.ok(applied, 'a million units never run out');
              changes.push({ sku: rows[k].sku, warehouseCode: rows[k].warehouseCode, qty: applied.qtyAfter, delta, kind: delta > 0 ? 'return' : 'sale' });
            }
            await sleep(random(15));
          });
          commits.push({ began, committed: ++tick, changes });
        }
      };
      let writing = true;
      const seen: Change[] = [];
      const reader = async () => {
        let cursor = start;
        for (;;) {
          const done = !writing;
          const page = await drain(t, token, cursor, 3);
          seen.push(...page.changes);
          cursor = page.cursor;
          if (done) return;
          await sleep(random(5));
        }
      };
      const readerDone = reader();
      await Promise.all(Array.from({ length: 6 }, writer));
      writing = false;
      await readerDone;

      // Exactly the committed changes, each once.
      const written = commits.flatMap((c) => c.changes);
      assert.equal(written.length, new Set(written.map((c) => c.delta)).size);
      assert.equal(seen.length, written.length, 'the reader saw as many changes as were committed');
      const positionOf = new Map(seen.map((c, i) => [c.delta, i]));
      assert.equal(positionOf.size, seen.length, 'no change seen twice');
      for (const c of written) {
        assert.ok(positionOf.has(c.delta), `committed change ${JSON.stringify(c)} never seen`);
        assert.deepEqual(shape(seen[positionOf.get(c.delta)!]), c, 'seen as committed');
      }
      // A commit's changes arrive together, in the order it made them.
      const span = (c: (typeof commits)[number]) => c.changes.map((x) => positionOf.get(x.delta)!);
      for (const c of commits) {
        const at = span(c);
        assert.deepEqual(
          at,
          at.map((_, i) => at[0] + i),
          `commit ${c.began}'s changes are contiguous and in order: ${at}`,
        );
      }
      // Commit order: a commit that returned before another began comes before it in the feed.
      let pairs = 0;
      for (const a of commits) {
        for (const b of commits) {
          if (a.committed < b.began) {
            pairs++;
            assert.ok(span(a).at(-1)! < span(b)[0], `commit ${a.began}–${a.committed} returned before ${b.began} began, yet the feed has it later`);
          }
        }
      }
      assert.ok(pairs > 0);
      // Within each stock row, every change starts where the previous one ended.
      const last = new Map<string, number>();
      for (const c of seen) {
        const key = `${c.sku}/${c.warehouseCode}`;
        if (last.has(key)) assert.equal(c.qty - c.delta, last.get(key), `${key} chain`);
        last.set(key, c.qty);
      }
      assert.deepEqual(await ledgerMismatches(t.store.db), []);
    });
  });
}
