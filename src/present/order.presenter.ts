import { centsToAmount } from '../domain/money.ts';
import { refundStatusOf } from '../domain/order-status.ts';
import { formatInstant } from '../domain/time.ts';
import type { RefundStatus } from '../domain/vocabulary.ts';
import type { OrderRecord } from '../schemas/orders.ts';
import type { OrderAggregate, OrderItemRow, SplitOrderRow } from '../store/orders.repository.ts';

/** A line's own refund status: the order's rule (domain/order-status.ts) over that one line. */
const itemRefundStatus = (i: OrderItemRow): RefundStatus | null =>
  refundStatusOf([{ quantity: i.quantity, refunded: i.refunded_quantity, pending: i.pending_refund_quantity }]);

const presentSplit = (s: SplitOrderRow, items: OrderItemRow[]) => ({
  id: String(s.id),
  warehouseCode: s.warehouse_code,
  warehouseId: s.warehouse_id,
  countryCode: s.country_code,
  channelCode: s.channel_code,
  channelType: s.channel_type,
  status: s.status,
  freightAmount: centsToAmount(s.freight_cents),
  itemIds: items.filter((i) => i.split_order_id === s.id).map((i) => String(i.id)),
  carrier: s.carrier,
  trackingCode: s.tracking_code,
  shippedDate: formatInstant(s.shipped_at),
  deliveredDate: formatInstant(s.delivered_at),
});

/** The order record of SPEC §4.6, computed from integer cents. */
export function presentOrder({ order: o, splits, items }: OrderAggregate): OrderRecord {
  const splitOf = new Map(splits.map((s) => [s.id, s]));
  const finalCents = o.subtotal_cents + o.freight_cents - o.coupon_cents;
  return {
    id: String(o.id),
    customOrderId: o.custom_order_id,
    salePlatform: o.sale_platform,
    status: o.status,
    financialStatus: o.financial_status,
    fulfillmentStatus: o.fulfillment_status,
    refundStatus: o.refund_status,
    purchaseDate: formatInstant(o.created_at),
    payDate: formatInstant(o.pay_date),
    completedDate: formatInstant(o.completed_date),
    cancelDate: formatInstant(o.cancel_date),
    refundDate: formatInstant(o.refund_date),
    currencyCode: o.currency_code,
    subTotalAmount: centsToAmount(o.subtotal_cents),
    freightAmount: centsToAmount(o.freight_cents),
    couponAmount: centsToAmount(o.coupon_cents),
    promotionAmount: centsToAmount(o.promotion_cents),
    finalAmount: centsToAmount(finalCents),
    refundedAmount: centsToAmount(o.refunded_cents),
    refundableAmount: centsToAmount(finalCents - o.refunded_cents),
    remark: o.remark,
    channelType: o.channel_type,
    // Written by the order service from the normalised address (orders.service.ts, normalizeAddress).
    shippingAddress: JSON.parse(o.address) as OrderRecord['shippingAddress'],
    orderItems: items.map((i) => {
      const split = splitOf.get(i.split_order_id)!;
      return {
        id: String(i.id),
        itemId: String(i.id),
        skuCode: i.sku,
        productName: i.product_name,
        imageUrl: i.image_url,
        amount: centsToAmount(i.unit_cents),
        productNum: i.quantity,
        total: centsToAmount(i.unit_cents * i.quantity),
        refundedQuantity: i.refunded_quantity,
        fulfillmentStatus: split.status,
        refundStatus: itemRefundStatus(i),
        countryCode: split.country_code,
        warehouseCode: split.warehouse_code,
        splitOrderId: String(split.id),
      };
    }),
    splitOrders: splits.map((s) => presentSplit(s, items)),
    fulfillments: splits
      .filter((s) => s.shipped_at !== null)
      .map((s) => ({
        id: String(s.id),
        packId: String(s.id),
        status: s.status === 'completed' ? 'completed' : 'shipped',
        carrier: s.carrier,
        trackingCode: s.tracking_code,
        deliveryTime: formatInstant(s.delivered_at),
        items: items.filter((i) => i.split_order_id === s.id).map((i) => ({ itemId: String(i.id), skuCode: i.sku, quantity: i.quantity })),
      })),
    createDate: formatInstant(o.created_at),
    updateDate: formatInstant(o.updated_at),
  };
}
