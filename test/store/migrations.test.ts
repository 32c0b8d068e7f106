import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, PG_SKIP, PG_URL, freshStore } from '../helpers.ts';
import { openStore } from '../../src/store/db.ts';
import { LATEST_MIGRATION, migrateToLatest, migrationsCurrent } from '../../src/store/migrate.ts';
import { ensureAccounts } from '../../src/store/ledger.repository.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';

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

    it('keeps every journal line when 0028 re-keys them by (entry, account), and the new key refuses a second line of an entry on one account', async (t) => {
      const db = await freshStore(dialect, { upTo: '0027_money' });
      t.after(() => db.drop());
      const { db: k } = db.store;
      await k.transaction().execute((trx) => ensureAccounts(forMerchant(trx, 7), 'sandbox', 'USD', 1));
      const id = async (key: string) => (await k.selectFrom('ledger_accounts').select('id').where('account_key', '=', key).executeTakeFirstOrThrow()).id;
      const [merchant, adjustments, cash] = [await id('merchant:7:sandbox'), await id('supplier:adjustments:sandbox'), await id('supplier:cash:sandbox')];
      const entry = (cause: string, type: 'adjustment' | 'top_up', cents: number, after: number) => ({
        cause,
        merchant_id: 7,
        environment: 'sandbox' as const,
        account_id: merchant,
        type,
        amount_cents: cents,
        balance_after_cents: after,
        currency: 'USD',
        order_id: null,
        refund_id: null,
        split_order_id: null,
        reference: null,
        description: cause,
        created_at: 1,
      });
      const [charge, topUp] = await k
        .insertInto('journal_entries')
        // The columns of 0027 (the type is today's).
        .values([entry('adjustment:1:x', 'adjustment', -500, -500), entry('top_up:x', 'top_up', 800, 300)] as never)
        .returning('id')
        .execute();
      const lines = [
        { entry_id: charge.id, account_id: merchant, amount_cents: -500 },
        { entry_id: charge.id, account_id: adjustments, amount_cents: 500 },
        { entry_id: topUp.id, account_id: merchant, amount_cents: 800 },
        { entry_id: topUp.id, account_id: cash, amount_cents: -800 },
      ];
      await k.insertInto('journal_lines').values(lines).execute();
      await k.updateTable('ledger_accounts').set({ balance_cents: 300 }).where('id', '=', merchant).execute();

      assert.ok((await migrateToLatest(db.store)).includes('0028_ledger_keys'));
      const after = await k
        .selectFrom('journal_lines')
        .select(['entry_id', 'account_id', 'amount_cents'])
        .orderBy('entry_id')
        .orderBy('amount_cents')
        .execute();
      const byKey = (rows: typeof lines) => [...rows].sort((a, b) => a.entry_id - b.entry_id || a.amount_cents - b.amount_cents);
      assert.deepEqual(
        after.map((r) => ({ ...r, entry_id: Number(r.entry_id), account_id: Number(r.account_id), amount_cents: Number(r.amount_cents) })),
        byKey(lines),
      );
      assert.deepEqual((await verifyLedger(k)).breaches, []);
      await assert.rejects(k.insertInto('journal_lines').values({ entry_id: charge.id, account_id: adjustments, amount_cents: 1 }).execute());
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
