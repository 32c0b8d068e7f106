import type { MigrationContext } from './helpers.ts';

/**
 * Optimistic concurrency for the edit forms and the operator API (two tabs must not silently undo
 * each other's saves): an integer `version` on each row an edit form or an operator PUT/PATCH/upsert
 * changes, 1 when created and bumped by every write of what those edit. A form carries the version
 * it was read at; a save whose version is no longer the stored one writes nothing (the form: 409
 * with both versions; the API's `If-Match`: 412). `ledger_accounts` counts its *terms* (billing
 * mode, credit limit, low-balance threshold) as `terms_version`: its balance moves with every
 * order, which must not make an operator's terms form stale. A webhook endpoint's `version` moves
 * with its settings (URL, events, SKUs, status), not with the delivery bookkeeping on the same row.
 */
export async function up({ db }: MigrationContext): Promise<void> {
  for (const table of ['products', 'channels', 'warehouses', 'webhook_endpoints'])
    await db.schema
      .alterTable(table)
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
      .execute();
  await db.schema
    .alterTable('ledger_accounts')
    .addColumn('terms_version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}
