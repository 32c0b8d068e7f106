/** Integer cents → a JSON number with at most two decimals (9.32). */
export const centsToAmount = (cents: number) => Math.round(cents) / 100;

/**
 * SPEC §4.4: bounds that keep every total exact. An order's final amount is at most 10^10 minor
 * units; a price or a channel fee on its own may not exceed that either (such a product could
 * never be ordered). Totals are computed in doubles, which are exact below 2^53 ≈ 9·10^15; any
 * sum or product of non-negative terms that passes 2^53 is also far past 10^10, so comparing the
 * computed total with the bound decides correctly even when the total itself is not exact.
 */
export const MAX_ORDER_CENTS = 10_000_000_000;
/** @alias a price or a fee is bounded by what an order may total */
export const MAX_PRICE_CENTS = MAX_ORDER_CENTS;
/** SPEC §4.4: no stock row is taken past this by the operator (set, adjust, import). */
export const MAX_STOCK_QTY = 1_000_000_000;

/** "100000000.00" for 10^10 cents: bounds in messages, as clients send money. */
export const formatCents = (cents: number) => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

/** Why an order (or a quote) with these totals cannot be taken, or null. */
export function orderTotalProblem(subtotalCents: number, freightCents: number): string | null {
  const total = subtotalCents + freightCents;
  if (total <= MAX_ORDER_CENTS) return null;
  const shown = Number.isSafeInteger(total) ? formatCents(total) : `more than ${formatCents(MAX_ORDER_CENTS)}`;
  return `the order's final amount would be ${shown}; at most ${formatCents(MAX_ORDER_CENTS)} is accepted`;
}
