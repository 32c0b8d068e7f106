import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from './helpers.ts';

/**
 * The ledger's entries in the order they changed their account, and entries that cannot be
 * unbalanced (docs/money.md; docs/decisions.md, "An entry that cannot be unbalanced" and "The
 * account's sequence"). One migration for both: each rebuilds `journal_entries`.
 *
 * - `journal_entries.seq`: the entry's place in its account's sequence, 1, 2, 3, …, taken from
 *   `ledger_accounts.last_seq`, which the posting's balance move bumps under the account row's
 *   lock. Unique per account (`journal_entries_account_seq_uq`, which also serves the
 *   transactions list, newest first). Lists, cursors and statements walk it: ordered by request
 *   time, with several servers a list's `balanceAfter` did not follow from the row before it.
 *   `ledger_accounts.last_posted_at` keeps an entry's time from going backwards in that order.
 * - `journal_entries.counter_account_id`: the supplier account on the other side. An entry moves
 *   `amount_cents` into its merchant account and out of the counter account, so its lines sum to
 *   zero by construction; `journal_lines` becomes a view of those two lines per entry, and a line
 *   can no longer be written, removed or changed on its own (a CHECK keeps the two accounts apart).
 *
 * Existing entries are numbered in the order the lists showed them (created_at, id), their
 * `balance_after` becomes the running sum in that order — what each statement already showed — so
 * the chain holds and the newest equals the balance wherever the balance equals its lines. An
 * entry whose lines are not one line of its amount on its account and one of the negated amount on
 * another account cannot be carried over: the migration stops and names it (`stockist ledger
 * verify` on the previous version names it too); nothing is changed.
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  await refuseUnbalanced(db);
  if (dialect === 'postgres') await rebuildOnPostgres(db);
  else await rebuildOnSqlite(db);
  await sql`update ledger_accounts set last_seq = s.n, last_posted_at = s.at
    from (select account_id, count(*) as n, max(created_at) as at from journal_entries group by account_id) s
    where s.account_id = ledger_accounts.id`.execute(db);
  await sql`create unique index journal_entries_account_seq_uq on journal_entries (merchant_id, account_id, seq)`.execute(db);
  // Charges are read through the sequence index (migration 0035): the type index leaves them out.
  await sql`create index journal_entries_account_type_idx on journal_entries (merchant_id, account_id, type, seq) where type <> 'order_charge'`.execute(db);
  await sql`create view journal_lines (entry_id, account_id, amount_cents) as
    select id, account_id, amount_cents from journal_entries
    union all
    select id, counter_account_id, -amount_cents from journal_entries`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: the schema as it was (see helpers.ts)
async function refuseUnbalanced(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ id: number | string }>`
    select e.id as id from journal_entries e
    where (select count(*) from journal_lines l where l.entry_id = e.id) <> 2
      or not exists (select 1 from journal_lines l where l.entry_id = e.id and l.account_id = e.account_id and l.amount_cents = e.amount_cents)
      or not exists (select 1 from journal_lines l where l.entry_id = e.id and l.account_id <> e.account_id and l.amount_cents = -e.amount_cents)
    order by e.id
    limit 20`.execute(db);
  if (rows.length > 0) {
    throw new Error(
      `journal entries ${rows.map((r) => r.id).join(', ')} do not have one line of their amount on their account and one of the negated amount on another: ` +
        'they cannot be carried over as balanced entries; repair them (stockist ledger verify names them) and migrate again',
    );
  }
}

// The new columns' values, from the entry's lines and its place in its account's order.
const NUMBERED = sql`select e.id as id,
    row_number() over w as seq,
    sum(e.amount_cents) over w as running,
    (select l.account_id from journal_lines l where l.entry_id = e.id and l.account_id <> e.account_id) as counter_account_id
  from journal_entries e
  window w as (partition by e.account_id order by e.created_at, e.id rows between unbounded preceding and current row)`;

// biome-ignore lint/suspicious/noExplicitAny: the schema as it was (see helpers.ts)
async function rebuildOnPostgres(db: Kysely<any>): Promise<void> {
  await sql`alter table ledger_accounts add column last_seq bigint not null default 0, add column last_posted_at bigint not null default 0`.execute(db);
  await sql`alter table journal_entries add column seq bigint, add column counter_account_id bigint references ledger_accounts (id)`.execute(db);
  await sql`update journal_entries set seq = n.seq, balance_after_cents = n.running, counter_account_id = n.counter_account_id
    from (${NUMBERED}) n where n.id = journal_entries.id`.execute(db);
  await sql`alter table journal_entries
    alter column seq set not null,
    alter column counter_account_id set not null,
    add constraint journal_entries_seq_ck check (seq >= 1),
    add constraint journal_entries_counter_ck check (counter_account_id <> account_id)`.execute(db);
  await sql`drop index journal_entries_account_idx`.execute(db);
  await sql`drop index journal_entries_account_type_idx`.execute(db);
  await sql`drop table journal_lines`.execute(db);
}

/** SQLite cannot add a NOT NULL reference or a CHECK to a table: it is rebuilt (SQLite's twelve steps, as 0030), with the same ids and id sequence. */
// biome-ignore lint/suspicious/noExplicitAny: the schema as it was (see helpers.ts)
async function rebuildOnSqlite(db: Kysely<any>): Promise<void> {
  await sql`alter table ledger_accounts add column last_seq bigint not null default 0`.execute(db);
  await sql`alter table ledger_accounts add column last_posted_at bigint not null default 0`.execute(db);
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await db.transaction().execute(async (trx) => {
      await sql`create table journal_entries_next (
        id integer primary key autoincrement,
        cause text not null,
        merchant_id bigint not null,
        environment text not null,
        account_id bigint not null references ledger_accounts (id),
        seq bigint not null check (seq >= 1),
        counter_account_id bigint not null references ledger_accounts (id),
        type text not null,
        amount_cents bigint not null,
        balance_after_cents bigint not null,
        currency text not null,
        order_id bigint,
        refund_id bigint,
        split_order_id bigint,
        reference text,
        description text not null,
        created_at bigint not null,
        check (counter_account_id <> account_id)
      )`.execute(trx);
      await sql`insert into journal_entries_next (id, cause, merchant_id, environment, account_id, seq, counter_account_id, type, amount_cents,
          balance_after_cents, currency, order_id, refund_id, split_order_id, reference, description, created_at)
        select e.id, e.cause, e.merchant_id, e.environment, e.account_id, n.seq, n.counter_account_id, e.type, e.amount_cents,
          n.running, e.currency, e.order_id, e.refund_id, e.split_order_id, e.reference, e.description, e.created_at
        from journal_entries e join (${NUMBERED}) n on n.id = e.id`.execute(trx);
      const { rows } = await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'journal_entries'`.execute(trx);
      await sql`drop table journal_lines`.execute(trx);
      await sql`drop table journal_entries`.execute(trx);
      await sql`alter table journal_entries_next rename to journal_entries`.execute(trx);
      // Ids are never reused: the sequence goes on from where it was.
      const seq = Number(rows[0]?.seq ?? 0);
      await sql`delete from sqlite_sequence where name = 'journal_entries'`.execute(trx);
      await sql`insert into sqlite_sequence (name, seq) values ('journal_entries', ${seq})`.execute(trx);
      await sql`create unique index journal_entries_cause_uq on journal_entries (cause)`.execute(trx);
      const broken = await sql`pragma foreign_key_check`.execute(trx);
      if (broken.rows.length > 0) throw new Error(`journal_entries rebuild broke ${broken.rows.length} foreign keys`);
    });
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}
