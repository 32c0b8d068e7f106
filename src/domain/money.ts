import { formatSigned } from './ledger.ts';

/** Integer cents → a JSON number with at most two decimals (9.32). */
export const centsToAmount = (cents: number) => Math.round(cents) / 100;

/**
 * An amount and the currency it is in (issue 41 item 6): integer minor units of an ISO 4217 code.
 * Stockist keeps all its money in one currency, the supplier's (`SUPPLIER_CURRENCY`), which comes
 * from the configuration with the request's dependencies — never a constant — so an amount is made
 * with its currency where it is read and shown with it (`formatMoney`, and `currencyCode` /
 * `currency` / `estimatedFreightCurrency` beside the API's amounts).
 */
export interface Money {
  readonly cents: number;
  readonly currency: string;
}

export const moneyOf = (cents: number, currency: string): Money => ({ cents, currency });

/** As the API renders it: a JSON number with at most two decimals (its currency goes in its own field). */
export const amountOf = (m: Money) => centsToAmount(m.cents);

/** As pages, files and the command line show it: `12.50 EUR`, `-3.25 EUR`. */
export const formatMoney = (m: Money) => `${formatSigned(m.cents)} ${m.currency}`;

/** ISO 4217's shape: three capital letters (`EUR`). */
export const isCurrencyCode = (code: string) => /^[A-Z]{3}$/.test(code);

/** Start-up refused: the configured currency is not the one the database's money is in (one line, for the operator). */
export class CurrencyChangeRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CurrencyChangeRefused';
  }
}

/**
 * Why a database whose money is in `stored` cannot be served in `configured` (issue 41 item 6), or
 * null when it can. Amounts are minor units with no currency of their own: reading them in another
 * currency would turn every balance, price and order into a different sum, so the currency is
 * fixed once money has moved; a database without money yet may still choose.
 */
export function currencyChangeProblem(configured: string, stored: string | null): string | null {
  if (stored === null || stored === configured) return null;
  return (
    `SUPPLIER_CURRENCY is ${configured}, but this database already holds money in ${stored}, and amounts cannot change currency: ` +
    `start with SUPPLIER_CURRENCY=${stored}, or point DATABASE_URL at a new database for ${configured}`
  );
}

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
