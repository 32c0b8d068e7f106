import { notNull, startIdsAfter, withId, type MigrationContext } from './helpers.ts';

/** Refund numbers get their own 13-digit range, apart from order ids (see 0004). */
export const REFUND_ID_START = 8_000_000_000_000;

export async function up(ctx: MigrationContext): Promise<void> {
  const { db, dialect } = ctx;
  await withId(db.schema.createTable('refunds'), dialect)
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('order_id', 'bigint', (c) => c.notNull().references('orders.id'))
    .addColumn('status', 'text', notNull)
    .addColumn('reason', 'text', notNull)
    .addColumn('remark', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('amount_cents', 'bigint', notNull)
    .addColumn('whole_order', 'integer', notNull)
    .addColumn('decided_by', 'text')
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'bigint')
    .addColumn('decided_at', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await startIdsAfter(ctx, 'refunds', REFUND_ID_START);
  await db.schema.createIndex('refunds_order_idx').on('refunds').columns(['order_id', 'id']).execute();
  await db.schema.createIndex('refunds_status_idx').on('refunds').columns(['status', 'created_at', 'id']).execute();

  await withId(db.schema.createTable('refund_items'), dialect)
    .addColumn('refund_id', 'bigint', (c) => c.notNull().references('refunds.id'))
    .addColumn('order_item_id', 'bigint', (c) => c.notNull().references('order_items.id'))
    .addColumn('split_order_id', 'bigint', notNull)
    .addColumn('sku', 'text', notNull)
    .addColumn('country_code', 'text', notNull)
    .addColumn('quantity', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('refund_items_refund_idx').on('refund_items').column('refund_id').execute();
  await db.schema.createIndex('order_items_split_idx').on('order_items').columns(['split_order_id', 'id']).execute();
}
