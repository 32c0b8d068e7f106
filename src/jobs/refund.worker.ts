import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { DEFAULT_REFUND_MAX_ATTEMPTS, type Config } from '../config.ts';
import { decideRefund, type DecideHooks } from '../services/refunds.service.ts';
import type { Store } from '../store/db.ts';
import { isStorageUnavailable } from '../store/faults.ts';
import { claimDueRefunds, forgetAttempt, parkExhaustedRefunds, recordRefundFailure } from '../store/refunds.repository.ts';
import { PollLoop } from './poll-loop.ts';

export interface RefundWorkerOptions {
  store: Store;
  config: Pick<Config, 'refundReview' | 'refundAutoDelayMs'> & Partial<Pick<Config, 'refundMaxAttempts'>>;
  log?: Pick<FastifyBaseLogger, 'error' | 'info' | 'warn'>;
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
 *
 * Every claim is an attempt. A failed attempt keeps its error on the refund and is retried when
 * the claim lapses; after REFUND_MAX_ATTEMPTS the refund is parked for manual review (still
 * `pending_review` for the merchant, `manualReview` for the operator) instead of looping forever.
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
    const maxAttempts = config.refundMaxAttempts ?? DEFAULT_REFUND_MAX_ATTEMPTS;
    // One transaction for the round's two writes: parking what is spent, then claiming a batch.
    const { parked, ids } = await store.db.transaction().execute(async (trx) => ({
      parked: await parkExhaustedRefunds(trx, maxAttempts, now),
      ids: await claimDueRefunds(
        trx,
        store.dialect,
        this.id,
        now - config.refundAutoDelayMs,
        now,
        now + (this.options.claimMs ?? 30_000),
        this.options.batchSize ?? 50,
      ),
    }));
    for (const id of parked) {
      this.options.log?.warn({ refundId: id, attempts: maxAttempts }, 'refund parked for manual review: its worker stopped while deciding it every time');
    }
    let decided = 0;
    for (const id of ids) {
      try {
        if (await decideRefund(store.db, id, { approve: true }, 'auto', this.options.hooks, this.now())) decided++;
      } catch (error) {
        // Left pending and claimed; the claim lapses and a later round retries it, until the attempts are spent.
        this.options.log?.error({ err: error, refundId: id }, 'refund decision failed');
        if (isStorageUnavailable(error)) {
          // A full disk or a lost database is not the refund's fault: it must not use up its attempts.
          await store.db
            .transaction()
            .execute((trx) => forgetAttempt(trx, id, this.id))
            .catch(() => undefined);
          continue;
        }
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        const parkedNow = await store.db.transaction().execute((trx) => recordRefundFailure(trx, id, this.id, message, maxAttempts, this.now()));
        if (parkedNow) {
          this.options.log?.warn({ refundId: id, attempts: maxAttempts }, 'refund parked for manual review after repeated failures');
        }
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
