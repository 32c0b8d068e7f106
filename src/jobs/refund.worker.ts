import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { decideRefund, type DecideHooks } from '../services/refunds.service.ts';
import type { Store } from '../store/db.ts';
import { claimDueRefunds } from '../store/refunds.repository.ts';
import { PollLoop } from './poll-loop.ts';

export interface RefundWorkerOptions {
  store: Store;
  config: Pick<Config, 'refundReview' | 'refundAutoDelayMs'>;
  log?: Pick<FastifyBaseLogger, 'error' | 'info'>;
  /** How long a claim holds before another worker may take the refund (a crashed worker's lapse). */
  claimMs?: number;
  batchSize?: number;
  now?: () => number;
  hooks?: DecideHooks;
}

/**
 * The durable refund worker (SPEC §5.3). It claims due refunds in batches and decides each in one
 * transaction with all its effects; nothing is kept in memory between rounds, so a worker killed at
 * any point leaves refunds either undecided (claimed until the claim lapses, then picked up again)
 * or decided — never half. The decision itself is guarded by `status = 'pending_review'`, so even
 * two workers holding the same refund decide it once.
 */
export class RefundWorker {
  readonly id = `worker-${randomUUID().slice(0, 8)}`;
  private readonly loop = new PollLoop(
    () => this.runOnce(),
    (error) => this.options.log?.error({ err: error }, 'refund worker round failed'),
  );

  constructor(private readonly options: RefundWorkerOptions) {}

  private get now() {
    return this.options.now ?? Date.now;
  }

  /** One round: claim due refunds and decide them; returns how many were decided. */
  async runOnce(): Promise<number> {
    const { store, config } = this.options;
    if (config.refundReview !== 'auto') return 0;
    const now = this.now();
    const ids = await claimDueRefunds(store.db, store.dialect, this.id, now - config.refundAutoDelayMs, now, now + (this.options.claimMs ?? 30_000), this.options.batchSize ?? 50);
    let decided = 0;
    for (const id of ids) {
      try {
        if (await decideRefund(store.db, id, { approve: true }, 'auto', this.options.hooks, this.now())) decided++;
      } catch (error) {
        // Left pending and claimed; the claim lapses and a later round retries it.
        this.options.log?.error({ err: error, refundId: id }, 'refund decision failed');
      }
    }
    return decided;
  }

  start(intervalMs = Math.min(1000, Math.max(50, Math.floor(this.options.config.refundAutoDelayMs / 4)))): void {
    this.loop.start(intervalMs);
  }

  /** Stops taking new work and waits for the round in progress (graceful shutdown). */
  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
