/**
 * SPEC §15: the money ledger's vocabulary and rules. Pure: the store keeps the rows, the services
 * decide with these. Amounts are integer minor units of the supplier's currency.
 *
 * Sign convention (docs/money.md): every line is the change to one account's balance, and an
 * entry's lines sum to zero. A merchant account's balance is what the supplier holds for the
 * merchant: positive is prepaid money, negative is what the merchant owes. The supplier's accounts
 * carry the other side: sales is positive by the total charged, cash negative by the total
 * received (the worked example of docs/money.md; `supplierBalances` in reconciliation.ts).
 */
import type { StockistEnv } from './vocabulary.ts';

/** A merchant's account, and the supplier's five: sales, refunds (given back), cash received, adjustments, claims (credited after shipment, SPEC §18). */
export const ACCOUNT_KINDS = ['merchant', 'sales', 'refunds', 'cash', 'adjustments', 'claims'] as const;
export type AccountKind = (typeof ACCOUNT_KINDS)[number];
export type SupplierAccountKind = Exclude<AccountKind, 'merchant'>;

export const ENTRY_TYPES = ['order_charge', 'refund_credit', 'cancellation_credit', 'top_up', 'adjustment', 'claim_credit'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

/** `on_account`: charged, may go below zero without limit (the default); `prepaid`: an order must be covered by `available`. */
export const BILLING_MODES = ['on_account', 'prepaid'] as const;
export type BillingMode = (typeof BILLING_MODES)[number];

/**
 * The bound on one amount and on a balance reached by a top-up or an adjustment: 10^10 minor units,
 * the same as an order's final amount (SPEC §4.4). Doubles are exact far beyond it.
 */
const MAX_MONEY_CENTS = 10_000_000_000;

/** The supplier account each entry type moves against the merchant's. */
const COUNTER_ACCOUNT: Record<EntryType, SupplierAccountKind> = {
  order_charge: 'sales',
  refund_credit: 'refunds',
  cancellation_credit: 'sales',
  top_up: 'cash',
  adjustment: 'adjustments',
  claim_credit: 'claims',
};

/** The sign of the merchant's side of each type (adjustments carry their own). */
const MERCHANT_SIGN: Record<Exclude<EntryType, 'adjustment'>, 1 | -1> = {
  order_charge: -1,
  refund_credit: 1,
  cancellation_credit: 1,
  top_up: 1,
  claim_credit: 1,
};

/** The merchant account's change for an entry of this type and (positive, or signed for adjustments) amount. */
export function merchantSide(type: EntryType, amountCents: number): number {
  if (!Number.isSafeInteger(amountCents)) throw new Error(`ledger: amount ${amountCents} is not an integer number of minor units`);
  if (type === 'adjustment') {
    if (amountCents === 0) throw new Error('ledger: an adjustment of 0');
    return amountCents;
  }
  if (amountCents < 0) throw new Error(`ledger: a ${type} of ${amountCents}`);
  return MERCHANT_SIGN[type] * amountCents;
}

export interface LinePlan {
  account: 'merchant' | SupplierAccountKind;
  amountCents: number;
}

/**
 * An entry as it is stored (docs/decisions.md, "An entry that cannot be unbalanced"): one amount
 * moved between the merchant's account and one supplier account. The merchant's side is
 * `merchantCents`, the supplier account's is its negation — the entry row holds the amount once,
 * so its two lines sum to zero by construction and no row can say otherwise.
 */
export interface Transfer {
  merchantCents: number;
  counter: SupplierAccountKind;
}

/** The entry of this type and (positive, or signed for adjustments) amount. */
export function transferOf(type: EntryType, amountCents: number): Transfer {
  return { merchantCents: merchantSide(type, amountCents), counter: COUNTER_ACCOUNT[type] };
}

/** The supplier account an entry of this type moves against (`ledger verify` checks each entry's). */
export const counterAccountOf = (type: EntryType): SupplierAccountKind => COUNTER_ACCOUNT[type];

/** The entry's two lines, read from its transfer: the merchant's side and the supplier account's, summing to zero. */
export function entryLines(type: EntryType, amountCents: number): LinePlan[] {
  const { merchantCents, counter } = transferOf(type, amountCents);
  return [
    { account: 'merchant', amountCents: merchantCents },
    { account: counter, amountCents: -merchantCents },
  ];
}

/**
 * A top-up reference as the ledger compares it: letter case does not count (a bank reference typed
 * `BANK-X` one day and `bank-x` the next is the same payment), the rest of the text does.
 */
const foldReference = (reference: string) => reference.toLowerCase();

/** The unique cause of each kind of entry: the database refuses a second entry with the same one. */
export const causeOf = {
  orderCharge: (orderId: number) => `order:${orderId}`,
  refundCredit: (refundId: number) => `refund:${refundId}`,
  cancellationCredit: (splitOrderId: number) => `split_cancel:${splitOrderId}`,
  claimCredit: (claimId: number) => `claim:${claimId}`,
  /** The reference without letter case: `BANK-X` and `bank-x` are one payment (docs/money.md). */
  topUp: (accountId: number, reference: string) => `top_up:${accountId}:${foldReference(reference)}`,
  adjustment: (accountId: number, key: string) => `adjustment:${accountId}:${key}`,
};

export const accountKey = {
  merchant: (merchantId: number, environment: StockistEnv) => `merchant:${merchantId}:${environment}`,
  supplier: (kind: SupplierAccountKind, environment: StockistEnv) => `supplier:${kind}:${environment}`,
};

export interface AccountTerms {
  balanceCents: number;
  billingMode: BillingMode;
  creditLimitCents: number;
}

/** SPEC §15: `available = balance + creditLimit`. */
export const availableCents = (a: AccountTerms) => a.balanceCents + a.creditLimitCents;

/**
 * The prepaid floor (SPEC §15 invariant): a prepaid account's balance never below −creditLimit,
 * i.e. `available ≥ 0`. The predicate behind the operator's changes (`prepaidFloorProblem`) and
 * `stockist ledger verify`'s `prepaid_floor` breach; an order's charge checks the same inequality
 * inside its one UPDATE (`balance + credit_limit − x ≥ 0`, store/ledger.repository.ts), as
 * `canCover` states it.
 */
export const belowPrepaidFloor = (a: AccountTerms) => a.billingMode === 'prepaid' && availableCents(a) < 0;

/** Whether the account may be charged this much: always on account; within `available` when prepaid. */
export const canCover = (a: AccountTerms, chargeCents: number) => !belowPrepaidFloor({ ...a, balanceCents: a.balanceCents - chargeCents });

/** What the operator changes on an account: a posting's signed amount, or its terms. */
export interface AccountChange {
  amountCents?: number;
  billingMode?: BillingMode;
  creditLimitCents?: number;
}

/** A change refused by the prepaid floor: the field to fix, why (with the numbers), and the numbers themselves (minor units). */
export interface FloorRefusal {
  field: 'amount' | 'billingMode' | 'creditLimit';
  message: string;
  balanceCents: number;
  creditLimitCents: number;
  /** `available` after the change: below zero. */
  availableCents: number;
  amountCents: number | null;
  /** The least credit limit that would cover the balance after the change. */
  requiredCreditLimitCents: number;
}

/**
 * The operator's side of the prepaid floor (docs/decisions.md, "The prepaid floor binds the
 * operator too"): an adjustment, a switch to prepaid or a lower credit limit that would leave a
 * prepaid account below −creditLimit is refused, so `stockist ledger verify` never reports what
 * the operator was allowed to do. A change that leaves an account no further below its floor than
 * it was (a credit to an account an older version let sink, a new threshold) is allowed: refusing
 * it would only keep the breach.
 */
export function prepaidFloorProblem(before: AccountTerms, change: AccountChange): FloorRefusal | null {
  const amount = change.amountCents ?? 0;
  const after: AccountTerms = {
    balanceCents: before.balanceCents + amount,
    billingMode: change.billingMode ?? before.billingMode,
    creditLimitCents: change.creditLimitCents ?? before.creditLimitCents,
  };
  if (!belowPrepaidFloor(after)) return null;
  if (before.billingMode === 'prepaid' && availableCents(after) >= availableCents(before)) return null;
  const balance = formatSigned(after.balanceCents);
  const floor = formatSigned(-after.creditLimitCents);
  const limit = formatSigned(after.creditLimitCents);
  const required = -after.balanceCents;
  const numbers = {
    balanceCents: after.balanceCents,
    creditLimitCents: after.creditLimitCents,
    availableCents: availableCents(after),
    amountCents: change.amountCents ?? null,
    requiredCreditLimitCents: required,
  };
  if (change.amountCents !== undefined) {
    const room = Math.max(0, availableCents(before));
    return {
      field: 'amount',
      message: `an adjustment of ${formatSigned(amount)} would take this prepaid account from ${formatSigned(before.balanceCents)} to ${balance}, below its floor of ${floor} (credit limit ${limit}); at most ${formatSigned(room)} can be taken now: record a payment or raise the credit limit first, or switch the account to on_account`,
      ...numbers,
    };
  }
  if (before.billingMode === 'on_account') {
    return {
      field: change.creditLimitCents === undefined ? 'billingMode' : 'creditLimit',
      message: `the balance is ${balance}: prepaid needs a credit limit of at least ${formatSigned(required)} (it would be ${limit}); set it with the switch, or record the payment first`,
      ...numbers,
    };
  }
  return {
    field: 'creditLimit',
    message: `a credit limit of ${limit} leaves this prepaid account's balance of ${balance} below its floor of ${floor}; at least ${formatSigned(required)} is needed while the balance is ${balance}`,
    ...numbers,
  };
}

/** `stockist ledger verify`'s line for an account below its floor (`prepaid_floor`). */
export const floorBreachMessage = (accountKeyText: string, a: AccountTerms) =>
  `account ${accountKeyText}: prepaid balance ${formatSigned(a.balanceCents)} is below −creditLimit (${formatSigned(-a.creditLimitCents)})`;

/**
 * `balance.low` fires once per crossing: when `available` goes from at or above the threshold to
 * below it. Another charge while already below does not fire again; a credit back above re-arms it.
 */
export function crossesBelow(thresholdCents: number | null, availableBefore: number, availableAfter: number): boolean {
  return thresholdCents !== null && availableBefore >= thresholdCents && availableAfter < thresholdCents;
}

/**
 * Why a top-up or adjustment may not be posted (the bound of SPEC §15 bad input), or null: an
 * amount beyond 10^10 minor units, or a balance taken further from zero than that.
 */
export function operatorPostingProblem(type: 'top_up' | 'adjustment', amountCents: number, balanceCents: number): { field: string; message: string } | null {
  if (!Number.isSafeInteger(amountCents)) return { field: 'amount', message: 'must be a whole number of minor units' };
  if (type === 'top_up' && amountCents <= 0) return { field: 'amount', message: 'a top-up must be greater than 0' };
  if (type === 'adjustment' && amountCents === 0) return { field: 'amount', message: 'an adjustment may not be 0' };
  if (Math.abs(amountCents) > MAX_MONEY_CENTS) return { field: 'amount', message: `must be at most ${MAX_MONEY_CENTS / 100} in absolute value` };
  // Orders on account may take a debt past the bound; a posting that brings the balance toward zero is always welcome.
  const after = balanceCents + amountCents;
  if (Math.abs(after) > MAX_MONEY_CENTS && Math.abs(after) > Math.abs(balanceCents)) {
    return {
      field: 'amount',
      message: `the balance would be ${(balanceCents + amountCents) / 100}; at most ${MAX_MONEY_CENTS / 100} in absolute value is kept`,
    };
  }
  return null;
}

/** An invariant of SPEC §15 that `stockist ledger verify` found broken: one line of its report. */
export interface LedgerBreach {
  rule:
    | 'account_balance'
    | 'order_charge'
    | 'refund_credit'
    | 'cancellation_credit'
    | 'claim_credit'
    | 'prepaid_floor'
    | 'entry_chain'
    | 'entry_account'
    | 'order_refunded'
    | 'ledger_start';
  message: string;
}

/** What a repeated operator posting is compared on: every field the request decides. */
export interface PostingFields {
  type: EntryType;
  amountCents: number;
  currency: string;
  environment: StockistEnv;
  reference: string | null;
  description: string;
}

/**
 * The first field in which a replay (the same top-up reference or adjustment key) differs from the
 * posting it names, or null when it is the same request: a same-key request that differs in
 * anything is another request under the same name (409), not a retry.
 */
export function replayMismatch(
  stored: PostingFields,
  requested: PostingFields,
  /** Fields compared without letter case: a top-up's reference (and the description made of it) names one payment whatever its case. */
  ignoringCase: readonly ('reference' | 'description')[] = [],
): keyof PostingFields | null {
  const fold = (field: keyof PostingFields, value: PostingFields[keyof PostingFields]) =>
    typeof value === 'string' && (ignoringCase as readonly string[]).includes(field) ? value.toLowerCase() : value;
  for (const field of ['type', 'amountCents', 'currency', 'environment', 'reference', 'description'] as const) {
    if (fold(field, stored[field]) !== fold(field, requested[field])) return field;
  }
  return null;
}

/**
 * An amount as an operator types it ("12.50", "-3", "0.5"): at most two decimals, a sign only when
 * `signed`; the result in minor units, or null when the text is not such an amount.
 */
export function parseAmount(text: string, signed: boolean): number | null {
  const m = (signed ? /^([+-]?)(\d{1,16})(?:\.(\d{1,2}))?$/ : /^()(\d{1,16})(?:\.(\d{1,2}))?$/).exec(text.trim());
  if (!m) return null;
  const cents = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'));
  if (!Number.isSafeInteger(cents)) return null;
  return m[1] === '-' ? -cents : cents;
}

/** Minor units as text with two decimals and a sign when negative: -1250 → "-12.50". */
export function formatSigned(cents: number): string {
  const abs = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * An amount as the statement PDF prints it: thousands grouped with commas, two decimals, a minus
 * when negative (-123456789 → "-1,234,567.89"). The CSV keeps `formatSigned` (spreadsheets parse
 * plain numbers); the one place to change when amounts carry their currency's own digits.
 */
export function formatStatementAmount(cents: number): string {
  const plain = formatSigned(cents);
  const [whole, fraction] = plain.replace('-', '').split('.');
  return `${cents < 0 ? '-' : ''}${whole.replace(/\B(?=(\d{3})+$)/g, ',')}.${fraction}`;
}

/**
 * A transactions walk's keyset cursor: the last row's place in the account's sequence (`seq`, the
 * order in which postings changed the account) and the query it belongs to. Opaque to clients.
 */
export interface EntryCursor {
  afterSeq: number;
  type: EntryType | null;
  createStart: number | null;
  createEnd: number | null;
  pageSize: number;
  page: number;
}

// tc1_ cursors carried (created_at, id): the walk is by sequence now, so they are refused (400) and the client starts over.
const CURSOR_PREFIX = 'tc2_';

export const encodeEntryCursor = (c: EntryCursor) =>
  CURSOR_PREFIX + Buffer.from(JSON.stringify({ a: c.afterSeq, t: c.type, s: c.createStart, e: c.createEnd, z: c.pageSize, p: c.page })).toString('base64url');

/** The cursor, or null when the text is not one this API issued. */
export function decodeEntryCursor(text: string): EntryCursor | null {
  if (!text.startsWith(CURSOR_PREFIX) || text.length > 1024) return null;
  let b: { a?: unknown; t?: unknown; s?: unknown; e?: unknown; z?: unknown; p?: unknown };
  try {
    b = JSON.parse(Buffer.from(text.slice(CURSOR_PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const time = (v: unknown): v is number | null => v === null || Number.isSafeInteger(v);
  if (typeof b !== 'object' || b === null || !Number.isSafeInteger(b.a) || (b.a as number) < 1) return null;
  if (!(b.t === null || (ENTRY_TYPES as readonly unknown[]).includes(b.t)) || !time(b.s) || !time(b.e)) return null;
  if (!Number.isSafeInteger(b.z) || (b.z as number) < 1 || (b.z as number) > 250 || !Number.isSafeInteger(b.p) || (b.p as number) < 2) return null;
  return { afterSeq: b.a as number, type: b.t as EntryType | null, createStart: b.s, createEnd: b.e, pageSize: b.z as number, page: b.p as number };
}

/** A statement's month, `YYYY-MM`, as the UTC window [start, end) in epoch ms; null when not such a month. */
export function monthWindow(month: string): { start: number; end: number } | null {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (!m) return null;
  const year = Number(m[1]);
  const index = Number(m[2]) - 1;
  if (year < 2000 || year > 9999) return null;
  return { start: Date.UTC(year, index, 1), end: Date.UTC(year, index + 1, 1) };
}

/**
 * A statement's period as of `now` (SPEC §15, UTC): the month's first day, and the day its closing
 * balance is dated — the month's last day, or today in the month still running (the statement is
 * then "so far"). Null for a month not begun: there is nothing to state yet.
 */
export function statementPeriod(window: { start: number; end: number }, now: number): { first: string; closing: string } | null {
  if (window.start > now) return null;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { first: day(window.start), closing: day(Math.min(window.end - 1, now)) };
}

/** The month an instant falls in (UTC), `YYYY-MM`. */
export const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);

export interface StatementLine {
  id: number;
  createdAt: number;
  type: EntryType;
  amountCents: number;
  description: string;
  orderId: number | null;
  refundId: number | null;
  reference: string | null;
}

/**
 * A monthly statement (SPEC §15): the opening balance, every transaction of the month with the
 * balance running from it, and the closing balance — which is always opening + Σ amounts. The lines
 * come in the account's sequence (the order postings changed it), so the running balance is each
 * line's own `balanceAfter`.
 */
export function* statementRows(openingCents: number, lines: Iterable<StatementLine>): Generator<StatementLine & { balanceCents: number }> {
  let balance = openingCents;
  for (const line of lines) {
    balance += line.amountCents;
    yield { ...line, balanceCents: balance };
  }
}

/** A statement's summary: what the month's entries added up to, by kind, in minor units. */
export interface StatementSummary {
  /** Orders charged (negative or zero). */
  chargesCents: number;
  /** Refunds and cancellations credited. */
  creditsCents: number;
  /** Payments received. */
  topUpsCents: number;
  /** The operator's adjustments, both ways. */
  adjustmentsCents: number;
  /** How many entries the month holds. */
  entries: number;
}

/** The summary from the month's sums by entry type; closing = opening + the four amounts. */
export function statementSummary(byType: readonly { type: EntryType; sumCents: number; count: number }[]): StatementSummary {
  const sum = (...types: EntryType[]) => byType.filter((t) => types.includes(t.type)).reduce((a, t) => a + t.sumCents, 0);
  return {
    chargesCents: sum('order_charge'),
    creditsCents: sum('refund_credit', 'cancellation_credit'),
    topUpsCents: sum('top_up'),
    adjustmentsCents: sum('adjustment'),
    entries: byType.reduce((a, t) => a + t.count, 0),
  };
}
