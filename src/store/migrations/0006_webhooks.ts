import { notNull, startIdsAfter, withId, type MigrationContext } from './helpers.ts';

/** Ids in their own 13-digit ranges, apart from orders (1…), items (2…), splits (5…) and refunds (8…). */
export const WEBHOOK_ENDPOINT_ID_START = 3_000_000_000_000;
export const WEBHOOK_EVENT_ID_START = 4_000_000_000_000;
export const WEBHOOK_DELIVERY_ID_START = 6_000_000_000_000;

/**
 * Webhooks (SPEC §13): merchants' endpoints, the transactional outbox of events, and one delivery
 * row per (event, endpoint) that the delivery worker claims, retries and logs.
 */
export async function up(ctx: MigrationContext): Promise<void> {
  const { db, dialect } = ctx;
  await withId(db.schema.createTable('webhook_endpoints'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id'))
    .addColumn('url', 'text', notNull)
    // JSON array of event types.
    .addColumn('events', 'text', notNull)
    // `whsec_<base64>`: kept, not hashed, because every delivery is signed with it.
    .addColumn('secret', 'text', notNull)
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'bigint')
    .addColumn('status', 'text', notNull)
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'bigint')
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await startIdsAfter(ctx, 'webhook_endpoints', WEBHOOK_ENDPOINT_ID_START);
  await db.schema.createIndex('webhook_endpoints_merchant_idx').on('webhook_endpoints').columns(['merchant_id', 'status']).execute();

  await withId(db.schema.createTable('webhook_events'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id'))
    .addColumn('type', 'text', notNull)
    .addColumn('order_id', 'bigint', notNull)
    // The exact body every delivery of this event sends (`{type, timestamp, data}`).
    .addColumn('payload', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await startIdsAfter(ctx, 'webhook_events', WEBHOOK_EVENT_ID_START);

  await withId(db.schema.createTable('webhook_deliveries'), dialect)
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('endpoint_id', 'bigint', (c) => c.notNull().references('webhook_endpoints.id'))
    .addColumn('event_id', 'bigint', (c) => c.notNull().references('webhook_events.id'))
    .addColumn('order_id', 'bigint', notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('attempts', 'integer', notNull)
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('give_up_at', 'bigint', notNull)
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'bigint')
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await startIdsAfter(ctx, 'webhook_deliveries', WEBHOOK_DELIVERY_ID_START);
  // The worker's scan, and the "is an earlier delivery for this order still pending?" check.
  await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['status', 'next_attempt_at', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_order_idx').on('webhook_deliveries').columns(['endpoint_id', 'order_id', 'id']).execute();
}
