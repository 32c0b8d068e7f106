import type { MigrationContext } from './helpers.ts';

/**
 * One product index on the stock ledger instead of two (docs/performance.md, "What the ledger
 * costs an order, third round"). `stock_ledger_product_id_idx` (product_id, id) served the
 * console's stock history and `stock_ledger_product_time_idx` (product_id, created_at) the stock
 * windows over a SKU list; every ledger row went into both, each at a random place (by product),
 * so an order of three lines wrote three more B-tree pages than it needed. The history now walks
 * (created_at, id) newest first (store/stock-history.repository.ts), and one index
 * (product_id, created_at, id) serves both reads.
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema.dropIndex('stock_ledger_product_id_idx').execute();
  await db.schema.dropIndex('stock_ledger_product_time_idx').execute();
  await db.schema.createIndex('stock_ledger_product_time_idx').on('stock_ledger').columns(['product_id', 'created_at', 'id']).execute();
}
