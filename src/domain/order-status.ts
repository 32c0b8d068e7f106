import type { FulfillmentStatus, OrderStatus, RefundStatus, SplitOrderStatus } from './vocabulary.ts';

export interface ItemCounts {
  quantity: number;
  refunded: number;
  pending: number;
}

export const refundableQuantity = (i: ItemCounts) => i.quantity - i.refunded - i.pending;
const fullyRefunded = (i: ItemCounts) => i.refunded >= i.quantity;

/**
 * A split order's fulfilment over the splits still to be delivered (cancelled ones do not count);
 * `current` when none is (a caller that writes only what changed passes null: keep what is stored).
 */
export function fulfillmentStatusOf<Current extends FulfillmentStatus | null>(splits: SplitOrderStatus[], current: Current): FulfillmentStatus | Current {
  const active = splits.filter((s) => s !== 'cancelled');
  if (active.length === 0) return current;
  if (active.every((s) => s === 'completed')) return 'completed';
  if (active.every((s) => s === 'shipped' || s === 'completed')) return 'fully_shipped';
  if (active.some((s) => s === 'shipped' || s === 'completed')) return 'partially_shipped';
  return 'waiting_to_ship';
}

/** null → refunding (while any refund is pending) → partial_refund / refunded; a failure leaves it as it was. */
export function refundStatusOf(items: ItemCounts[]): RefundStatus | null {
  if (items.some((i) => i.pending > 0)) return 'refunding';
  if (items.length > 0 && items.every(fullyRefunded)) return 'refunded';
  if (items.some((i) => i.refunded > 0)) return 'partial_refund';
  return null;
}

/** cancel when everything was refunded; completed when every remaining split is delivered. */
export function orderStatusOf(items: ItemCounts[], splits: SplitOrderStatus[]): OrderStatus {
  if (items.length > 0 && items.every(fullyRefunded)) return 'cancel';
  const active = splits.filter((s) => s !== 'cancelled');
  if (active.length > 0 && active.every((s) => s === 'completed')) return 'completed';
  return 'processing';
}
