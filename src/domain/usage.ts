/**
 * Per-merchant usage counters (issue 20, the business manager's Usage page): requests per merchant,
 * environment, UTC day, status class and error code, and the merchant's most recent 4xx answers.
 * Counted in memory by each process and added to the database every few seconds (see
 * src/services/usage.service.ts and docs/decisions.md "Usage counters").
 */

const DAY_MS = 86_400_000;

/** Days kept and shown: the page's chart covers the last 30 UTC days, today included. */
export const USAGE_DAYS = 30;

/** Recent 4xx answers kept per merchant and environment (in memory between flushes and in the table). */
export const RECENT_ERRORS_PER_MERCHANT = 100;

/** The status classes counted: 2xx … 5xx (a final response is never 1xx). */
export const STATUS_CLASSES = [2, 3, 4, 5] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** Days since 1970-01-01 in UTC: the counters' day, the same in every time zone. */
export const utcDay = (ms: number): number => Math.floor(ms / DAY_MS);

/** A UTC day number → `2026-11-25`. */
export const dayLabel = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

const statusClassOf = (status: number): StatusClass => Math.min(5, Math.max(2, Math.floor(status / 100))) as StatusClass;

/**
 * The error code counted for a response: 0 for success, the envelope's code when it is one of ours
 * (five digits, its first three the status), else `status × 100` as the error handler answers
 * unknown client errors. Only such codes are stored, which bounds the distinct codes per day.
 */
export function countedErrorCode(status: number, code: number | null | undefined): number {
  if (status < 400) return 0;
  if (typeof code === 'number' && Number.isInteger(code) && Math.floor(code / 100) === status) return code;
  return status * 100;
}

/** One 4xx answer as the Usage page lists it: no URL (a query string may hold anything), no body. */
export interface RecentError {
  requestId: string;
  at: number;
  method: string;
  /** The route's pattern (`/openapi/v2/order/orders/:id`), not the URL the client sent. */
  route: string;
  status: number;
  code: number;
}

export interface UsageCount {
  merchantId: number;
  day: number;
  statusClass: StatusClass;
  code: number;
  count: number;
}

/**
 * (day, class, code) packed into one number, a cheap Map key: codes are below 65,536 (five digits,
 * at most 59,999) and classes below 8; day × 2^19 stays far below 2^53.
 */
const packKey = (day: number, statusClass: StatusClass, code: number) => (day * 8 + statusClass) * 65_536 + code;

function unpackKey(key: number): { day: number; statusClass: StatusClass; code: number } {
  const code = key % 65_536;
  const rest = (key - code) / 65_536;
  const statusClass = (rest % 8) as StatusClass;
  return { day: (rest - statusClass) / 8, statusClass, code };
}

/**
 * One process's counts and recent errors in one environment since its last flush. `count` is the
 * hot path (once per merchant request): two Map lookups by number, nothing allocated for a key
 * seen before. Bounded: one entry per (merchant, day, class, code) seen, and at most
 * RECENT_ERRORS_PER_MERCHANT recent errors per merchant.
 */
export class UsageTally {
  private counts = new Map<number, Map<number, number>>();
  private recent = new Map<number, RecentError[]>();

  get empty(): boolean {
    return this.counts.size === 0 && this.recent.size === 0;
  }

  count(merchantId: number, day: number, status: number, code: number, n = 1): void {
    let mine = this.counts.get(merchantId);
    if (!mine) this.counts.set(merchantId, (mine = new Map()));
    const key = packKey(day, statusClassOf(status), code);
    mine.set(key, (mine.get(key) ?? 0) + n);
  }

  addRecent(merchantId: number, error: RecentError): void {
    let list = this.recent.get(merchantId);
    if (!list) this.recent.set(merchantId, (list = []));
    list.push(error);
    if (list.length > RECENT_ERRORS_PER_MERCHANT) list.shift();
  }

  /** Takes everything counted so far, leaving the tally empty. */
  drain(): { counts: UsageCount[]; recent: { merchantId: number; errors: RecentError[] }[] } {
    const counts: UsageCount[] = [];
    for (const [merchantId, mine] of this.counts) {
      for (const [key, count] of mine) counts.push({ merchantId, ...unpackKey(key), count });
    }
    const recent = [...this.recent].map(([merchantId, errors]) => ({ merchantId, errors }));
    this.counts = new Map();
    this.recent = new Map();
    return { counts, recent };
  }

  /** Puts back what a failed flush took, so the next flush adds it (older errors before newer ones). */
  restore(taken: ReturnType<UsageTally['drain']>): void {
    for (const c of taken.counts) this.count(c.merchantId, c.day, c.statusClass * 100, c.code, c.count);
    for (const r of taken.recent) {
      this.recent.set(r.merchantId, [...r.errors, ...(this.recent.get(r.merchantId) ?? [])].slice(-RECENT_ERRORS_PER_MERCHANT));
    }
  }
}

export interface DailyUsage {
  day: string;
  /** Requests by status class: `{ 2: n, 3: n, 4: n, 5: n }`. */
  byClass: Record<StatusClass, number>;
  total: number;
}

/**
 * The last USAGE_DAYS UTC days up to `today`, oldest first, zero-filled, from stored rows of
 * (day, class, count) — several rows per day and class (one per code) are summed.
 */
export function dailySeries(rows: { day: number; statusClass: number; count: number }[], today: number): DailyUsage[] {
  const first = today - USAGE_DAYS + 1;
  const days: DailyUsage[] = Array.from({ length: USAGE_DAYS }, (_, i) => ({ day: dayLabel(first + i), byClass: { 2: 0, 3: 0, 4: 0, 5: 0 }, total: 0 }));
  for (const r of rows) {
    const i = r.day - first;
    if (i < 0 || i >= USAGE_DAYS) continue;
    const statusClass = statusClassOf(r.statusClass * 100);
    days[i].byClass[statusClass] += r.count;
    days[i].total += r.count;
  }
  return days;
}
