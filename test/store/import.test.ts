import { describe, it } from 'node:test';
import { ALL_IMPORT_RIGHTS } from '../../src/domain/import-format.ts';
import { systemActor } from '../../src/domain/audit.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DIALECTS, PG_SKIP, freshStore, tableDigests } from '../helpers.ts';
import { sql } from 'kysely';
import { ANALYZE_AFTER_ROWS, importFiles } from '../../src/services/import.service.ts';
import { stockChanges } from '../../src/services/stock-feed.service.ts';
import { addQty, ledgerMismatches, setQty } from '../../src/store/stocks.repository.ts';
import type { Store } from '../../src/store/db.ts';
import { ImportRefused, problemText } from '../../src/domain/import-format.ts';

const CATALOGUE = {
  warehouses: [
    { warehouseCode: 'G007', name: 'Shenzhen', countryCode: 'CN' },
    { warehouseCode: 'US01', name: 'Los Angeles', countryCode: 'US' },
  ],
  categories: [{ categoryId: 10, name: 'Home', parentId: 0 }],
  products: [{ sku: 'DOC-1', name: 'From the document', price: 1, weightGrams: 1 }],
  stocks: [{ sku: 'DOC-1', warehouseCode: 'G007', qty: 4 }],
};

function files(): { dir: string; write(name: string, text: string): string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-import-'));
  return {
    dir,
    write: (name, text) => {
      fs.writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    },
  };
}

const productsCsv = (n: number) =>
  ['sku,name,price,weightGrams,categoryId', ...Array.from({ length: n }, (_, i) => `P${i},Product ${i},${i}.25,${100 + i},${i % 2 ? 10 : ''}`)].join('\n');
const stocksCsv = (n: number, qty = (i: number) => i) =>
  ['warehouseCode,sku,qty', ...Array.from({ length: n }, (_, i) => `${i % 2 ? 'US01' : 'G007'},P${i},${qty(i)}`)].join('\r\n');

async function rejectsAt(store: Store, paths: string[], pattern: RegExp) {
  const before = await tableDigests(store);
  await assert.rejects(importFiles(store, systemActor('test'), ALL_IMPORT_RIGHTS, paths, Date.now()), (error: Error) => {
    assert.match(error.message, pattern);
    return true;
  });
  assert.deepEqual(await tableDigests(store), before, 'a refused import writes nothing');
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`bulk import (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('imports a document and CSV files in dependency order, in batches, keeping the ledger exact', async (t) => {
      const db = await freshStore(dialect);
      const f = files();
      t.after(async () => {
        await db.drop();
        fs.rmSync(f.dir, { recursive: true, force: true });
      });
      // Given stocks first: the header decides the kind, and kinds load in dependency order.
      const paths = [f.write('stocks.csv', stocksCsv(2500)), f.write('products.csv', productsCsv(2500)), f.write('catalogue.json', JSON.stringify(CATALOGUE))];
      const seen: number[] = [];
      const r = await importFiles(db.store, systemActor('test'), ALL_IMPORT_RIGHTS, paths, Date.now(), (p) => seen.push(p.rows));
      assert.deepEqual(r, { files: 3, rows: 5005, ledgerRows: 2500, warehouses: 2, categories: 1, products: 2501, stocks: 2501, channels: 0 });
      assert.ok(seen.length >= 5 && seen.at(-1) === 5005, 'progress is reported per batch');
      const p7 = await db.store.db.selectFrom('products').selectAll().where('sku', '=', 'P7').executeTakeFirstOrThrow();
      assert.deepEqual([p7.price_cents, p7.weight_grams, p7.category_id], [725, 107, 10]);
      assert.deepEqual(await ledgerMismatches(db.store.db), []);

      // Re-import with new quantities, then operator sets and adjusts: still Σ deltas = qty.
      await importFiles(
        db.store,
        systemActor('test'),
        ALL_IMPORT_RIGHTS,
        [
          f.write(
            'stocks2.csv',
            stocksCsv(2500, (i) => (i * 7) % 11),
          ),
        ],
        Date.now(),
      );
      const key = {
        productId: p7.id,
        warehouseId: (await db.store.db.selectFrom('warehouses').select('id').where('code', '=', 'US01').executeTakeFirstOrThrow()).id,
      };
      await db.store.db.transaction().execute(async (trx) => {
        await setQty(trx, key, 40, Date.now());
        await addQty(trx, key, -3, { kind: 'adjustment' }, Date.now());
      });
      assert.deepEqual(await ledgerMismatches(db.store.db), []);

      // The change feed sees every imported change once, the document's and the bulk ones.
      const feed = await stockChanges(db.store, { limit: 1000 });
      let total = feed.changes.length;
      let cursor = feed.nextCursor;
      for (let more = feed.hasMore; more; ) {
        const next = await stockChanges(db.store, { cursor, limit: 1000 });
        total += next.changes.length;
        cursor = next.nextCursor;
        more = next.hasMore;
      }
      const ledger = await db.store.db
        .selectFrom('stock_ledger')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(total, Number(ledger.n));
    });

    it('stops at the first bad row, naming its file and line, and writes nothing', async (t) => {
      const db = await freshStore(dialect);
      const f = files();
      t.after(async () => {
        await db.drop();
        fs.rmSync(f.dir, { recursive: true, force: true });
      });
      const doc = f.write('catalogue.json', JSON.stringify(CATALOGUE));
      const products = f.write('products.csv', productsCsv(1500));
      const lines = stocksCsv(1500).split('\r\n');
      const withBad = (n: number, row: string) => f.write(`bad-${n}.csv`, [...lines.slice(0, n - 1), row, ...lines.slice(n - 1)].join('\n'));
      // Line 1203 sits in the second batch, after a first batch has been written inside the transaction.
      await rejectsAt(db.store, [doc, products, withBad(1203, 'G007,NOPE,1')], /^bad-1203\.csv line 1203: sku unknown SKU NOPE$/);
      await rejectsAt(db.store, [doc, products, withBad(7, 'G007,P1,-1')], /^bad-7\.csv line 7: qty must be an integer from 0/);
      await rejectsAt(db.store, [doc, products, withBad(8, 'MARS,P1,1')], /^bad-8\.csv line 8: warehouseCode unknown warehouse MARS$/);
      await rejectsAt(db.store, [doc, products, withBad(9, 'G007,P1')], /^bad-9\.csv line 9: has 2 fields, the header has 3$/);
      await rejectsAt(db.store, [doc, products, withBad(10, 'G007,P0,5')], /^bad-10\.csv line 10: sku P0 in G007 is already set on line 2$/);
      await rejectsAt(db.store, [doc, f.write('p.csv', 'sku,name,price,weightGrams\nA,a,1,1\nB,b,1.001,1\n')], /^p\.csv line 3: price must be/);
      await rejectsAt(
        db.store,
        [doc, f.write('c.csv', 'sku,name,price,weightGrams,categoryId\nA,a,1,1,99\n')],
        /^c\.csv line 2: categoryId unknown category 99$/,
      );
      await rejectsAt(db.store, [doc, f.write('q.csv', 'sku,name,price,weightGrams\n"A,a,1,1\n')], /^q\.csv line \d+: /);
      await rejectsAt(db.store, [f.write('x.csv', 'a,b\n1,2\n')], /^x\.csv line 1: the header must name/);
      await rejectsAt(
        db.store,
        [f.write('d.json', '{"stocks":[{"sku":"GHOST","warehouseCode":"G007","qty":1}]}')],
        /^2 problems, nothing imported: d\.json: stocks\[0\]\.sku unknown SKU GHOST; d\.json: stocks\[0\]\.warehouseCode unknown warehouse G007$/,
      );
      await rejectsAt(db.store, [f.write('e.json', '{"stocks":')], /^e\.json: not valid JSON/);
      await rejectsAt(db.store, [f.write('y.txt', 'hello')], /give a \.json document or a \.csv file/);
    });

    it('reads every file to the end and reports every bad row (up to the cap, counting the rest), writing nothing', async (t) => {
      const db = await freshStore(dialect);
      const f = files();
      t.after(async () => {
        await db.drop();
        fs.rmSync(f.dir, { recursive: true, force: true });
      });
      const doc = f.write('catalogue.json', JSON.stringify(CATALOGUE));
      // Bad rows in both CSV files, and a stocks row for the product whose row is bad (reported too).
      const products = f.write(
        'products.csv',
        ['sku,name,price,weightGrams,categoryId', 'A,a,1,1,', 'B,b,1.001,1,', 'C,c,1,1,99', 'A,again,1,1,', 'D,d,1,1'].join('\n'),
      );
      const stocks = f.write('stocks.csv', ['sku,warehouseCode,qty', 'A,G007,1', 'B,G007,1', 'A,MARS,1', 'A,G007,-1', 'A,G007,2'].join('\n'));
      const before = await tableDigests(db.store);
      const error = await importFiles(db.store, systemActor('test'), ALL_IMPORT_RIGHTS, [stocks, products, doc, f.write('notes.txt', 'x')], Date.now()).then(
        () => assert.fail('the import was accepted'),
        (e: ImportRefused) => e,
      );
      assert.ok(error instanceof ImportRefused);
      assert.deepEqual(
        error.problems.map(problemText),
        [
          'notes.txt: give a .json document or a .csv file',
          'products.csv line 3: price must be a non-negative amount with at most two decimals, as a number or a string ("12.50")',
          'products.csv line 4: categoryId unknown category 99',
          'products.csv line 5: sku A is already on line 2',
          'products.csv line 6: has 4 fields, the header has 5',
          'stocks.csv line 3: sku unknown SKU B',
          'stocks.csv line 4: warehouseCode unknown warehouse MARS',
          'stocks.csv line 5: qty must be an integer from 0 to 1000000000',
          'stocks.csv line 6: sku A in G007 is already set on line 2',
        ],
        'in file order (as imported: documents, products, stocks), then by line',
      );
      assert.equal(error.problems.length, 9);
      assert.equal(error.omitted, 0);
      assert.match(error.message, /^9 problems, nothing imported: notes\.txt: /);
      assert.deepEqual(await tableDigests(db.store), before, 'a refused import writes nothing');

      // 120 bad rows: the first 50 are listed, the other 70 counted.
      const flood = f.write('flood.csv', ['sku,warehouseCode,qty', ...Array.from({ length: 120 }, (_, i) => `NOPE-${i},G007,1`)].join('\n'));
      await importFiles(db.store, systemActor('test'), ALL_IMPORT_RIGHTS, [doc], Date.now());
      const capped = await importFiles(db.store, systemActor('test'), ALL_IMPORT_RIGHTS, [flood], Date.now()).then(
        () => assert.fail('the import was accepted'),
        (e: ImportRefused) => e,
      );
      assert.equal(capped.problems.length, 50);
      assert.equal(capped.omitted, 70);
      assert.equal(problemText(capped.problems[49]), 'flood.csv line 51: sku unknown SKU NOPE-49');
    });
    it('refreshes the planner statistics after a large import, not after a small one', async (t) => {
      const db = await freshStore(dialect);
      const f = files();
      t.after(async () => {
        await db.drop();
        fs.rmSync(f.dir, { recursive: true, force: true });
      });
      // Without statistics the planner plans for the tables as they were (the 30-SKU stock query seq-scans).
      // SQLite: the tables `sqlite_stat1` has rows for (the server's connection plans with them).
      const analysed = async () => {
        if (dialect === 'sqlite') {
          const kept = await sql<{ n: number }>`select count(*) as n from sqlite_master where name = 'sqlite_stat1'`.execute(db.store.db);
          const seen = kept.rows[0].n ? (await sql<{ tbl: string }>`select distinct tbl from sqlite_stat1`.execute(db.store.db)).rows.map((x) => x.tbl) : [];
          return { products: seen.includes('products'), stock_ledger: seen.includes('stock_ledger'), stocks: seen.includes('stocks') };
        }
        const r = await sql<{ relname: string; analysed: boolean }>`
            select relname, last_analyze is not null as analysed from pg_stat_user_tables
            where schemaname = current_schema() and relname in ('products', 'stocks', 'stock_ledger') order by relname`.execute(db.store.db);
        return Object.fromEntries(r.rows.map((x) => [x.relname, x.analysed]));
      };
      await importFiles(db.store, systemActor('test'), ALL_IMPORT_RIGHTS, [f.write('catalogue.json', JSON.stringify(CATALOGUE))], Date.now());
      assert.deepEqual(await analysed(), { products: false, stock_ledger: false, stocks: false });
      const n = ANALYZE_AFTER_ROWS / 2;
      const r = await importFiles(
        db.store,
        systemActor('test'),
        ALL_IMPORT_RIGHTS,
        [
          f.write('products.csv', productsCsv(n)),
          f.write(
            'stocks.csv',
            stocksCsv(n, () => 3),
          ),
        ],
        Date.now(),
      );
      assert.ok(r.products + r.stocks + r.ledgerRows >= ANALYZE_AFTER_ROWS);
      assert.deepEqual(await analysed(), { products: true, stock_ledger: true, stocks: true });
    });
  });
}
