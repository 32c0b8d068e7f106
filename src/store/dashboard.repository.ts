import { sql } from 'kysely';
import type { Handle } from './db.ts';

const count = (row: { n: string | number | bigint } | undefined) => Number(row?.n ?? 0);

/** The refund review queue's numbers, each one indexed count. */
export async function reviewCounts(db: Handle, slaCutoff: number) {
  const [pending, overSla] = await Promise.all([
    db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'pending_review')
      .executeTakeFirst(),
    db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'pending_review')
      .where('created_at', '<', slaCutoff)
      .executeTakeFirst(),
  ]);
  return { pendingRefunds: count(pending), overSla: count(overSla) };
}

/** Day number (days since 1970-01-01 UTC) of an epoch-milliseconds column: integer division in both dialects. */
const dayOf = sql<number>`created_at / 86400000`;

/**
 * Rows created per UTC day in [since, until): one indexed range over `created_at`
 * (orders_created_idx, refunds_created_idx), grouped by day; days without rows are absent.
 */
export async function countsPerDay(db: Handle, table: 'orders' | 'refunds', since: number, until: number): Promise<Map<number, number>> {
  const rows = await db
    .selectFrom(table)
    .select((eb) => [dayOf.as('day'), eb.fn.countAll().as('n')])
    .where('created_at', '>=', since)
    .where('created_at', '<', until)
    .groupBy(dayOf)
    .execute();
  return new Map(rows.map((r) => [Number(r.day), count(r)]));
}

/** Stock rows at or below `threshold`, lowest first (stocks_qty_idx); `limit + 1` tells whether there are more. */
export async function lowStockRows(db: Handle, threshold: number, limit: number) {
  return db
    .selectFrom('stocks')
    .innerJoin('products', 'products.id', 'stocks.product_id')
    .innerJoin('warehouses', 'warehouses.id', 'stocks.warehouse_id')
    .select(['products.sku as sku', 'products.name as name', 'warehouses.code as warehouseCode', 'stocks.qty as qty'])
    .where('stocks.qty', '<=', threshold)
    .orderBy('stocks.qty')
    .orderBy('stocks.product_id')
    .orderBy('stocks.warehouse_id')
    .limit(limit)
    .execute();
}

/** Webhook endpoints whose deliveries are failing, or that were disabled: longest failing first. */
export async function troubledEndpoints(db: Handle, limit: number) {
  return db
    .selectFrom('webhook_endpoints')
    .select(['id', 'merchant_id as merchantId', 'url', 'status', 'failing_since as failingSince', 'disabled_reason as disabledReason'])
    .where((eb) => eb.or([eb('failing_since', 'is not', null), eb('status', '=', 'disabled')]))
    .orderBy('failing_since')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * What the refund worker is doing, from the refunds waiting for a decision (refunds_status_idx):
 * held by a worker now, parked for manual review after REFUND_MAX_ATTEMPTS, due (past the
 * automatic delay and not held), and when the oldest waiting refund was requested.
 */
export async function refundWorkerCounts(db: Handle, dueBefore: number, now: number) {
  const pending = () => db.selectFrom('refunds').where('status', '=', 'pending_review');
  const [claimed, parked, due, oldest] = await Promise.all([
    pending()
      .select((eb) => eb.fn.countAll().as('n'))
      .where('claimed_until', '>', now)
      .executeTakeFirst(),
    pending()
      .select((eb) => eb.fn.countAll().as('n'))
      .where('manual_review', '=', 1)
      .executeTakeFirst(),
    pending()
      .select((eb) => eb.fn.countAll().as('n'))
      .where('created_at', '<', dueBefore)
      .where('manual_review', '=', 0)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
      .executeTakeFirst(),
    pending().select('created_at').orderBy('created_at').orderBy('id').limit(1).executeTakeFirst(),
  ]);
  return { claimed: count(claimed), parked: count(parked), due: count(due), oldestPendingAt: oldest ? Number(oldest.created_at) : null };
}
