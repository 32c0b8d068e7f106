import { sql } from 'kysely';
import type { MigrationContext } from './helpers.ts';

/**
 * Two indexes no query reads any more, which every order and refund still had to maintain:
 * - `stocks_updated_idx` (updated_at, product_id): stock windows are served from the ledger's
 *   commit order since 0012; every stock decrement moved the row's entry in it (a delete at a
 *   random page and an insert at the end);
 * - `stock_ledger_row_idx` (product_id, warehouse_id): the ledger is read by product through
 *   (product_id, id) and (product_id, created_at), by window through the mark and feed indexes; only
 *   the consistency check (Σ ledger per stock row, a whole-table aggregate) grouped by it.
 * Each was a random leaf page written per stock row an order touches (docs/performance.md). The
 * store tests EXPLAIN the hot and console queries; none scans a big table without them.
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await sql`drop index if exists stocks_updated_idx`.execute(db);
  await sql`drop index if exists stock_ledger_row_idx`.execute(db);
}
