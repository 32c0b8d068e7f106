import { sql } from 'kysely';
import { RECENT_ERRORS_PER_MERCHANT, type RecentError, type UsageCount } from '../domain/usage.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import type { Trx } from './db.ts';
import type { MerchantScope } from './tenancy.ts';

/** Rows per INSERT: far below either database's limit on bound parameters (SQLite 32,766). */
const ROWS_PER_STATEMENT = 1000;

function* chunks<T>(items: T[]): Generator<T[]> {
  for (let i = 0; i < items.length; i += ROWS_PER_STATEMENT) yield items.slice(i, i + ROWS_PER_STATEMENT);
}

/**
 * Adds counts to the stored ones: ON CONFLICT … DO UPDATE SET n = n + excluded.n, so several
 * processes flushing into one database each add theirs (never overwrite). One statement per
 * ROWS_PER_STATEMENT keys — in practice one per flush.
 */
export async function addUsageCounts(trx: Trx, env: StockistEnv, counts: UsageCount[]): Promise<void> {
  for (const part of chunks(counts)) {
    await trx
      .insertInto('merchant_usage_daily')
      .values(
        part.map((c) => ({
          merchant_id: c.merchantId,
          environment: env,
          day: c.day,
          status_class: c.statusClass,
          error_code: c.code,
          request_count: c.count,
        })),
      )
      .onConflict((oc) =>
        oc
          .columns(['merchant_id', 'environment', 'day', 'status_class', 'error_code'])
          .doUpdateSet({ request_count: (eb) => eb('merchant_usage_daily.request_count', '+', eb.ref('excluded.request_count')) }),
      )
      .execute();
  }
}

/**
 * Appends recent errors, then keeps only the newest RECENT_ERRORS_PER_MERCHANT of each merchant and
 * environment written to (one DELETE ranking their rows by id, newest first).
 */
export async function addRecentErrors(trx: Trx, env: StockistEnv, batches: { merchantId: number; errors: RecentError[] }[]): Promise<void> {
  const rows = batches.flatMap((b) =>
    b.errors.map((e) => ({
      merchant_id: b.merchantId,
      environment: env,
      request_id: e.requestId,
      at: e.at,
      method: e.method,
      route: e.route,
      status: e.status,
      error_code: e.code,
    })),
  );
  if (rows.length === 0) return;
  for (const part of chunks(rows)) await trx.insertInto('merchant_recent_errors').values(part).execute();
  const merchants = [...new Set(batches.map((b) => b.merchantId))];
  await sql`
    delete from merchant_recent_errors where id in (
      select id from (
        select id, row_number() over (partition by merchant_id order by id desc) as newest
        from merchant_recent_errors where environment = ${env} and merchant_id in (${sql.join(merchants)})
      ) ranked where newest > ${RECENT_ERRORS_PER_MERCHANT}
    )`.execute(trx);
}

/** Stored counts of one merchant and environment from `firstDay` on, summed over codes per class. */
export async function dailyCountsByClass(scope: MerchantScope, env: StockistEnv, firstDay: number) {
  const rows = await scope
    .selectFrom('merchant_usage_daily')
    .select(['day', 'status_class', (eb) => eb.fn.sum<number>('request_count').as('n')])
    .where('environment', '=', env)
    .where('day', '>=', firstDay)
    .groupBy(['day', 'status_class'])
    .execute();
  return rows.map((r) => ({ day: Number(r.day), statusClass: Number(r.status_class), count: Number(r.n) }));
}

/** Error counts of one merchant and environment from `firstDay` on, by code, most frequent first. */
export async function countsByErrorCode(scope: MerchantScope, env: StockistEnv, firstDay: number) {
  const rows = await scope
    .selectFrom('merchant_usage_daily')
    .select(['error_code', (eb) => eb.fn.sum<number>('request_count').as('n'), (eb) => eb.fn.max('day').as('last_day')])
    .where('environment', '=', env)
    .where('day', '>=', firstDay)
    .where('error_code', '<>', 0)
    .groupBy('error_code')
    .execute();
  return rows
    .map((r) => ({ code: Number(r.error_code), count: Number(r.n), lastDay: Number(r.last_day) }))
    .sort((a, b) => b.count - a.count || a.code - b.code);
}

/** One merchant's recent errors in one environment, newest first. */
export async function recentErrors(scope: MerchantScope, env: StockistEnv, since: number): Promise<RecentError[]> {
  const rows = await scope
    .selectFrom('merchant_recent_errors')
    .select(['request_id', 'at', 'method', 'route', 'status', 'error_code'])
    .where('environment', '=', env)
    .where('at', '>=', since)
    .orderBy('id', 'desc')
    .limit(RECENT_ERRORS_PER_MERCHANT)
    .execute();
  return rows.map((r) => ({ requestId: r.request_id, at: Number(r.at), method: r.method, route: r.route, status: r.status, code: r.error_code }));
}

/**
 * Deletes up to `limit` counter rows of days before `firstKeptDay` and up to `limit` recent errors
 * older than `keptSince`; returns how many rows went. Bounded, like the idempotency purge, so one
 * round never holds the write lock long.
 */
export async function purgeUsageBefore(db: Trx, firstKeptDay: number, keptSince: number, limit: number): Promise<number> {
  const counts = await db
    .deleteFrom('merchant_usage_daily')
    .where((eb) =>
      eb(
        eb.refTuple('merchant_id', 'environment', 'day', 'status_class', 'error_code'),
        'in',
        eb
          .selectFrom('merchant_usage_daily as o')
          .select(['o.merchant_id', 'o.environment', 'o.day', 'o.status_class', 'o.error_code'])
          .where('o.day', '<', firstKeptDay)
          .limit(limit)
          .$asTuple('merchant_id', 'environment', 'day', 'status_class', 'error_code'),
      ),
    )
    .executeTakeFirst();
  const errors = await db
    .deleteFrom('merchant_recent_errors')
    .where('id', 'in', (eb) => eb.selectFrom('merchant_recent_errors as o').select('o.id').where('o.at', '<', keptSince).limit(limit))
    .executeTakeFirst();
  return Number(counts.numDeletedRows) + Number(errors.numDeletedRows);
}
