import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { DISABLE_AFTER_MS, nextAttemptAt, RETRY_WINDOW_MS } from '../domain/webhook-schedule.ts';
import { signedHeaders, webhookId } from '../domain/webhook-signature.ts';
import { parseWebhookUrl, UnsafeWebhookUrl, type HostResolver } from '../domain/webhook-url.ts';
import { resolveWebhookTarget, systemResolver } from '../services/webhook-target.service.ts';
import { StockFanOut, type StockFanOutOptions } from '../services/stock-webhooks.service.ts';
import type { Store } from '../store/db.ts';
import * as webhooks from '../store/webhooks.repository.ts';
import { PollLoop } from './poll-loop.ts';
import { httpSender, type WebhookSender } from './webhook-sender.ts';

const DELIVERY_TIMEOUT_MS = 5000;
/** Response bytes read per attempt; enough for an error message in the log. */
const MAX_RESPONSE_BYTES = 4096;
/** How much of a failed response's body the delivery log keeps. */
const ERROR_SNIPPET = 200;
/** A stock lane's deliveries sent back to back within one round at most (each waits for the previous). */
const STOCK_CHAIN = 50;
/** Event bodies kept between attempts (UTF-16 code units ≈ bytes for this JSON): ≈ 16 MB. */
const BODY_CACHE_CHARS = 8_000_000;

/** A map that forgets its least recently used entries beyond a total size. */
class BoundedCache<V> {
  private readonly entries = new Map<string, V>();
  private total = 0;

  constructor(
    private readonly limit: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Map order is insertion order: moving it to the end marks it recently used.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: V): void {
    const size = this.sizeOf(value);
    if (size > this.limit) return;
    // Two attempts of one round may miss and read the same body; the second replaces the first.
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.total -= this.sizeOf(previous);
    }
    this.total += size;
    this.entries.set(key, value);
    for (const [oldKey, old] of this.entries) {
      if (this.total <= this.limit) break;
      this.entries.delete(oldKey);
      this.total -= this.sizeOf(old);
    }
  }
}

export interface WebhookWorkerOptions {
  store: Store;
  config: Pick<Config, 'env'> & Partial<Pick<Config, 'stockWebhookIntervalMs'>>;
  /** stock.changed fan-out tuning (tests); the interval comes from the config. */
  stock?: Omit<StockFanOutOptions, 'intervalMs'>;
  log?: Pick<FastifyBaseLogger, 'error' | 'warn'>;
  /** Default: real HTTP(S) with the pinned address. */
  sender?: WebhookSender;
  /** Default: the system resolver. */
  resolve?: HostResolver;
  now?: () => number;
  /** Jitter source (tests make it deterministic). */
  random?: () => number;
  /** How long a claim holds before another worker may take the delivery (a crashed worker's lapse). */
  claimMs?: number;
  batchSize?: number;
  /** Attempts in flight at once within a round. */
  concurrency?: number;
  timeoutMs?: number;
}

export interface RoundResult {
  succeeded: number;
  failed: number;
}

/**
 * The webhook delivery worker (SPEC §13). Like the refund worker it keeps nothing in memory
 * between rounds: deliveries are rows, claimed with a lapsing claim, so a process killed at any
 * point loses nothing — an unclaimed delivery is picked up by the next round, a claimed one when its
 * claim lapses (the receiver may then see the same `webhook-id` twice, which is what it is for).
 */
export class WebhookWorker {
  readonly id = `webhooks-${randomUUID().slice(0, 8)}`;
  private readonly sender: WebhookSender;
  private readonly ownsSender: boolean;
  private readonly stock: StockFanOut;
  private readonly bodies = new BoundedCache<string>(BODY_CACHE_CHARS, (body) => body.length);
  private readonly loop = new PollLoop(
    () => this.runOnce(),
    (error) => this.options.log?.error({ err: error }, 'webhook worker round failed'),
  );

  constructor(private readonly options: WebhookWorkerOptions) {
    this.ownsSender = !options.sender;
    this.sender = options.sender ?? httpSender();
    this.stock = new StockFanOut(options.store, { ...options.stock, intervalMs: options.config.stockWebhookIntervalMs });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** stock.changed: turns the change feed into deliveries for the endpoints that are due; returns how many. */
  fanOutStock(): Promise<number> {
    return this.stock.run(this.now());
  }

  /**
   * One round: the stock fan-out, then claim due deliveries and attempt each once. A stock lane
   * that delivered goes on with its next delivery in the same round (they wait for each other).
   */
  async runOnce(): Promise<RoundResult> {
    const { store } = this.options;
    try {
      await this.fanOutStock();
    } catch (error) {
      // The deliveries already due still go out; the fan-out is tried again next round.
      this.options.log?.error({ err: error }, 'stock.changed fan-out failed');
    }
    const now = this.now();
    const claimUntil = now + (this.options.claimMs ?? 30_000);
    const ids = await webhooks.claimDueDeliveries(store.db, store.dialect, this.id, now, claimUntil, this.options.batchSize ?? 100);
    const result: RoundResult = { succeeded: 0, failed: 0 };
    const chained = new Map<number, number>();
    let next = 0;
    const lane = async () => {
      while (next < ids.length) {
        const id = ids[next++];
        try {
          const outcome = await this.attempt(id);
          if (!outcome) continue;
          result[outcome.result]++;
          const sent = chained.get(outcome.endpointId) ?? 0;
          if (outcome.result === 'succeeded' && outcome.orderId === webhooks.STOCK_LANE && sent < STOCK_CHAIN) {
            chained.set(outcome.endpointId, sent + 1);
            const lane = { endpointId: outcome.endpointId, orderId: webhooks.STOCK_LANE };
            ids.push(...(await webhooks.claimDueDeliveries(store.db, store.dialect, this.id, this.now(), claimUntil, 1, lane)));
          }
        } catch (error) {
          // Left claimed; the claim lapses and a later round tries again.
          this.options.log?.error({ err: error, deliveryId: id }, 'webhook delivery failed unexpectedly');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 16, ids.length) }, lane));
    return result;
  }

  private async attempt(id: number): Promise<{ result: keyof RoundResult; endpointId: number; orderId: number } | null> {
    const { store, config } = this.options;
    const job = await webhooks.deliveryJob(store.db, id);
    if (!job || job.claimedBy !== this.id) return null;
    if (job.endpointStatus !== 'active') {
      await webhooks.releaseClaim(store.db, id, this.id);
      return null;
    }
    const payload = await this.body(job);
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      // Checked again at every attempt: the name may resolve elsewhere than at registration.
      const url = parseWebhookUrl(job.url, config.env);
      const address = await resolveWebhookTarget(url, config.env, this.options.resolve ?? systemResolver);
      const sentAt = this.now();
      const secrets = [job.secret, ...(job.previousSecret && (job.previousSecretUntil ?? 0) > sentAt ? [job.previousSecret] : [])];
      const response = await this.sender.send({
        url,
        address,
        body: payload,
        headers: signedHeaders(secrets, webhookId(job.eventId), Math.floor(sentAt / 1000), payload),
        timeoutMs: this.options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
        maxResponseBytes: MAX_RESPONSE_BYTES,
      });
      statusCode = response.status;
      if (response.status < 200 || response.status > 299) error = `HTTP ${response.status}${response.body ? `: ${response.body.slice(0, ERROR_SNIPPET)}` : ''}`;
    } catch (e) {
      error = (e instanceof UnsafeWebhookUrl ? `refused: ${e.message}` : `network: ${e instanceof Error ? e.message : String(e)}`).slice(0, ERROR_SNIPPET);
    }
    await this.record(job, statusCode, error);
    return { result: error === null ? 'succeeded' : 'failed', endpointId: job.endpointId, orderId: job.orderId };
  }

  /**
   * The body of a delivery's event. A stock.changed batch goes to every subscribed endpoint (100
   * endpoints: 100 deliveries of the same ≈ 50 KB body), so bodies are kept by batch (or event) in
   * a small cache instead of being read from the database for each delivery; they never change.
   */
  private async body(job: webhooks.DeliveryJob): Promise<string> {
    const key = job.stockBatchId === null ? `event ${job.eventId}` : `batch ${job.stockBatchId}`;
    const cached = this.bodies.get(key);
    if (cached !== undefined) return cached;
    const body = (await webhooks.eventBody(this.options.store.db, job.eventId)) ?? '';
    this.bodies.set(key, body);
    return body;
  }

  /** The attempt's outcome, the endpoint's failure clock and, after 24 h of failures, its disabling: one transaction. */
  private async record(job: webhooks.DeliveryJob, statusCode: number | null, error: string | null): Promise<void> {
    const now = this.now();
    await this.options.store.db.transaction().execute(async (trx) => {
      if (error === null) {
        if (await webhooks.recordAttempt(trx, job.id, this.id, { status: 'succeeded', nextAttemptAt: null, statusCode, error: null, deliveredAt: now }, now)) {
          await webhooks.endpointSucceeded(trx, job.endpointId);
        }
        return;
      }
      const next = nextAttemptAt(job.attempts + 1, now, job.giveUpAt, this.options.random);
      if (
        !(await webhooks.recordAttempt(
          trx,
          job.id,
          this.id,
          { status: next === null ? 'failed' : 'pending', nextAttemptAt: next, statusCode, error, deliveredAt: null },
          now,
        ))
      )
        return;
      // The failure clock starts when the first event it failed to take started waiting (its retry
      // window's start), so the attempt that exhausts that event's 24 h also disables the endpoint.
      const failingSince = await webhooks.endpointFailed(trx, job.endpointId, job.giveUpAt - RETRY_WINDOW_MS);
      if (failingSince !== null && now - failingSince >= DISABLE_AFTER_MS) {
        await webhooks.setEndpointStatus(trx, job.endpointId, 'disabled', `every delivery failed for 24 h (last: ${error})`, now);
        this.options.log?.warn({ endpointId: job.endpointId }, 'webhook endpoint disabled after 24 h of failures');
      }
    });
  }

  start(intervalMs = 500): void {
    this.loop.start(intervalMs);
  }

  /** Stops taking new work, waits for the round in progress (graceful shutdown) and closes idle connections. */
  async stop(): Promise<void> {
    await this.loop.stop();
    if (this.ownsSender) this.sender.close();
  }
}
