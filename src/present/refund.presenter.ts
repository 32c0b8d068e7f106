import { centsToAmount } from '../domain/money.ts';
import { formatInstant } from '../domain/time.ts';
import type { RefundRecord } from '../schemas/refunds.ts';
import type { RefundItemRow, RefundRow } from '../store/refunds.repository.ts';

/** The refund record of SPEC §5.5. */
export function presentRefund(r: RefundRow, items: RefundItemRow[]): RefundRecord {
  return {
    refundNo: String(r.id),
    id: String(r.order_id),
    remark: r.remark,
    refundReason: r.reason,
    refundStatus: r.status,
    failureReason: r.failure_reason,
    amount: centsToAmount(r.amount_cents),
    items: items
      .filter((i) => i.refund_id === r.id)
      .map((i) => ({ itemId: String(i.order_item_id), skuCode: i.sku, quantity: i.quantity, countryCode: i.country_code })),
    createDate: formatInstant(r.created_at),
    updateDate: formatInstant(r.updated_at),
  };
}
