/**
 * The supplier's reconciliation (issue 41, 9; docs/money.md, "Reconciling with the bank"): the
 * period an export or a bank statement covers, the double-entry reading of a journal entry
 * (which account is debited, which credited), the supplier accounts' balances, and the matching of
 * recorded top-ups against the lines of a bank statement. Pure: the services read the rows.
 */
import { causeOf, counterAccountOf, ENTRY_TYPES, type EntryType, type SupplierAccountKind } from './ledger.ts';

const DAY_MS = 24 * 3600 * 1000;

/** A period of the books in UTC: [start, end) in epoch ms, and how it reads (`2026-11`, `2026-11-03 to 2026-11-09`). */
export interface Period {
  start: number;
  end: number;
  label: string;
  /** For file names: `2026-11` or `2026-11-03_2026-11-09`. */
  slug: string;
}

/** The longest period one export or match may cover: a year and a day (a leap year's whole). */
const MAX_PERIOD_DAYS = 367;

/** A UTC day `YYYY-MM-DD` as epoch ms of its start, or null when it is no such (real) day. */
export function dayStart(text: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim());
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (y < 2000 || y > 9999) return null;
  const ms = Date.UTC(y, mo - 1, d);
  const probe = new Date(ms);
  return probe.getUTCFullYear() === y && probe.getUTCMonth() === mo - 1 && probe.getUTCDate() === d ? ms : null;
}

export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The period a form or a command names: a month (`2026-11`), or `from` and `to` days, both
 * included. Either the month or both days; a period that has not begun at `now` has nothing in the
 * books yet and is refused, as a statement of a future month is. Throws `{field, message}` as a
 * PeriodProblem.
 */
export function periodOf(input: { month?: string; from?: string; to?: string }, now: number): Period {
  const month = input.month?.trim() ?? '';
  const from = input.from?.trim() ?? '';
  const to = input.to?.trim() ?? '';
  let start: number;
  let end: number;
  let label: string;
  let slug: string;
  if (month !== '') {
    if (from !== '' || to !== '') throw new PeriodProblem('month', 'give a month or from and to days, not both');
    const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
    if (!m || Number(m[1]) < 2000) throw new PeriodProblem('month', 'must be a month as YYYY-MM, e.g. 2026-11');
    start = Date.UTC(Number(m[1]), Number(m[2]) - 1, 1);
    end = Date.UTC(Number(m[1]), Number(m[2]), 1);
    label = month;
    slug = month;
  } else {
    if (from === '' && to === '') throw new PeriodProblem('month', 'give a month (YYYY-MM), or from and to days (YYYY-MM-DD)');
    const f = dayStart(from);
    if (f === null) throw new PeriodProblem('from', 'must be a day as YYYY-MM-DD, e.g. 2026-11-01');
    const t = dayStart(to);
    if (t === null) throw new PeriodProblem('to', 'must be a day as YYYY-MM-DD, e.g. 2026-11-30');
    if (t < f) throw new PeriodProblem('to', `must not be before from (${from})`);
    if ((t - f) / DAY_MS + 1 > MAX_PERIOD_DAYS) throw new PeriodProblem('to', `a period is at most ${MAX_PERIOD_DAYS} days`);
    start = f;
    end = t + DAY_MS;
    label = f === t ? dayOf(f) : `${dayOf(f)} to ${dayOf(t)}`;
    slug = f === t ? dayOf(f) : `${dayOf(f)}_${dayOf(t)}`;
  }
  if (start > now) throw new PeriodProblem(month !== '' ? 'month' : 'from', `${label} has not begun: there is nothing in the books for it yet`);
  return { start, end, label, slug };
}

/** Why a period was refused: the field and the reason (the services turn it into a 400). */
export class PeriodProblem extends Error {
  constructor(
    readonly field: 'month' | 'from' | 'to',
    readonly reason: string,
  ) {
    super(`${field} ${reason}`);
  }
}

/**
 * An entry as the supplier's books read it. The entry moves `merchantCents` into the merchant
 * account and out of its counter account; in the books the account whose balance falls is debited
 * and the one whose balance rises is credited. So an order's charge (the merchant's side −54.20)
 * debits the merchant's account — the receivable grows — and credits sales; a top-up (+100.00)
 * debits cash and credits the merchant's account; a refund credits the merchant and debits refunds.
 */
export function debitAndCredit(merchantCents: number, merchantAccount: string, counterAccount: string) {
  return merchantCents < 0
    ? { debit: merchantAccount, credit: counterAccount, amountCents: -merchantCents }
    : { debit: counterAccount, credit: merchantAccount, amountCents: merchantCents };
}

/**
 * The supplier accounts' balances of one environment, from the merchants' kept balances and the
 * sums of every entry type but order charges (what the type index of journal_entries holds): a
 * supplier account's balance is the negation of the merchant sides of the entries against it, and
 * the charges' sum is what is left of the merchants' balances once the other types are taken out
 * (a merchant account's balance equals the sum of its entries: `stockist ledger verify` checks it).
 * So the page reads as many rows as there are merchant accounts and non-charge entries, never the
 * charges, however many orders there are. A supplier account of a kind no entry type moves (yet) is
 * at 0; a new entry type against a new kind (claims) is counted by `counterAccountOf` alone.
 */
export function supplierBalances(merchantBalancesCents: number, sumsByType: Partial<Record<EntryType, number>>): Map<SupplierAccountKind, number> {
  const balances = new Map<SupplierAccountKind, number>();
  const take = (kind: SupplierAccountKind, merchantSide: number) => balances.set(kind, (balances.get(kind) ?? 0) - merchantSide);
  let others = 0;
  for (const type of ENTRY_TYPES) {
    if (type === 'order_charge') continue;
    const sum = sumsByType[type] ?? 0;
    others += sum;
    take(counterAccountOf(type), sum);
  }
  take(counterAccountOf('order_charge'), merchantBalancesCents - others);
  return balances;
}

/** How far a bank statement line's date may be from the day the top-up was recorded (UTC days). */
export const MATCH_DAYS = 3;

/** A payment received as the bank statement lists it. */
export interface StatementLine {
  /** The line of the file it is on (the header is line 1). */
  line: number;
  reference: string;
  amountCents: number;
  /** The day's start, UTC. */
  day: number;
}

/** A top-up recorded in the ledger. */
export interface RecordedTopUp {
  entryId: number;
  merchantId: number;
  merchantName: string;
  reference: string;
  amountCents: number;
  createdAt: number;
}

export interface TopUpMatch {
  line: StatementLine;
  topUp: RecordedTopUp;
}

/** A line or top-up left over, and the nearest near miss (the same reference, another amount or a date too far), if any. */
export interface Unmatched<T, Other> {
  item: T;
  nearMiss: Other | null;
}

export interface MatchReport {
  matched: TopUpMatch[];
  /** Recorded in the period, not on the statement. */
  missing: Unmatched<RecordedTopUp, StatementLine>[];
  /** On the statement, not recorded. */
  unexpected: Unmatched<StatementLine, RecordedTopUp>[];
}

/** The reference as top-ups compare it (letter case does not count: causeOf.topUp folds it the same way). */
const foldedReference = (reference: string) => causeOf.topUp(0, reference.trim());

const daysApart = (line: StatementLine, topUp: RecordedTopUp) => Math.abs(Math.floor(topUp.createdAt / DAY_MS) * DAY_MS - line.day) / DAY_MS;

/**
 * Matches a bank statement's payments with the top-ups recorded (docs/money.md, "Matching top-ups
 * against the bank statement"): a line and a top-up match when their references are equal
 * ignoring letter case (as top-ups themselves compare them), their amounts are exactly equal and
 * the top-up was recorded within MATCH_DAYS days of the line's date. Each is matched at most once;
 * lines are taken in date order (then file order) and each takes the nearest top-up by date (then
 * the first recorded). Top-ups that match nothing are `missing` when recorded within `period` —
 * candidates from just outside it only serve lines near its edges; lines that match nothing are
 * `unexpected`. Either side names its nearest near miss: the same reference with another amount
 * or further apart in time.
 */
export function matchTopUps(lines: readonly StatementLine[], topUps: readonly RecordedTopUp[], period: { start: number; end: number }): MatchReport {
  const byReference = new Map<string, RecordedTopUp[]>();
  for (const t of [...topUps].sort((a, b) => a.createdAt - b.createdAt || a.entryId - b.entryId)) {
    const key = foldedReference(t.reference);
    byReference.set(key, [...(byReference.get(key) ?? []), t]);
  }
  const taken = new Set<number>();
  const matched: TopUpMatch[] = [];
  const leftLines: StatementLine[] = [];
  for (const line of [...lines].sort((a, b) => a.day - b.day || a.line - b.line)) {
    let best: RecordedTopUp | null = null;
    for (const t of byReference.get(foldedReference(line.reference)) ?? []) {
      if (taken.has(t.entryId) || t.amountCents !== line.amountCents || daysApart(line, t) > MATCH_DAYS) continue;
      if (best === null || daysApart(line, t) < daysApart(line, best)) best = t;
    }
    if (best === null) leftLines.push(line);
    else {
      taken.add(best.entryId);
      matched.push({ line, topUp: best });
    }
  }
  const leftTopUps = topUps.filter((t) => !taken.has(t.entryId));
  const nearest = <T>(items: T[], distance: (item: T) => number) => items.reduce<T | null>((a, b) => (a === null || distance(b) < distance(a) ? b : a), null);
  const missing = leftTopUps
    .filter((t) => t.createdAt >= period.start && t.createdAt < period.end)
    .sort((a, b) => a.createdAt - b.createdAt || a.entryId - b.entryId)
    .map((item) => ({
      item,
      nearMiss: nearest(
        leftLines.filter((l) => foldedReference(l.reference) === foldedReference(item.reference)),
        (l) => daysApart(l, item),
      ),
    }));
  const unexpected = leftLines
    .sort((a, b) => a.line - b.line)
    .map((item) => ({
      item,
      nearMiss: nearest(
        leftTopUps.filter((t) => foldedReference(t.reference) === foldedReference(item.reference)),
        (t) => daysApart(item, t),
      ),
    }));
  return { matched: matched.sort((a, b) => a.line.line - b.line.line), missing, unexpected };
}

/** What a near miss differs in, for the report: "amount 250.00, recorded 2026-11-03" style facts are the presenter's; this says which. */
export function nearMissDiffers(line: StatementLine, topUp: RecordedTopUp): ('amount' | 'date')[] {
  const differs: ('amount' | 'date')[] = [];
  if (line.amountCents !== topUp.amountCents) differs.push('amount');
  if (daysApart(line, topUp) > MATCH_DAYS) differs.push('date');
  return differs;
}
