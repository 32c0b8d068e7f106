import { sql } from 'kysely';
import type { MigrationContext } from './helpers.ts';

/**
 * Fewer index entries written per order (docs/performance.md, "What the ledger costs an order,
 * third round"). On SQLite an order's cost is mostly the B-tree pages its commit writes; these two
 * changes take three of them off an order without a custom id, and one off every order.
 *
 * - `journal_entries_account_type_idx` no longer holds order charges. It serves an account's
 *   transactions filtered by type; for the charges, nearly every entry of an account, the account
 *   index read in order serves as well (the filter keeps most of what it reads), so every order
 *   wrote an entry nobody needed. Reads filtered by another type say `type <> 'order_charge'` so
 *   both databases can use the partial index (store/ledger.repository.ts).
 * - The custom order id's two indexes hold only orders that have one: a lookup is always by a
 *   value, so the NULL entries of orders placed without a `customOrderId` were never read, and
 *   the unique rule never applied to them (NULLs are distinct on both databases).
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema.dropIndex('journal_entries_account_type_idx').execute();
  await db.schema
    .createIndex('journal_entries_account_type_idx')
    .on('journal_entries')
    .columns(['merchant_id', 'account_id', 'type', 'created_at', 'id'])
    .where(sql.ref('type'), '<>', 'order_charge')
    .execute();
  await db.schema.dropIndex('orders_custom_id_uq').execute();
  await db.schema.dropIndex('orders_custom_id_idx').execute();
  await db.schema
    .createIndex('orders_custom_id_uq')
    .on('orders')
    .columns(['merchant_id', 'custom_order_id'])
    .unique()
    .where(sql.ref('custom_order_id'), 'is not', null)
    .execute();
  await db.schema
    .createIndex('orders_custom_id_idx')
    .on('orders')
    .columns(['custom_order_id', 'id'])
    .where(sql.ref('custom_order_id'), 'is not', null)
    .execute();
}
