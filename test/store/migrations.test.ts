import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, PG_SKIP, PG_URL, freshStore } from '../helpers.ts';
import { openStore } from '../../src/store/db.ts';
import { LATEST_MIGRATION, migrateToLatest, migrationsCurrent } from '../../src/store/migrate.ts';

const TABLES = [
  'warehouses',
  'categories',
  'products',
  'stocks',
  'stock_ledger',
  'channels',
  'channel_warehouses',
  'merchants',
  'api_tokens',
  'oauth_refresh_tokens',
  'webhook_endpoints',
  'webhook_events',
  'webhook_deliveries',
];

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`migrations (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('migrates an empty database and is idempotent when re-run', async (t) => {
      const db = await freshStore(dialect); // freshStore applies every migration once
      t.after(() => db.drop());
      assert.equal(await migrationsCurrent(db.store), true);
      assert.deepEqual(await migrateToLatest(db.store), [], 'a second run applies nothing');
      for (const table of TABLES) {
        const r = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db.store.db);
        assert.equal(Number(r.rows[0].n), 0, table);
      }
      const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db.store.db);
      assert.equal(applied.rows.at(-1)?.name, LATEST_MIGRATION);
    });

    it('reports the migrations not current (readyz) while one is missing, or before any ran', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      await sql`delete from kysely_migration where name = ${LATEST_MIGRATION}`.execute(db.store.db);
      assert.equal(await migrationsCurrent(db.store), false);
      await sql`drop table kysely_migration`.execute(db.store.db);
      assert.equal(await migrationsCurrent(db.store), false);
    });

    it('refuses a negative stock quantity at the database level', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const now = Date.now();
      const w = await db.store.db
        .insertInto('warehouses')
        .values({ code: 'W', name: 'W', country_code: 'CN', country_name: 'China', status: 1, created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      const p = await db.store.db
        .insertInto('products')
        .values({ sku: 'S', name: 'S', category_id: null, price_cents: 1, weight_grams: 1, image_url: null, options: null, created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      await assert.rejects(db.store.db.insertInto('stocks').values({ product_id: p.id, warehouse_id: w.id, qty: -1, updated_at: now }).execute());
    });

    if (dialect === 'postgres') {
      it('applies migrations once when several processes start together', async (t) => {
        const schema = `t_mig_${Date.now().toString(36)}`;
        const stores = await Promise.all([1, 2, 3].map(() => openStore(PG_URL!, { schema })));
        t.after(async () => {
          await stores[0].db.schema.dropSchema(schema).cascade().execute();
          for (const s of stores) await s.close();
        });
        const results = await Promise.all(stores.map((s) => migrateToLatest(s)));
        assert.equal(results.flat().filter((n) => n === '0001_foundation').length, 1);
        assert.equal(await migrationsCurrent(stores[1]), true);
      });
    }
  });
}
