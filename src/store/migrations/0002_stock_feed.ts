import { sql } from 'kysely';
import type { MigrationContext } from './helpers.ts';

/**
 * The stock change feed (SPEC §6.3) and the indexes of the catalogue and stock query shapes.
 *
 * On PostgreSQL a ledger row's `id` is handed out when it is inserted, but transactions commit in
 * another order, so `id` cannot be the feed order. Each transaction that wrote ledger rows takes
 * the next `stock_feed_head.seq` at commit time — a deferred constraint trigger, so every writer
 * (orders, refunds, operator changes) is covered without calling anything — and stamps its rows
 * with it as `commit_seq`. The head row stays locked until the transaction has committed, so the
 * visible `commit_seq` values always form a prefix: nothing can later appear below a value a
 * reader has already seen. SQLite has one writer at a time, so there `id` is commit order and
 * `commit_seq` stays NULL. See docs/decisions.md, "Stock change feed".
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  await db.schema.alterTable('stock_ledger').addColumn('commit_seq', 'bigint').execute();
  await db.schema
    .createTable('stock_feed_head')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .execute();

  if (dialect === 'postgres') {
    // Rows written before the feed existed are already committed: their id order is final.
    await sql`update stock_ledger set commit_seq = id`.execute(db);
    await sql`insert into stock_feed_head (id, seq) select 1, coalesce(max(id), 0) from stock_ledger`.execute(db);
    await sql`
      create function stock_ledger_stamp() returns trigger language plpgsql as $$
      declare
        s bigint := nullif(current_setting('stockist.commit_seq', true), '')::bigint;
      begin
        if s is null then
          -- First ledger row of this transaction at commit: take the next number and keep the
          -- head row locked until the commit is visible.
          update stock_feed_head set seq = seq + 1 where id = 1 returning seq into s;
          perform set_config('stockist.commit_seq', s::text, true);
        end if;
        update stock_ledger set commit_seq = s where id = new.id;
        return null;
      end $$`.execute(db);
    // Bulk writers stamp their rows themselves (commit_seq = -1, then one UPDATE at the end);
    // the WHEN clause is evaluated at insert time, so their rows queue no trigger events.
    await sql`
      create constraint trigger stock_ledger_stamp after insert on stock_ledger
      deferrable initially deferred for each row when (new.commit_seq is null)
      execute function stock_ledger_stamp()`.execute(db);
    await db.schema.createIndex('stock_ledger_feed_idx').on('stock_ledger').columns(['commit_seq', 'id']).execute();
    await db.schema.createIndex('stock_ledger_feed_wh_idx').on('stock_ledger').columns(['warehouse_id', 'commit_seq', 'id']).execute();
  } else {
    await sql`insert into stock_feed_head (id, seq) values (1, 0)`.execute(db);
    await db.schema.createIndex('stock_ledger_feed_wh_idx').on('stock_ledger').columns(['warehouse_id', 'id']).execute();
  }
  // The stock query's time window reads the ledger's time range, per product, from the index alone.
  await db.schema
    .createIndex('stock_ledger_time_idx')
    .on('stock_ledger')
    .columns(['created_at', 'product_id', dialect === 'postgres' ? 'commit_seq' : 'id'])
    .execute();
}
