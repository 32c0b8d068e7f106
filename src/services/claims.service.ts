import type { Config } from '../config.ts';
import type { Actor } from '../domain/audit.ts';
import type { ChannelType } from '../domain/channels.ts';
import {
  claimCreditCents,
  claimStateRefusal,
  claimTransition,
  coversWholeSplit,
  decodeClaimCursor,
  encodeClaimCursor,
  linesBySku,
  planClaimLines,
  withinClaimWindow,
  type ClaimAction,
  type ClaimResolution,
} from '../domain/claims.ts';
import { AppError, fieldError, notFound, validationFailed } from '../domain/errors.ts';
import { pageWindow } from '../domain/paging.ts';
import { timeWindow } from '../domain/time.ts';
import type { AdminClaimRecord, ApproveClaimBody, ClaimListQuery, ClaimRecord, ClaimReturnBody, OpenClaimBody, ReceiveClaimBody } from '../schemas/claims.ts';
import { insertAudit } from '../store/audit.repository.ts';
import * as claims from '../store/claims.repository.ts';
import { rollbackToSavepoint, savepoint, type Db, type Dialect, type Trx } from '../store/db.ts';
import { loadOrders } from '../store/orders.repository.ts';
import { addQty } from '../store/stocks.repository.ts';
import { allMerchants, within, type MerchantScope } from '../store/tenancy.ts';
import { warehousesByCode } from '../store/warehouses.repository.ts';
import { runIdempotent, type KeyStore, retryLostRaces } from './idempotency.service.ts';
import { creditClaim } from './ledger.service.ts';
import { placeReplacementOrder } from './orders.service.ts';
import { claimRecords, emitClaimEvent } from './webhook-events.service.ts';

/**
 * Claims after shipment (SPEC §18; docs/claims.md): the merchant opens, cancels and posts a return;
 * the operator approves, rejects, receives and switches the resolution. Every decision is one
 * transaction with all its effects — the claim's state, the credit's journal entry, the replacement
 * order and its stock, the returned stock, the outbox rows and the audit row — or none of them.
 */

type ClaimConfig = Pick<Config, 'claimWindowDays' | 'claimSlaHours' | 'defaultWarehouse' | 'env' | 'supplierCurrency'>;

export interface ClaimDeps {
  store: KeyStore;
  config: ClaimConfig;
}

/** A stock quantity never passes this after a change (SPEC §4.4). */
const MAX_STOCK_QTY = 1_000_000_000;

/** 409/40904 (SPEC §18): the split order cannot be claimed (not shipped, or shipped too long ago). */
const notClaimable = (message: string, status: string) => new AppError('conflict', 40904, message, [{ field: 'orderId', message, status }]);

const record = async (reader: Parameters<typeof claimRecords>[0], row: claims.ScopedClaimRow): Promise<ClaimRecord> => (await claimRecords(reader, [row]))[0];

/**
 * The audit row of a claim change made from the business manager, in the change's transaction
 * (`target` names the claim); the merchant API passes none.
 */
type ClaimAuditWrite = (scope: MerchantScope<Trx>, target: string) => Promise<void>;

/** POST /openapi/v1/claims: opens a claim on a shipped split order of the merchant, under the Idempotency-Key rules. */
export async function openClaim(
  deps: ClaimDeps,
  merchant: MerchantScope,
  body: OpenClaimBody,
  idempotencyKey: string | null,
  requestId: string,
  audit?: ClaimAuditWrite,
) {
  const evidence = body.evidence ?? [];
  const twice = evidence.flatMap((id, i) => {
    const first = evidence.indexOf(id);
    return first === i ? [] : [{ field: `evidence[${i}]`, message: `names the same file as evidence[${first}]` }];
  });
  if (twice.length) throw validationFailed(twice);
  const description = body.description ? body.description : null;
  const normalized = { orderId: body.orderId, reason: body.reason, resolution: body.resolution, items: body.items, description, evidence };
  return runIdempotent(
    deps.store,
    { merchantId: merchant.merchantId, key: idempotencyKey, request: { route: 'claims.open', normalized }, requestId },
    async (trx) => {
      const now = Date.now();
      const scope = within(merchant, trx);
      const split = await claims.lockSplitForClaim(scope, deps.store.dialect, body.orderId);
      if (!split) throw notFound('split order (orderId takes a split order id: splitOrders[].id of the order)');
      if ((split.status !== 'shipped' && split.status !== 'completed') || split.shippedAt === null) {
        throw notClaimable(
          `split order ${split.id} is ${split.status}: a claim is for a parcel that shipped; before shipment, request a refund (POST /openapi/v2/order/orders/${split.orderId}/refund)`,
          split.status,
        );
      }
      if (!withinClaimWindow(split.shippedAt, now, deps.config.claimWindowDays)) {
        throw notClaimable(
          `split order ${split.id} shipped more than ${deps.config.claimWindowDays} days ago: past the claim window (CLAIM_WINDOW_DAYS)`,
          split.status,
        );
      }
      const lines = planClaimLines(await claims.claimableItems(trx, split.id), body.items);
      const id = await claims.insertClaim(
        scope,
        {
          order_id: split.orderId,
          split_order_id: split.id,
          status: 'open',
          reason: body.reason,
          resolution: body.resolution,
          description,
          return_carrier: null,
          return_tracking_code: null,
          returned_at: null,
          received_warehouse_id: null,
          received_at: null,
          decision_reason: null,
          amount_cents: null,
          replacement_order_id: null,
          decided_at: null,
          created_at: now,
          updated_at: now,
        },
        lines.map((l) => ({ order_item_id: l.itemId, sku: l.sku, quantity: l.quantity, unit_cents: l.unitCents })),
      );
      const attached = new Set(await claims.attachFiles(scope, id, evidence));
      const missing = evidence.flatMap((f, i) =>
        attached.has(f) ? [] : [{ field: `evidence[${i}]`, message: 'no file of yours with this id that is on no other claim' }],
      );
      // Thrown after the writes: the transaction (or the key's savepoint) takes them all back.
      if (missing.length) throw validationFailed(missing);
      await audit?.(scope, `claim:${id}`);
      return id;
    },
    (id) => ({ data: { claimNo: String(id), status: 'open' } }),
  );
}

/** GET /openapi/v1/claims/{claimNo}: the merchant's claim (another merchant's answers 404, like none). */
export async function getClaim(merchant: MerchantScope, claimNo: number): Promise<ClaimRecord> {
  const row = await claims.resolveClaim(merchant, claimNo);
  if (!row) throw notFound('claim');
  return record(merchant, row);
}

/** GET /openapi/v1/claims: newest first, by page number or keyset `cursor` (SPEC §4.6 paging). */
export async function listClaims(merchant: MerchantScope, q: ClaimListQuery) {
  let filter: claims.ClaimFilter;
  let pageNumber: number;
  let pageSize: number;
  let at: { offset: number; beforeId: number | null };
  if (q.cursor !== undefined) {
    if (q.pageNumber !== undefined) throw fieldError('pageNumber', 'not with cursor: a keyset walk follows nextCursor');
    const c = decodeClaimCursor(q.cursor);
    if (!c) throw fieldError('cursor', 'is not a cursor this API issued: pass nextCursor unchanged');
    filter = { status: c.status, splitOrderId: c.splitOrderId, createStart: c.createStart, createEnd: c.createEnd };
    pageNumber = c.page;
    pageSize = c.pageSize;
    at = { offset: 0, beforeId: c.beforeId };
  } else {
    const window = timeWindow(['createStartTime', q.createStartTime], ['createEndTime', q.createEndTime]);
    filter = { status: q.status ?? null, splitOrderId: q.orderId === undefined ? null : Number(q.orderId), createStart: window.start, createEnd: window.end };
    const page = pageWindow(q, 20);
    pageNumber = page.pageNumber;
    pageSize = page.pageSize;
    at = { offset: page.offset, beforeId: null };
  }
  const { rows, more, total } = await claims.pageClaims(merchant, filter, at, pageSize);
  const last = rows.at(-1);
  return {
    total,
    pageNumber,
    pageSize,
    list: await claimRecords(merchant, rows),
    nextCursor: more && last ? encodeClaimCursor({ ...filter, beforeId: last.id, pageSize, page: pageNumber + 1 }) : null,
  };
}

/**
 * A merchant's change of its claim (cancel, post the return's tracking), under the Idempotency-Key
 * rules: the claim is locked, the state machine asked, and the conditional update has the last word.
 */
function merchantAction(
  deps: ClaimDeps,
  merchant: MerchantScope,
  claimNo: number,
  action: Extract<ClaimAction, 'cancel' | 'post_return'>,
  set: (now: number) => Omit<Parameters<typeof claims.moveClaim>[3], 'status' | 'updated_at'>,
  idempotencyKey: string | null,
  requestId: string,
  request: unknown,
  audit?: ClaimAuditWrite,
) {
  return runIdempotent(
    deps.store,
    { merchantId: merchant.merchantId, key: idempotencyKey, request: { route: `claims.${action}`, claimNo, request }, requestId },
    async (trx) => {
      const now = Date.now();
      const claim = await claims.resolveClaim(within(merchant, trx), claimNo);
      if (!claim) throw notFound('claim');
      const moved = await transition(trx, deps.store.dialect, claim, action, { ...set(now), updated_at: now });
      await audit?.(within(merchant, trx), `claim:${claim.id}`);
      return record(within(merchant, trx), moved);
    },
    (claim) => ({ data: claim }),
  );
}

/** POST /openapi/v1/claims/{claimNo}/cancel: the merchant withdraws an open claim. */
export const cancelClaim = (
  deps: ClaimDeps,
  merchant: MerchantScope,
  claimNo: number,
  idempotencyKey: string | null,
  requestId: string,
  audit?: ClaimAuditWrite,
) => merchantAction(deps, merchant, claimNo, 'cancel', () => ({}), idempotencyKey, requestId, null, audit);

/** POST /openapi/v1/claims/{claimNo}/return: the return's carrier and tracking code, while the claim awaits it (may be corrected). */
export const postClaimReturn = (
  deps: ClaimDeps,
  merchant: MerchantScope,
  claimNo: number,
  body: ClaimReturnBody,
  idempotencyKey: string | null,
  requestId: string,
  audit?: ClaimAuditWrite,
) =>
  merchantAction(
    deps,
    merchant,
    claimNo,
    'post_return',
    (now) => ({ return_carrier: body.carrier, return_tracking_code: body.trackingCode, returned_at: now }),
    idempotencyKey,
    requestId,
    body,
    audit,
  );

/**
 * Takes `action` on the claim: locked first (a second decider waits for the first to commit, then
 * reads its state), refused with 409/40903 when the state machine does not allow it from the state
 * found, and moved by a conditional UPDATE from that state — so of two decisions at once, on one
 * server or several, one wins and the other gets the 409.
 */
async function transition(
  trx: Trx,
  dialect: Dialect,
  claim: claims.ScopedClaimRow,
  action: ClaimAction,
  set: Omit<Parameters<typeof claims.moveClaim>[3], 'status'>,
): Promise<claims.ScopedClaimRow> {
  const locked = await claims.lockClaim(trx, dialect, claim.id);
  if (!locked) throw notFound('claim');
  const next = claimTransition(locked.status, action);
  if (next === null) throw claimStateRefusal(locked.status, action);
  const moved = await claims.moveClaim(trx, locked.id, [locked.status], { ...set, status: next });
  if (!moved) {
    const now = await claims.resolveClaim(allMerchants(trx), claim.id);
    throw claimStateRefusal(now?.status ?? locked.status, action);
  }
  return moved;
}

/** The claim a URL names, for the operator: any merchant's; 404 when there is none. */
async function operatorClaim(trx: Trx, claimNo: number) {
  const claim = await claims.resolveClaim(allMerchants(trx), claimNo);
  if (!claim) throw notFound('claim');
  return claim;
}

const auditClaim = (
  trx: Trx,
  actor: Actor,
  action: 'claim.approve' | 'claim.reject' | 'claim.receive' | 'claim.set_resolution',
  before: claims.ScopedClaimRow,
  after: claims.ScopedClaimRow,
  now: number,
) =>
  insertAudit(
    trx,
    actor,
    {
      action,
      target: `claim:${before.id}`,
      merchantId: before.merchant_id,
      before: { status: before.status, resolution: before.resolution, splitOrderId: before.split_order_id },
      after: {
        status: after.status,
        resolution: after.resolution,
        decisionReason: after.decision_reason,
        amountCents: after.amount_cents,
        replacementOrderId: after.replacement_order_id,
      },
    },
    now,
  );

/**
 * Resolves an approved (or received) claim as its resolution says, in the decision's transaction:
 * `refund` → credited (a `claim_credit` posting, unique per claim); `reship` → reshipped (a
 * replacement order, charged nothing). A reshipment the stock or the channels cannot make leaves the
 * claim where it was, with the reason in `decisionReason`: the operator may switch it to refund.
 */
async function resolve(trx: Trx, deps: ClaimDeps, owner: MerchantScope, claim: claims.ScopedClaimRow, now: number): Promise<claims.ScopedClaimRow> {
  const scope = within(owner, trx);
  const lines = (await claims.claimLines(allMerchants(trx), [claim.id])).get(claim.id) ?? [];
  if (claim.resolution === 'refund') {
    const items = await claims.claimableItems(trx, claim.split_order_id, claim.id);
    const split = (await loadOrders(allMerchants(trx), [claim.order_id]))[0].splits.find((s) => s.id === claim.split_order_id)!;
    const whole =
      claim.reason === 'not_received' &&
      coversWholeSplit(
        items,
        lines.map((l) => ({ itemId: l.order_item_id, quantity: l.quantity })),
      );
    const amountCents = claimCreditCents(
      lines.map((l) => ({ quantity: l.quantity, unitCents: l.unit_cents })),
      { wholeNotReceived: whole, freightCents: split.freight_cents },
    );
    const moved = await transition(trx, deps.store.dialect, claim, 'credit', {
      amount_cents: amountCents,
      decision_reason: claim.decision_reason,
      updated_at: now,
    });
    const entryId = await creditClaim(trx, claim.id, claim.order_id, claim.split_order_id, amountCents, now);
    await claims.insertResolution(scope, claim.id, { kind: 'credit', journalEntryId: entryId, replacementOrderId: null }, now);
    await emitClaimEvent(scope, 'claim.credited', moved, now);
    return moved;
  }
  const [original] = await loadOrders(allMerchants(trx), [claim.order_id]);
  const split = original.splits.find((s) => s.id === claim.split_order_id)!;
  const order = {
    address: JSON.parse(original.order.address) as Record<string, string | null>,
    shipTo: original.order.ship_to_country,
    // The same warehouse first (a line's warehouseCode), else allocated like any order.
    lines: linesBySku(lines).map((l, index) => ({
      index,
      sku: l.sku,
      quantity: l.quantity,
      warehouseCode: split.warehouse_code,
      channelCode: null,
      channelType: null,
    })),
    remark: `Replacement for claim ${claim.id} (split order ${split.id})`,
    salePlatform: original.order.sale_platform,
    channelCode: split.channel_code,
    channelType: split.channel_type as ChannelType,
    // The link from the order's side, in its record: `customOrderId` is `claim-<claimNo>` (unique per merchant).
    customOrderId: `claim-${claim.id}`,
  };
  await savepoint(trx, 'claim_reship');
  let replacementId: number;
  try {
    replacementId = await placeReplacementOrder(trx, deps.store.dialect, deps.config, scope, order, claim.id, now);
  } catch (error) {
    if (!(error instanceof AppError) || error.kind !== 'unprocessable') throw error;
    await rollbackToSavepoint(trx, 'claim_reship');
    const detail = (error.errors ?? []).map((e) => ('sku' in e ? `${e.sku}: ${e.message}` : e.message)).join('; ');
    const reason = `could not reship: ${error.message}${detail ? ` (${detail})` : ''}; switch the resolution to refund, or try again once stock is back`;
    const kept = await claims.moveClaim(trx, claim.id, [claim.status], { status: claim.status, decision_reason: reason.slice(0, 2000), updated_at: now });
    return kept ?? claim;
  }
  const moved = await transition(trx, deps.store.dialect, claim, 'reship', { replacement_order_id: replacementId, updated_at: now });
  await claims.insertResolution(scope, claim.id, { kind: 'reship', journalEntryId: null, replacementOrderId: replacementId }, now);
  await emitClaimEvent(scope, 'claim.reshipped', moved, now);
  return moved;
}

/** POST /admin/v1/claims/{claimNo}/approve: approved, then resolved at once — or awaiting the return when it is required. */
export async function approveClaim(deps: ClaimDeps, actor: Actor, claimNo: number, body: ApproveClaimBody, now = Date.now()): Promise<ClaimRecord> {
  const db = deps.store.db;
  return retryLostRaces(() =>
    db.transaction().execute(async (trx) => {
      const claim = await operatorClaim(trx, claimNo);
      const note = body.note ? body.note : null;
      const returnRequired = body.returnRequired === true;
      let row = await transition(trx, deps.store.dialect, claim, 'approve', {
        decision_reason: note,
        return_required: returnRequired ? 1 : 0,
        decided_at: now,
        updated_at: now,
      });
      // The event shows the claim as the merchant must act on it: awaiting the return when one is required.
      if (returnRequired) row = await transition(trx, deps.store.dialect, row, 'require_return', { updated_at: now });
      await emitClaimEvent(within(claim.owner, trx), 'claim.approved', row, now);
      if (!returnRequired) row = await resolve(trx, deps, claim.owner, row, now);
      await auditClaim(trx, actor, 'claim.approve', claim, row, now);
      return record(allMerchants(trx), row);
    }),
  );
}

/** POST /admin/v1/claims/{claimNo}/reject `{reason}`: an open claim, with the reason the merchant sees. */
export async function rejectClaim(deps: ClaimDeps, actor: Actor, claimNo: number, reason: string, now = Date.now()): Promise<ClaimRecord> {
  if (reason.trim() === '') throw fieldError('reason', 'is required: say why the claim is rejected');
  return deps.store.db.transaction().execute(async (trx) => {
    const claim = await operatorClaim(trx, claimNo);
    const row = await transition(trx, deps.store.dialect, claim, 'reject', { decision_reason: reason, decided_at: now, updated_at: now });
    await emitClaimEvent(within(claim.owner, trx), 'claim.rejected', row, now);
    await auditClaim(trx, actor, 'claim.reject', claim, row, now);
    return record(allMerchants(trx), row);
  });
}

/**
 * POST /admin/v1/claims/{claimNo}/received `{warehouseCode}`: the goods came back into that
 * warehouse — each line's units a ledgered stock change (kind `return`, reason `claim_return`) —
 * and the claim resolves, all in one transaction.
 */
export async function receiveClaim(deps: ClaimDeps, actor: Actor, claimNo: number, body: ReceiveClaimBody, now = Date.now()): Promise<ClaimRecord> {
  const db = deps.store.db;
  return retryLostRaces(() =>
    db.transaction().execute(async (trx) => {
      // The claim first: an unknown claim is 404 whatever the body names (as every operator id route answers).
      const claim = await operatorClaim(trx, claimNo);
      const warehouse = (await warehousesByCode(trx, [body.warehouseCode])).get(body.warehouseCode);
      if (!warehouse) throw fieldError('warehouseCode', `no warehouse ${body.warehouseCode}`);
      let row = await transition(trx, deps.store.dialect, claim, 'receive', { received_warehouse_id: warehouse.id, received_at: now, updated_at: now });
      const products = new Map((await claims.claimableItems(trx, claim.split_order_id)).map((i) => [i.itemId, i.productId]));
      // Into stock in product order, as orders lock their stock rows (lockStockRows): a claim's lines
      // in another order could hold one row while an order holding the next waits for it (a deadlock).
      const lines = ((await claims.claimLines(allMerchants(trx), [claim.id])).get(claim.id) ?? [])
        .map((l) => ({ ...l, productId: products.get(l.order_item_id)! }))
        .sort((a, b) => a.productId - b.productId);
      for (const l of lines) {
        const back = await addQty(
          trx,
          { productId: l.productId, warehouseId: warehouse.id },
          l.quantity,
          { kind: 'return', orderId: claim.order_id, reason: 'claim_return' },
          now,
          MAX_STOCK_QTY,
        );
        if (!back) throw new AppError('conflict', 40903, `the return of ${l.sku} would take warehouse ${warehouse.code}'s stock above ${MAX_STOCK_QTY}`);
      }
      row = await resolve(trx, deps, claim.owner, row, now);
      await auditClaim(trx, actor, 'claim.receive', claim, row, now);
      return record(allMerchants(trx), row);
    }),
  );
}

/**
 * POST /admin/v1/claims/{claimNo}/resolution `{resolution}`: switches an approved claim that is not
 * resolved yet (a reshipment out of stock, or one awaiting its return). An approved or received claim
 * resolves at once with the new resolution; one awaiting its return resolves when it is received.
 */
export async function setClaimResolution(deps: ClaimDeps, actor: Actor, claimNo: number, resolution: ClaimResolution, now = Date.now()): Promise<ClaimRecord> {
  return retryLostRaces(() =>
    deps.store.db.transaction().execute(async (trx) => {
      const claim = await operatorClaim(trx, claimNo);
      let row = await transition(trx, deps.store.dialect, claim, 'switch_resolution', { resolution, updated_at: now });
      if (row.status === 'approved' || row.status === 'received') row = await resolve(trx, deps, claim.owner, row, now);
      await auditClaim(trx, actor, 'claim.set_resolution', claim, row, now);
      return record(allMerchants(trx), row);
    }),
  );
}

/** GET /admin/v1/claims?status=: every merchant's claims, open ones first, each group oldest first; open ones past CLAIM_SLA_HOURS flagged. */
export async function listClaimsForOperator(
  db: Db,
  config: Pick<ClaimConfig, 'claimSlaHours'>,
  filter: claims.ClaimQueueFilter,
  pageNumber: number,
  pageSize: number,
  now = Date.now(),
) {
  const operator = allMerchants(db);
  const { rows, total } = await claims.queueClaims(operator, filter, (pageNumber - 1) * pageSize, pageSize);
  const records = await claimRecords(operator, rows);
  const sla = config.claimSlaHours * 3600 * 1000;
  const list: AdminClaimRecord[] = rows.map((r, i) => ({
    ...records[i],
    merchantId: String(r.merchant_id),
    ageSeconds: Math.max(0, Math.floor((now - r.created_at) / 1000)),
    overSla: r.status === 'open' && now - r.created_at > sla,
  }));
  return { total, pageNumber, pageSize, list };
}

/** GET /admin/v1/claims/{claimNo}: any merchant's claim. */
export async function getClaimForOperator(db: Db, claimNo: number): Promise<ClaimRecord> {
  const row = await claims.resolveClaim(allMerchants(db), claimNo);
  if (!row) throw notFound('claim');
  return record(allMerchants(db), row);
}
