import { notNull, withId, type MigrationContext } from './helpers.ts';

/**
 * Per-merchant usage (issue 20, the business manager's Usage page): daily request counts by status
 * class and error code, and each merchant's most recent 4xx answers. Both bounded (docs/decisions.md
 * "Usage counters"): 30 days of counts, the newest 100 errors per merchant and environment.
 */
export async function up(ctx: MigrationContext): Promise<void> {
  const { db, dialect } = ctx;
  await db.schema
    .createTable('merchant_usage_daily')
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('environment', 'text', notNull)
    // Days since 1970-01-01, UTC.
    .addColumn('day', 'integer', notNull)
    // 2, 3, 4 or 5 (2xx … 5xx).
    .addColumn('status_class', 'integer', notNull)
    // 0 for success, else the envelope's five-digit code.
    .addColumn('error_code', 'integer', notNull)
    .addColumn('request_count', 'bigint', notNull)
    // The key the flush's additive upsert (ON CONFLICT … DO UPDATE) lands on; it also serves the
    // page's read (one merchant, a range of days).
    .addPrimaryKeyConstraint('merchant_usage_daily_pk', ['merchant_id', 'environment', 'day', 'status_class', 'error_code'])
    .execute();
  // The retention purge deletes by day alone.
  await db.schema.createIndex('merchant_usage_daily_day_idx').on('merchant_usage_daily').column('day').execute();

  await withId(db.schema.createTable('merchant_recent_errors'), dialect)
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('environment', 'text', notNull)
    .addColumn('request_id', 'text', notNull)
    .addColumn('at', 'bigint', notNull)
    .addColumn('method', 'text', notNull)
    .addColumn('route', 'text', notNull)
    .addColumn('status', 'integer', notNull)
    .addColumn('error_code', 'integer', notNull)
    .execute();
  await db.schema.createIndex('merchant_recent_errors_merchant_idx').on('merchant_recent_errors').columns(['merchant_id', 'environment', 'id']).execute();
  await db.schema.createIndex('merchant_recent_errors_at_idx').on('merchant_recent_errors').column('at').execute();
}
