import { sql } from 'kysely';
import { notNull, withId, type MigrationContext } from './helpers.ts';

/**
 * The money ledger (SPEC §15, docs/money.md): accounts, immutable journal entries and their lines.
 *
 * - `ledger_accounts`: one per merchant and environment (kind `merchant`), and the supplier's own
 *   (kinds `sales`, `refunds`, `cash`, `adjustments`) per environment with `merchant_id` 0 — a
 *   merchant scope can never name 0, so the supplier's rows are outside every merchant's reach.
 *   `account_key` makes each account exist once. A merchant account's `balance_cents` is kept in
 *   the same transaction as its lines; the supplier accounts' balances are read from their lines
 *   (a balance column there would be one row every order of every merchant locks).
 * - `journal_entries`: one per money movement; `cause` is unique (`order:<id>`, `refund:<id>`,
 *   `split_cancel:<id>`, `top_up:<account>:<reference>`, `adjustment:<account>:<key>`), so an
 *   entry can never post twice — the database refuses it, not a check in code.
 * - `journal_lines`: the entry's lines (sum zero), each the change to one account's balance.
 * - `ledger_meta.orders_before_ledger`: orders up to this id were placed before the ledger existed
 *   and carry no charge (`stockist ledger verify` exempts them and their refunds).
 */
export async function up(ctx: MigrationContext): Promise<void> {
  const { db, dialect } = ctx;
  await withId(db.schema.createTable('ledger_accounts'), dialect)
    .addColumn('account_key', 'text', notNull)
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('environment', 'text', notNull)
    .addColumn('kind', 'text', notNull)
    .addColumn('currency', 'text', notNull)
    .addColumn('balance_cents', 'bigint', notNull)
    .addColumn('billing_mode', 'text', notNull)
    .addColumn('credit_limit_cents', 'bigint', notNull)
    .addColumn('low_balance_threshold_cents', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('ledger_accounts_key_uq').on('ledger_accounts').column('account_key').unique().execute();
  await db.schema.createIndex('ledger_accounts_merchant_idx').on('ledger_accounts').columns(['merchant_id', 'environment', 'kind']).execute();

  await withId(db.schema.createTable('journal_entries'), dialect)
    .addColumn('cause', 'text', notNull)
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('environment', 'text', notNull)
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('ledger_accounts.id'))
    .addColumn('type', 'text', notNull)
    // The merchant account's side: negative for a charge, positive for a credit.
    .addColumn('amount_cents', 'bigint', notNull)
    .addColumn('balance_after_cents', 'bigint', notNull)
    .addColumn('currency', 'text', notNull)
    .addColumn('order_id', 'bigint')
    .addColumn('refund_id', 'bigint')
    .addColumn('split_order_id', 'bigint')
    .addColumn('reference', 'text')
    .addColumn('description', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  // The rule that an entry never posts twice: the database's, not the code's.
  await db.schema.createIndex('journal_entries_cause_uq').on('journal_entries').column('cause').unique().execute();
  // A merchant's transactions newest first, by time (windows are range seeks), with and without a type.
  await db.schema.createIndex('journal_entries_account_idx').on('journal_entries').columns(['account_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('journal_entries_account_type_idx').on('journal_entries').columns(['account_id', 'type', 'created_at', 'id']).execute();

  await withId(db.schema.createTable('journal_lines'), dialect)
    .addColumn('entry_id', 'bigint', (c) => c.notNull().references('journal_entries.id'))
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('ledger_accounts.id'))
    .addColumn('amount_cents', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('journal_lines_entry_idx').on('journal_lines').columns(['entry_id']).execute();
  await db.schema.createIndex('journal_lines_account_idx').on('journal_lines').columns(['account_id', 'amount_cents']).execute();

  await db.schema
    .createTable('ledger_meta')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'bigint', notNull)
    .execute();
  const last = await sql<{ last: number | string | null }>`select max(id) as last from orders`.execute(db);
  await db
    .insertInto('ledger_meta')
    .values({ name: 'orders_before_ledger', value: Number(last.rows[0]?.last ?? 0) })
    .execute();
}
