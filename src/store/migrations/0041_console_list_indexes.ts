import type { MigrationContext } from './helpers.ts';

/**
 * Keyset reads for three console lists (issue 29, items 7 and 12), each walking one merchant's rows
 * in the order the page shows them instead of sorting all of them per page:
 * - the refund list filtered by merchant, newest first: (merchant_id, created_at, id);
 * - a merchant's bearer tokens, newest first, and its OAuth clients, oldest first: the per-merchant
 *   indexes gain the id (SQLite had it implicitly as the rowid; PostgreSQL sorted every token of
 *   the merchant for each page). Same names, so an index is replaced, not added: a token insert
 *   writes as many index entries as before.
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema.createIndex('refunds_merchant_idx').on('refunds').columns(['merchant_id', 'created_at', 'id']).execute();
  await db.schema.dropIndex('api_tokens_merchant_idx').execute();
  await db.schema.createIndex('api_tokens_merchant_idx').on('api_tokens').columns(['merchant_id', 'id']).execute();
  await db.schema.dropIndex('oauth_clients_merchant_idx').execute();
  await db.schema.createIndex('oauth_clients_merchant_idx').on('oauth_clients').columns(['merchant_id', 'id']).execute();
}
