import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { prepared } from '../../src/store/prepared.ts';
import { DIALECTS, PG_SKIP, freshStore } from '../helpers.ts';

// Prepared queries (src/store/prepared.ts): compiled once per shape, run with each call's values.
// Each case compares a prepared query's answer with the same query built anew, over calls whose
// values differ but whose shape does not — the calls a wrong parameter mapping would get wrong.
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`prepared queries (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    const warehouses = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        code: `P${String(i).padStart(2, '0')}`,
        name: `Prepared ${i}`,
        country_code: i % 2 ? 'US' : 'CN',
        country_name: i % 2 ? 'United States' : 'China',
        status: i % 3 ? 1 : 0,
      }));

    it('binds each call its own values, in every shape, as the built query does', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const now = Date.now();
      const rows = warehouses(12).map((w) => ({ ...w, created_at: now, updated_at: now }));
      await db.store.db.insertInto('warehouses').values(rows).execute();

      const byCodes = prepared((h, codes: string[], country: string | null, enabledOnly: boolean) => {
        let q = h.selectFrom('warehouses').select(['code', 'country_code', 'status']).where('code', 'in', codes);
        if (country !== null) q = q.where('country_code', '=', country);
        if (enabledOnly) q = q.where('status', '=', 1);
        return q.orderBy('code');
      });
      const built = (codes: string[], country: string | null, enabledOnly: boolean) => {
        let q = db.store.db.selectFrom('warehouses').select(['code', 'country_code', 'status']).where('code', 'in', codes);
        if (country !== null) q = q.where('country_code', '=', country);
        if (enabledOnly) q = q.where('status', '=', 1);
        return q.orderBy('code').execute();
      };
      const calls: [string[], string | null, boolean][] = [
        [['P00', 'P01', 'P02'], null, false],
        [['P03', 'P04', 'P05'], null, false],
        [['P01', 'P02', 'P03'], 'US', false],
        [['P04', 'P05', 'P06'], 'CN', false],
        [['P00', 'P01', 'P02', 'P03', 'P04', 'P05'], 'CN', true],
        [['P06', 'P07', 'P08', 'P09', 'P10', 'P11'], 'US', true],
        [['P06', 'P07', 'P08', 'P09', 'P10', 'P11'], 'US', false],
        [['P11'], null, true],
      ];
      for (const call of calls) assert.deepEqual(await byCodes.all(db.store.db, ...call), await built(...call), JSON.stringify(call));
      assert.deepEqual(await byCodes.first(db.store.db, ['P10', 'P11'], null, false), { code: 'P10', country_code: 'CN', status: 1 });
      assert.equal(await byCodes.first(db.store.db, ['none'], null, false), undefined);
    });

    it('runs writes in the caller’s transaction, and counts the rows they touched', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const now = Date.now();
      const insert = prepared(
        (h, rows: { code: string; name: string; country_code: string; country_name: string; status: number; created_at: number; updated_at: number }[]) =>
          h.insertInto('warehouses').values(rows),
      );
      const rename = prepared((h, name: string, country: string) => h.updateTable('warehouses').set({ name }).where('country_code', '=', country));
      const rows = warehouses(4).map((w) => ({ ...w, created_at: now, updated_at: now }));
      assert.equal(await insert.run(db.store.db, rows.slice(0, 2)), 2);
      assert.equal(await insert.run(db.store.db, rows.slice(2, 4)), 2);
      await assert.rejects(
        db.store.db.transaction().execute(async (trx) => {
          assert.equal(await rename.run(trx, 'Renamed', 'US'), 2);
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.equal(await rename.run(db.store.db, 'Chinese', 'CN'), 2);
      const names = await db.store.db.selectFrom('warehouses').select(['code', 'name']).orderBy('code').execute();
      assert.deepEqual(
        names.map((r) => r.name),
        ['Chinese', 'Prepared 1', 'Chinese', 'Prepared 3'],
      );
    });

    it('takes raw SQL with values in it, a value used twice, and constants beside the values', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const sum = prepared(
        (_h, values: number[], twice: number) =>
          sql<{ total: number }>`select cast(${sql.join(
            values.map((v, i) => sql`cast(${v} as integer) * ${i + 1}`),
            sql` + `,
          )} + cast(${twice} as integer) + cast(${twice} as integer) as integer) as total`,
      );
      assert.equal(Number((await sum.first(db.store.db, [1, 2, 3], 10))?.total), 1 + 4 + 9 + 20);
      assert.equal(Number((await sum.first(db.store.db, [5, 0, 7], 1))?.total), 5 + 0 + 21 + 2);
    });

    it('refuses a builder that computes with a value or puts one outside the parameters', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const computes = prepared((h, after: number) =>
        h
          .selectFrom('warehouses')
          .selectAll()
          .where('created_at', '>', after + 1000),
      );
      await assert.rejects(computes.all(db.store.db, 1), /used a value as a JavaScript value/);
      const asIdentifier = prepared((_h, column: string) => sql`select 1 as one from warehouses where ${sql.ref(column)} is null`);
      await assert.rejects(asIdentifier.all(db.store.db, 'code'));
    });

    if (dialect === 'postgres') {
      it('runs on PostgreSQL as a named statement, parsed once per connection; a built query stays unnamed', async (t) => {
        const db = await freshStore(dialect);
        t.after(() => db.drop());
        const byCountry = prepared((h, country: string) => h.selectFrom('warehouses').select('code').where('country_code', '=', country));
        // One transaction: one connection, whose session holds its prepared statements.
        const seen = await db.store.db.transaction().execute(async (trx) => {
          const before = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(trx);
          await byCountry.all(trx, 'US');
          await byCountry.all(trx, 'CN');
          await trx.selectFrom('warehouses').select('code').where('country_code', '=', 'US').execute();
          const after = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(trx);
          return { before: before.rows[0].n, after: after.rows.map((r) => r.statement) };
        });
        assert.equal(seen.after.length, seen.before + 1, JSON.stringify(seen.after));
        assert.ok(seen.after.some((s) => s.startsWith('/* prepared */ select "code" from "warehouses"')));
      });
    }
  });
}
