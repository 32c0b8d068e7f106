import type { FastifyBaseLogger } from 'fastify';
import { purgeOldUsage } from '../services/usage.service.ts';
import type { Store } from '../store/db.ts';
import { PollLoop } from './poll-loop.ts';

/** Every ten minutes: a day's rows become purgeable once a day, so this only has to keep up. */
const PURGE_INTERVAL_MS = 600_000;

/**
 * Purges usage counters and recent errors older than the 30 days the Usage page shows, so the
 * tables stay bounded (docs/decisions.md "Usage counters"). Runs in the worker role, in bounded
 * rounds; safe on several workers at once (a row deleted twice is deleted once).
 */
export class UsagePurger {
  private readonly loop = new PollLoop(
    () => this.runOnce(),
    (error) => this.log.error({ err: error }, 'usage purge failed'),
  );

  constructor(
    private readonly store: Store,
    private readonly log: Pick<FastifyBaseLogger, 'error' | 'info'>,
  ) {}

  async runOnce(now = Date.now()): Promise<number> {
    const purged = await purgeOldUsage(this.store.db, now);
    if (purged > 0) this.log.info({ purged }, 'purged old usage counters');
    return purged;
  }

  start(intervalMs = PURGE_INTERVAL_MS): void {
    this.loop.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
