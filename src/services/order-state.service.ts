import { fulfillmentStatusOf, orderStatusOf, refundStatusOf, type ItemCounts } from '../domain/order-status.ts';
import type { Trx } from '../store/db.ts';
import type { OrderStatus, SplitOrderStatus } from '../domain/vocabulary.ts';
import { statusFacts, updateOrderStatus, type OrderStatusChange } from '../store/orders.repository.ts';

/**
 * Recomputes an order's derived statuses from its items and split orders after a change, and adds
 * `refundedCents` (a successful refund). Dates are set the first time a status is reached. Returns
 * the order status before and after (events such as `order.cancelled` fire on the transition).
 */
export async function refreshOrder(
  db: Trx,
  orderId: number,
  now: number,
  changes: { refundedCents?: number; refunded?: boolean } = {},
): Promise<{ previousStatus: OrderStatus; status: OrderStatus }> {
  const facts = await statusFacts(db, orderId);
  const change = orderStatusChange(facts.items, facts.splits, changes);
  await updateOrderStatus(db, orderId, change, now).execute();
  return { previousStatus: facts.status, status: change.status };
}

/**
 * An order's derived statuses from its items and split orders as the caller holds them (read after
 * taking the split orders' locks, with this transaction's changes applied): what `refreshOrder`
 * writes, for a caller that already has the rows and need not read them again.
 */
export function orderStatusChange(
  items: ItemCounts[],
  splits: SplitOrderStatus[],
  changes: { refundedCents?: number; refunded?: boolean } = {},
): OrderStatusChange {
  return {
    status: orderStatusOf(items, splits),
    refundStatus: refundStatusOf(items),
    fulfillment: fulfillmentStatusOf(splits, null),
    ...changes,
  };
}
