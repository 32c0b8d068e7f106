/**
 * Per-merchant usage counters (issue 20, the business manager's Usage page): requests per merchant,
 * environment, UTC day, status class and error code, and the merchant's most recent 4xx answers.
 * Counted in memory by each process and added to the database every few seconds (see
 * src/services/usage.service.ts and docs/decisions.md "Usage counters").
 */

import type { StockistEnv } from './vocabulary.ts';

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
  env: StockistEnv;
  day: number;
  statusClass: StatusClass;
  code: number;
  count: number;
}

/**
 * The counts and recent errors of one process since its last flush. `count` is the hot path (once
 * per merchant request): one string key and a Map update, nothing else allocated for repeat keys.
 * Bounded: one entry per (merchant, environment, day, class, code) seen, and at most
 * RECENT_ERRORS_PER_MERCHANT recent errors per merchant and environment.
 */
export class UsageTally {
  private counts = new Map<string, number>();
  private recent = new Map<string, RecentError[]>();

  get empty(): boolean {
    return this.counts.size === 0 && this.recent.size === 0;
  }

  count(merchantId: number, env: StockistEnv, day: number, status: number, code: number, n = 1): void {
    // `|`-joined: none of the parts can contain it (numbers, and the environment's fixed names).
    const key = `${merchantId}|${env}|${day}|${statusClassOf(status)}|${code}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + n);
  }

  addRecent(merchantId: number, env: StockistEnv, error: RecentError): void {
    const key = `${merchantId}|${env}`;
    let list = this.recent.get(key);
    if (!list) this.recent.set(key, (list = []));
    list.push(error);
    if (list.length > RECENT_ERRORS_PER_MERCHANT) list.shift();
  }

  /** Takes everything counted so far, leaving the tally empty. */
  drain(): { counts: UsageCount[]; recent: { merchantId: number; env: StockistEnv; errors: RecentError[] }[] } {
    const counts: UsageCount[] = [];
    for (const [key, count] of this.counts) {
      const [merchantId, env, day, statusClass, code] = key.split('|');
      counts.push({
        merchantId: Number(merchantId),
        env: env as StockistEnv,
        day: Number(day),
        statusClass: Number(statusClass) as StatusClass,
        code: Number(code),
        count,
      });
    }
    const recent = [...this.recent].map(([key, errors]) => {
      const [merchantId, env] = key.split('|');
      return { merchantId: Number(merchantId), env: env as StockistEnv, errors };
    });
    this.counts = new Map();
    this.recent = new Map();
    return { counts, recent };
  }

  /** Puts back what a failed flush took, so the next flush adds it (older errors before newer ones). */
  restore(taken: ReturnType<UsageTally['drain']>): void {
    for (const c of taken.counts) {
      const key = `${c.merchantId}|${c.env}|${c.day}|${c.statusClass}|${c.code}`;
      this.counts.set(key, (this.counts.get(key) ?? 0) + c.count);
    }
    for (const r of taken.recent) {
      const key = `${r.merchantId}|${r.env}`;
      const merged = [...r.errors, ...(this.recent.get(key) ?? [])].slice(-RECENT_ERRORS_PER_MERCHANT);
      this.recent.set(key, merged);
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
