import { AppError, validationFailed, type FieldError } from './errors.ts';
import { refundableQuantity, type ItemCounts } from './order-status.ts';

export const REFUND_REASONS = [
  'Other',
  "Don't Want Anymore",
  'Product Selection Error/Multiple Selection',
  'Incorrect Address Information',
  'Out Of Stock',
] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

/** Case-insensitive match to the canonical spelling; null for anything else. */
export function normalizeRefundReason(value: string | null | undefined): RefundReason | null {
  if (value === null || value === undefined || value.trim() === '') return 'Other';
  return REFUND_REASONS.find((r) => r.toLowerCase() === value.trim().toLowerCase()) ?? null;
}

export interface RefundableItem extends ItemCounts {
  id: number;
  sku: string;
  splitOrderId: number;
  countryCode: string;
  splitShipped: boolean;
  unitCents: number;
}

export interface RefundEntry {
  itemId: number | null;
  skuCode: string | null;
  countryCode: string | null;
  quantity: number | null;
}

export interface RefundLine {
  itemId: number;
  quantity: number;
}

const refundShipped = (errors: FieldError[]) =>
  new AppError('conflict', 40901, 'refund refused: the items have shipped (or been delivered); ask for a return instead', errors);
const refundTooMuch = (errors: FieldError[]) => new AppError('conflict', 40902, 'refund quantity exceeds what is still refundable', errors);

/**
 * SPEC §5.1: which lines a refund request takes, and how many of each. Without entries the whole
 * order is refunded. Entries name a line by itemId, or by skuCode (+ countryCode when the SKU sits
 * in several split orders). Input errors (400) are reported before state refusals (40901, 40902).
 */
export function planRefund(items: RefundableItem[], entries: RefundEntry[] | null): RefundLine[] {
  if (entries === null) {
    const shipped = items.filter((i) => i.splitShipped);
    if (shipped.length)
      throw refundShipped(shipped.map((i) => ({ field: 'orderItems', message: `item ${i.id} (${i.sku}) has shipped`, itemId: String(i.id) })));
    const lines = items.filter((i) => refundableQuantity(i) > 0).map((i) => ({ itemId: i.id, quantity: refundableQuantity(i) }));
    if (lines.length === 0) throw refundTooMuch([{ field: 'orderItems', message: 'nothing is left to refund on this order' }]);
    return lines;
  }

  const invalid: FieldError[] = [];
  const resolved: { index: number; item: RefundableItem; quantity: number | null }[] = [];
  // biome-ignore lint/suspicious/useIterableCallbackReturn: `return void invalid.push(...)` is this loop's early exit
  entries.forEach((e, index) => {
    const at = (name: string) => `orderItems[${index}].${name}`;
    let candidates: RefundableItem[];
    if (e.itemId !== null) {
      candidates = items.filter((i) => i.id === e.itemId);
      if (candidates.length === 0) return void invalid.push({ field: at('itemId'), message: 'no such item in this order' });
      if (e.skuCode !== null && candidates[0].sku !== e.skuCode)
        return void invalid.push({ field: at('skuCode'), message: `item ${e.itemId} is ${candidates[0].sku}` });
    } else if (e.skuCode !== null) {
      candidates = items.filter((i) => i.sku === e.skuCode);
      if (candidates.length === 0) return void invalid.push({ field: at('skuCode'), message: 'this SKU is not in this order' });
    } else {
      return void invalid.push({ field: at('itemId'), message: 'name the line by itemId or skuCode' });
    }
    if (e.countryCode !== null) {
      const inCountry = candidates.filter((i) => i.countryCode === e.countryCode);
      if (inCountry.length === 0) {
        return void invalid.push({
          field: at('countryCode'),
          message: `the line ships from ${[...new Set(candidates.map((i) => i.countryCode))].join('/')}, not ${e.countryCode}`,
        });
      }
      candidates = inCountry;
    }
    if (candidates.length > 1) {
      return void invalid.push({
        field: at('skuCode'),
        message: `${e.skuCode} is on several lines (items ${candidates.map((i) => i.id).join(', ')}); name one by itemId or countryCode`,
        itemIds: candidates.map((i) => String(i.id)),
      });
    }
    resolved.push({ index, item: candidates[0], quantity: e.quantity });
  });
  if (invalid.length) throw validationFailed(invalid);

  const shipped = resolved.filter((r) => r.item.splitShipped);
  if (shipped.length) {
    throw refundShipped(
      shipped.map((r) => ({ field: `orderItems[${r.index}]`, message: `item ${r.item.id} (${r.item.sku}) has shipped`, itemId: String(r.item.id) })),
    );
  }

  const taken = new Map<number, number>();
  const tooMuch: FieldError[] = [];
  for (const r of resolved) {
    const left = refundableQuantity(r.item) - (taken.get(r.item.id) ?? 0);
    const quantity = r.quantity ?? left;
    if (quantity > left || quantity === 0) {
      tooMuch.push({
        field: `orderItems[${r.index}].quantity`,
        message: `only ${left} of item ${r.item.id} can still be refunded`,
        itemId: String(r.item.id),
        requested: quantity,
        refundable: left,
      });
      continue;
    }
    taken.set(r.item.id, (taken.get(r.item.id) ?? 0) + quantity);
  }
  if (tooMuch.length) throw refundTooMuch(tooMuch);
  return [...taken].map(([itemId, quantity]) => ({ itemId, quantity }));
}

/**
 * SPEC §5.2: Σ unit amount × quantity, plus the freight of every split order this refund leaves
 * with all its items refunded. `covered(item)` is how much of the item is refunded with this one
 * counted (at request time, pending refunds are counted as if they succeed).
 */
export function refundAmountCents(items: (RefundableItem & { splitFreightCents: number })[], lines: RefundLine[], countPending: boolean): number {
  const byId = new Map(items.map((i) => [i.id, i]));
  const adding = new Map(lines.map((l) => [l.itemId, l.quantity]));
  let cents = lines.reduce((sum, l) => sum + byId.get(l.itemId)!.unitCents * l.quantity, 0);
  const touchedSplits = new Set(lines.map((l) => byId.get(l.itemId)!.splitOrderId));
  for (const splitId of touchedSplits) {
    const splitItems = items.filter((i) => i.splitOrderId === splitId);
    const wasCovered = splitItems.every((i) => i.refunded + (countPending ? i.pending : 0) >= i.quantity);
    const nowCovered = splitItems.every((i) => i.refunded + (countPending ? i.pending : 0) + (adding.get(i.id) ?? 0) >= i.quantity);
    if (nowCovered && !wasCovered) cents += splitItems[0].splitFreightCents;
  }
  return cents;
}

/**
 * What cancelling a split order that has not shipped gives back to the merchant (SPEC §15
 * `cancellation_credit`): every unit not yet refunded at its unit amount, and the split's freight
 * (a split's freight is refunded only with its last item, which would have cancelled it already).
 */
export function cancellationCents(items: { unitCents: number; left: number }[], splitFreightCents: number): number {
  return items.reduce((sum, i) => sum + i.unitCents * i.left, 0) + splitFreightCents;
}

/** An operator's or the worker's verdict on a pending refund. */
export type Decision = { approve: true } | { approve: false; reason: string };

/** A line of the pending refund, as reserved. */
export interface PendingRefundLine extends RefundLine {
  splitOrderId: number;
}

/** An item of the refund's order, with what its refund touches. */
export interface DecidableItem extends RefundableItem {
  productId: number;
  warehouseId: number;
  splitFreightCents: number;
}

export interface RefundOutcome {
  state: 'refund_successfully' | 'refund_failed';
  failureReason: string | null;
  /** What the refund pays: recomputed on approval, the reserved amount when refused. */
  amountCents: number;
  /** Approved: each line's quantity moves from pending to refunded and back to stock (ledger kind `return`), in product order. */
  returns: { itemId: number; quantity: number; productId: number; warehouseId: number }[];
  /** Refused: each line's reserved quantity is released. */
  releases: RefundLine[];
  /** Split orders the approval leaves with every item refunded: they are cancelled. */
  cancelledSplits: number[];
}

/** A split order that has shipped (or been delivered) can no longer be refunded, only returned. */
export const isShippedSplit = (status: string | undefined) => status === 'shipped' || status === 'completed';

/**
 * SPEC §5.2: the decision on one pending refund. Approval still fails when a split order it
 * targets shipped in the meantime; an approved refund pays its items plus the freight of every
 * split order it leaves fully refunded, returns the stock and cancels those split orders.
 */
export function decideRefund(
  decision: Decision,
  lines: PendingRefundLine[],
  items: DecidableItem[],
  splitStatus: Map<number, string>,
  reservedCents: number,
): RefundOutcome {
  const shipped = [...new Set(lines.filter((l) => isShippedSplit(splitStatus.get(l.splitOrderId))).map((l) => l.splitOrderId))];
  let failureReason: string | null = null;
  if (!decision.approve) failureReason = decision.reason;
  else if (shipped.length) failureReason = `split order ${shipped.join(', ')} shipped before the refund was decided`;
  if (failureReason !== null) {
    return {
      state: 'refund_failed',
      failureReason,
      amountCents: reservedCents,
      returns: [],
      releases: lines.map((l) => ({ itemId: l.itemId, quantity: l.quantity })),
      cancelledSplits: [],
    };
  }
  const amountCents = refundAmountCents(items, lines, false);
  const byId = new Map(items.map((i) => [i.id, i]));
  const refunded = new Map(items.map((i) => [i.id, i.refunded]));
  const returns = [...lines]
    .sort((a, b) => byId.get(a.itemId)!.productId - byId.get(b.itemId)!.productId)
    .map((l) => {
      const item = byId.get(l.itemId)!;
      refunded.set(item.id, refunded.get(item.id)! + l.quantity);
      return { itemId: l.itemId, quantity: l.quantity, productId: item.productId, warehouseId: item.warehouseId };
    });
  const touched = [...new Set(lines.map((l) => byId.get(l.itemId)!.splitOrderId))];
  const cancelledSplits = touched.filter((splitId) => items.filter((i) => i.splitOrderId === splitId).every((i) => refunded.get(i.id)! >= i.quantity));
  return { state: 'refund_successfully', failureReason: null, amountCents, returns, releases: [], cancelledSplits };
}
