import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { purgeExpiredSessions } from '../services/console-sessions.service.ts';
import type { Store } from '../store/db.ts';
import { PollLoop } from './poll-loop.ts';

/** Every five minutes: an expired session signs nobody in meanwhile, so the purge only has to keep the table small. */
const PURGE_INTERVAL_MS = 5 * 60_000;

/**
 * Deletes console sessions past their idle or absolute expiry (CONSOLE_SESSION_IDLE_MINUTES,
 * CONSOLE_SESSION_MAX_HOURS) that nobody came back for. Runs in the worker role; safe on several
 * workers at once (a session deleted twice is deleted once).
 */
export class SessionPurger {
  private readonly loop = new PollLoop(
    () => this.runOnce(),
    (error) => this.log.error({ err: error }, 'console session purge failed'),
  );
  private readonly limits: { idleMs: number; maxMs: number };

  constructor(
    private readonly store: Store,
    config: Pick<Config, 'consoleSessionIdleMinutes' | 'consoleSessionMaxHours'>,
    private readonly log: Pick<FastifyBaseLogger, 'error' | 'info'>,
  ) {
    this.limits = { idleMs: config.consoleSessionIdleMinutes * 60_000, maxMs: config.consoleSessionMaxHours * 3_600_000 };
  }

  async runOnce(now = Date.now(), maxBatches?: number): Promise<number> {
    const purged = await purgeExpiredSessions(this.store.db, this.limits, now, maxBatches);
    if (purged > 0) this.log.info({ purged }, 'purged expired console sessions');
    return purged;
  }

  start(intervalMs = PURGE_INTERVAL_MS): void {
    this.loop.start(intervalMs);
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }
}
