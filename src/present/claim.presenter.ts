import { linesBySku } from '../domain/claims.ts';
import { centsToAmount } from '../domain/money.ts';
import { formatInstant } from '../domain/time.ts';
import type { ClaimRecord } from '../schemas/claims.ts';
import type { ClaimRow } from '../store/claims.repository.ts';

/** The claim record of SPEC §18. */
export function presentClaim(c: ClaimRow, lines: readonly { sku: string; quantity: number }[], evidence: readonly number[]): ClaimRecord {
  return {
    claimNo: String(c.id),
    orderId: String(c.split_order_id),
    parentOrderId: String(c.order_id),
    status: c.status,
    reason: c.reason,
    resolution: c.resolution,
    items: linesBySku(lines.map((l) => ({ sku: l.sku, quantity: Number(l.quantity) }))),
    description: c.description,
    evidence: evidence.map(String),
    amount: c.amount_cents === null ? null : centsToAmount(c.amount_cents),
    replacementOrderId: c.replacement_order_id === null ? null : String(c.replacement_order_id),
    returnRequired: c.return_required === 1,
    returnTracking: c.return_carrier !== null && c.return_tracking_code !== null ? { carrier: c.return_carrier, trackingCode: c.return_tracking_code } : null,
    decisionReason: c.decision_reason,
    createDate: formatInstant(c.created_at),
    updateDate: formatInstant(c.updated_at),
  };
}

/** The columns of `claimCsvCells`, in the order the exports print them. */
export const CLAIM_CSV_CELLS = [
  'split_order_id',
  'order_id',
  'opened_at',
  'status',
  'reason',
  'resolution',
  'items',
  'description',
  'amount',
  'replacement_order_id',
  'return_carrier',
  'return_tracking_code',
  'decision_reason',
  'updated_at',
] as const;

/**
 * A claim's cells in a CSV export (the console's queue and the business manager's list share them;
 * the console adds the merchant and the wait). Ids stay text; amounts with two decimals.
 */
export function claimCsvCells(c: ClaimRecord): Record<(typeof CLAIM_CSV_CELLS)[number], string | null> {
  return {
    split_order_id: c.orderId,
    order_id: c.parentOrderId,
    opened_at: c.createDate,
    status: c.status,
    reason: c.reason,
    resolution: c.resolution,
    items: c.items.map((i) => `${i.sku} x ${i.quantity}`).join('; '),
    description: c.description,
    amount: c.amount === null ? null : c.amount.toFixed(2),
    replacement_order_id: c.replacementOrderId,
    return_carrier: c.returnTracking?.carrier ?? null,
    return_tracking_code: c.returnTracking?.trackingCode ?? null,
    decision_reason: c.decisionReason,
    updated_at: c.updateDate,
  };
}
