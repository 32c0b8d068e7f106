import { creditRefund } from './ledger.service.ts';
import type { Config } from '../config.ts';
import { AppError, conflictState, fieldError, notFound } from '../domain/errors.ts';
import {
  REFUND_REASONS,
  decideRefund as refundOutcome,
  isShippedSplit,
  normalizeRefundReason,
  planRefund,
  refundAmountCents,
  type Decision,
  type RefundEntry,
} from '../domain/refunds.ts';
import type { RefundBody, RefundPageQuery } from '../schemas/refunds.ts';
import type { Db, Handle, OneStatement, Trx } from '../store/db.ts';
import { insertAudit } from '../store/audit.repository.ts';
import type { Actor } from '../domain/audit.ts';
import { resolveOrderId, type OrderReader } from '../store/orders.repository.ts';
import { allMerchants, outsideTransaction, within, type MerchantScope, type ScopedRefundId, type ScopedSplitId } from '../store/tenancy.ts';
import * as refunds from '../store/refunds.repository.ts';
import { addQty } from '../store/stocks.repository.ts';
import { RetryAttempt, runCheckedStatement, runIdempotent, type KeyStore } from './idempotency.service.ts';
import { orderStatusChange, refreshOrder } from './order-state.service.ts';
import { emitRefundDecided } from './webhook-events.service.ts';
import { presentRefund } from '../present/refund.presenter.ts';
import { pageOffset, pageWindow } from '../domain/paging.ts';
import type { CsvCell, CsvExport } from '../domain/csv.ts';
import { merchantNames } from '../store/merchants.repository.ts';

type ItemRow = Awaited<ReturnType<typeof refunds.orderItemsWithSplits>>[number];
const asRefundable = (rows: ItemRow[], splitStatus: ReadonlyMap<number, string>) =>
  rows.map((r) => ({ ...r, splitShipped: isShippedSplit(splitStatus.get(r.splitOrderId)) }));

/** The item fields a body may carry flat at the top level (SPEC §5.1). */
const FLAT_ITEM_FIELDS = ['itemId', 'skuCode', 'quantity', 'countryCode'] as const;

/**
 * The body's entries: `orderItems`, or one item's fields flat at the top level, or null (the whole
 * order). The whole order only when the body carries no item field at all: a flat body that carries
 * some (even `null` or empty) but names no line by `itemId` or `skuCode` is refused, never read as
 * "everything" (Hardening III). `orderItems` that is not a non-empty list is refused by the schema.
 */
function entriesOf(body: RefundBody): RefundEntry[] | null {
  const toEntry = (e: { itemId?: number | null; skuCode?: string | null; quantity?: number | null; countryCode?: string | null }): RefundEntry => ({
    itemId: e.itemId ?? null,
    skuCode: e.skuCode ? e.skuCode : null,
    quantity: e.quantity ?? null,
    countryCode: e.countryCode ? e.countryCode.toUpperCase() : null,
  });
  if (body.orderItems !== undefined) return body.orderItems.map(toEntry);
  const flat = FLAT_ITEM_FIELDS.filter((f) => body[f] !== undefined);
  if (flat.length === 0) return null;
  const entry = toEntry(body);
  if (entry.itemId === null && entry.skuCode === null) {
    throw fieldError('itemId', 'name the line to refund by itemId or skuCode; to refund the whole order, send no item field at all', {
      fieldsSent: flat,
    });
  }
  return [entry];
}

export interface RefundDeps {
  store: KeyStore;
}

/** POST /v2/order/orders/{id}/refund (SPEC §5.1): the refund starts pending, its quantities reserved at once. */
export async function requestRefund(
  deps: RefundDeps,
  merchant: MerchantScope,
  requestedId: number,
  body: RefundBody,
  idempotencyKey: string | null,
  requestId: string,
) {
  const reason = normalizeRefundReason(body.refundReason);
  if (reason === null) throw fieldError('refundReason', `must be one of: ${REFUND_REASONS.join(', ')}`, { allowed: REFUND_REASONS });
  const entries = entriesOf(body);
  const remark = body.remark ? body.remark : null;
  const normalized = { order: String(requestedId), reason, remark, entries };
  const { dialect } = deps.store;
  // Read, plan, write. The write checks what was read (PostgreSQL) or shares the read's write lock
  // (SQLite): see refunds.writeRefundRequest. `locked`: a PostgreSQL transaction that locks the
  // split orders before it reads, so what it read cannot change before it writes.
  const attempt = async (scope: MerchantScope<Trx> | MerchantScope<OneStatement>, locked: MerchantScope<Trx> | null) => {
    const now = Date.now();
    if (locked !== null) await refunds.lockSplitOrdersOf(locked, requestedId);
    const order = await refunds.refundableOrderOf(scope, requestedId);
    if (order === null) throw notFound('order');
    const splitOf = new Map(order.splits.map((s) => [s.id, s]));
    const items = order.items.map((i) => {
      const split = splitOf.get(i.splitOrderId)!;
      return {
        ...i,
        countryCode: split.countryCode,
        warehouseId: split.warehouseId,
        splitFreightCents: split.freightCents,
        splitShipped: isShippedSplit(split.status),
      };
    });
    const lines = planRefund(items, entries);
    const byId = new Map(items.map((i) => [i.id, i]));
    const reserved = new Map(lines.map((l) => [l.itemId, l.quantity]));
    const refundId = await refunds.writeRefundRequest(
      scope,
      dialect,
      {
        lines,
        refund: {
          order_id: order.orderId,
          status: 'pending_review',
          reason,
          remark,
          failure_reason: null,
          amount_cents: refundAmountCents(items, lines, true),
          whole_order: entries === null ? 1 : 0,
          decided_by: null,
          claimed_by: null,
          claimed_until: null,
          decided_at: null,
          created_at: now,
          updated_at: now,
        },
        items: lines.map((l) => {
          const item = byId.get(l.itemId)!;
          return { order_item_id: l.itemId, split_order_id: item.splitOrderId, sku: item.sku, country_code: item.countryCode, quantity: l.quantity };
        }),
        asRead: order,
        // The order's statuses with this reservation applied, from the rows read above.
        order: orderStatusChange(
          items.map((i) => ({ quantity: i.quantity, refunded: i.refunded, pending: i.pending + (reserved.get(i.id) ?? 0) })),
          order.splits.map((s) => s.status),
        ),
      },
      now,
    );
    // The rows changed after the read (PostgreSQL; nothing was written): a fresh read and plan.
    if (refundId === 'changed') throw new RetryAttempt('the order changed after it was read');
    // Reserved with a conditional update: of two requests racing for the last unit, one wins.
    if (refundId === null) throw new AppError('conflict', 40902, 'refund quantity exceeds what is still refundable');
    return refundId;
  };
  const request = { merchantId: merchant.merchantId, key: idempotencyKey, request: { route: 'refunds.create', normalized }, requestId };
  const present = (refundId: ScopedRefundId) => ({ data: String(refundId) });
  if (dialect === 'sqlite') return runIdempotent(deps.store, request, (trx) => attempt(within(merchant, trx), null), present);
  // PostgreSQL's write is one statement that checks before it writes: without a key, first without
  // a transaction (two round trips); a request that lost a race, or has a key, locks and then reads.
  return runCheckedStatement(
    deps.store,
    request,
    // Both statements on one connection: one pool checkout.
    () => deps.store.db.connection().execute((db) => attempt(outsideTransaction(merchant, db), null)),
    (trx) => {
      const scope = within(merchant, trx);
      return attempt(scope, scope);
    },
    present,
  );
}

export interface DecideHooks {
  /**
   * Runs inside the decision's transaction with its outcome, its last step before the commit: the
   * audit row of an operator decision; what it throws rolls the whole decision back (the refund
   * worker's tests inject their faults here, through the worker's options).
   */
  record?: (trx: Trx, outcome: { refundId: ScopedRefundId; status: string; failureReason: string | null; amountCents: number }) => Promise<void>;
}

/**
 * SPEC §5.2: decides one pending refund with all its effects in one transaction — or, if another
 * decider got there first, does nothing and returns null. Approval still fails when a targeted
 * split order shipped in the meantime. The id was resolved first: by the worker's claim, or the
 * operator's `resolveRefund(allMerchants(db), refundNo)`.
 */
export async function decideRefund(
  db: Db,
  refundId: ScopedRefundId,
  decision: Decision,
  decidedBy: 'auto' | 'operator',
  hooks: DecideHooks = {},
  now = Date.now(),
) {
  return db.transaction().execute(async (trx) => {
    const refund = await refunds.lockPendingRefund(trx, refundId, now);
    if (!refund) return null;
    const splitStatus = await refunds.lockSplitOrders(trx, refund.order_id);
    const items = asRefundable(await refunds.orderItemsWithSplits(trx, refund.order_id), splitStatus);
    const lines = (await refunds.refundItems(trx, [refundId])).map((l) => ({ itemId: l.order_item_id, quantity: l.quantity, splitOrderId: l.split_order_id }));
    const outcome = refundOutcome(decision, lines, items, splitStatus, refund.amount_cents);

    for (const r of outcome.returns) {
      await refunds.settlePending(trx, r.itemId, r.quantity, true, now);
      const back = await addQty(
        trx,
        { productId: r.productId, warehouseId: r.warehouseId },
        r.quantity,
        { kind: 'return', orderId: refund.order_id, refundId },
        now,
      );
      if (!back) throw new RetryAttempt('stock return failed');
    }
    for (const l of outcome.releases) await refunds.settlePending(trx, l.itemId, l.quantity, false, now);
    // The split orders to cancel are among the order's, which its lock resolved.
    const splitIds = new Map<number, ScopedSplitId>([...splitStatus.keys()].map((id) => [id, id]));
    for (const splitId of outcome.cancelledSplits) await refunds.cancelSplitOrder(trx, splitIds.get(splitId)!, now);
    const approved = outcome.state === 'refund_successfully';
    await refunds.finishRefund(
      trx,
      refundId,
      { status: outcome.state, failureReason: outcome.failureReason, amountCents: outcome.amountCents, decidedBy },
      now,
    );
    const order = await refreshOrder(trx, refund.order_id, now, approved ? { refundedCents: outcome.amountCents, refunded: true } : {});
    // SPEC §15: the credit commits with the decision, back to the account the order was charged to.
    if (approved) await creditRefund(trx, refundId, refund.order_id, outcome.amountCents, now);
    // The webhook outbox rows commit with the decision (SPEC §13).
    await emitRefundDecided(trx, refundId, approved, order.status === 'cancel' && order.previousStatus !== 'cancel', now);
    await hooks.record?.(trx, { refundId, status: outcome.state, failureReason: outcome.failureReason, amountCents: outcome.amountCents });
    return { refundId, status: outcome.state, failureReason: outcome.failureReason };
  });
}

/** GET /v2/order/orders/refund/{id} (SPEC §5.5): a page of the order's refunds, newest first. */
export async function refundsOfOrder(reader: OrderReader, id: number, q: RefundPageQuery) {
  const orderId = await resolveOrderId(reader, id);
  if (orderId === null) throw notFound('order');
  const { pageNumber, pageSize, offset } = pageWindow(q, 10);
  const page = await refunds.refundsOfOrder(reader, orderId, offset, pageSize);
  return { total: page.total, pageNumber, pageSize, list: page.rows.map((r) => presentRefund(r, page.items)) };
}

/** The operator's view of refunds, with age and the SLA flag. */
export async function listRefundsForOperator(
  db: Handle,
  config: Pick<Config, 'refundSlaHours'>,
  status: refunds.RefundRow['status'] | null,
  pageNumber: number,
  pageSize: number,
  now = Date.now(),
  manualReview: boolean | null = null,
) {
  const page = await refunds.listRefunds(allMerchants(db), status, pageOffset(pageNumber, pageSize), pageSize, manualReview);
  return { total: page.total, pageNumber, pageSize, list: await operatorRows(db, config, page.rows, now) };
}

/**
 * The console's review queue (pending refunds, oldest first): the operator list's rows, each with
 * what deciding needs — its lines with product names and the status of the split each ships in,
 * and which split orders of its order have shipped (a refund of a shipped line fails on approval).
 */
export async function refundQueueForConsole(db: Handle, config: Pick<Config, 'refundSlaHours'>, pageNumber: number, pageSize: number, now = Date.now()) {
  const page = await refunds.listRefunds(allMerchants(db), 'pending_review', pageOffset(pageNumber, pageSize), pageSize);
  const ids = page.rows.map((r) => r.id);
  const [list, details, pending] = await Promise.all([
    operatorRows(db, config, page.rows, now),
    refunds.refundReviewDetails(db, ids),
    refunds.pendingRefundStats(db),
  ]);
  return {
    total: page.total,
    pageNumber,
    pageSize,
    list: list.map((r) => ({
      ...r,
      lines: details.lines.filter((l) => String(l.refundId) === r.refundNo),
      shippedSplits: details.orderSplits
        .filter((s) => String(s.refundId) === r.refundNo && (s.status === 'shipped' || s.status === 'completed'))
        .map((s) => s.splitOrderId),
    })),
    waiting: Number(pending.n),
  };
}

/** How many refunds wait for review (the queue's heading, updated after each decision). */
export const refundsWaiting = async (db: Handle) => Number((await refunds.pendingRefundStats(db)).n);

async function operatorRows(db: Handle, config: Pick<Config, 'refundSlaHours'>, rows: refunds.ScopedRefundRow[], now: number) {
  const items = await refunds.refundItems(
    db,
    rows.map((r) => r.id),
  );
  const sla = config.refundSlaHours * 3600 * 1000;
  const names = await merchantNames(
    db,
    rows.map((r) => r.merchant_id),
  );
  return rows.map((r) => ({
    ...presentRefund(r, items),
    merchantId: String(r.merchant_id),
    merchantName: names.get(r.merchant_id) ?? '',
    decidedBy: r.decided_by,
    ageSeconds: Math.floor((now - r.created_at) / 1000),
    overSla: r.status === 'pending_review' && now - r.created_at > sla,
    // The worker's attempts at deciding it; a refund it gave up on waits here for approve/reject.
    attempts: r.attempts,
    lastError: r.last_error,
    manualReview: r.manual_review === 1,
  }));
}

/** Refunds read per round trip while an export streams. */
const EXPORT_BATCH = 500;

export const REFUND_CSV_COLUMNS = [
  'refund_no',
  'order_id',
  'merchant_id',
  'merchant',
  'requested_at',
  'status',
  'reason',
  'remark',
  'items',
  'amount',
  'waiting_hours',
  'past_sla',
  'worker_gave_up',
] as const;

/** A refund as a row of the console's refund exports (the queue's and the list's): items as `SKU x n`, its merchant by name. */
function refundCsvRow(
  r: refunds.RefundRow,
  items: refunds.RefundItemRow[],
  names: Map<number, string>,
  now: number,
  slaMs: number,
): Record<(typeof REFUND_CSV_COLUMNS)[number], CsvCell> {
  const shown = presentRefund(r, items);
  return {
    refund_no: shown.refundNo,
    order_id: shown.id,
    merchant_id: String(r.merchant_id),
    merchant: names.get(r.merchant_id) ?? '',
    requested_at: shown.createDate,
    status: r.status,
    reason: shown.refundReason,
    remark: shown.remark,
    items: shown.items.map((i) => `${i.skuCode} x ${i.quantity}`).join('; '),
    amount: shown.amount.toFixed(2),
    waiting_hours: Math.floor((now - r.created_at) / 3_600_000),
    past_sla: r.status === 'pending_review' && now - r.created_at > slaMs ? 'yes' : 'no',
    worker_gave_up: r.manual_review === 1 ? 'yes' : 'no',
  };
}

/**
 * Refunds as CSV rows (with their items and their merchant's name), read in keyset batches while
 * the file is written: `nextPage(cursor)` reads the batch after `cursor`, the last row's
 * `[created_at, id]` (null: the first), in the export's order.
 */
export async function* refundCsvRows(
  db: Handle,
  config: Pick<Config, 'refundSlaHours'>,
  now: number,
  batch: number,
  nextPage: (cursor: [number, number] | null) => Promise<refunds.ScopedRefundRow[]>,
) {
  const sla = config.refundSlaHours * 3600 * 1000;
  let cursor: [number, number] | null = null;
  for (;;) {
    const page = await nextPage(cursor);
    const ids = page.map((r) => r.id);
    const [items, names] = await Promise.all([
      refunds.refundItems(db, ids),
      merchantNames(
        db,
        page.map((r) => r.merchant_id),
      ),
    ]);
    for (const r of page) yield refundCsvRow(r, items, names, now, sla);
    if (page.length < batch) return;
    const last = page[page.length - 1];
    cursor = [last.created_at, last.id];
  }
}

/**
 * The refund review queue as the console lists it (refunds in `status`, oldest first) as CSV rows,
 * read in keyset batches while the file is written; each row with its merchant's name.
 */
export async function refundsCsvForOperator(
  db: Handle,
  config: Pick<Config, 'refundSlaHours'>,
  status: refunds.RefundRow['status'] | null,
  now: number,
  batch = EXPORT_BATCH,
): Promise<CsvExport> {
  const rows = refundCsvRows(db, config, now, batch, (after) => refunds.refundsAfter(allMerchants(db), status, after, batch));
  return { name: status === 'pending_review' ? 'refund-review' : 'refunds', columns: REFUND_CSV_COLUMNS, rows };
}

/**
 * Operator approve/reject of a pending refund (manual review); a decided refund is 409/40903. The
 * audit row (who, what, before and after) commits in the decision's transaction.
 */
export async function reviewRefund(db: Db, actor: Actor, refundNo: number, decision: Decision) {
  const refund = await refunds.resolveRefund(allMerchants(db), refundNo);
  if (!refund) throw notFound('refund');
  const result = await decideRefund(db, refund.id, decision, 'operator', {
    record: (trx, outcome) =>
      insertAudit(
        trx,
        actor,
        {
          action: decision.approve ? 'refund.approve' : 'refund.reject',
          target: `refund:${refund.id}`,
          before: { status: refund.status, amount: refund.amount_cents / 100, merchantId: refund.merchant_id },
          after: { status: outcome.status, amount: outcome.amountCents / 100, failureReason: outcome.failureReason },
        },
        Date.now(),
      ),
  });
  if (!result) throw conflictState(`refund ${refund.id} was already decided`);
  const fresh = (await refunds.refundById(db, refund.id))!;
  return presentRefund(fresh, await refunds.refundItems(db, [refund.id]));
}

/**
 * The console's decision: the same, with the refund's merchant by name for the decided row (the
 * queue showed it). A rejection needs a reason there: the merchant reads it as the refund's
 * `failureReason` (docs/decisions.md, "Refund review: a rejection says why").
 */
export async function reviewRefundInConsole(db: Db, actor: Actor, refundNo: number, decision: Decision) {
  if (!(await refunds.resolveRefund(allMerchants(db), refundNo))) throw notFound('refund');
  if (!decision.approve && decision.reason.trim() === '') throw fieldError('reason', 'say why the refund is rejected: the merchant is shown the reason');
  const record = await reviewRefund(db, actor, refundNo, decision.approve ? decision : { approve: false, reason: decision.reason.trim() });
  const refund = (await refunds.resolveRefund(allMerchants(db), Number(record.refundNo)))!;
  const names = await merchantNames(db, [refund.merchant_id]);
  return { ...record, merchantId: String(refund.merchant_id), merchantName: names.get(refund.merchant_id) ?? '' };
}
