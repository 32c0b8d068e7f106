import { sql } from 'kysely';
import { notNull, startIdsAfter, withId, type MigrationContext } from './helpers.ts';

/** Shared stock.changed bodies: their own id range, apart from the other tables' (see 0006). */
export const STOCK_BATCH_ID_START = 7_000_000_000_000;

/**
 * `stock.changed` webhooks (SPEC §13, issue 18). Each endpoint that subscribes keeps its own place
 * in the stock change feed (SPEC §6.3): the delivery worker reads the feed after it, so every
 * stock writer produces deliveries without doing anything itself. See docs/decisions.md,
 * "Stock webhooks".
 *
 * - `skus`: JSON array of SKUs the endpoint wants (NULL = all); `stock_filter_rev` counts its
 *   replacements, so a fan-out that read an older list does not commit.
 * - `stock_after_seq` / `stock_after_id`: the feed position up to which changes have been turned
 *   into deliveries (NULL = not subscribed to stock.changed); `stock_due_at`: the earliest time of
 *   the next fan-out (the coalescing interval).
 * - Deliveries carry the cursor range they cover. Stock deliveries use `order_id = 0`: one lane per
 *   endpoint, ordered by the same rule that orders one order's events.
 * - `stock_batches`: a stock.changed body, stored once for every endpoint that gets it (endpoints
 *   at the same feed position with the same SKU list get the same batches). Stock is the same for
 *   every merchant, so the table is not merchant-owned; each merchant's `webhook_events` row points
 *   at it (`stock_batch_id`) instead of holding a copy.
 */
export async function up(ctx: MigrationContext): Promise<void> {
  const { db, dialect } = ctx;
  // One column per statement: SQLite's ALTER TABLE adds one at a time.
  await db.schema.alterTable('webhook_endpoints').addColumn('skus', 'text').execute();
  await db.schema
    .alterTable('webhook_endpoints')
    .addColumn('stock_filter_rev', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('stock_after_seq', 'bigint').execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('stock_after_id', 'bigint').execute();
  await db.schema.alterTable('webhook_endpoints').addColumn('stock_due_at', 'bigint').execute();
  await withId(db.schema.createTable('stock_batches'), dialect).addColumn('payload', 'text', notNull).addColumn('created_at', 'bigint', notNull).execute();
  await startIdsAfter(ctx, 'stock_batches', STOCK_BATCH_ID_START);
  await db.schema
    .alterTable('webhook_events')
    .addColumn('stock_batch_id', 'bigint', (c) => c.references('stock_batches.id'))
    .execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('cursor_from', 'text').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('cursor_to', 'text').execute();
  // The "is an earlier delivery of this lane still open?" check, now with the status in the key:
  // a stock lane holds thousands of delivered rows, which the check must not walk.
  await sql`drop index webhook_deliveries_order_idx`.execute(db);
  await db.schema.createIndex('webhook_deliveries_lane_idx').on('webhook_deliveries').columns(['endpoint_id', 'order_id', 'status', 'id']).execute();
}
