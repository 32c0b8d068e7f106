import { fulfillmentStatusOf, orderStatusOf, refundStatusOf, type ItemCounts } from '../domain/order-status.ts';
import type { Handle } from '../store/db.ts';
import type { OrderStatus, SplitOrderStatus } from '../domain/vocabulary.ts';

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
    db.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirstOrThrow(),
    db
      .selectFrom('order_items')
      .select(['quantity', 'refunded_quantity as refunded', 'pending_refund_quantity as pending'])
      .where('order_id', '=', orderId)
      .execute(),
    db.selectFrom('split_orders').select('status').where('order_id', '=', orderId).execute(),
  ]);
  const status = await writeOrderStatus(
    db,
    orderId,
    items,
    splits.map((s) => s.status),
    now,
    changes,
  );
  return { previousStatus: order.status, status };
}

/**
 * Writes an order's derived statuses from its items and split orders as the caller holds them
 * (read after taking the split orders' locks, with this transaction's changes applied), in one
 * UPDATE that does not need the order row: what depends on its earlier values — a date kept from
 * the first time a status was reached, the fulfilment status when no split order is active, the
 * refunded sum — is computed by the statement. Returns the new order status.
 */
export async function writeOrderStatus(
  db: Handle,
  orderId: number,
  items: ItemCounts[],
  splits: SplitOrderStatus[],
  now: number,
  changes: { refundedCents?: number; refunded?: boolean } = {},
): Promise<OrderStatus> {
  const status = orderStatusOf(items, splits);
  // fulfillmentStatusOf keeps the current value only when no split order is active.
  const fulfillment = splits.some((s) => s !== 'cancelled') ? fulfillmentStatusOf(splits, 'waiting_to_ship') : null;
  // Parameters, never literals: a statement's text must not change with `now`, or SQLite prepares
  // it anew every time and it pushes the hot statements out of the statement cache.
  await db
    .updateTable('orders')
    .set((eb) => ({
      status,
      refund_status: refundStatusOf(items),
      ...(fulfillment === null ? {} : { fulfillment_status: fulfillment }),
      ...(changes.refundedCents ? { refunded_cents: eb('refunded_cents', '+', changes.refundedCents) } : {}),
      ...(changes.refunded ? { refund_date: now } : {}),
      ...(status === 'completed' ? { completed_date: eb.fn.coalesce('completed_date', eb.val(now)) } : {}),
      ...(status === 'cancel' ? { cancel_date: eb.fn.coalesce('cancel_date', eb.val(now)) } : {}),
      // Never backwards: a transaction that took `now` before waiting for a lock must not move the
      // order behind a later change, or a keyset walk by updateDate could pass it unseen (SPEC §4.6).
      updated_at: eb.case().when('updated_at', '>', now).then(eb.ref('updated_at')).else(eb.val(now)).end(),
    }))
    .where('id', '=', orderId)
    .execute();
  return status;
}
