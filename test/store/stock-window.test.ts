import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PG_SKIP, DIALECTS, freshStore } from '../helpers.ts';
import type { Store } from '../../src/store/db.ts';
import { stampBulkLedger } from '../../src/store/stock-feed.repository.ts';
import { addQty, bulkSetQty, changedProductsPage, currentQty, takeQty, type ChangedPageQuery } from '../../src/store/stocks.repository.ts';

/**
 * The stock window (SPEC §6.1) reads a page from the start of the window in commit order instead of
 * aggregating the whole window (migration 0012). Checked here against the definition, computed
 * from every ledger row: the products with a row in [start, end] (and the warehouse), ordered by
 * their first such row in commit order (`commit_seq` on PostgreSQL, where one transaction's rows
 * tie, `id` on SQLite), then SKU; `total` the number of those products when the window holds at
 * most the cap of changes, else the cap. The data is written the ways
 * stock is written — single changes, transactions of several, a bulk import — with clocks that
 * run out of commit order (a writer whose time was read before another committed), and times
 * moved afterwards, as the sync-window test does.
 */
const BASE = Date.UTC(2030, 0, 1);
const BULK_AT = BASE + 100_500;

/** A small seeded PRNG: the same data and queries on every run. */
function prng(seed: number): (n: number) => number {
  let a = seed;
  return (n) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

async function seed(store: Store, rand: (n: number) => number) {
  const { db, dialect } = store;
  const warehouses: number[] = [];
  for (const code of ['W1', 'W2']) {
    warehouses.push(
      (
        await db
          .insertInto('warehouses')
          .values({ code, name: code, country_code: 'CN', country_name: 'China', status: 1, created_at: BASE, updated_at: BASE })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
  }
  // SKUs in another order than ids, so that ties broken by SKU are not broken by id by accident.
  const products: number[] = [];
  for (let i = 0; i < 40; i++) {
    const sku = `S-${String((i * 17) % 40).padStart(2, '0')}`;
    products.push(
      (
        await db
          .insertInto('products')
          .values({ sku, name: sku, category_id: null, price_cents: 1, weight_grams: 1, image_url: null, options: null, created_at: BASE, updated_at: BASE })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
  }
  const key = () => ({ productId: products[rand(products.length)], warehouseId: warehouses[rand(2)] });
  for (let tx = 0; tx < 150; tx++) {
    // Mostly in time order; some writers' clocks were read seconds before later commits.
    const at = BASE + tx * 1000 + (rand(5) === 0 ? -rand(8000) : 0);
    await db.transaction().execute(async (trx) => {
      for (let n = 1 + rand(6); n > 0; n--) await addQty(trx, key(), 1 + rand(3), { kind: 'restock' }, at + (rand(6) === 0 ? rand(3000) : 0));
    });
    if (tx % 4 === 3) {
      // An order's decrements: several rows in one statement (the order path's takeQty).
      await db.transaction().execute(async (trx) => {
        const rows = new Map<string, ReturnType<typeof key>>();
        for (let n = 0; n < 6; n++) {
          const k = key();
          if ((await currentQty(trx, k)) > 0) rows.set(`${k.productId}:${k.warehouseId}`, k);
        }
        const taken = await takeQty(
          trx,
          dialect,
          [...rows.values()].map((k) => ({ ...k, delta: -1 })),
          { kind: 'sale' },
          at,
        );
        assert.ok(taken, 'every row had stock');
      });
    }
    if (tx === 70 || tx === 100) {
      // Bulk imports: one whose clock was read long before it committed (it ran for a minute), one
      // on time (a window starting there begins with its 25 rows, one commit on PostgreSQL).
      await db.transaction().execute(async (trx) => {
        await bulkSetQty(
          trx,
          dialect,
          products
            .slice(tx === 70 ? 0 : 15)
            .slice(0, 25)
            .map((productId, i) => ({ productId, warehouseId: warehouses[i % 2], qty: tx + i })),
          tx === 70 ? BASE + (tx - 60) * 1000 : BULK_AT,
        );
        await stampBulkLedger(trx, dialect);
      });
    }
  }
  // Times moved after the fact, both ways.
  const ids = (await db.selectFrom('stock_ledger').select('id').orderBy('id').execute()).map((r) => r.id);
  for (let i = 0; i < 6; i++) {
    const id = ids[rand(ids.length)];
    await db
      .updateTable('stock_ledger')
      .set({ created_at: BASE + (rand(2) ? 200_000 + rand(5000) : -rand(5000)) })
      .where('id', '=', id)
      .execute();
  }
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`stock window pages (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('match the definition for any window, warehouse, page and cap, with times out of commit order', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const rand = prng(7);
      await seed(db.store, rand);
      const ledger = await db.store.db
        .selectFrom('stock_ledger')
        .innerJoin('products', 'products.id', 'stock_ledger.product_id')
        .select([
          'stock_ledger.id as id',
          'stock_ledger.commit_seq as seq',
          'stock_ledger.product_id as productId',
          'stock_ledger.warehouse_id as warehouseId',
          'stock_ledger.created_at as at',
          'stock_ledger.time_mark as mark',
          'products.sku as sku',
        ])
        .orderBy(dialect === 'postgres' ? 'stock_ledger.commit_seq' : 'stock_ledger.id')
        .orderBy('stock_ledger.id')
        .execute();
      const pos = (r: (typeof ledger)[number]) => Number(dialect === 'postgres' ? r.seq : r.id);

      // The marks: never decreasing along commit order, never below a row's own time, and the head's lag covers every row.
      const head = await db.store.db.selectFrom('stock_feed_head').select(['time_mark', 'time_lag']).executeTakeFirstOrThrow();
      let previous = -Infinity;
      for (const r of ledger) {
        assert.ok(r.mark !== null && Number(r.mark) >= previous && Number(r.mark) >= Number(r.at), `mark of ledger row ${r.id}`);
        assert.ok(Number(head.time_lag) >= Number(r.mark) - Number(r.at), `lag covers ledger row ${r.id}`);
        previous = Number(r.mark);
      }
      assert.equal(Number(head.time_mark), previous);
      assert.ok(Number(head.time_lag) > 0, 'the data has rows whose time is behind commit order');

      const times = [...new Set(ledger.map((r) => Number(r.at)))];
      const bound = () => (rand(6) === 0 ? null : times[rand(times.length)] + [-1, 0, 1][rand(3)]);
      let multiPage = 0;
      let capped = 0;
      for (let i = 0; i < 250; i++) {
        // One query in four starts where the on-time bulk import does: a page there sorts part of one
        // commit's 25 rows by SKU (PostgreSQL), so reading must not stop inside that commit.
        const atBulk = i % 4 === 0;
        let [start, end] = atBulk ? [BULK_AT, rand(2) ? null : BULK_AT + rand(50_000)] : [bound(), bound()];
        if (start !== null && end !== null && start > end) [start, end] = [end, start];
        const warehouseId = !atBulk && rand(3) === 0 ? ledger[0].warehouseId : null;
        const q: ChangedPageQuery = atBulk
          ? { start, end, warehouseId, productIds: null, offset: rand(20), limit: 1 + rand(10), totalCap: 3 + rand(400), firstRead: 1 + rand(30) }
          : {
              start,
              end,
              warehouseId,
              productIds: null,
              offset: rand(4) * (1 + rand(10)),
              limit: 1 + rand(12),
              totalCap: 3 + rand(800),
              ...(rand(3) ? { firstRead: 1 + rand(30) } : {}),
            };
        const first = new Map<number, { first: number; sku: string }>();
        let changes = 0;
        for (const r of ledger) {
          if ((start !== null && Number(r.at) < start) || (end !== null && Number(r.at) > end) || (warehouseId !== null && r.warehouseId !== warehouseId))
            continue;
          changes++;
          if (!first.has(r.productId)) first.set(r.productId, { first: pos(r), sku: r.sku });
        }
        const ordered = [...first]
          .sort(([, a], [, b]) => a.first - b.first || (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0))
          .map(([id, v]) => ({ id, sku: v.sku }));
        // `total`: the SKUs of a window of at most `totalCap` changes, else the cap.
        const expected = { total: changes > q.totalCap ? q.totalCap : ordered.length, rows: ordered.slice(q.offset, q.offset + q.limit) };
        if (changes > q.totalCap) capped++;
        const got = await changedProductsPage(db.store.db, dialect, q);
        assert.deepEqual({ total: got.total, rows: got.rows.map(({ id, sku }) => ({ id, sku })) }, expected, JSON.stringify(q));
        if (q.offset > 0 && expected.rows.length > 0) multiPage++;
      }
      assert.ok(multiPage > 20, 'later pages were checked too');
      assert.ok(capped > 20 && capped < 230, 'windows with more changes than the cap, and with fewer');
    });
  });
}
