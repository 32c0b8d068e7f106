import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { StaffRole } from '../../src/domain/staff.ts';
import { setStaffRole } from '../../src/services/staff.service.ts';
import { ORDER_CATALOGUE } from '../fixtures.ts';
import { buildTestApp, DIALECTS, PG_SKIP, loadCatalogue, stockQty, tableDigests, type TestApp } from '../helpers.ts';
import { follow, signedIn, staff, importOutcome } from './console-client.ts';

/**
 * Issue 44, item 10: an import writes only what the signed-in role may write by hand. Each staff
 * role × each kind of import row, through the console's dry run and its real import, on both
 * databases: what is written, and what is refused (by row, with nothing written).
 */

type Kind = 'warehouses' | 'categories' | 'products' | 'stocks' | 'channels';

/** The permission writing each kind of row takes by hand: catalogue rows catalog:write, stock rows stock:adjust. */
const MAY_WRITE: Record<StaffRole, readonly Kind[] | null> = {
  owner: ['warehouses', 'categories', 'products', 'stocks', 'channels'],
  warehouse: ['stocks'],
  // No import:run: the import pages themselves are refused.
  support: null,
};

const cents = (n: number) => `0.${String(n).padStart(2, '0')}`;

interface Upload {
  label: string;
  fileName: string;
  /** The upload's text, writing values unique to case n (so a write is seen as one). */
  text(n: number): string;
  /** Each row: its kind and where a problem about it is reported (a CSV line, a JSON document's field). */
  rows: { kind: Kind; line?: number; field?: string }[];
  /** Whether case n's values are in the database. */
  written(t: TestApp, n: number): Promise<boolean>;
}

const json = (doc: object) => JSON.stringify(doc);
const STD = ORDER_CATALOGUE.channels[0];

const UPLOADS: Upload[] = [
  {
    label: 'products CSV',
    fileName: 'products.csv',
    text: (n) => `sku,name,price,weightGrams\nA,x,${cents(n)},10\n`,
    rows: [{ kind: 'products', line: 2 }],
    written: async (t, n) => (await productRow(t, 'A'))?.price_cents === n,
  },
  {
    label: 'stocks CSV',
    fileName: 'stocks.csv',
    text: (n) => `sku,warehouseCode,qty\nA,G007,${n}\n`,
    rows: [{ kind: 'stocks', line: 2 }],
    written: async (t, n) => (await stockQty(t, 'A', 'G007')) === n,
  },
  {
    label: 'JSON products',
    fileName: 'catalog.json',
    text: (n) => json({ products: [{ sku: 'B', name: 'x', price: cents(n), weightGrams: 10 }] }),
    rows: [{ kind: 'products', field: 'products[0]' }],
    written: async (t, n) => (await productRow(t, 'B'))?.price_cents === n,
  },
  {
    label: 'JSON categories',
    fileName: 'catalog.json',
    text: (n) => json({ categories: [{ categoryId: 7, name: `Category ${n}`, parentId: 0 }] }),
    rows: [{ kind: 'categories', field: 'categories[0]' }],
    written: async (t, n) => (await t.store.db.selectFrom('categories').select('name').where('id', '=', 7).executeTakeFirst())?.name === `Category ${n}`,
  },
  {
    label: 'JSON channels',
    fileName: 'catalog.json',
    text: (n) => json({ channels: [{ ...STD, baseFee: cents(n) }] }),
    rows: [{ kind: 'channels', field: 'channels[0]' }],
    written: async (t, n) =>
      (await t.store.db.selectFrom('channels').select('base_fee_cents').where('code', '=', STD.channelCode).executeTakeFirst())?.base_fee_cents === n,
  },
  {
    label: 'JSON stocks',
    fileName: 'catalog.json',
    text: (n) => json({ stocks: [{ sku: 'C', warehouseCode: 'G007', qty: n }] }),
    rows: [{ kind: 'stocks', field: 'stocks[0]' }],
    written: async (t, n) => (await stockQty(t, 'C', 'G007')) === n,
  },
  {
    label: 'JSON warehouses',
    fileName: 'catalog.json',
    text: (n) => json({ warehouses: [{ warehouseCode: 'G006', name: `Warehouse ${n}`, countryCode: 'CN' }] }),
    rows: [{ kind: 'warehouses', field: 'warehouses[0]' }],
    written: async (t, n) =>
      (await t.store.db.selectFrom('warehouses').select('name').where('code', '=', 'G006').executeTakeFirst())?.name === `Warehouse ${n}`,
  },
  {
    // A document of rows the role may write and rows it may not: all of it refused, none of it written.
    label: 'JSON stocks and products',
    fileName: 'catalog.json',
    text: (n) => json({ products: [{ sku: 'C', name: 'x', price: cents(n), weightGrams: 10 }], stocks: [{ sku: 'B', warehouseCode: 'G006', qty: n }] }),
    rows: [
      { kind: 'products', field: 'products[0]' },
      { kind: 'stocks', field: 'stocks[0]' },
    ],
    written: async (t, n) => (await productRow(t, 'C'))?.price_cents === n && (await stockQty(t, 'B', 'G006')) === n,
  },
];

const productRow = (t: TestApp, sku: string) => t.store.db.selectFrom('products').select('price_cents').where('sku', '=', sku).executeTakeFirst();

/** The text of the element carrying a unique attribute, tags stripped; null when there is none. */
function textOf(html: string, attribute: string, close: string): string | null {
  const at = html.indexOf(attribute);
  if (at < 0) return null;
  const start = html.indexOf('>', at) + 1;
  return html
    .slice(start, html.indexOf(close, start))
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

type Audit = { action: string; actorKind: string; after: any };
const imports = async (t: TestApp) =>
  ((await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list as Audit[]).filter((a) => a.action === 'catalog.import' && a.actorKind === 'staff');

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`console import: each role writes only what it may write by hand (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect);
      await loadCatalogue(t, { ...ORDER_CATALOGUE, categories: [{ categoryId: 7, name: 'Kitchen', parentId: 0 }] });
      for (const role of ['owner', 'support', 'warehouse'] as const) await staff(t, `${role}@example.com`, role);
      await staff(t, 'second-owner@example.com', 'owner');
      return t;
    };

    for (const role of ['owner', 'support', 'warehouse'] as const) {
      it(`${role}: dry run and import of every kind of row`, async (ctx) => {
        const t = await build(ctx);
        const b = await signedIn(t, `${role}@example.com`);
        const csrf = await b.csrf();
        const may = MAY_WRITE[role];
        // The upload page says beforehand what the role may not import.
        const form = await b.get('/console/import');
        if (may === null) assert.equal(form.statusCode, 403);
        else
          assert.equal(
            /id="import-limit">([^<]*)</.exec(form.body)?.[1] ?? null,
            role === 'owner'
              ? null
              : 'Your role (warehouse) imports stocks only: a file with rows of warehouses, categories, products or channels is refused, and the dry run lists those rows.',
          );
        let n = 0;
        for (const upload of UPLOADS) {
          n++;
          const what = `${role}, ${upload.label}`;
          const fields = { _csrf: csrf, fileName: upload.fileName, fileText: upload.text(n) };
          const before = await tableDigests(t.store);
          assert.equal(await upload.written(t, n), false, `${what}: the case's values are new`);

          if (may === null) {
            assert.equal((await b.post('/console/import/preview', fields)).statusCode, 403, what);
            assert.equal((await b.post('/console/import', fields)).statusCode, 403, what);
            assert.deepEqual(await tableDigests(t.store), before, `${what}: nothing written`);
            continue;
          }
          const refused = upload.rows.filter((r) => !may.includes(r.kind));

          // The dry run: the rows the role may not write are listed, each where it is; nothing is written.
          const preview = await follow(b, await b.post('/console/import/preview', fields));
          assert.equal(preview.statusCode, 200, `${what}: ${preview.body.slice(0, 300)}`);
          assert.deepEqual(await tableDigests(t.store), before, `${what}: a dry run writes nothing`);
          const problems = textOf(preview.body, 'id="preview-problems"', '</ul>');
          if (refused.length === 0) {
            assert.equal(problems, null, `${what}: no problem`);
            assert.ok(preview.body.includes('data-action="apply-import"'), `${what}: may be applied`);
          } else {
            assert.ok(problems, `${what}: the refused rows are listed`);
            for (const row of refused) {
              const where = row.line ? `${upload.fileName} line ${row.line}:` : `${upload.fileName}: ${row.field}`;
              assert.ok(problems.includes(`${where}`), `${what}: ${where} is listed in ${problems}`);
              assert.match(problems, new RegExp(`the ${role} role may not write ${row.kind} \\(that needs catalog:write\\)`), what);
              assert.equal(
                textOf(preview.body, `data-changes="${row.kind}"`, '</table>'),
                null,
                `${what}: no ${row.kind} change is shown as if it would be made`,
              );
            }
            for (const row of upload.rows.filter((r) => may.includes(r.kind)))
              assert.ok(!problems.includes(`may not write ${row.kind}`), `${what}: ${row.kind} rows are the role's to write`);
            assert.ok(!preview.body.includes('data-action="apply-import"'), `${what}: no apply button`);
          }

          // The import itself: written in full, or refused with the same rows and nothing written.
          const started = await b.post('/console/import', fields);
          assert.equal(started.statusCode, 303, `${what}: ${started.body.slice(0, 300)}`);
          const outcome = await importOutcome(b, String(started.headers.location));
          if (refused.length === 0) {
            assert.equal(outcome.state, 'done', `${what}: ${outcome.body}`);
            assert.equal(await upload.written(t, n), true, `${what}: written`);
          } else {
            assert.equal(outcome.state, 'refused', `${what}: ${outcome.body}`);
            const table = textOf(outcome.body, 'id="import-problems"', '</table>')!;
            for (const row of refused) {
              assert.match(
                table,
                new RegExp(`${row.line ? `${row.line} – ` : `– ${row.field!.replace(/[[\]]/g, '\\$&')} `}the ${role} role may not write ${row.kind}`),
                what,
              );
            }
            assert.deepEqual(await tableDigests(t.store), before, `${what}: a refused import writes nothing`);
          }
        }
        if (may !== null) {
          const done = UPLOADS.filter((u) => u.rows.every((r) => may.includes(r.kind))).length;
          assert.equal((await imports(t)).length, done, 'one audit row per import written, none for a refused one');
        }
      });
    }

    it('a dry run made by an owner who is then made warehouse applies as the warehouse role: refused, nothing written', async (ctx) => {
      const t = await build(ctx);
      const b = await signedIn(t, 'owner@example.com');
      const csrf = await b.csrf();
      const preview = await b.post('/console/import/preview', { _csrf: csrf, fileName: 'products.csv', fileText: 'sku,name,price,weightGrams\nA,x,0.01,10\n' });
      assert.ok(!(await follow(b, preview)).body.includes('may not write'));
      await setStaffRole(t.store.db, { kind: 'cli', id: 'test', requestId: null }, 'owner@example.com', 'warehouse', Date.now());
      const before = await tableDigests(t.store);
      const applied = await b.post(`${preview.headers.location}/apply`, { _csrf: csrf });
      assert.equal(applied.statusCode, 303, applied.body.slice(0, 300));
      const outcome = await importOutcome(b, String(applied.headers.location));
      assert.equal(outcome.state, 'refused');
      assert.match(outcome.body, /the warehouse role may not write products/);
      assert.deepEqual(await tableDigests(t.store), before);
      assert.equal((await productRow(t, 'A'))?.price_cents, 932);
    });

    it('the operator API imports every kind of row (the operator key has every right)', async (ctx) => {
      const t = await build(ctx);
      let n = 50;
      for (const upload of UPLOADS.filter((u) => u.fileName.endsWith('.json'))) {
        n++;
        const r = await t.admin('POST', '/admin/v1/import', JSON.parse(upload.text(n)));
        assert.equal(r.status, 200, `${upload.label}: ${r.raw}`);
        assert.equal(await upload.written(t, n), true, upload.label);
      }
    });
  });
}
