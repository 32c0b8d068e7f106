import { fulfillmentStatusOf, orderStatusOf, refundStatusOf } from '../domain/order-status.ts';
import type { Handle } from '../store/db.ts';
import type { OrderStatus } from '../domain/vocabulary.ts';

/**
 * Recomputes an order's derived statuses from its items and split orders after a change, and adds
 * `refundedCents` (a successful refund). Dates are set the first time a status is reached. Returns
 * the order status before and after (events such as `order.cancelled` fire on the transition).
 */
export async function refreshOrder(
  db: Handle,
  orderId: number,
  now: number,
  changes: { refundedCents?: number; refunded?: boolean } = {},
): Promise<{ previousStatus: OrderStatus; status: OrderStatus }> {
  const [order, items, splits] = await Promise.all([
    db
      .selectFrom('orders')
      .select(['fulfillment_status', 'status', 'refunded_cents', 'completed_date', 'cancel_date', 'refund_date'])
      .where('id', '=', orderId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('order_items')
      .select(['quantity', 'refunded_quantity as refunded', 'pending_refund_quantity as pending'])
      .where('order_id', '=', orderId)
      .execute(),
    db.selectFrom('split_orders').select('status').where('order_id', '=', orderId).execute(),
  ]);
  const splitStatuses = splits.map((s) => s.status);
  const status = orderStatusOf(items, splitStatuses);
  await db
    .updateTable('orders')
    .set((eb) => ({
      status,
      fulfillment_status: fulfillmentStatusOf(splitStatuses, order.fulfillment_status),
      refund_status: refundStatusOf(items),
      refunded_cents: order.refunded_cents + (changes.refundedCents ?? 0),
      refund_date: changes.refunded ? now : order.refund_date,
      completed_date: status === 'completed' ? (order.completed_date ?? now) : order.completed_date,
      cancel_date: status === 'cancel' ? (order.cancel_date ?? now) : order.cancel_date,
      // Never backwards: a transaction that took `now` before waiting for a lock must not move the
      // order behind a later change, or a keyset walk by updateDate could pass it unseen (SPEC §4.6).
      updated_at: eb.case().when('updated_at', '>', now).then(eb.ref('updated_at')).else(now).end(),
    }))
    .where('id', '=', orderId)
    .execute();
  return { previousStatus: order.status, status };
}
