import type { Handle, Trx } from './db.ts';
import { isMerchantScope, type ScopedSplitId, type TenantScope } from './tenancy.ts';
import { ownedBy, resolvedOrderId, resolvedSplitId } from './scope-mint.ts';
import { handleOf } from './scope-handle.ts';

/**
 * A split order's order and merchant, by its id, if the reader may see it: the operator's
 * fulfilment actions name split orders, and resolve them with `allMerchants(db)`. Its id and its
 * order's come back resolved: how a split-order number from a request reaches the writes below.
 */
export async function resolveSplitOrder(reader: TenantScope, id: number) {
  const splits = isMerchantScope(reader) ? reader.selectFrom('split_orders') : handleOf(reader).selectFrom('split_orders');
  const row = await splits
    .select(['id', 'order_id', 'merchant_id', 'freight_cents', 'status', 'warehouse_id', 'warehouse_code', 'channel_code'])
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? ownedBy(handleOf(reader), row.merchant_id, { ...row, id: resolvedSplitId(row.id), order_id: resolvedOrderId(row.order_id) }) : undefined;
}

/** Whether a refund is pending on any item of the split order (SPEC §5.4: it blocks shipping and cancelling). */
export async function hasPendingRefund(trx: Trx, splitOrderId: ScopedSplitId): Promise<boolean> {
  const row = await trx
    .selectFrom('order_items')
    .select('id')
    .where('split_order_id', '=', splitOrderId)
    .where('pending_refund_quantity', '>', 0)
    .executeTakeFirst();
  return row !== undefined;
}

export async function markShipped(trx: Trx, id: ScopedSplitId, shipment: { carrier: string; trackingCode: string }, now: number): Promise<void> {
  await trx
    .updateTable('split_orders')
    .set({ status: 'shipped', carrier: shipment.carrier, tracking_code: shipment.trackingCode, shipped_at: now, updated_at: now })
    .where('id', '=', id)
    .execute();
}

export async function markDelivered(trx: Trx, id: ScopedSplitId, now: number): Promise<void> {
  await trx.updateTable('split_orders').set({ status: 'completed', delivered_at: now, updated_at: now }).where('id', '=', id).execute();
}

/** The split order's items with what is left of each (ordered − refunded). */
export async function itemsLeft(db: Handle, splitOrderId: ScopedSplitId) {
  const rows = await db
    .selectFrom('order_items')
    .select(['id', 'product_id as productId', 'unit_cents as unitCents', 'quantity', 'refunded_quantity as refunded'])
    .where('split_order_id', '=', splitOrderId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ ...r, left: r.quantity - r.refunded }));
}

/** Split orders due to move in the sandbox: waiting to ship, or shipped, since `due` or earlier (oldest first, at most `limit`). */
export async function splitsDue(db: Handle, state: 'waiting_to_ship' | 'shipped', due: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('split_orders')
    .select('id')
    .where('status', '=', state)
    .where(state === 'waiting_to_ship' ? 'created_at' : 'shipped_at', '<=', due)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}
