import type { MigrationContext } from './helpers.ts';

/**
 * Indexes for the operator console's catalogue, stock and audit pages (issue 16), so each page is
 * an indexed range however large the tables grow:
 * - the dashboard's low-stock list reads stock rows in quantity order up to LOW_STOCK_THRESHOLD;
 * - a SKU's stock history walks its ledger rows newest first (keyset on the id);
 * - the audit page filters by action, target or actor, newest first (keyset on the id).
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema.createIndex('stocks_qty_idx').on('stocks').columns(['qty', 'product_id', 'warehouse_id']).execute();
  await db.schema.createIndex('stock_ledger_product_id_idx').on('stock_ledger').columns(['product_id', 'id']).execute();
  await db.schema.createIndex('audit_log_action_idx').on('audit_log').columns(['action', 'id']).execute();
  await db.schema.createIndex('audit_log_target_idx').on('audit_log').columns(['target', 'id']).execute();
  await db.schema.createIndex('audit_log_actor_idx').on('audit_log').columns(['actor_kind', 'actor_id', 'id']).execute();
}
