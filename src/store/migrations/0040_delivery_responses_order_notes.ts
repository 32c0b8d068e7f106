import type { MigrationContext } from './helpers.ts';

/**
 * Issue 29, 15 and 10: what the business manager's delivery log shows of each attempt, and the
 * operator's internal note on an order.
 *
 * - `webhook_deliveries.last_response_body`: the first 2 KB of the last attempt's response body
 *   (public receivers only; a loopback receiver's answer is never kept, Hardening III), and
 *   `last_duration_ms`: how long the last attempt took, from sending to the end of the answer or
 *   the failure. Both null before the first attempt (and for rows older than this migration).
 * - `order_notes`: at most one note per order, written by staff in the console; never shown to
 *   merchants and not in the merchant API. `author_staff_id` is the last staff member who saved it.
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('last_response_body', 'text').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('last_duration_ms', 'integer').execute();
  await db.schema
    .createTable('order_notes')
    .addColumn('order_id', 'bigint', (c) => c.primaryKey().references('orders.id'))
    .addColumn('note', 'text', (c) => c.notNull())
    .addColumn('author_staff_id', 'bigint', (c) => c.notNull().references('staff_users.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
