import type { Actor } from '../domain/audit.ts';
import { conflictState, fieldError, notFound } from '../domain/errors.ts';
import { cancellationCents } from '../domain/refunds.ts';
import type { ShipBody } from '../schemas/refunds.ts';
import { insertAudit } from '../store/audit.repository.ts';
import type { Db } from '../store/db.ts';
import { cancelSplitOrder as markCancelled, creditItemQuantity, lockSplitOrders } from '../store/refunds.repository.ts';
import { allMerchants, within } from '../store/tenancy.ts';
import { hasPendingRefund, itemsLeft, markDelivered, markShipped, resolveSplitOrder, splitsDue } from '../store/split-orders.repository.ts';
import { addQty } from '../store/stocks.repository.ts';
import { channelShippingByCode } from './catalog.service.ts';
import { creditCancellation } from './ledger.service.ts';
import { refreshOrder } from './order-state.service.ts';
import { emitOrderCancelled, emitSplitOrderEvent } from './webhook-events.service.ts';

/**
 * The split order a URL names (its order, merchant, status and channel), resolved for the operator
 * (`allMerchants`): its id, and its order's, are what the locks and writes below take. 404 when there is none.
 */
export async function splitOrderRef(db: Db, id: number) {
  const row = await resolveSplitOrder(allMerchants(db), id);
  if (!row) throw notFound('split order');
  return row;
}

/** The sandbox's shipper: split orders waiting to ship, and shipped ones, since `due` or earlier (at most `limit` of each). */
export async function splitOrdersDue(db: Db, due: number, limit: number) {
  return { toShip: await splitsDue(db, 'waiting_to_ship', due, limit), toDeliver: await splitsDue(db, 'shipped', due, limit) };
}

/**
 * Operator ships a split order. Refused (409/40903) unless it is waiting to ship with no refund
 * pending on it (SPEC §5.4): the split rows are locked first, like a refund request does, so the
 * two never both succeed. The audit row (with the tracking code) commits with the change.
 */
export async function shipSplitOrder(db: Db, actor: Actor, splitOrderId: number, body: ShipBody, now = Date.now()): Promise<number> {
  const { id, order_id: orderId, merchant_id: merchantId, owner } = await splitOrderRef(db, splitOrderId);
  return db.transaction().execute(async (trx) => {
    const status = (await lockSplitOrders(trx, orderId)).get(id);
    if (status !== 'waiting_to_ship') throw conflictState(`split order ${id} is ${status}; only a split order waiting to ship can be shipped`);
    if (await hasPendingRefund(trx, id)) throw conflictState(`split order ${id} has a refund pending; decide it before shipping`);
    await markShipped(trx, id, body, now);
    await refreshOrder(trx, orderId, now);
    await emitSplitOrderEvent(within(owner, trx), 'split_order.shipped', orderId, id, now);
    const after = { orderId, merchantId, status: 'shipped', carrier: body.carrier, trackingCode: body.trackingCode };
    await insertAudit(trx, actor, { action: 'split_order.ship', target: `split_order:${id}`, before: { orderId, merchantId, status }, after }, now);
    return orderId;
  });
}

/**
 * The console's ship form (issue 29, 10): when the split's channel lists its carriers, the carrier
 * must be one of them (any case; saved as the channel spells it), else 400 on `carrier` and nothing
 * is written. A channel that lists none takes any carrier typed in. Then as shipSplitOrder.
 */
export async function shipWithChannelCarrier(db: Db, actor: Actor, splitOrderId: number, body: ShipBody, now = Date.now()): Promise<number> {
  const split = await splitOrderRef(db, splitOrderId);
  const carriers = (await channelShippingByCode(db)).get(split.channel_code)?.carriers ?? [];
  let carrier = body.carrier.trim();
  if (carriers.length > 0) {
    const listed = carriers.find((c) => c.toLowerCase() === carrier.toLowerCase());
    if (!listed) throw fieldError('carrier', `must be one of the carriers of channel ${split.channel_code}: ${carriers.join(', ')}`);
    carrier = listed;
  }
  return shipSplitOrder(db, actor, splitOrderId, { ...body, carrier }, now);
}

/** Operator marks a shipped split order delivered; the order completes when every remaining split has. Audited like shipping. */
export async function deliverSplitOrder(db: Db, actor: Actor, splitOrderId: number, now = Date.now()): Promise<number> {
  const { id, order_id: orderId, merchant_id: merchantId, owner } = await splitOrderRef(db, splitOrderId);
  return db.transaction().execute(async (trx) => {
    const status = (await lockSplitOrders(trx, orderId)).get(id);
    if (status !== 'shipped') throw conflictState(`split order ${id} is ${status}; only a shipped split order can be delivered`);
    await markDelivered(trx, id, now);
    await refreshOrder(trx, orderId, now);
    await emitSplitOrderEvent(within(owner, trx), 'split_order.delivered', orderId, id, now);
    const entry = { before: { orderId, merchantId, status }, after: { orderId, merchantId, status: 'completed' } };
    await insertAudit(trx, actor, { action: 'split_order.deliver', target: `split_order:${id}`, ...entry }, now);
    return orderId;
  });
}

/** What cancelling a split order would do, for the console's confirmation page: units back to which warehouse, the credit. */
export async function cancellationPreview(db: Db, splitOrderId: number) {
  const split = await splitOrderRef(db, splitOrderId);
  const items = (await itemsLeft(db, split.id)).filter((i) => i.left > 0);
  return {
    splitOrderId: split.id,
    orderId: split.order_id,
    merchantId: split.merchant_id,
    status: split.status,
    warehouseCode: split.warehouse_code,
    units: items.reduce((n, i) => n + i.left, 0),
    creditCents: cancellationCents(items, split.freight_cents),
  };
}

/**
 * Operator cancels a split order that has not shipped (the supplier cannot fulfil it), in one
 * transaction: every unit not yet refunded goes back to the warehouse's stock (ledger rows of kind
 * `return`) and counts as given back on its line; the split is `cancelled`; the order's
 * `refundedAmount` grows by those units and the split's freight, which the merchant's account is
 * credited (`cancellation_credit`, SPEC §15); `order.cancelled` fires when nothing is left of the
 * order. Refused (409/40903) unless the split is waiting to ship with no refund pending on it — the
 * split rows are locked first, as shipping and refunds do. Audited with the reason.
 */
export async function cancelUnshippedSplit(db: Db, actor: Actor, splitOrderId: number, reason: string, now = Date.now()): Promise<number> {
  const {
    id,
    order_id: orderId,
    merchant_id: merchantId,
    owner,
    freight_cents: freightCents,
    warehouse_id: warehouseId,
  } = await splitOrderRef(db, splitOrderId);
  return db.transaction().execute(async (trx) => {
    const status = (await lockSplitOrders(trx, orderId)).get(id);
    if (status !== 'waiting_to_ship') throw conflictState(`split order ${id} is ${status}; only a split order waiting to ship can be cancelled`);
    if (await hasPendingRefund(trx, id)) throw conflictState(`split order ${id} has a refund pending; decide it before cancelling`);
    const items = (await itemsLeft(trx, id)).filter((i) => i.left > 0);
    for (const item of items) {
      await creditItemQuantity(trx, item.id, item.left, now);
      const back = await addQty(trx, { productId: item.productId, warehouseId }, item.left, { kind: 'return', orderId }, now);
      // A return adds stock and has no upper bound here: only a missing stock row's creation failing gets here.
      if (!back) throw new Error(`stock return of split order ${id} failed`);
    }
    await markCancelled(trx, id, now);
    const creditedCents = cancellationCents(items, freightCents);
    const order = await refreshOrder(trx, orderId, now, { refundedCents: creditedCents, refunded: true });
    const entryId = await creditCancellation(trx, id, orderId, creditedCents, now);
    if (order.status === 'cancel' && order.previousStatus !== 'cancel') await emitOrderCancelled(within(owner, trx), orderId, now);
    await insertAudit(
      trx,
      actor,
      {
        action: 'split_order.cancel',
        target: `split_order:${id}`,
        before: { orderId, merchantId, status },
        after: { orderId, merchantId, status: 'cancelled', reason, creditedCents, entryId, units: items.reduce((n, i) => n + i.left, 0) },
      },
      now,
    );
    return orderId;
  });
}
