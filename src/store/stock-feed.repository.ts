import { sql } from 'kysely';
import type { Dialect, Handle, Trx } from './db.ts';
import { prepared } from './prepared.ts';
import type { LedgerKind } from '../domain/vocabulary.ts';
import { handleOf } from './scope-handle.ts';
import type { MerchantScope } from './tenancy.ts';

/** A place in the feed: the commit order key and the ledger id that breaks ties within a commit. */
export interface FeedPosition {
  seq: number;
  id: number;
}

export const FEED_START: FeedPosition = { seq: 0, id: 0 };

/**
 * The one dialect-keyed piece of the feed. PostgreSQL: `commit_seq`, stamped at commit under the
 * head lock (migration 0002). SQLite: `id`, because its single writer commits in id order.
 */
export const commitOrderColumn = (dialect: Dialect) => (dialect === 'postgres' ? 'stock_ledger.commit_seq' : 'stock_ledger.id') as 'stock_ledger.id';

/**
 * Bulk writers insert ledger rows with this `commit_seq` (no per-row trigger event) and call
 * `stampBulkLedger` once before committing.
 */
export const bulkLedgerSeq = (dialect: Dialect): number | null => (dialect === 'postgres' ? -1 : null);

/**
 * The `time_mark` (migration 0012) of bulk ledger rows written at `now`. SQLite: decided now (one
 * writer: these rows are the newest), moving the head's mark and lag as the per-row trigger would;
 * PostgreSQL: null, `stampBulkLedger` marks them at the end.
 */
export async function bulkLedgerMark(db: Trx, dialect: Dialect, now: number): Promise<number | null> {
  if (dialect === 'postgres') return null;
  const head = await movedTimeMark.first(db, now);
  if (!head) throw new Error('bulkLedgerMark: no stock_feed_head row');
  return head.time_mark;
}

const movedTimeMark = prepared((db, now: number) =>
  db
    .updateTable('stock_feed_head')
    .set((eb) => ({
      time_lag: sql<number>`max(${eb.ref('time_lag')}, max(${eb.ref('time_mark')}, ${now}) - ${now})`,
      time_mark: sql<number>`max(${eb.ref('time_mark')}, ${now})`,
    }))
    .where('id', '=', 1)
    .returning('time_mark'),
);

/**
 * PostgreSQL: gives this transaction's bulk ledger rows the next commit number and their time mark
 * (held until commit, like the per-row trigger of migrations 0002 and 0012).
 */
export async function stampBulkLedger(db: Trx, dialect: Dialect): Promise<void> {
  if (dialect !== 'postgres') return;
  const head = await db
    .updateTable('stock_feed_head')
    .set((eb) => ({ seq: eb('seq', '+', 1) }))
    .where('id', '=', 1)
    .returning(['seq', 'time_mark', 'time_lag'])
    .executeTakeFirstOrThrow();
  const span = await db
    .selectFrom('stock_ledger')
    .select((eb) => [eb.fn.min('created_at').as('first'), eb.fn.max('created_at').as('last')])
    .where('commit_seq', '=', -1)
    .executeTakeFirstOrThrow();
  if (span.first === null || span.last === null) return;
  const mark = Math.max(head.time_mark, Number(span.last));
  const lag = Math.max(head.time_lag, mark - Number(span.first));
  await db.updateTable('stock_ledger').set({ commit_seq: head.seq, time_mark: mark }).where('commit_seq', '=', -1).execute();
  await db.updateTable('stock_feed_head').set({ time_mark: mark, time_lag: lag }).where('id', '=', 1).execute();
}

export interface FeedRow extends FeedPosition {
  sku: string;
  warehouseCode: string;
  countryCode: string;
  qty: number;
  delta: number;
  kind: LedgerKind;
  createdAt: number;
}

/** Ledger rows with their SKU and warehouse, as the feed shows them (`seq`: the commit-order column). */
const feedRows = (db: Handle, seq: ReturnType<typeof commitOrderColumn>) =>
  db
    .selectFrom('stock_ledger')
    .innerJoin('products', 'products.id', 'stock_ledger.product_id')
    .innerJoin('warehouses', 'warehouses.id', 'stock_ledger.warehouse_id')
    .select([
      `${seq} as seq`,
      'stock_ledger.id as id',
      'products.sku as sku',
      'warehouses.code as warehouseCode',
      'warehouses.country_code as countryCode',
      'stock_ledger.qty_after as qty',
      'stock_ledger.delta as delta',
      'stock_ledger.kind as kind',
      'stock_ledger.created_at as createdAt',
    ]);

/** Committed ledger rows after `after`, in commit order. */
export async function feedAfter(db: Handle, dialect: Dialect, after: FeedPosition, warehouseId: number | null, limit: number): Promise<FeedRow[]> {
  const seq = commitOrderColumn(dialect);
  let q = feedRows(db, seq)
    // A row value comparison, so both databases walk the (seq, id) index from the cursor.
    .where((eb) => eb(eb.refTuple(seq, 'stock_ledger.id'), '>', eb.tuple(after.seq, after.id)));
  if (warehouseId !== null) q = q.where('stock_ledger.warehouse_id', '=', warehouseId);
  return q.orderBy(seq).orderBy('stock_ledger.id').limit(limit).execute();
}

/**
 * The newest committed ledger rows, newest first (a test stock.changed event shows real ones):
 * only `skus` when given (the endpoint's SKU list).
 */
/** `feedLatest` for a service inside a merchant's scope (a test event of the merchant's endpoint): the feed is not merchant-owned. */
export const feedLatestIn = (scope: MerchantScope, dialect: Dialect, skus: readonly string[] | null, limit: number) =>
  feedLatest(handleOf(scope), dialect, skus, limit);

async function feedLatest(db: Handle, dialect: Dialect, skus: readonly string[] | null, limit: number): Promise<FeedRow[]> {
  const seq = commitOrderColumn(dialect);
  let q = feedRows(db, seq).where(seq, '>', 0);
  if (skus !== null) q = q.where('products.sku', 'in', skus.length ? [...skus] : ['']);
  return q.orderBy(seq, 'desc').orderBy('stock_ledger.id', 'desc').limit(limit).execute();
}

/** The newest committed position (the start when the ledger is empty). */
export async function feedHead(db: Handle, dialect: Dialect): Promise<FeedPosition> {
  const seq = commitOrderColumn(dialect);
  const row = await db
    .selectFrom('stock_ledger')
    .select([`${seq} as seq`, 'stock_ledger.id as id'])
    .where(seq, '>', 0)
    .orderBy(seq, 'desc')
    .orderBy('stock_ledger.id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? { seq: Number(row.seq), id: row.id } : FEED_START;
}
