import { RETRY_WINDOW_MS } from '../domain/webhook-schedule.ts';
import { formatInstant } from '../domain/time.ts';
import { presentOrder } from '../present/order.presenter.ts';
import type { Trx } from '../store/db.ts';
import { loadOrders, resolveOrderId } from '../store/orders.repository.ts';
import { refundById, refundItems, refundItemsIn, resolveRefund } from '../store/refunds.repository.ts';
import type { WebhookEventType } from '../domain/vocabulary.ts';
import type { MerchantScope, ScopedRefundId, TenantScope } from '../store/tenancy.ts';
import { claimEvidence, claimLines, latestClaimOf, type ScopedClaimRow } from '../store/claims.repository.ts';
import { presentClaim } from '../present/claim.presenter.ts';
import type { ClaimRecord } from '../schemas/claims.ts';
import { ACCOUNT_LANE, activeEndpoints, insertEvent, latestRecords } from '../store/webhooks.repository.ts';
import { merchantAccount, type AccountRow } from '../store/ledger.repository.ts';
import { conflictState } from '../domain/errors.ts';
import type { Dialect } from '../store/db.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import { feedLatestIn } from '../store/stock-feed.repository.ts';
import { encodeCursor } from './stock-feed.service.ts';
import { presentAccount } from '../present/account.presenter.ts';
import { presentRefund } from '../present/refund.presenter.ts';

/**
 * The transactional outbox (SPEC §13). Called inside the transaction that changes the state, with
 * that transaction's handle: the event row and its deliveries commit or roll back with the change,
 * and the payload is read through the same handle, so it is the state being committed. Nothing is
 * written (and no payload built) when no active endpoint of the merchant wants the event.
 */
async function emit(
  scope: MerchantScope<Trx>,
  orderId: number,
  type: WebhookEventType,
  data: () => Promise<Record<string, unknown>>,
  now: number,
): Promise<void> {
  const endpoints = (await activeEndpoints(scope)).filter((e) => (JSON.parse(e.events) as string[]).includes(type));
  if (endpoints.length === 0) return;
  const payload = JSON.stringify({ type, timestamp: formatInstant(now), data: await data() });
  await insertEvent(
    scope,
    { type, orderId, payload },
    endpoints.map((e) => e.id),
    now,
    now + RETRY_WINDOW_MS,
  );
}

/** The order as the transaction is about to commit it, resolved in the merchant's scope like any other read of it. */
async function orderRecord(scope: MerchantScope<Trx>, orderId: number) {
  const resolved = (await resolveOrderId(scope, orderId))!;
  const [aggregate] = await loadOrders(scope, [resolved]);
  return presentOrder(aggregate);
}

/** `refund.succeeded` / `refund.failed` (the refund record of §5.5), and `order.cancelled` when the refund cancelled the order. */
export async function emitRefundDecided(trx: Trx, refundId: ScopedRefundId, succeeded: boolean, orderCancelled: boolean, now: number): Promise<void> {
  const refund = (await refundById(trx, refundId))!;
  const ids = { orderId: String(refund.order_id), refundNo: String(refund.id) };
  const scope = refund.owner;
  await emit(
    scope,
    refund.order_id,
    succeeded ? 'refund.succeeded' : 'refund.failed',
    async () => ({ ...ids, refund: presentRefund(refund, await refundItems(trx, [refundId])) }),
    now,
  );
  if (orderCancelled) await emitOrderCancelled(scope, refund.order_id, now);
}

/** `order.cancelled`: nothing is left of the order (its last lines refunded, or its last open split cancelled by the operator). */
export async function emitOrderCancelled(scope: MerchantScope<Trx>, orderId: number, now: number): Promise<void> {
  await emit(scope, orderId, 'order.cancelled', async () => ({ orderId: String(orderId), order: await orderRecord(scope, orderId) }), now);
}

/** `balance.low` (SPEC §15): the account (the scope's merchant's) as it is after the transaction that took `available` below the threshold. */
export async function emitBalanceLow(scope: MerchantScope<Trx>, account: AccountRow, transactionId: number, now: number): Promise<void> {
  await emit(scope, ACCOUNT_LANE, 'balance.low', async () => ({ account: presentAccount(account), transactionId: String(transactionId) }), now);
}

/** `split_order.shipped` / `split_order.delivered`, with the order record of §4.6. */
export async function emitSplitOrderEvent(
  scope: MerchantScope<Trx>,
  type: 'split_order.shipped' | 'split_order.delivered',
  orderId: number,
  splitOrderId: number,
  now: number,
): Promise<void> {
  await emit(
    scope,
    orderId,
    type,
    async () => ({ orderId: String(orderId), splitOrderId: String(splitOrderId), order: await orderRecord(scope, orderId) }),
    now,
  );
}

/** Claims (SPEC §18) as the API shows them: each with its lines by SKU and its evidence files. */
export async function claimRecords(reader: TenantScope, rows: readonly ScopedClaimRow[]): Promise<ClaimRecord[]> {
  const ids = rows.map((r) => r.id);
  const [lines, evidence] = await Promise.all([claimLines(reader, ids), claimEvidence(reader, ids)]);
  return rows.map((r) => presentClaim(r, lines.get(r.id) ?? [], evidence.get(r.id) ?? []));
}

const claimEventData = (claim: ClaimRecord) => ({ claimNo: claim.claimNo, orderId: claim.orderId, claim });

/** `claim.approved` / `rejected` / `credited` / `reshipped` (SPEC §18): the claim as the decision's transaction commits it. */
export async function emitClaimEvent(
  scope: MerchantScope<Trx>,
  type: 'claim.approved' | 'claim.rejected' | 'claim.credited' | 'claim.reshipped',
  claim: ScopedClaimRow,
  now: number,
): Promise<void> {
  await emit(scope, claim.order_id, type, async () => claimEventData((await claimRecords(scope, [claim]))[0]), now);
}

/** Changes a test stock.changed event shows at most (a real one carries up to 500). */
const TEST_STOCK_CHANGES = 5;

/** The kind of record a test event of each type is built from (what a merchant without one is told). */
const TEST_RECORD: Record<WebhookEventType, string> = {
  'refund.succeeded': 'refund',
  'refund.failed': 'refund',
  'split_order.shipped': 'split order',
  'split_order.delivered': 'split order',
  'order.cancelled': 'order',
  'balance.low': 'account transaction',
  'stock.changed': 'stock change',
  'claim.approved': 'claim',
  'claim.rejected': 'claim',
  'claim.credited': 'claim',
  'claim.reshipped': 'claim',
};

/**
 * Which test events can be sent now (the business manager offers only these): for each event type,
 * null when the merchant has a record to build its body from, else what is missing (`no refund
 * yet`). The same reads `testEventData` makes, one row each.
 */
export async function testEventGaps(
  scope: MerchantScope,
  dialect: Dialect,
  environment: StockistEnv,
  skus: readonly string[] | null,
): Promise<Record<WebhookEventType, string | null>> {
  const account = await merchantAccount(scope, environment);
  const [latest, stock, claim] = await Promise.all([latestRecords(scope, account?.id ?? null), feedLatestIn(scope, dialect, skus, 1), latestClaimOf(scope)]);
  const has: Record<string, boolean> = {
    refund: latest.refundId !== null,
    'split order': latest.split !== null,
    order: latest.orderId !== null,
    'account transaction': account !== undefined && latest.entryId !== null,
    'stock change': stock.length > 0,
    claim: claim !== undefined,
  };
  const gaps = {} as Record<WebhookEventType, string | null>;
  for (const [type, what] of Object.entries(TEST_RECORD) as [WebhookEventType, string][])
    gaps[type] = has[what] ? null : `no ${what}${what === 'stock change' && skus !== null ? ' of the SKUs this endpoint follows' : ''} yet`;
  return gaps;
}

const noRecord = (type: WebhookEventType, what: string) =>
  conflictState(`a ${type} test event is built from your latest ${what}, and there is none yet; send it once you have one (or send webhook.test)`);

/**
 * The `data` of a test event of `type` (the business manager's "send a test event"): the type's
 * real payload, built by the same presenters as the real event, from the merchant's own latest
 * record of that kind — its latest refund, split order, order, posting on its account, or the
 * latest stock changes of the endpoint's SKUs. Refused (409) when there is no such record yet.
 */
export async function testEventData(
  scope: MerchantScope<Trx>,
  dialect: Dialect,
  environment: StockistEnv,
  type: WebhookEventType,
  skus: readonly string[] | null,
): Promise<Record<string, unknown>> {
  switch (type) {
    case 'refund.succeeded':
    case 'refund.failed': {
      const { refundId } = await latestRecords(scope, null);
      if (refundId === null) throw noRecord(type, 'refund');
      const refund = (await resolveRefund(scope, refundId))!;
      return { orderId: String(refund.order_id), refundNo: String(refund.id), refund: presentRefund(refund, await refundItemsIn(scope, [refund.id])) };
    }
    case 'split_order.shipped':
    case 'split_order.delivered': {
      const { split } = await latestRecords(scope, null);
      if (split === null) throw noRecord(type, 'split order');
      return { orderId: String(split.orderId), splitOrderId: String(split.id), order: await orderRecord(scope, split.orderId) };
    }
    case 'order.cancelled': {
      const { orderId } = await latestRecords(scope, null);
      if (orderId === null) throw noRecord(type, 'order');
      return { orderId: String(orderId), order: await orderRecord(scope, orderId) };
    }
    case 'balance.low': {
      const account = await merchantAccount(scope, environment);
      const { entryId } = await latestRecords(scope, account?.id ?? null);
      if (!account || entryId === null) throw noRecord(type, 'account transaction');
      return { account: presentAccount(account), transactionId: String(entryId) };
    }
    case 'claim.approved':
    case 'claim.rejected':
    case 'claim.credited':
    case 'claim.reshipped': {
      const claim = await latestClaimOf(scope);
      if (!claim) throw noRecord(type, 'claim');
      return claimEventData((await claimRecords(scope, [claim]))[0]);
    }
    case 'stock.changed': {
      const newest = await feedLatestIn(scope, dialect, skus, TEST_STOCK_CHANGES);
      if (newest.length === 0) throw noRecord(type, `stock change${skus === null ? '' : ' of the SKUs this endpoint follows'}`);
      // Each (sku, warehouseCode) once, with its latest quantity, in feed order (as a real event).
      const seen = new Set<string>();
      const rows = newest.filter((r) => !seen.has(`${r.sku}\n${r.warehouseCode}`) && seen.add(`${r.sku}\n${r.warehouseCode}`)).reverse();
      const last = newest[0];
      return {
        changes: rows.map((r) => ({ sku: r.sku, warehouseCode: r.warehouseCode, qty: r.qty, updateDate: formatInstant(r.createdAt) })),
        cursor: encodeCursor({ seq: Number(last.seq), id: last.id }),
      };
    }
  }
}
