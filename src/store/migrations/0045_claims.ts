import { sql } from 'kysely';
import { notNull, startIdsAfter, withId, type MigrationContext } from './helpers.ts';

export const CLAIM_ID_START = 9_000_000_000_000;
export const CLAIM_FILE_ID_START = 9_500_000_000_000;

/**
 * Claims after shipment (SPEC §18, issue 40; docs/claims.md):
 * - `claims`: one per claim (its id is the `claimNo`), on one split order (`split_order_id`, and its
 *   parent `order_id`), with its state, reason, resolution, the merchant's description, the return's
 *   tracking and the warehouse it came back to, the decision's reason or note, and — once resolved —
 *   its credited amount or its replacement order.
 * - `claim_lines`: the quantities claimed, each of one order item at that item's unit price.
 * - `claim_files`: evidence metadata (the bytes are in `DATA_DIR/files` or the bucket): owner,
 *   type from the bytes, size, checksum; `claim_id` null until a claim references the file.
 * - `claim_resolutions`: the one credit or reshipment of a claim. Its key is the claim, so a claim is
 *   credited or reshipped once whatever the code does; `replacement_order_id` is unique, so a
 *   replacement order belongs to one claim (the link read from the order's side). The credit's
 *   journal entry is unique too, by its cause `claim:<claimNo>` (journal_entries_cause_uq).
 * - a supplier account `claims` per environment that already has the supplier's accounts (those
 *   opened later get it with the others): the side a `claim_credit` moves against.
 */
export async function up(ctx: MigrationContext): Promise<void> {
  const { db, dialect } = ctx;
  await withId(db.schema.createTable('claims'), dialect)
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('order_id', 'bigint', (c) => c.notNull().references('orders.id'))
    .addColumn('split_order_id', 'bigint', (c) => c.notNull().references('split_orders.id'))
    .addColumn('status', 'text', notNull)
    .addColumn('reason', 'text', notNull)
    .addColumn('resolution', 'text', notNull)
    .addColumn('description', 'text')
    .addColumn('return_required', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('return_carrier', 'text')
    .addColumn('return_tracking_code', 'text')
    .addColumn('returned_at', 'bigint')
    .addColumn('received_warehouse_id', 'bigint')
    .addColumn('received_at', 'bigint')
    .addColumn('decision_reason', 'text')
    .addColumn('amount_cents', 'bigint')
    .addColumn('replacement_order_id', 'bigint')
    .addColumn('decided_at', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await startIdsAfter(ctx, 'claims', CLAIM_ID_START);
  // The merchant's list, newest first (keyset on id); the split's claims; the operator's queue by state, oldest first.
  await db.schema.createIndex('claims_merchant_idx').on('claims').columns(['merchant_id', 'id']).execute();
  await db.schema.createIndex('claims_split_idx').on('claims').columns(['split_order_id', 'status']).execute();
  await db.schema.createIndex('claims_status_idx').on('claims').columns(['status', 'created_at', 'id']).execute();

  await withId(db.schema.createTable('claim_lines'), dialect)
    .addColumn('claim_id', 'bigint', (c) => c.notNull().references('claims.id'))
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('order_item_id', 'bigint', (c) => c.notNull().references('order_items.id'))
    .addColumn('sku', 'text', notNull)
    .addColumn('quantity', 'bigint', (c) => c.notNull().check(sql`quantity > 0`))
    .addColumn('unit_cents', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('claim_lines_claim_idx').on('claim_lines').columns(['claim_id', 'id']).execute();

  await withId(db.schema.createTable('claim_files'), dialect)
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('claim_id', 'bigint', (c) => c.references('claims.id'))
    .addColumn('content_type', 'text', notNull)
    .addColumn('size_bytes', 'bigint', notNull)
    .addColumn('sha256', 'text', notNull)
    .addColumn('storage_key', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await startIdsAfter(ctx, 'claim_files', CLAIM_FILE_ID_START);
  await db.schema.createIndex('claim_files_claim_idx').on('claim_files').columns(['claim_id', 'id']).execute();
  await db.schema.createIndex('claim_files_orphan_idx').on('claim_files').columns(['created_at']).where(sql.ref('claim_id'), 'is', null).execute();

  await db.schema
    .createTable('claim_resolutions')
    .addColumn('claim_id', 'bigint', (c) => c.primaryKey().references('claims.id'))
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('credit', 'reship')`))
    .addColumn('journal_entry_id', 'bigint')
    .addColumn('replacement_order_id', 'bigint', (c) => c.references('orders.id'))
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('claim_resolutions_replacement_uq').on('claim_resolutions').column('replacement_order_id').unique().execute();

  await sql`insert into ledger_accounts (account_key, merchant_id, environment, kind, currency, balance_cents, billing_mode,
      credit_limit_cents, low_balance_threshold_cents, created_at, updated_at)
    select 'supplier:claims:' || r.environment, 0, r.environment, 'claims', r.currency, 0, 'on_account', 0, null, r.created_at, r.created_at
    from ledger_accounts r where r.merchant_id = 0 and r.kind = 'refunds'
      and not exists (select 1 from ledger_accounts x where x.account_key = 'supplier:claims:' || r.environment)`.execute(db);
}
