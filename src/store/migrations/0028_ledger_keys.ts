import { sql } from 'kysely';
import type { MigrationContext } from './helpers.ts';
import { notNull } from './helpers.ts';

/**
 * The ledger's keys, as its reads and the order path need them.
 *
 * Entries: a merchant's transactions are read through its scope (`merchant_id = ?` and
 * `account_id = ?`), so both indexes of an account's entries lead with the merchant: a page and its
 * capped count are then index-only (without it every counted entry was a table lookup to check
 * its merchant — 10,000 of them for a list's `total`).
 *
 * Journal lines keyed by what they are — an entry's line on an account (an entry has one line per
 * account, two in all) — instead of by a surrogate id with two secondary indexes:
 * - the primary key (entry_id, account_id) serves the lines of an entry; on SQLite the table is
 *   WITHOUT ROWID, so it is that one B-tree and nothing else;
 * - `journal_lines_account_idx` (account_id, amount_cents) is gone: only the console dashboard's
 *   "money received" and `ledger verify`'s balance check read lines by account, and both read
 *   them otherwise now (top-up entries through their account index; one grouped scan).
 * Every order wrote its two lines into three B-trees on SQLite, four on PostgreSQL, and the
 * account index's pages at random places (by amount); now one B-tree, two on PostgreSQL
 * (docs/performance.md, "What the ledger costs an order").
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  await db.schema.dropIndex('journal_entries_account_idx').execute();
  await db.schema.dropIndex('journal_entries_account_type_idx').execute();
  await db.schema.createIndex('journal_entries_account_idx').on('journal_entries').columns(['merchant_id', 'account_id', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('journal_entries_account_type_idx')
    .on('journal_entries')
    .columns(['merchant_id', 'account_id', 'type', 'created_at', 'id'])
    .execute();
  if (dialect === 'postgres') {
    await sql`drop index journal_lines_entry_idx`.execute(db);
    await sql`drop index journal_lines_account_idx`.execute(db);
    await sql`alter table journal_lines drop column id`.execute(db);
    await sql`alter table journal_lines add constraint journal_lines_pk primary key (entry_id, account_id)`.execute(db);
    return;
  }
  await db.schema
    .createTable('journal_lines_by_entry')
    .addColumn('entry_id', 'bigint', (c) => c.notNull().references('journal_entries.id'))
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('ledger_accounts.id'))
    .addColumn('amount_cents', 'bigint', notNull)
    .addPrimaryKeyConstraint('journal_lines_pk', ['entry_id', 'account_id'])
    .modifyEnd(sql`without rowid`)
    .execute();
  await sql`insert into journal_lines_by_entry (entry_id, account_id, amount_cents) select entry_id, account_id, amount_cents from journal_lines`.execute(db);
  await db.schema.dropTable('journal_lines').execute();
  await sql`alter table journal_lines_by_entry rename to journal_lines`.execute(db);
}
