import { RETRY_WINDOW_MS } from '../domain/webhook-schedule.ts';
import { formatInstant } from '../domain/time.ts';
import { presentOrder } from '../present/order.presenter.ts';
import type { Trx } from '../store/db.ts';
import { loadOrders, resolveOrderId } from '../store/orders.repository.ts';
import { findRefund, refundItems } from '../store/refunds.repository.ts';
import type { WebhookEventType } from '../domain/vocabulary.ts';
import { forMerchant, type MerchantScope } from '../store/tenancy.ts';
import { ACCOUNT_LANE, activeEndpoints, insertEvent } from '../store/webhooks.repository.ts';
import type { AccountRow } from '../store/ledger.repository.ts';
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
export async function emitRefundDecided(trx: Trx, refundId: number, succeeded: boolean, orderCancelled: boolean, now: number): Promise<void> {
  const refund = (await findRefund(trx, refundId))!;
  const ids = { orderId: String(refund.order_id), refundNo: String(refund.id) };
  const scope = forMerchant(trx, refund.merchant_id);
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

/** `balance.low` (SPEC §15): the account as it is after the transaction that took `available` below the threshold. */
export async function emitBalanceLow(trx: Trx, account: AccountRow, transactionId: number, now: number): Promise<void> {
  await emit(
    forMerchant(trx, account.merchant_id),
    ACCOUNT_LANE,
    'balance.low',
    async () => ({ account: presentAccount(account), transactionId: String(transactionId) }),
    now,
  );
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
