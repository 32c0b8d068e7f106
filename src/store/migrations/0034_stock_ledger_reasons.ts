import type { MigrationContext } from './helpers.ts';

/**
 * A manual stock adjustment keeps the reason typed for it on its ledger row (issue 29, item 11),
 * so the stock history shows why, not only the audit log. Null for every other change (orders,
 * refunds, counts, imports) and for adjustments made before this migration.
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema.alterTable('stock_ledger').addColumn('reason', 'text').execute();
}
