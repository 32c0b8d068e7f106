import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { DISABLE_AFTER_MS, nextAttemptAt, RETRY_WINDOW_MS } from '../domain/webhook-schedule.ts';
import { signedHeaders, webhookId } from '../domain/webhook-signature.ts';
import {
  addressKind,
  LOOPBACK_FAILURE,
  loopbackAllowed,
  parseWebhookUrl,
  recordedNetworkError,
  recordedResponse,
  UnsafeWebhookUrl,
  type AddressKind,
  type HostResolver,
} from '../domain/webhook-url.ts';
import { resolveWebhookTarget, systemResolver } from '../services/webhook-target.service.ts';
import { StockFanOut, type StockFanOutOptions } from '../services/stock-webhooks.service.ts';
import type { Store } from '../store/db.ts';
import * as webhooks from '../store/webhooks.repository.ts';
import { PollLoop } from './poll-loop.ts';
import { httpSender, type WebhookSender } from './webhook-sender.ts';

const DELIVERY_TIMEOUT_MS = 5000;
/** Response bytes read per attempt; enough for an error message in the log. */
const MAX_RESPONSE_BYTES = 4096;
/** How much of a failed response's body the delivery log keeps (from public addresses only). */
const ERROR_SNIPPET = 200;
/** A stock lane's deliveries sent back to back within one round at most (each waits for the previous). */
const STOCK_CHAIN = 50;
/** Event bodies kept between attempts (each as its text and its UTF-8 bytes): ≈ 16 MB. */
const BODY_CACHE_BYTES = 16_000_000;

/** A body as the senders take it: the text, and its bytes encoded once for every endpoint it goes to. */
interface Body {
  text: string;
  bytes: Buffer;
}
const toBody = (text: string): Body => ({ text, bytes: Buffer.from(text, 'utf8') });

/** A delivery's body in the cache: a stock batch's is shared by every endpoint and merchant it went to. */
const bodyKey = (job: webhooks.DeliveryJob) => (job.stockBatchId === null ? `event ${job.eventId}` : `batch ${job.stockBatchId}`);

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

/**
 * Group commit: callers push items one at a time and each waits for its result; the items pushed
 * while a run is in progress (or within the same turn of the event loop) go to the next run
 * together. The worker's concurrent attempts thus share one transaction for their outcomes instead
 * of taking the database's write lock one by one, while no attempt waits for a slower one.
 */
class GroupCommit<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private running = false;

  constructor(private readonly run: (items: T[]) => Promise<R[]>) {}

  push(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      try {
        const results = await this.run(batch.map((b) => b.item));
        for (const [i, b] of batch.entries()) b.resolve(results[i]);
      } catch (error) {
        for (const b of batch) b.reject(error);
      }
    }
    this.running = false;
  }
}

/** One attempt's outcome, to be recorded. */
interface Outcome {
  job: webhooks.DeliveryJob;
  statusCode: number | null;
  error: string | null;
  /** The first 2 KB of the response body (public receivers only), for the delivery log. */
  responseBody: string | null;
  /** From sending to the end of the answer (or the failure); null when nothing was sent (a refused address). */
  durationMs: number | null;
}

export interface WebhookWorkerOptions {
  store: Store;
  config: Pick<Config, 'env'> & Partial<Pick<Config, 'stockWebhookIntervalMs' | 'sandboxLoopbackWebhooks'>>;
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
  private readonly bodies = new BoundedCache<Body>(BODY_CACHE_BYTES, (body) => body.text.length + body.bytes.length);
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
   * The database work is batched: the claimed deliveries are read in one query, the outcomes of
   * attempts that finish together are recorded in one transaction, and the lanes that go on are
   * claimed together — a few statements per batch of deliveries instead of four per delivery.
   */
  async runOnce(): Promise<RoundResult> {
    try {
      await this.fanOutStock();
    } catch (error) {
      // The deliveries already due still go out; the fan-out is tried again next round.
      this.options.log?.error({ err: error }, 'stock.changed fan-out failed');
    }
    const now = this.now();
    const claimUntil = now + (this.options.claimMs ?? 30_000);
    const queue = await this.jobs(await this.claim(now, claimUntil, this.options.batchSize ?? 100));
    const result: RoundResult = { succeeded: 0, failed: 0 };
    const recorder = new GroupCommit<Outcome, boolean>((outcomes) => this.record(outcomes));
    // Lanes whose delivery succeeded: their next deliveries, claimed together (at most one per lane is due).
    const chainer = new GroupCommit<number, webhooks.DeliveryJob | null>(async (lanes) => {
      const ids = await this.claim(this.now(), claimUntil, lanes.length, lanes);
      const jobs = new Map((await this.jobs(ids)).map((job) => [job.endpointId, job]));
      return lanes.map((lane) => jobs.get(lane) ?? null);
    });
    const chained = new Map<number, number>();
    let next = 0;
    const lane = async () => {
      while (next < queue.length) {
        const job = queue[next++];
        try {
          const outcome = await this.attempt(job);
          if (!(await recorder.push(outcome))) continue;
          const succeeded = outcome.error === null;
          result[succeeded ? 'succeeded' : 'failed']++;
          const sent = chained.get(job.endpointId) ?? 0;
          if (succeeded && job.orderId === webhooks.STOCK_LANE && sent < STOCK_CHAIN) {
            chained.set(job.endpointId, sent + 1);
            const following = await chainer.push(job.endpointId);
            if (following) queue.push(following);
          }
        } catch (error) {
          // Left claimed; the claim lapses and a later round tries again.
          this.options.log?.error({ err: error, deliveryId: job.id }, 'webhook delivery failed unexpectedly');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.concurrency ?? 16, queue.length) }, lane));
    return result;
  }

  /** Claims due deliveries (of `lanes` only, when given) in a transaction of its own. */
  private claim(now: number, until: number, limit: number, lanes: readonly number[] | null = null): Promise<number[]> {
    const { store } = this.options;
    return store.db.transaction().execute((trx) => webhooks.claimDueDeliveries(trx, store.dialect, this.id, now, until, limit, lanes));
  }

  /**
   * The claimed deliveries' jobs, in one query, with their bodies in the cache; deliveries of
   * endpoints that are no longer active are let go (their claims released).
   */
  private async jobs(ids: readonly number[]): Promise<webhooks.DeliveryJob[]> {
    if (ids.length === 0) return [];
    const { db } = this.options.store;
    const mine = (await webhooks.deliveryJobs(db, ids)).filter((job) => job.claimedBy === this.id);
    const inactive = mine.filter((job) => job.endpointStatus !== 'active');
    if (inactive.length > 0)
      await db.transaction().execute((trx) =>
        webhooks.releaseClaims(
          trx,
          inactive.map((job) => job.id),
          this.id,
        ),
      );
    const jobs = mine.filter((job) => job.endpointStatus === 'active');
    // One event per missing body: a stock batch's events (one per merchant) share it.
    const missing = new Map<string, number>();
    for (const job of jobs) if (!missing.has(bodyKey(job)) && this.bodies.get(bodyKey(job)) === undefined) missing.set(bodyKey(job), job.eventId);
    const read = await webhooks.eventBodies(db, [...missing.values()]);
    for (const [key, eventId] of missing) {
      const text = read.get(eventId);
      if (text !== undefined) this.bodies.set(key, toBody(text));
    }
    return jobs;
  }

  /** Sends one attempt; touches no database (its outcome is recorded with others', see `record`). */
  private async attempt(job: webhooks.DeliveryJob): Promise<Outcome> {
    const { config } = this.options;
    const payload = await this.body(job);
    let statusCode: number | null = null;
    let error: string | null = null;
    let responseBody: string | null = null;
    let startedAt: number | null = null;
    let kind: AddressKind = 'public';
    try {
      // Checked again at every attempt: the name may resolve elsewhere than at registration.
      const url = parseWebhookUrl(job.url, config.env);
      const address = await resolveWebhookTarget(
        url,
        config.env,
        this.options.resolve ?? systemResolver,
        loopbackAllowed(config.env, config.sandboxLoopbackWebhooks),
      );
      kind = addressKind(address.address);
      const sentAt = this.now();
      const secrets = [job.secret, ...(job.previousSecret && (job.previousSecretUntil ?? 0) > sentAt ? [job.previousSecret] : [])];
      startedAt = performance.now();
      const response = await this.sender.send({
        url,
        address,
        body: payload.text,
        bytes: payload.bytes,
        headers: signedHeaders(secrets, webhookId(job.eventId), Math.floor(sentAt / 1000), payload.bytes),
        timeoutMs: this.options.timeoutMs ?? DELIVERY_TIMEOUT_MS,
        maxResponseBytes: MAX_RESPONSE_BYTES,
      });
      // A loopback receiver's answer is reduced to success or failure (Hardening III; issue 44, 16).
      ({ statusCode, error, body: responseBody } = recordedResponse(response.status, response.body, kind, ERROR_SNIPPET));
    } catch (e) {
      error = (e instanceof UnsafeWebhookUrl ? `refused: ${e.message}` : recordedNetworkError(e instanceof Error ? e.message : String(e), kind)).slice(
        0,
        ERROR_SNIPPET,
      );
    }
    // A loopback failure's time would tell a refused port (at once) from a silent one (the timeout).
    const durationMs = startedAt === null || error === LOOPBACK_FAILURE ? null : Math.round(performance.now() - startedAt);
    return { job, statusCode, error, responseBody, durationMs };
  }

  /**
   * The body of a delivery's event. A stock.changed batch goes to every subscribed endpoint (100
   * endpoints: 100 deliveries of the same ≈ 50 KB body), so bodies are kept by batch (or event) in
   * a small cache instead of being read from the database for each delivery; they never change.
   * `jobs` fills it for a claimed batch at once; this reads one only if it was evicted since.
   */
  private async body(job: webhooks.DeliveryJob): Promise<Body> {
    const key = bodyKey(job);
    const cached = this.bodies.get(key);
    if (cached !== undefined) return cached;
    const body = toBody((await webhooks.eventBodies(this.options.store.db, [job.eventId])).get(job.eventId) ?? '');
    this.bodies.set(key, body);
    return body;
  }

  /**
   * Attempts' outcomes, the endpoints' failure clocks and, after 24 h of failures, their disabling:
   * one transaction for every outcome that finished together. Successes (nearly all of them) are
   * one statement per status code; failures are recorded one by one after them (so an endpoint
   * that both took and failed a delivery here stays failing). Returns, per outcome, whether this
   * worker still held the claim and recorded it.
   */
  private async record(outcomes: Outcome[]): Promise<boolean[]> {
    const now = this.now();
    const recorded = new Set<number>();
    await this.options.store.db.transaction().execute(async (trx) => {
      const byStatus = new Map<number, webhooks.AttemptAnswer[]>();
      for (const o of outcomes)
        if (o.error === null)
          byStatus.set(o.statusCode!, [...(byStatus.get(o.statusCode!) ?? []), { id: o.job.id, responseBody: o.responseBody, durationMs: o.durationMs ?? 0 }]);
      const succeeded = new Set<number>();
      for (const [statusCode, answers] of byStatus) {
        for (const r of await webhooks.recordSuccesses(trx, answers, this.id, statusCode, now)) {
          recorded.add(r.id);
          succeeded.add(r.endpointId);
        }
      }
      await webhooks.endpointsSucceeded(trx, [...succeeded]);
      for (const { job, statusCode, error, responseBody, durationMs } of outcomes) {
        if (error === null) continue;
        const next = nextAttemptAt(job.attempts + 1, now, job.giveUpAt, this.options.random);
        if (
          !(await webhooks.recordAttempt(
            trx,
            job.id,
            this.id,
            { status: next === null ? 'failed' : 'pending', nextAttemptAt: next, statusCode, error, deliveredAt: null, responseBody, durationMs },
            now,
          ))
        )
          continue;
        recorded.add(job.id);
        // The failure clock starts when the first event it failed to take started waiting (its retry
        // window's start), so the attempt that exhausts that event's 24 h also disables the endpoint.
        const failingSince = await webhooks.endpointFailed(trx, job.endpointId, job.giveUpAt - RETRY_WINDOW_MS);
        if (failingSince !== null && now - failingSince >= DISABLE_AFTER_MS) {
          await webhooks.setEndpointStatus(trx, job.endpointId, 'disabled', `every delivery failed for 24 h (last: ${error})`, now);
          this.options.log?.warn({ endpointId: job.endpointId }, 'webhook endpoint disabled after 24 h of failures');
        }
      }
    });
    return outcomes.map((o) => recorded.has(o.job.id));
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
