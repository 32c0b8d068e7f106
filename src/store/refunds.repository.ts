import { sql, type Insertable, type Selectable } from 'kysely';
import { countUpTo, type Dialect, type Handle, type Trx } from './db.ts';
import type { RefundState, SplitOrderStatus } from '../domain/vocabulary.ts';
import type { RefundItemsTable, RefundsTable } from './schema.ts';
import {
  isMerchantScope,
  type AllMerchants,
  type MerchantScope,
  type ScopedOrderId,
  type ScopedRefundId,
  type ScopedSplitId,
  type TenantScope,
} from './tenancy.ts';
import { ownedBy, resolvedRefundId, resolvedSplitId, type Owned } from './scope-mint.ts';
import { prepared, preparedForMerchant } from './prepared.ts';
import { orderStatusUpdate, statusUpdateOf, type OrderStatusChange, type StatusUpdate } from './orders.repository.ts';
import type { RefundLine } from '../domain/refunds.ts';
import { handleOf } from './scope-handle.ts';

export type RefundRow = Selectable<RefundsTable>;
export type RefundItemRow = Selectable<RefundItemsTable>;
/** A refund row read through a tenant scope (or locked by a scoped id): its id and its order's are resolved. */
export type ScopedRefundRow = RefundRow & { id: ScopedRefundId; order_id: ScopedOrderId };

/** For this module's readers: the rows a scoped query just returned, their ids resolved. */
const scopedRows = (rows: RefundRow[]) => rows as ScopedRefundRow[];
const scopedRow = (row: RefundRow | undefined) => row as ScopedRefundRow | undefined;
const refundsOf = (r: TenantScope) => (isMerchantScope(r) ? r.selectFrom('refunds') : handleOf(r).selectFrom('refunds'));

/**
 * Locks an order's split orders (a no-op UPDATE takes the row locks on PostgreSQL) and returns
 * their current status. Refund requests, refund decisions and shipping all take these locks first,
 * so "is it shipped?" and "is a refund pending?" are never answered from a stale snapshot. The
 * order id was resolved in a scope, so the split ids that come back are too.
 */
export async function lockSplitOrders(db: Trx, orderId: ScopedOrderId): Promise<Map<ScopedSplitId, SplitOrderStatus>> {
  const rows = await db
    .updateTable('split_orders')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('order_id', '=', orderId)
    .returning(['id', 'status'])
    .execute();
  return new Map(rows.map((r) => [resolvedSplitId(r.id), r.status]));
}

/** A split order as a refund request locked it. */
export interface LockedSplit {
  id: number;
  /** Resolved in the merchant's scope: the order's items are read by it. */
  orderId: ScopedOrderId;
  status: SplitOrderStatus;
  countryCode: string;
  warehouseId: number;
  freightCents: number;
}

/**
 * A refund request's first statement: resolves the merchant's `{id}` — its order id, else the id
 * of one of its split orders, as `resolveOrderId` — and returns that order's split orders,
 * locked: `SELECT … FOR UPDATE` on PostgreSQL (the same row locks as `lockSplitOrders`, without
 * writing a new version of each row); a plain read on SQLite, whose IMMEDIATE transaction already
 * holds the only write lock (a no-op UPDATE there would only add pages to the commit). Empty when
 * the merchant has no such order (an order always has a split order).
 */
export async function lockSplitOrdersOf(scope: MerchantScope<Trx>, dialect: Dialect, requestedId: number): Promise<LockedSplit[]> {
  return (await splitOrdersOfRequest.all(scope, requestedId, dialect === 'postgres')) as LockedSplit[];
}

const splitOrdersOfRequest = preparedForMerchant((scope, requestedId: number, lock: boolean) => {
  const byOrderId = scope.selectFrom('orders').select('orders.id').where('orders.id', '=', requestedId);
  const bySplitId = scope.selectFrom('split_orders').select('split_orders.order_id').where('split_orders.id', '=', requestedId);
  const q = scope
    .selectFrom('split_orders')
    .select([
      'split_orders.id as id',
      'split_orders.order_id as orderId',
      'split_orders.status as status',
      'split_orders.country_code as countryCode',
      'split_orders.warehouse_id as warehouseId',
      'split_orders.freight_cents as freightCents',
    ])
    .where((eb) => eb('split_orders.order_id', '=', eb.fn.coalesce(byOrderId, bySplitId)))
    .orderBy('split_orders.id');
  return lock ? q.forUpdate() : q;
});

/** An order's items with their refund counts, by id (the split order's facts come from `lockSplitOrdersOf`). */
export const refundableItems = (db: Trx, orderId: ScopedOrderId) => refundableItemRows.all(db, orderId);

const refundableItemRows = prepared((db, orderId: number) =>
  db
    .selectFrom('order_items')
    .select([
      'id',
      'sku',
      'split_order_id as splitOrderId',
      'product_id as productId',
      'quantity',
      'refunded_quantity as refunded',
      'pending_refund_quantity as pending',
      'unit_cents as unitCents',
    ])
    .where('order_id', '=', orderId)
    .orderBy('id'),
);

export async function orderItemsWithSplits(db: Handle, orderId: ScopedOrderId) {
  return db
    .selectFrom('order_items')
    .innerJoin('split_orders', 'split_orders.id', 'order_items.split_order_id')
    .select([
      'order_items.id as id',
      'order_items.sku as sku',
      'order_items.split_order_id as splitOrderId',
      'order_items.product_id as productId',
      'order_items.quantity as quantity',
      'order_items.refunded_quantity as refunded',
      'order_items.pending_refund_quantity as pending',
      'order_items.unit_cents as unitCents',
      'split_orders.country_code as countryCode',
      'split_orders.warehouse_id as warehouseId',
      'split_orders.freight_cents as splitFreightCents',
    ])
    .where('order_items.order_id', '=', orderId)
    .orderBy('order_items.id')
    .execute();
}

/**
 * Moves each line's quantity into pending, all lines in one conditional UPDATE (each row's
 * quantity by a CASE), and only where that much is still refundable: the check is in the statement,
 * so of two requests racing for the last unit one wins (on PostgreSQL a row another transaction
 * changed is checked again against its new values). Item ids must be distinct (the caller checks). Not executed.
 */
function reservePending(db: Handle, lines: Pick<RefundLine, 'itemId' | 'quantity'>[], now: number) {
  // `cast` types the parameters for PostgreSQL (a CASE of bare parameters would be text there).
  const quantity = sql<number>`case ${sql.join(
    lines.map((l) => sql`when id = ${l.itemId} then cast(${l.quantity} as bigint)`),
    sql` `,
  )} end`;
  return db
    .updateTable('order_items')
    .set({ pending_refund_quantity: sql`pending_refund_quantity + ${quantity}`, updated_at: now })
    .where(
      'id',
      'in',
      lines.map((l) => l.itemId),
    )
    .where(sql<boolean>`quantity - refunded_quantity - pending_refund_quantity >= ${quantity}`);
}

export interface RefundRequestWrites {
  /** The quantities to reserve, by item (distinct items, at least one). */
  lines: RefundLine[];
  refund: Omit<Insertable<RefundsTable>, 'merchant_id'>;
  items: Omit<Insertable<RefundItemsTable>, 'refund_id'>[];
  orderId: number;
  order: OrderStatusChange;
}

/**
 * Everything a refund request writes once it is planned: the reservation of every line (see
 * `reservePending`), the refund and its items, the order's statuses. Returns the refund id, or
 * null when a line was no longer refundable — then the caller rolls the transaction back, since
 * the other writes are made either way. PostgreSQL: one statement (data-modifying CTEs; the
 * items come as one JSON parameter), so one round trip where there were four. SQLite: four
 * statements (it has no data-modifying CTEs, and a statement costs no round trip there).
 */
export async function writeRefundRequest(scope: MerchantScope<Trx>, dialect: Dialect, w: RefundRequestWrites, now: number): Promise<ScopedRefundId | null> {
  const db = handleOf(scope);
  if (w.lines.length === 0) throw new Error('writeRefundRequest: nothing to reserve');
  if (new Set(w.lines.map((l) => l.itemId)).size !== w.lines.length) throw new Error('writeRefundRequest: an item appears twice');
  const lines = w.lines.map((l) => ({ itemId: l.itemId, quantity: l.quantity }));
  const status = statusUpdateOf(w.order);
  if (dialect === 'postgres') {
    const row = await refundRequestStatement.first(scope, lines, w.refund, JSON.stringify(w.items), w.orderId, status, now);
    if (!row) throw new Error('writeRefundRequest: no refund id returned');
    return Number(row.reserved) === w.lines.length ? resolvedRefundId(row.id) : null;
  }
  const reserved = await reservation.run(db, lines, now);
  if (reserved !== w.lines.length) return null;
  const inserted = await refundInsert.first(scope, w.refund);
  if (!inserted) throw new Error('writeRefundRequest: no refund id returned');
  await refundItemInsert.run(
    db,
    w.items.map((i) => ({ ...i, refund_id: inserted.id })),
  );
  await orderStatus.run(db, w.orderId, status, now);
  return resolvedRefundId(inserted.id);
}

// The refund request's statements, prepared (src/store/prepared.ts).
const reservation = prepared(reservePending);
const orderStatus = prepared(orderStatusUpdate);
const refundRequestStatement = preparedForMerchant(
  (scope, lines: RefundLine[], refund: Omit<Insertable<RefundsTable>, 'merchant_id'>, items: string, orderId: number, status: StatusUpdate, now: number) => {
    const db = handleOf(scope);
    return db
      .with('reserved', () => reservePending(db, lines, now).returning('id'))
      .with('refund', () => scope.insertInto('refunds', refund).returning('id'))
      .with('refund_items_added', () =>
        db
          .insertInto('refund_items')
          .columns(['refund_id', 'order_item_id', 'split_order_id', 'sku', 'country_code', 'quantity'])
          .expression(
            sql`select refund.id, x.order_item_id, x.split_order_id, x.sku, x.country_code, x.quantity from refund, json_to_recordset(cast(${items} as json))
              as x(order_item_id bigint, split_order_id bigint, sku text, country_code text, quantity bigint)`,
          ),
      )
      .with('order_updated', () => orderStatusUpdate(db, orderId, status, now))
      .selectFrom('refund')
      .select((eb) => ['refund.id as id', eb.selectFrom('reserved').select(eb.fn.countAll<number>().as('n')).as('reserved')]);
  },
);
const refundInsert = preparedForMerchant((scope, row: Omit<Insertable<RefundsTable>, 'merchant_id'>) => scope.insertInto('refunds', row).returning('id'));
const refundItemInsert = prepared((db, rows: Insertable<RefundItemsTable>[]) => db.insertInto('refund_items').values(rows));

export async function settlePending(db: Trx, itemId: number, quantity: number, refunded: boolean, now: number): Promise<void> {
  await db
    .updateTable('order_items')
    .set((eb) => ({
      pending_refund_quantity: eb('pending_refund_quantity', '-', quantity),
      refunded_quantity: refunded ? eb('refunded_quantity', '+', quantity) : eb.ref('refunded_quantity'),
      updated_at: now,
    }))
    .where('id', '=', itemId)
    .execute();
}

/** Takes the refund for deciding if it is still pending; on PostgreSQL this also locks the row, so a second decider waits and then finds it decided. */
export async function lockPendingRefund(db: Trx, refundId: ScopedRefundId, now: number): Promise<ScopedRefundRow | undefined> {
  return scopedRow(
    await db
      .updateTable('refunds')
      .set({ updated_at: now })
      .where('id', '=', refundId)
      .where('status', '=', 'pending_review')
      .returningAll()
      .executeTakeFirst(),
  );
}

/** The items of refunds whose ids were resolved in a scope. */
export const refundItems = (db: Handle, refundIds: ScopedRefundId[]) =>
  refundIds.length === 0
    ? Promise.resolve([] as RefundItemRow[])
    : db.selectFrom('refund_items').selectAll().where('refund_id', 'in', refundIds).orderBy('id').execute();

/** A line of a refund as the review queue shows it: the product and the state of the split it ships in. */
export interface RefundLineDetail {
  refundId: number;
  sku: string;
  productName: string;
  quantity: number;
  splitOrderId: number;
  splitStatus: SplitOrderStatus;
}

/**
 * The review queue's detail of refunds whose ids were resolved (the operator's page): each line
 * with its product's name and its split order's status, and every split order of each refund's
 * order with its status (whether anything of the order has shipped). Two reads for the whole page.
 */
export async function refundReviewDetails(db: Handle, refundIds: ScopedRefundId[]) {
  if (refundIds.length === 0)
    return { lines: [] as RefundLineDetail[], orderSplits: [] as { refundId: number; splitOrderId: number; status: SplitOrderStatus }[] };
  const [lines, orderSplits] = await Promise.all([
    db
      .selectFrom('refund_items')
      .innerJoin('order_items', 'order_items.id', 'refund_items.order_item_id')
      .innerJoin('split_orders', 'split_orders.id', 'refund_items.split_order_id')
      .select([
        'refund_items.refund_id as refundId',
        'refund_items.sku as sku',
        'order_items.product_name as productName',
        'refund_items.quantity as quantity',
        'refund_items.split_order_id as splitOrderId',
        'split_orders.status as splitStatus',
      ])
      .where('refund_items.refund_id', 'in', refundIds)
      .orderBy('refund_items.id')
      .execute(),
    db
      .selectFrom('refunds')
      .innerJoin('split_orders', 'split_orders.order_id', 'refunds.order_id')
      .select(['refunds.id as refundId', 'split_orders.id as splitOrderId', 'split_orders.status as status'])
      .where('refunds.id', 'in', refundIds)
      .orderBy('split_orders.id')
      .execute(),
  ]);
  return { lines, orderSplits };
}

/** `refundItems` read within a scope (the refunds' ids were resolved in it): for a service that holds a scope, not a handle. */
export const refundItemsIn = (reader: TenantScope, refundIds: ScopedRefundId[]) => refundItems(handleOf(reader), refundIds);

export async function finishRefund(
  db: Trx,
  refundId: ScopedRefundId,
  outcome: { status: RefundState; failureReason: string | null; amountCents: number; decidedBy: 'auto' | 'operator' },
  now: number,
): Promise<void> {
  await db
    .updateTable('refunds')
    .set({
      status: outcome.status,
      failure_reason: outcome.failureReason,
      amount_cents: outcome.amountCents,
      decided_by: outcome.decidedBy,
      decided_at: now,
      claimed_by: null,
      claimed_until: null,
      updated_at: now,
    })
    .where('id', '=', refundId)
    .execute();
}

/**
 * Claims up to `limit` due refunds for one worker. On PostgreSQL `FOR UPDATE SKIP LOCKED` lets
 * several workers claim disjoint batches without waiting on each other; SQLite has one writer.
 * A claim lapses at `until`, so a crashed worker's refunds are picked up again. The worker has no
 * merchant: the claim, over every merchant's refunds, is how it gets their ids resolved.
 */
export async function claimDueRefunds(
  db: Trx,
  dialect: Dialect,
  worker: string,
  dueBefore: number,
  now: number,
  until: number,
  limit: number,
): Promise<ScopedRefundId[]> {
  let candidates = db
    .selectFrom('refunds')
    .select('id')
    .where('status', '=', 'pending_review')
    .where('manual_review', '=', 0)
    .where('created_at', '<=', dueBefore)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
    .orderBy('id')
    .limit(limit);
  if (dialect === 'postgres') candidates = candidates.forUpdate().skipLocked();
  // Counted at the claim, not after a failure: a decision that kills its process counts too.
  const rows = await db
    .updateTable('refunds')
    .set((eb) => ({ claimed_by: worker, claimed_until: until, attempts: eb('attempts', '+', 1) }))
    .where('id', 'in', candidates)
    .returning('id')
    .execute();
  return rows.map((r) => resolvedRefundId(r.id)).sort((a, b) => a - b);
}

const MAX_ERROR_TEXT = 1000;

/**
 * After a failed attempt: keeps the error for the operator and, once `maxAttempts` claims have
 * been spent, parks the refund for manual review (the worker no longer claims it). Only the
 * worker holding the claim records anything. Returns whether the refund was parked.
 */
export async function recordRefundFailure(
  db: Trx,
  refundId: ScopedRefundId,
  worker: string,
  error: string,
  maxAttempts: number,
  now: number,
): Promise<boolean> {
  const row = await db
    .updateTable('refunds')
    .set((eb) => ({
      last_error: error.slice(0, MAX_ERROR_TEXT),
      manual_review: eb.case().when('attempts', '>=', maxAttempts).then(1).else(0).end(),
      updated_at: now,
    }))
    .where('id', '=', refundId)
    .where('status', '=', 'pending_review')
    .where('claimed_by', '=', worker)
    .returning('manual_review')
    .executeTakeFirst();
  return row?.manual_review === 1;
}

/** Takes back the attempt a claim counted, when the decision failed for the storage's sake (full, read-only, unreachable), not the refund's. */
export async function forgetAttempt(db: Trx, refundId: ScopedRefundId, worker: string): Promise<void> {
  await db
    .updateTable('refunds')
    .set((eb) => ({ attempts: eb('attempts', '-', 1) }))
    .where('id', '=', refundId)
    .where('claimed_by', '=', worker)
    .where('attempts', '>', 0)
    .execute();
}

/**
 * Parks refunds whose attempts are spent but whose last claim lapsed without a recorded failure
 * (the worker died while deciding them: crash, kill, out of memory). Returns their ids.
 */
export async function parkExhaustedRefunds(db: Trx, maxAttempts: number, now: number): Promise<number[]> {
  const rows = await db
    .updateTable('refunds')
    .set((eb) => ({
      manual_review: 1,
      last_error: eb.fn.coalesce('last_error', eb.val(`the worker stopped (crash or kill) while deciding it, ${maxAttempts} times`)),
      claimed_by: null,
      claimed_until: null,
      updated_at: now,
    }))
    .where('status', '=', 'pending_review')
    .where('manual_review', '=', 0)
    .where('attempts', '>=', maxAttempts)
    .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** A page of an order's refunds, newest first, with their items: the order id was resolved in the reader's scope. */
export async function refundsOfOrder(reader: TenantScope, orderId: ScopedOrderId, offset: number, limit: number) {
  const db = handleOf(reader);
  const [count, rows] = await Promise.all([
    db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('order_id', '=', orderId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('refunds')
      .selectAll()
      .where('order_id', '=', orderId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .offset(offset)
      .limit(limit)
      .execute()
      .then(scopedRows),
  ]);
  const items = await refundItems(
    db,
    rows.map((r) => r.id),
  );
  return { total: Number(count.n), rows, items };
}

/**
 * A refund by its number, if the reader may see it: the merchant's scope, or the operator's
 * `allMerchants(db)` (the console's and the operator API's decisions name a refund by number).
 * Its id comes back resolved: how a refund number from a request reaches `decideRefund`.
 */
export const resolveRefund = async (reader: TenantScope, refundId: number): Promise<ScopedRefundRow | undefined> =>
  scopedRow(await refundsOf(reader).selectAll().where('id', '=', refundId).executeTakeFirst());

/** A refund by an id already resolved in a scope (the outbox's payload, a decision's fresh read). */
export async function refundById<H extends Handle>(db: H, refundId: ScopedRefundId): Promise<Owned<ScopedRefundRow, H> | undefined> {
  const row = scopedRow(await db.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirst());
  return row && ownedBy(db, row.merchant_id, row);
}

/** The operator's queue: oldest pending first, then by id; `manualReview` keeps only parked (true) or unparked (false) refunds. */
export async function listRefunds(operator: AllMerchants, status: RefundState | null, offset: number, limit: number, manualReview: boolean | null = null) {
  const db = handleOf(operator);
  let q = db.selectFrom('refunds');
  if (status !== null) q = q.where('status', '=', status);
  if (manualReview !== null) q = q.where('manual_review', '=', manualReview ? 1 : 0);
  const [count, rows] = await Promise.all([
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    q.selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc').offset(offset).limit(limit).execute().then(scopedRows),
  ]);
  const items = await refundItems(
    db,
    rows.map((r) => r.id),
  );
  return { total: Number(count.n), rows, items };
}

/** Refunds in `status`, oldest first by (created_at, id), `limit` after the keyset `after` (or from the first): the queue's export. */
export async function refundsAfter(operator: AllMerchants, status: RefundState | null, after: [number, number] | null, limit: number) {
  let q = handleOf(operator).selectFrom('refunds').selectAll();
  if (status !== null) q = q.where('status', '=', status);
  if (after !== null) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(after[0], after[1])));
  return scopedRows(await q.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(limit).execute());
}

export async function pendingRefundStats(db: Handle) {
  return db
    .selectFrom('refunds')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min<number>('created_at').as('oldest')])
    .where('status', '=', 'pending_review')
    .executeTakeFirstOrThrow();
}

/** Counts `quantity` more of an item as given back to the merchant (a split the operator cancelled before it shipped). */
export async function creditItemQuantity(trx: Trx, itemId: number, quantity: number, now: number): Promise<void> {
  await trx
    .updateTable('order_items')
    .set((eb) => ({ refunded_quantity: eb('refunded_quantity', '+', quantity), updated_at: now }))
    .where('id', '=', itemId)
    .execute();
}

/** A split order whose every item was refunded is cancelled. */
export async function cancelSplitOrder(trx: Trx, splitOrderId: ScopedSplitId, now: number): Promise<void> {
  await trx.updateTable('split_orders').set({ status: 'cancelled', updated_at: now }).where('id', '=', splitOrderId).execute();
}

/** The console's refund list: any of these may be null (no filter); requested between `createStart` (included) and `createEnd` (excluded). */
export interface RefundSearch {
  status: RefundState | null;
  merchantId: number | null;
  createStart: number | null;
  createEnd: number | null;
}

function searchedRefunds(db: Handle, s: RefundSearch) {
  let q = db.selectFrom('refunds');
  if (s.merchantId !== null) q = q.where('merchant_id', '=', s.merchantId);
  if (s.status !== null) q = q.where('status', '=', s.status);
  if (s.createStart !== null) q = q.where('created_at', '>=', s.createStart);
  if (s.createEnd !== null) q = q.where('created_at', '<', s.createEnd);
  return q;
}

/**
 * The refunds a search matches, newest first by (created_at, id), `limit` of them before the keyset
 * `before` (or from the newest). An index serves each filter's walk: (created_at, id),
 * (status, created_at, id), (merchant_id, created_at, id) (migration 0041).
 */
export const searchRefunds = async (operator: AllMerchants, s: RefundSearch, before: [number, number] | null, limit: number) => {
  let q = searchedRefunds(handleOf(operator), s).selectAll();
  if (before !== null) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before[0], before[1])));
  return scopedRows(await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute());
};

/**
 * How many refunds a search matches, counting at most `cap` (a bounded read); with `upTo`, only
 * those at or before that (created_at, id) in the walk, newest first — the rows earlier pages showed.
 */
export async function countSearchedRefunds(db: Handle, s: RefundSearch, cap: number, upTo: [number, number] | null): Promise<number> {
  let inner = searchedRefunds(db, s).select('id');
  if (upTo !== null) inner = inner.where((eb) => eb(eb.refTuple('created_at', 'id'), '>=', eb.tuple(upTo[0], upTo[1])));
  return countUpTo(db, inner, cap);
}
