import type { MigrationContext } from './helpers.ts';

/**
 * The console's order search (SPEC §14) across every merchant: by custom order id (the unique
 * index leads with merchant_id, so without a merchant it would read every order), and by status
 * newest first (a status keeps its own (created_at, id) order, so a keyset page is one range read).
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema.createIndex('orders_custom_id_idx').on('orders').columns(['custom_order_id', 'id']).execute();
  await db.schema.createIndex('orders_status_created_idx').on('orders').columns(['status', 'created_at', 'id']).execute();
}
