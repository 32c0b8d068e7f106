import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { purgeOrphanEvidence, sweepStrayEvidence } from '../services/claim-files.service.ts';
import { purgeExpiredSessions } from '../services/console-sessions.service.ts';
import { purgeExpiredKeys } from '../services/idempotency.service.ts';
import { purgeExpiredManagerSessions } from '../services/manager-sessions.service.ts';
import { purgeOldUsage } from '../services/usage.service.ts';
import { purgeExpiredKeptForms } from '../services/web-forms.service.ts';
import type { Store } from '../store/db.ts';
import { PollLoop } from './poll-loop.ts';

/** Something the worker role deletes on a schedule so that a table stays bounded. */
export interface PurgeTask {
  /** What is deleted, for the log: `expired idempotency keys`. */
  what: string;
  everyMs: number;
  /** Deletes what has expired by `now` in bounded statements (at most `maxBatches` of them when given); returns how many rows. */
  purge: (now: number, maxBatches?: number) => Promise<number>;
}

/**
 * Runs one purge task in the worker role. Safe on several workers at once: each deletes what has
 * expired, and a row deleted twice is deleted once.
 */
export class Purger {
  private readonly loop = new PollLoop(
    () => this.runOnce(),
    (error) => this.log.error({ err: error }, `purge of ${this.task.what} failed`),
  );

  constructor(
    private readonly task: PurgeTask,
    private readonly log: Pick<FastifyBaseLogger, 'error' | 'info'>,
  ) {}

  async runOnce(now = Date.now(), maxBatches?: number): Promise<number> {
    const purged = await this.task.purge(now, maxBatches);
    if (purged > 0) this.log.info({ purged }, `purged ${this.task.what}`);
    return purged;
  }

  start(intervalMs = this.task.everyMs): void {
    this.loop.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}

/**
 * Every table that would otherwise grow for ever:
 * - Idempotency-Key rows (they hold whole responses) expire 24 h after their request: every minute,
 *   so the table holds about a day of keyed requests.
 * - Console and business-manager sessions past their idle or absolute expiry that nobody came back
 *   for: every five minutes (an expired session signs nobody in meanwhile).
 * - Usage counters and recent errors older than the 30 days the Usage page shows: every ten minutes
 *   (a day's rows become purgeable once a day).
 * - Claim evidence files that no claim named within a day of their upload (SPEC §18): rows and bytes,
 *   every ten minutes; and bytes no row names at all, a day after their upload (a process killed
 *   between writing them and committing their row), hourly — a walk of the whole store.
 * - Forms kept after their session ended that nobody signed in again for within 15 minutes: every
 *   five minutes (each new one also removes those past their time).
 */
export function purgeTasks(store: Store, config: Pick<Config, 'consoleSessionIdleMinutes' | 'consoleSessionMaxHours' | 'dataDir' | 'backupS3'>): PurgeTask[] {
  const consoleLimits = { idleMs: config.consoleSessionIdleMinutes * 60_000, maxMs: config.consoleSessionMaxHours * 3_600_000 };
  return [
    { what: 'expired idempotency keys', everyMs: 60_000, purge: (now) => purgeExpiredKeys(store.db, now) },
    { what: 'expired console sessions', everyMs: 5 * 60_000, purge: (now, maxBatches) => purgeExpiredSessions(store.db, consoleLimits, now, maxBatches) },
    { what: 'expired business manager sessions', everyMs: 5 * 60_000, purge: (now, maxBatches) => purgeExpiredManagerSessions(store.db, now, maxBatches) },
    { what: 'old usage counters', everyMs: 10 * 60_000, purge: (now) => purgeOldUsage(store.db, now) },
    { what: 'forms kept after their session ended', everyMs: 5 * 60_000, purge: (now) => purgeExpiredKeptForms(store.db, now) },
    { what: 'claim evidence no claim referenced within a day', everyMs: 10 * 60_000, purge: (now) => purgeOrphanEvidence(store.db, config, now) },
    { what: 'claim evidence bytes no row names', everyMs: 3_600_000, purge: (now) => sweepStrayEvidence(store.db, config, now) },
  ];
}
