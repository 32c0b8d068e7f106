import type { FastifyBaseLogger } from 'fastify';
import { purgeExpiredKeys } from '../services/idempotency.service.ts';
import type { Store } from '../store/db.ts';
import { PollLoop } from './poll-loop.ts';

/** Every minute: keys expire 24 h after their request, so the table holds about a day of keyed requests. */
const PURGE_INTERVAL_MS = 60_000;

/**
 * Purges expired Idempotency-Key rows (which hold whole responses) so the table stays about one
 * day of traffic large instead of growing for ever. Runs in the worker role; safe on several
 * workers at once (each deletes what has expired; a row deleted twice is deleted once).
 */
export class KeyPurger {
  private readonly loop = new PollLoop(
    () => this.runOnce(),
    (error) => this.log.error({ err: error }, 'idempotency key purge failed'),
  );

  constructor(
    private readonly store: Store,
    private readonly log: Pick<FastifyBaseLogger, 'error' | 'info'>,
  ) {}

  async runOnce(now = Date.now()): Promise<number> {
    const purged = await purgeExpiredKeys(this.store.db, now);
    if (purged > 0) this.log.info({ purged }, 'purged expired idempotency keys');
    return purged;
  }

  start(intervalMs = PURGE_INTERVAL_MS): void {
    this.loop.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
