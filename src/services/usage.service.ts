import { countedErrorCode, dailySeries, dayLabel, USAGE_DAYS, UsageTally, utcDay, type RecentError } from '../domain/usage.ts';
import type { Clock } from '../domain/time.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import type { Db, Store } from '../store/db.ts';
import { merchantOfScope } from '../store/merchants.repository.ts';
import type { MerchantScope } from '../store/tenancy.ts';
import { addRecentErrors, addUsageCounts, countsByErrorCode, dailyCountsByClass, purgeUsageBefore, recentErrors } from '../store/usage.repository.ts';

const DAY_MS = 86_400_000;

/**
 * Counts this process's merchant requests in memory and adds them to the database every
 * `intervalMs` (and on `stop()`, at shutdown) in one transaction — never a write per request. A
 * failed flush keeps its counts for the next one, so an outage delays counts but loses none (a
 * process killed with -9 loses at most one interval's). See docs/decisions.md "Usage counters".
 */
export class UsageRecorder {
  private readonly tally = new UsageTally();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly env: StockistEnv,
    private readonly log: { warn(details: object, message: string): void },
    private readonly now: Clock = Date.now,
  ) {}

  /**
   * Counts one finished request of the merchant (the hot path: no allocation for a key seen
   * before); returns the error code it was counted under (0 for success).
   */
  count(merchantId: number, status: number, errorCode: number | null): number {
    const code = countedErrorCode(status, errorCode);
    this.tally.count(merchantId, utcDay(this.now()), status, code);
    return code;
  }

  /** Remembers a 4xx answer for the merchant's recent-errors list (no URL, no body). */
  addRecent(merchantId: number, error: Omit<RecentError, 'at'>): void {
    this.tally.addRecent(merchantId, { ...error, at: this.now() });
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    // The flush timer alone must not keep a process alive; shutdown flushes through stop().
    this.timer.unref();
  }

  /** Writes what was counted since the last flush; flushes never overlap. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    if (this.tally.empty) return;
    const taken = this.tally.drain();
    try {
      await this.store.db.transaction().execute(async (trx) => {
        await addUsageCounts(trx, this.env, taken.counts);
        await addRecentErrors(trx, this.env, taken.recent);
      });
    } catch (error) {
      // Rolled back: nothing of it was added, so putting it back cannot count anything twice.
      this.tally.restore(taken);
      this.log.warn({ err: error }, 'usage counters: flush failed, kept for the next one');
    }
  }

  /** Stops the timer and flushes what is left (graceful shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}

export interface MerchantUsage {
  /** The last USAGE_DAYS UTC days, oldest first, zero-filled. */
  days: ReturnType<typeof dailySeries>;
  /** Error responses of those days by code, most frequent first; `lastDay` is `2026-11-25`. */
  byCode: { code: number; count: number; lastDay: string }[];
  /** The newest 4xx answers (at most RECENT_ERRORS_PER_MERCHANT) of those days, newest first. */
  recent: RecentError[];
}

/** One merchant's usage in one environment as of `now`: what the Usage page shows. */
export async function merchantUsage(scope: MerchantScope, env: StockistEnv, now: number): Promise<MerchantUsage> {
  const today = utcDay(now);
  const firstDay = today - USAGE_DAYS + 1;
  const [daily, codes, recent] = await Promise.all([
    dailyCountsByClass(scope, env, firstDay),
    countsByErrorCode(scope, env, firstDay),
    recentErrors(scope, env, firstDay * DAY_MS),
  ]);
  return {
    days: dailySeries(daily, today),
    byCode: codes.map((c) => ({ code: c.code, count: c.count, lastDay: dayLabel(c.lastDay) })),
    recent,
  };
}

/**
 * Deletes usage older than USAGE_DAYS days before `now` (UTC days), at most `limit` rows of each
 * table per call; returns how many rows went.
 */
export function purgeOldUsage(db: Db, now: number, limit = 5000): Promise<number> {
  const firstKeptDay = utcDay(now) - USAGE_DAYS + 1;
  return db.transaction().execute((trx) => purgeUsageBefore(trx, firstKeptDay, firstKeptDay * DAY_MS, limit));
}

/**
 * What the merchant's rate-limit buckets are keyed by (src/http/rate-limit.ts): its id and the
 * stable client id of `merchants.client_id`, the one every token's principal carries.
 */
export async function rateLimitSubject(scope: MerchantScope): Promise<{ merchantId: number; clientId: string } | null> {
  const merchant = await merchantOfScope(scope);
  return merchant ? { merchantId: scope.merchantId, clientId: merchant.client_id } : null;
}
