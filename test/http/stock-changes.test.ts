import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, useApp, type TestApp } from '../helpers.ts';
import { addQty, ledgerMismatches, type StockKey } from '../../src/store/stocks.repository.ts';
import { commitOrderColumn } from '../../src/store/stock-feed.repository.ts';

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

/** Every ledger row in feed order, shaped like the feed's entries (for comparisons). */
async function ledgerAsFeed(t: TestApp): Promise<Omit<Change, 'changedAt' | 'countryCode'>[]> {
  const rows = await t.store.db
    .selectFrom('stock_ledger')
    .innerJoin('products', 'products.id', 'stock_ledger.product_id')
    .innerJoin('warehouses', 'warehouses.id', 'stock_ledger.warehouse_id')
    .select(['products.sku as sku', 'warehouses.code as warehouseCode', 'stock_ledger.qty_after as qty', 'stock_ledger.delta as delta', 'stock_ledger.kind as kind'])
    .orderBy(commitOrderColumn(t.store.dialect))
    .orderBy('stock_ledger.id')
    .execute();
  return rows;
}

const shape = (c: Change) => ({ sku: c.sku, warehouseCode: c.warehouseCode, qty: c.qty, delta: c.delta, kind: c.kind });

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`stock change feed (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);
    let token = '';

    it('starts empty, then lists changes in commit order without internal references', async () => {
      token = (await newMerchant(t)).token;
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

    it('pages with limit and a cursor, each change exactly once', async () => {
      const first = await t.merchant(token, 'GET', `${FEED}?limit=2`);
      assert.equal(first.body.data.changes.length, 2);
      assert.equal(first.body.data.hasMore, true);
      const second = await t.merchant(token, 'GET', `${FEED}?limit=2&cursor=${first.body.data.nextCursor}`);
      assert.deepEqual(second.body.data.changes.map((c: Change) => c.sku), ['SKU-B']);
      assert.equal(second.body.data.hasMore, false);
      assert.deepEqual((await drain(t, token, null, 1)).changes.map(shape), (await ledgerAsFeed(t)).map((c) => ({ ...c })));
    });

    it('cursor=now returns the head, then only later changes; kinds follow the change', async () => {
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

    it('filters by warehouseCode and answers under the /openapi/openapi alias', async () => {
      const us = await drain(t, token, null, 500, '&warehouseCode=US01');
      assert.deepEqual(us.changes.map((c) => [c.sku, c.delta]), [['SKU-A', 5], ['SKU-C', 2]]);
      const alias = await t.merchant(token, 'GET', `/openapi${FEED}?warehouseCode=G006`);
      assert.equal(alias.status, 200);
      assert.deepEqual(alias.body.data.changes.map((c: Change) => c.sku), ['SKU-B']);
      const unknown = await t.merchant(token, 'GET', `${FEED}?warehouseCode=MARS`);
      assert.deepEqual(unknown.body.data.changes, []);
    });

    it('refuses bad parameters and tokens without stock:read', async () => {
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
        assert.deepEqual(r.body.errors.map((e: { field: string }) => e.field), [field], query);
      }
      const catalogOnly = (await newMerchant(t, 'Reader', { scopes: ['catalog:read'] })).token;
      assert.equal((await t.merchant(catalogOnly, 'GET', FEED)).status, 403);
      assert.equal((await t.app.inject({ method: 'GET', url: FEED })).statusCode, 401);
    });

    it('a reader following the feed during concurrent writers sees every ledger row exactly once, in commit order', async () => {
      await t.admin('PUT', '/admin/v1/stocks', {
        items: ['G007', 'G006', 'US01'].flatMap((w) => ['SKU-A', 'SKU-B', 'SKU-C'].map((sku) => ({ sku, warehouseCode: w, qty: 1000 }))),
      });
      const { cursor: start } = await drain(t, token, null, 1000);
      const keys: StockKey[] = (await t.store.db.selectFrom('stocks').select(['product_id', 'warehouse_id']).orderBy('product_id').orderBy('warehouse_id').execute()).map(
        (r) => ({ productId: r.product_id, warehouseId: r.warehouse_id }),
      );
      const random = (n: number) => Math.floor(Math.random() * n);
      let writing = true;
      let written = 0;
      const writer = async () => {
        for (let i = 0; i < 12; i++) {
          // Sorted keys: writers that touch the same rows lock them in one order (no deadlocks).
          const picked = [...new Set([random(keys.length), random(keys.length), random(keys.length)])].sort((a, b) => a - b);
          await t.store.db.transaction().execute(async (trx) => {
            for (const k of picked) {
              await sleep(random(8));
              const delta = random(2) ? 1 + random(5) : -(1 + random(5));
              await addQty(trx, keys[k], delta, { kind: delta > 0 ? 'return' : 'sale' }, Date.now());
            }
            await sleep(random(15));
          });
          written += picked.length;
        }
      };
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

      const ledger = await ledgerAsFeed(t);
      assert.equal(seen.length, written, 'the reader saw as many changes as were written');
      assert.deepEqual(seen.map(shape), ledger.slice(ledger.length - written), 'the reader saw each committed ledger row once, in commit order');
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
