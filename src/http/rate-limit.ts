import { pipeline, Transform } from 'node:stream';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { rateLimited } from '../domain/errors.ts';
import { hashSecret } from '../domain/secrets.ts';
import type { Clock } from '../domain/time.ts';
import { asRateLimitWindow, msUntil, takeFromBucket, type BucketLimits, type BucketState } from '../domain/token-bucket.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import type { Principal } from '../services/merchants.service.ts';
import { bodyLimitsFor } from './limits.ts';

/** Where buckets live: this process (default) or Redis (`REDIS_URL`), shared by every instance. */
export interface BucketStore {
  /** Takes `cost` tokens (0 = look only, negative = give back); returns whether it could and how many are left. */
  take(key: string, limits: BucketLimits, cost: number): Promise<{ allowed: boolean; tokens: number }>;
  close(): Promise<void>;
}

/** A clock in epoch ms; tests pass a fake one. */

/**
 * In-process buckets. Bounded: beyond `maxKeys` the least recently used bucket is dropped, which
 * only ever forgives (a dropped bucket comes back full), so memory cannot grow with the number of
 * tokens seen.
 */
export function memoryBuckets(now: Clock = Date.now, maxKeys = 100_000): BucketStore {
  const buckets = new Map<string, BucketState>();
  return {
    async take(key, limits, cost) {
      const previous = buckets.get(key);
      const { allowed, state } = takeFromBucket(previous, now(), limits, cost);
      if (cost !== 0) {
        buckets.delete(key); // re-insert: Map order is the LRU order
        buckets.set(key, state);
        if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
      }
      return { allowed, tokens: state.tokens };
    },
    async close() {
      buckets.clear();
    },
  };
}

/**
 * The same arithmetic as src/domain/token-bucket.ts, atomically on Redis. The clock is Redis's own
 * (`TIME`) so instances with skewed clocks still agree; tests may pass a time as ARGV[4]. The key
 * expires once the bucket would be full again, which is the same as not existing.
 */
const TOKEN_BUCKET_LUA = `
local capacity = tonumber(ARGV[1])
local refill_ms = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1])
local at = tonumber(state[2])
if tokens == nil or at == nil then
  tokens = capacity
else
  tokens = math.min(capacity, tokens + math.max(0, now - at) * capacity / refill_ms)
end
local allowed = 0
if tokens >= cost then
  allowed = 1
  tokens = math.min(capacity, tokens - cost)
end
if cost ~= 0 then
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[1], math.ceil(refill_ms))
end
return { allowed, tostring(tokens) }
`;

type BucketRedis = Redis & {
  stockistTokenBucket(key: string, capacity: number, refillMs: number, cost: number, now: number): Promise<[number, string]>;
};

const REDIS_KEY_PREFIX = 'stockist:rl:';

/** Connects to Redis (start-up fails with a clear message if it cannot) and returns shared buckets. */
export async function redisBuckets(url: string, options: { now?: Clock; onError?: (error: Error) => void } = {}): Promise<BucketStore> {
  // Imported only when REDIS_URL is set: most installations never load it.
  // module.exports is the Redis class (the default export, in Node and in the dist/ bundle alike).
  const { default: Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    // A rate-limit check must not wait for a reconnect: while Redis is away, requests pass unlimited
    // (skipOnError) rather than queue up or fail.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
  }) as BucketRedis;
  redis.on('error', (error: Error) => options.onError?.(error));
  redis.defineCommand('stockistTokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET_LUA });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`REDIS_URL: cannot connect to Redis (${(error as Error).message})`);
  }
  return {
    async take(key, limits, cost) {
      const [allowed, tokens] = await redis.stockistTokenBucket(
        REDIS_KEY_PREFIX + key,
        limits.capacity,
        limits.refillMs,
        cost,
        options.now ? options.now() : -1,
      );
      return { allowed: allowed === 1, tokens: Number(tokens) };
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

type StoreCallback = (error: Error | null, result?: { current: number; ttl: number }) => void;

/**
 * @fastify/rate-limit's store contract, answered by a token bucket: the plugin's `max` is the
 * bucket's capacity and its `timeWindow` the time an empty bucket takes to fill up.
 */
function tokenBucketStore(buckets: BucketStore) {
  const answer = (key: string, cb: StoreCallback, timeWindow: number, max: number, cost: number) => {
    const limits = { capacity: max, refillMs: timeWindow };
    buckets.take(key, limits, cost).then(
      ({ allowed, tokens }) => cb(null, asRateLimitWindow(tokens, !allowed, limits)),
      (error: Error) => cb(error),
    );
  };
  return class TokenBucketStore {
    incr(key: string, cb: StoreCallback, timeWindow: number, max: number) {
      answer(key, cb, timeWindow, max, 1);
    }
    read(key: string, cb: StoreCallback, timeWindow: number, max: number) {
      answer(key, cb, timeWindow, max, 0);
    }
    child() {
      return new TokenBucketStore();
    }
  };
}

/**
 * The merchant's bucket (SPEC §2.4): one per merchant and environment, shared by all of its tokens,
 * so minting tokens buys no budget. The key is the environment, the merchant id (readable when
 * looking into Redis) and a hash of the merchant's random, immutable OAuth client id, which makes it
 * unique across deployments and databases sharing one Redis — merchant ids alone are not (every
 * database starts at 1).
 */
function merchantBucketKey(env: StockistEnv, principal: Pick<Principal, 'merchantId' | 'clientId'> & { bucketKey?: string }): string {
  // Made once per principal, and a cached token's principal serves all of its requests: no hash per request.
  principal.bucketKey ??= `mer:${env}:${principal.merchantId}:${hashSecret(principal.clientId).slice(0, 32)}`;
  return principal.bucketKey;
}

/**
 * The merchant's body budget (SPEC §2.4: a merchant's requests are bounded in cost, not just in
 * count). Parsing, checking and storing a body costs CPU in proportion to its size, and this
 * process's one event loop is every merchant's: at 20 requests a second, 1 MiB bodies took 110–240
 * ms each and another merchant's median went from 3 ms to 541 ms. So request-body bytes are a
 * second token bucket per merchant and environment: `RATE_LIMIT_BODY_BYTES_PER_SECOND` (32 KiB/s),
 * bursts of the largest body a merchant route accepts (1 MiB, a webhook registration), so any one
 * legitimate body passes and ordinary traffic (orders of 1–1.5 KB at 20/s) never meets it.
 *
 * A body is charged before it is read, by its Content-Length: a refused one (429/42900 with
 * Retry-After) costs no parsing. A chunked body is charged the route's limit and given back what it
 * did not use once the response is sent. A body over the route's limit is not charged: Fastify
 * refuses it (413) without reading it.
 */
export function installMerchantBodyBudget(app: FastifyInstance, config: Config, buckets: BucketStore) {
  const limits = merchantBodyLimits(config);
  if (!limits) return;
  const { capacity } = limits;
  const rate = config.rateLimitBodyBytesPerSecond;
  const chunked = new WeakMap<FastifyRequest, { key: string; charged: number; read: () => number }>();
  app.addHook('preParsing', async (request, _reply, payload) => {
    const declared = request.headers['content-length'];
    const streamed = request.headers['transfer-encoding'] !== undefined;
    if (!request.principal || (!streamed && (declared === undefined || declared === '0'))) return payload;
    const routeLimit = request.routeOptions.bodyLimit ?? config.bodyLimitBytes;
    const size = streamed ? routeLimit : Number(declared);
    if (!(size <= routeLimit)) return payload;
    // An evidence upload (up to 5 MB) may be larger than the bucket: it takes the whole bucket, so it
    // passes only when the merchant has sent nothing else lately, and leaves nothing for a while.
    const charge = Math.min(size, capacity);
    const key = `body:${merchantBucketKey(config.env, request.principal)}`;
    // Redis unreachable: let the body through, like the request limit (skipOnError).
    const taken = await buckets.take(key, limits, charge).catch(() => null);
    if (taken && !taken.allowed) {
      const retryAfter = Math.max(1, Math.ceil(msUntil(taken.tokens, charge, limits) / 1000));
      throw rateLimited(retryAfter, `request body budget exceeded: ${rate} bytes per second per merchant, bursts of ${capacity} bytes`);
    }
    if (!streamed || !taken) return payload;
    let read = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        read += chunk.length;
        callback(null, chunk);
      },
    });
    chunked.set(request, { key, charged: charge, read: () => read });
    // pipeline, not pipe: an error of the request stream (a client gone mid-body) reaches the parser.
    pipeline(payload, counted, () => undefined);
    return counted;
  });
  app.addHook('onResponse', async (request) => {
    const pending = chunked.get(request);
    if (!pending) return;
    chunked.delete(request);
    const unused = pending.charged - Math.min(pending.charged, pending.read());
    if (unused > 0) await buckets.take(pending.key, limits, -unused).catch(() => undefined);
  });
}

/**
 * Per-merchant limit on merchant routes (SPEC §2.4). Registered after the auth hook, so it runs on
 * authenticated requests only (refused credentials neither pass nor drain a bucket) and finds the
 * principal on the request.
 */
export async function installMerchantRateLimit(app: FastifyInstance, config: Config, buckets: BucketStore) {
  const rate = config.rateLimitPerSecond;
  const burst = config.rateLimitBurst;
  const limits = merchantRequestLimits(config);
  await app.register(rateLimit, {
    global: true,
    max: limits.capacity,
    timeWindow: limits.refillMs,
    store: tokenBucketStore(buckets),
    keyGenerator: (request: FastifyRequest) => {
      if (!request.principal) throw new Error('merchant rate limit: no principal (the limit must run after the auth hook)');
      return merchantBucketKey(config.env, request.principal);
    },
    enableDraftSpec: true,
    // Redis unreachable: serve unlimited rather than fail every request (logged by the client).
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      rateLimited(Math.max(1, Math.ceil(context.ttl / 1000)), `rate limit exceeded: ${rate} requests per second per merchant, bursts of ${burst}`),
  });
}

/** The per-merchant request bucket: bursts of RATE_LIMIT_BURST, refilled at RATE_LIMIT_PER_SECOND. */
const merchantRequestLimits = (config: Config): BucketLimits => ({
  capacity: config.rateLimitBurst,
  refillMs: Math.round((config.rateLimitBurst / config.rateLimitPerSecond) * 1000),
});

/** The per-merchant body-byte bucket, or null when RATE_LIMIT_BODY_BYTES_PER_SECOND is 0 (off). */
function merchantBodyLimits(config: Config): BucketLimits | null {
  const capacity = bodyLimitsFor('bulk', config).bodyLimit;
  const rate = config.rateLimitBodyBytesPerSecond;
  return rate === 0 ? null : { capacity, refillMs: (capacity / rate) * 1000 };
}

export interface BucketUse {
  /** What the merchant may spend right now (a full bucket: `capacity`). */
  available: number;
  capacity: number;
  perSecond: number;
}

/**
 * How much of its rate limits a merchant is using now, read from the same buckets (this process's
 * or Redis) without taking from them. `body` is null when the body budget is off; null on the
 * whole when the buckets cannot be read (Redis unreachable).
 */
export async function merchantBucketUse(
  buckets: BucketStore,
  config: Config,
  merchant: Pick<Principal, 'merchantId' | 'clientId'>,
): Promise<{ requests: BucketUse; body: BucketUse | null } | null> {
  const key = merchantBucketKey(config.env, merchant);
  const requestLimits = merchantRequestLimits(config);
  const bodyLimits = merchantBodyLimits(config);
  try {
    const requests = await buckets.take(key, requestLimits, 0);
    const body = bodyLimits && (await buckets.take(`body:${key}`, bodyLimits, 0));
    return {
      requests: { available: requests.tokens, capacity: requestLimits.capacity, perSecond: config.rateLimitPerSecond },
      body: body && bodyLimits ? { available: body.tokens, capacity: bodyLimits.capacity, perSecond: config.rateLimitBodyBytesPerSecond } : null,
    };
  } catch {
    return null;
  }
}
