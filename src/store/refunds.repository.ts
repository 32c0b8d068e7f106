import { sql, type Insertable, type Selectable, type SqlBool } from 'kysely';
import { countUpTo, type Dialect, type Handle, type OneStatement, type Trx } from './db.ts';
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
import { merchantIdOf, ownedBy, resolvedRefundId, resolvedSplitId, type Owned } from './scope-mint.ts';
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

/**
 * Locks the split orders of the order the merchant's `{id}` names (`SELECT … FOR UPDATE`: the row
 * locks every writer of an order's split orders and items takes first), for a PostgreSQL refund
 * request that lost a race: read after this, in the same transaction, its rows stay as read, so
 * its checked write cannot find them changed. An `{id}` that names no order of the merchant locks
 * nothing; the read after it finds no order.
 */
export async function lockSplitOrdersOf(scope: MerchantScope<Trx>, requestedId: number): Promise<void> {
  await splitOrdersLocked.all(scope, requestedId);
}

const splitOrdersLocked = preparedForMerchant((scope, requestedId: number) =>
  scope
    .selectFrom('split_orders')
    .select('split_orders.id')
    .where((eb) => eb('split_orders.order_id', '=', eb.fn.coalesce(orderNamedBy(scope, requestedId), splitOrderNamedBy(scope, requestedId))))
    .orderBy('split_orders.id')
    .forUpdate(),
);

/** `{id}` as the merchant's order id, and as the id of one of its split orders: a refund request takes the first that names one. */
const orderNamedBy = (scope: MerchantScope, requestedId: number) => scope.selectFrom('orders').select('orders.id').where('orders.id', '=', requestedId);
const splitOrderNamedBy = (scope: MerchantScope, requestedId: number) =>
  scope.selectFrom('split_orders').select('split_orders.order_id').where('split_orders.id', '=', requestedId);

/** A split order as a refund request read it. */
export interface RefundableSplit {
  id: number;
  /** Resolved in the merchant's scope: the refund's rows name it. */
  orderId: ScopedOrderId;
  status: SplitOrderStatus;
  countryCode: string;
  warehouseId: number;
  freightCents: number;
}

/** An order item with its refund counts, as a refund request read it. */
export interface RefundableItem {
  id: number;
  sku: string;
  splitOrderId: number;
  productId: number;
  quantity: number;
  refunded: number;
  pending: number;
  unitCents: number;
}

/** What a refund request plans from: the order's split orders (by id) and its items (by id). */
export interface RefundableOrder {
  orderId: ScopedOrderId;
  splits: RefundableSplit[];
  items: RefundableItem[];
}

/**
 * A refund request's read, one statement: resolves the merchant's `{id}` — its order id, else the
 * id of one of its split orders, as `resolveOrderId` — and returns that order's split orders and
 * items. No lock: on PostgreSQL the write checks these rows under its locks (`writeRefundRequest`);
 * on SQLite it runs in the IMMEDIATE transaction that writes, which holds the only write lock.
 * Null when the merchant has no such order (an order always has a split order).
 */
export async function refundableOrderOf(scope: MerchantScope, requestedId: number): Promise<RefundableOrder | null> {
  const rows = await refundableOrderRows.all(scope, requestedId);
  if (rows.length === 0) return null;
  const splits = new Map<number, RefundableSplit>();
  const items: RefundableItem[] = [];
  for (const r of rows) {
    if (!splits.has(r.splitId)) {
      splits.set(r.splitId, {
        id: r.splitId,
        orderId: r.orderId as ScopedOrderId,
        status: r.status,
        countryCode: r.countryCode,
        warehouseId: r.warehouseId,
        freightCents: r.freightCents,
      });
    }
    if (r.id !== null) {
      items.push({
        id: r.id,
        sku: r.sku!,
        splitOrderId: r.splitId,
        productId: r.productId!,
        quantity: r.quantity!,
        refunded: r.refunded!,
        pending: r.pending!,
        unitCents: r.unitCents!,
      });
    }
  }
  // Sorted here, not by an ORDER BY that could lead SQLite's planner to walk every item by id.
  return {
    orderId: rows[0].orderId as ScopedOrderId,
    splits: [...splits.values()].sort((a, b) => a.id - b.id),
    items: items.sort((a, b) => a.id - b.id),
  };
}

const refundableOrderRows = preparedForMerchant((scope, requestedId: number) =>
  scope
    .selectFrom('split_orders')
    .leftJoin('order_items', 'order_items.split_order_id', 'split_orders.id')
    .select([
      'split_orders.id as splitId',
      'split_orders.order_id as orderId',
      'split_orders.status as status',
      'split_orders.country_code as countryCode',
      'split_orders.warehouse_id as warehouseId',
      'split_orders.freight_cents as freightCents',
      'order_items.id as id',
      'order_items.sku as sku',
      'order_items.product_id as productId',
      'order_items.quantity as quantity',
      'order_items.refunded_quantity as refunded',
      'order_items.pending_refund_quantity as pending',
      'order_items.unit_cents as unitCents',
    ])
    .where((eb) => eb('split_orders.order_id', '=', eb.fn.coalesce(orderNamedBy(scope, requestedId), splitOrderNamedBy(scope, requestedId)))),
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
  const quantity = lineQuantity(lines);
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

/** Each line's quantity by its item's `id`, as one CASE; `cast` types the parameters for PostgreSQL (a CASE of bare parameters would be text there). */
const lineQuantity = (lines: Pick<RefundLine, 'itemId' | 'quantity'>[]) =>
  sql<number>`case ${sql.join(
    lines.map((l) => sql`when id = ${l.itemId} then cast(${l.quantity} as bigint)`),
    sql` `,
  )} end`;

/** The columns a refund request sets (the others keep their defaults). */
const REQUESTED_REFUND_COLUMNS = [
  'order_id',
  'status',
  'reason',
  'remark',
  'failure_reason',
  'amount_cents',
  'whole_order',
  'decided_by',
  'claimed_by',
  'claimed_until',
  'decided_at',
  'created_at',
  'updated_at',
] as const;

export interface RefundRequestWrites {
  /** The quantities to reserve, by item (distinct items, at least one). */
  lines: RefundLine[];
  refund: Pick<RefundsTable, (typeof REQUESTED_REFUND_COLUMNS)[number]>;
  items: Omit<Insertable<RefundItemsTable>, 'refund_id'>[];
  /** The rows the request was planned from (`refundableOrderOf`): on PostgreSQL the write checks them. */
  asRead: RefundableOrder;
  order: OrderStatusChange;
}

/**
 * Everything a refund request writes once it is planned: the reservation of every line (see
 * `reservePending`), the refund and its items, the order's statuses. Returns the refund id; or
 * null when a line was no longer refundable (SQLite) — then the caller rolls the transaction back,
 * since the other writes are made either way; or `'changed'` when the rows it was planned from
 * changed since they were read (PostgreSQL) — then nothing was written, and a fresh read and plan
 * can succeed.
 *
 * PostgreSQL: one statement that checks before it writes (`checkedRefundRequest`), so it is
 * atomic on its own and needs no transaction around the read: a request without an Idempotency-Key
 * runs as two round trips, where a transaction that locks and then reads took five. SQLite: four
 * statements in the IMMEDIATE transaction that read the rows (it has no data-modifying CTEs, and a
 * statement costs no round trip there; that transaction's write lock keeps the rows as read).
 */
export async function writeRefundRequest(
  scope: MerchantScope<Trx> | MerchantScope<OneStatement>,
  dialect: Dialect,
  w: RefundRequestWrites,
  now: number,
): Promise<ScopedRefundId | null | 'changed'> {
  const db: Handle = handleOf<Trx | OneStatement>(scope);
  if (w.lines.length === 0) throw new Error('writeRefundRequest: nothing to reserve');
  if (new Set(w.lines.map((l) => l.itemId)).size !== w.lines.length) throw new Error('writeRefundRequest: an item appears twice');
  const lines = w.lines.map((l) => ({ itemId: l.itemId, quantity: l.quantity }));
  const status = statusUpdateOf(w.order);
  const orderId = w.asRead.orderId;
  if (dialect === 'postgres') {
    const row = await checkedRefundRequest.first(scope, {
      orderId,
      splitsAsRead: splitsSignature(w.asRead.splits),
      itemsAsRead: itemsSignature(w.asRead.items),
      lines,
      refund: JSON.stringify(w.refund),
      items: JSON.stringify(w.items),
      status,
      now,
    });
    if (!row) throw new Error('writeRefundRequest: the statement returned no row');
    if (!row.ok) return 'changed';
    if (row.id === null) throw new Error('writeRefundRequest: checked, but no refund id returned');
    return resolvedRefundId(row.id);
  }
  // The reads and these writes must share the write lock.
  if (!db.isTransaction) throw new Error('writeRefundRequest: on SQLite, runs in the transaction that read the rows');
  const reserved = await reservation.run(db, lines, now);
  if (reserved !== w.lines.length) return null;
  const inserted = await refundInsert.first(scope, w.refund);
  if (!inserted) throw new Error('writeRefundRequest: no refund id returned');
  await refundItemInsert.run(
    db,
    w.items.map((i) => ({ ...i, refund_id: inserted.id })),
  );
  await orderStatus.run(db, orderId, status, now);
  return resolvedRefundId(inserted.id);
}

/** The split orders' ids and statuses, as `checkedRefundRequest` builds the same text from the locked rows. */
const splitsSignature = (splits: RefundableSplit[]) => splits.map((s) => `${s.id}:${s.status}`).join(',');
/** The items' ids and refund counts (ordered by id), likewise. */
const itemsSignature = (items: RefundableItem[]) => items.map((i) => `${i.id}:${i.refunded}:${i.pending}`).join(',');

interface CheckedRequestArgs {
  orderId: number;
  splitsAsRead: string;
  itemsAsRead: string;
  lines: Pick<RefundLine, 'itemId' | 'quantity'>[];
  /** The refund row, as JSON (its columns typed by the table's row type). */
  refund: string;
  /** The refund's items, as JSON. */
  items: string;
  status: StatusUpdate;
  now: number;
}

// The refund request's statements, prepared (src/store/prepared.ts).
const reservation = prepared(reservePending);
const orderStatus = prepared(orderStatusUpdate);

/**
 * PostgreSQL: a refund request's writes as one statement that first checks the rows they were
 * planned from. It locks the order's split orders, then its items — split orders first, the order
 * every writer of them takes (refund decisions, shipping, cancelling), and all of them before any
 * item: the items' lock waits behind a gate on the split orders' count — and `FOR UPDATE` returns
 * each row's latest committed version. `checked` compares those with what the request read: every
 * split order's status, every item's refunded and pending counts, and each line still refundable.
 * Every write is conditional on it, so when anything changed the statement writes nothing and says
 * so (`ok` false). The data-modifying CTEs run whether or not the final SELECT reads them.
 */
const checkedRefundRequest = preparedForMerchant((scope, a: CheckedRequestArgs) => {
  const db = handleOf(scope);
  const ok = sql<SqlBool>`(select ok from checked)`;
  const lineIds = sql.join(a.lines.map((l) => sql`${l.itemId}`));
  return sql<{ ok: boolean; id: number | null }>`
    with locked_splits as materialized (
      select id, status from split_orders where order_id = ${a.orderId} order by id for update
    ),
    locked_items as materialized (
      select id, quantity, refunded_quantity, pending_refund_quantity from order_items
      where order_id = ${a.orderId} and (select count(*) from locked_splits) > 0
      order by id for update
    ),
    checked as materialized (
      select coalesce(
        (select string_agg(id || ':' || status, ',' order by id) from locked_splits) = ${a.splitsAsRead}
        and (select string_agg(id || ':' || refunded_quantity || ':' || pending_refund_quantity, ',' order by id) from locked_items) = ${a.itemsAsRead}
        and (select count(*) from locked_items where id in (${lineIds})
          and quantity - refunded_quantity - pending_refund_quantity >= ${lineQuantity(a.lines)}) = ${a.lines.length},
        false) as ok
    ),
    reserved as (${reservePending(db, a.lines, a.now).where(ok)}),
    refund as (
      insert into refunds (merchant_id, ${sql.join(REQUESTED_REFUND_COLUMNS.map((c) => sql.ref(c)))})
      select cast(${merchantIdOf(scope)} as bigint), ${sql.join(REQUESTED_REFUND_COLUMNS.map((c) => sql.ref(`r.${c}`)))}
      from json_populate_record(null::refunds, cast(${a.refund} as json)) r
      where ${ok}
      returning id
    ),
    refund_items_added as (
      insert into refund_items (refund_id, order_item_id, split_order_id, sku, country_code, quantity)
      select refund.id, x.order_item_id, x.split_order_id, x.sku, x.country_code, x.quantity from refund, json_to_recordset(cast(${a.items} as json))
        as x(order_item_id bigint, split_order_id bigint, sku text, country_code text, quantity bigint)
    ),
    order_updated as (${orderStatusUpdate(db, a.orderId, a.status, a.now).where(ok)})
    select (select ok from checked) as ok, (select id from refund) as id`;
});
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
