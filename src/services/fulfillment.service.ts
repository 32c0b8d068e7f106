import type { Actor } from '../domain/audit.ts';
import { conflictState, notFound } from '../domain/errors.ts';
import { parseId } from '../domain/ids.ts';
import type { ShipBody } from '../schemas/refunds.ts';
import { insertAudit } from '../store/audit.repository.ts';
import type { Db } from '../store/db.ts';
import { lockSplitOrders } from '../store/refunds.repository.ts';
import { refreshOrder } from './order-state.service.ts';
import { emitSplitOrderEvent } from './webhook-events.service.ts';

async function splitOrder(db: Db, rawId: string) {
  const id = parseId(rawId);
  const row = id === null ? undefined : await db.selectFrom('split_orders').select(['id', 'order_id', 'merchant_id']).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('split order');
  return row;
}

/**
 * Operator ships a split order. Refused (409/40903) unless it is waiting to ship with no refund
 * pending on it (SPEC §5.4): the split rows are locked first, like a refund request does, so the
 * two never both succeed. The audit row (with the tracking code) commits with the change.
 */
export async function shipSplitOrder(db: Db, actor: Actor, rawId: string, body: ShipBody, now = Date.now()): Promise<number> {
  const { id, order_id: orderId, merchant_id: merchantId } = await splitOrder(db, rawId);
  return db.transaction().execute(async (trx) => {
    const status = (await lockSplitOrders(trx, orderId)).get(id);
    if (status !== 'waiting_to_ship') throw conflictState(`split order ${id} is ${status}; only a split order waiting to ship can be shipped`);
    const pending = await trx
      .selectFrom('order_items')
      .select('id')
      .where('split_order_id', '=', id)
      .where('pending_refund_quantity', '>', 0)
      .executeTakeFirst();
    if (pending) throw conflictState(`split order ${id} has a refund pending; decide it before shipping`);
    await trx
      .updateTable('split_orders')
      .set({ status: 'shipped', carrier: body.carrier, tracking_code: body.trackingCode, shipped_at: now, updated_at: now })
      .where('id', '=', id)
      .execute();
    await refreshOrder(trx, orderId, now);
    await emitSplitOrderEvent(trx, 'split_order.shipped', merchantId, orderId, id, now);
    const after = { orderId, merchantId, status: 'shipped', carrier: body.carrier, trackingCode: body.trackingCode };
    await insertAudit(trx, actor, { action: 'split_order.ship', target: `split_order:${id}`, before: { orderId, merchantId, status }, after }, now);
    return orderId;
  });
}

/** Operator marks a shipped split order delivered; the order completes when every remaining split has. Audited like shipping. */
export async function deliverSplitOrder(db: Db, actor: Actor, rawId: string, now = Date.now()): Promise<number> {
  const { id, order_id: orderId, merchant_id: merchantId } = await splitOrder(db, rawId);
  return db.transaction().execute(async (trx) => {
    const status = (await lockSplitOrders(trx, orderId)).get(id);
    if (status !== 'shipped') throw conflictState(`split order ${id} is ${status}; only a shipped split order can be delivered`);
    await trx.updateTable('split_orders').set({ status: 'completed', delivered_at: now, updated_at: now }).where('id', '=', id).execute();
    await refreshOrder(trx, orderId, now);
    await emitSplitOrderEvent(trx, 'split_order.delivered', merchantId, orderId, id, now);
    const entry = { before: { orderId, merchantId, status }, after: { orderId, merchantId, status: 'completed' } };
    await insertAudit(trx, actor, { action: 'split_order.deliver', target: `split_order:${id}`, ...entry }, now);
    return orderId;
  });
}
