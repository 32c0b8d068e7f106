import type { MigrationContext } from './helpers.ts';

/**
 * Issue 13: refund attempts and manual review (a decision that always fails is parked for the
 * operator instead of being retried forever), a one-row table `/readyz` writes to prove the
 * database still takes writes, and the index the operator's update-window order walk reads.
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('refunds')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('refunds').addColumn('last_error', 'text').execute();
  await db.schema
    .alterTable('refunds')
    .addColumn('manual_review', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('storage_probe')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('probed_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.insertInto('storage_probe').values({ id: 1, probed_at: 0 }).execute();

  // The merchant's walks use (merchant_id, updated_at, id); the operator's walk spans merchants.
  await db.schema.createIndex('orders_updated_idx').on('orders').columns(['updated_at', 'id']).execute();
}
