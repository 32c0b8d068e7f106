import { sql } from 'kysely';
import type { MigrationContext } from './helpers.ts';

/**
 * Stock windows that read in proportion to the page, not to the window (SPEC §6.1; see
 * docs/decisions.md, "Stable stock pages").
 *
 * A window's records are ordered by each SKU's first change inside it in commit order, so a page
 * is the first distinct SKUs met when the window's ledger rows are read in commit order. To start
 * that read at the right place, each ledger row gets `time_mark`: the greatest `created_at` of the
 * ledger up to and including it in commit order (a running maximum, so it never decreases along
 * the feed). Every row with `created_at >= start` then lies at or after the first row whose
 * `time_mark >= start` — one index seek. For the end: `stock_feed_head.time_lag` is the largest
 * `time_mark - created_at` of any row (how far a row's time ever fell behind the commit order: a
 * transaction that took its clock before waiting for a lock, an import that ran for minutes), so
 * every row with `created_at <= end` lies at or before the last row whose
 * `time_mark <= end + time_lag` — another seek. Between the two the rows are read in commit order,
 * filtered by `created_at`, until the page has its SKUs.
 *
 * Marks are set at commit, where commit order is decided: on SQLite (one writer; `id` is commit
 * order) by a trigger after each insert, on PostgreSQL by the commit-time trigger of migration 0002
 * that already numbers the transaction (`commit_seq`), under the same head-row lock. Bulk writers
 * set them themselves (`bulkLedgerMark`, `stampBulkLedger`). A `created_at` changed afterwards
 * (no code does; tests move rows in time) raises the marks after the row and widens `time_lag`.
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  await db.schema.alterTable('stock_ledger').addColumn('time_mark', 'bigint').execute();
  await db.schema
    .alterTable('stock_feed_head')
    .addColumn('time_mark', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('stock_feed_head')
    .addColumn('time_lag', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();

  const pos = dialect === 'postgres' ? sql`commit_seq, id` : sql`id`;
  // Rows already there, in commit order (on PostgreSQL the committed ones: others stamp their own).
  await sql`
    update stock_ledger set time_mark = w.mark
    from (select id, max(created_at) over (order by ${pos}) as mark from stock_ledger ${dialect === 'postgres' ? sql`where commit_seq > 0` : sql``}) w
    where stock_ledger.id = w.id`.execute(db);
  await sql`
    update stock_feed_head set
      time_mark = coalesce((select max(time_mark) from stock_ledger), 0),
      time_lag = coalesce((select max(time_mark - created_at) from stock_ledger), 0)
    where id = 1`.execute(db);

  if (dialect === 'postgres') {
    // The commit-time numbering (0002), now also marking each row and keeping the head's mark and lag.
    await sql`
      create or replace function stock_ledger_stamp() returns trigger language plpgsql as $$
      declare
        s bigint := nullif(current_setting('stockist.commit_seq', true), '')::bigint;
        m bigint := nullif(current_setting('stockist.time_mark', true), '')::bigint;
        t bigint;
        moved bigint;
      begin
        -- The row's time as it is now: an UPDATE in this transaction may have moved it since the insert.
        select created_at into t from stock_ledger where id = new.id;
        if s is not null and m is null then
          -- Numbered by the previous version of this function (a transaction open during the upgrade).
          select time_mark into m from stock_feed_head where id = 1;
        end if;
        if s is null then
          -- First ledger row of this transaction at commit: take the next number and keep the
          -- head row locked until the commit is visible.
          update stock_feed_head
            set seq = seq + 1, time_lag = greatest(time_lag, greatest(time_mark, t) - t), time_mark = greatest(time_mark, t)
            where id = 1 returning seq, time_mark into s, m;
          perform set_config('stockist.commit_seq', s::text, true);
          perform set_config('stockist.time_mark', m::text, true);
        else
          -- Usually a no-op: the transaction's rows share one clock reading.
          update stock_feed_head
            set time_lag = greatest(time_lag, greatest(time_mark, t) - t), time_mark = greatest(time_mark, t)
            where id = 1 and (time_mark < t or time_lag < time_mark - t) returning time_mark into moved;
          if moved is not null then
            m := moved;
            perform set_config('stockist.time_mark', m::text, true);
          end if;
        end if;
        update stock_ledger set commit_seq = s, time_mark = m where id = new.id;
        return null;
      end $$`.execute(db);
    await sql`
      create function stock_ledger_time_moved() returns trigger language plpgsql as $$
      begin
        -- Not committed yet: its commit marks it from the time it has then.
        if new.commit_seq is null or new.commit_seq < 0 then return null; end if;
        update stock_ledger set time_mark = new.created_at
          where (commit_seq, id) >= (new.commit_seq, new.id) and time_mark < new.created_at;
        update stock_feed_head set
          time_mark = greatest(time_mark, new.created_at),
          time_lag = greatest(time_lag, (select max(time_mark - created_at) from stock_ledger where (commit_seq, id) >= (new.commit_seq, new.id)))
          where id = 1;
        return null;
      end $$`.execute(db);
    await sql`
      create trigger stock_ledger_time_moved after update of created_at on stock_ledger
      for each row when (new.created_at is distinct from old.created_at) execute function stock_ledger_time_moved()`.execute(db);
  } else {
    await sql`
      create trigger stock_ledger_mark after insert on stock_ledger when new.time_mark is null
      begin
        update stock_feed_head set time_lag = max(time_lag, max(time_mark, new.created_at) - new.created_at), time_mark = max(time_mark, new.created_at) where id = 1;
        update stock_ledger set time_mark = (select time_mark from stock_feed_head where id = 1) where id = new.id;
      end`.execute(db);
    await sql`
      create trigger stock_ledger_time_moved after update of created_at on stock_ledger when new.created_at is not old.created_at
      begin
        update stock_ledger set time_mark = new.created_at where id >= new.id and time_mark < new.created_at;
        update stock_feed_head set
          time_mark = max(time_mark, new.created_at),
          time_lag = max(time_lag, (select max(time_mark - created_at) from stock_ledger where id >= new.id))
          where id = 1;
      end`.execute(db);
  }

  // The window's two seeks; the rows between them are read through the feed's (commit order) indexes.
  await db.schema
    .createIndex('stock_ledger_mark_idx')
    .on('stock_ledger')
    .columns(dialect === 'postgres' ? ['time_mark', 'commit_seq', 'id'] : ['time_mark', 'id'])
    .execute();
  // A window over a list of SKUs reads those SKUs' rows in it (the whole-window time index goes).
  await sql`drop index stock_ledger_time_idx`.execute(db);
  await db.schema.createIndex('stock_ledger_product_time_idx').on('stock_ledger').columns(['product_id', 'created_at']).execute();
}
