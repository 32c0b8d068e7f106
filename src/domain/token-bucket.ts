/**
 * A token bucket (SPEC §2.4): `capacity` tokens (the burst), refilled continuously so that an empty
 * bucket is full again after `refillMs` (capacity / refillMs is the sustained rate). Each request
 * takes one token; a request that finds less than one is refused and takes nothing.
 *
 * The same arithmetic runs in Lua on Redis (src/http/rate-limit.ts) so that several processes
 * share one bucket; this module is the reference the unit tests pin down.
 */
export interface BucketLimits {
  capacity: number;
  refillMs: number;
}

export interface BucketState {
  tokens: number;
  /** When `tokens` was last computed (epoch ms). */
  at: number;
}

/** Tokens in the bucket at `now`; a bucket never seen (or long idle) is full. */
export function bucketLevel(state: BucketState | undefined, now: number, limits: BucketLimits): number {
  if (!state) return limits.capacity;
  const refilled = state.tokens + (Math.max(0, now - state.at) * limits.capacity) / limits.refillMs;
  return Math.min(limits.capacity, refilled);
}

/**
 * Takes `cost` tokens (0 = look only) if there are that many; returns the new state either way. A
 * negative cost gives tokens back (an attempt counted up front that turned out not to count), never
 * beyond the capacity.
 */
export function takeFromBucket(state: BucketState | undefined, now: number, limits: BucketLimits, cost: number): { allowed: boolean; state: BucketState } {
  const tokens = bucketLevel(state, now, limits);
  const allowed = tokens >= cost;
  return { allowed, state: { tokens: allowed ? Math.min(limits.capacity, tokens - cost) : tokens, at: now } };
}

/** Milliseconds until the bucket holds `wanted` tokens (0 if it already does). */
export function msUntil(tokens: number, wanted: number, limits: BucketLimits): number {
  return tokens >= wanted ? 0 : Math.ceil(((wanted - tokens) * limits.refillMs) / limits.capacity);
}

/**
 * The bucket as @fastify/rate-limit's store contract sees it: `current > max` means refused,
 * `max - current` is `RateLimit-Remaining` (whole tokens left), and `ttl` becomes `RateLimit-Reset`
 * (until the bucket is full again) or, on a refusal, `Retry-After` (until one token is back).
 */
export function asRateLimitWindow(tokens: number, refused: boolean, limits: BucketLimits): { current: number; ttl: number } {
  if (refused) return { current: limits.capacity + 1, ttl: msUntil(tokens, 1, limits) };
  return { current: limits.capacity - Math.floor(tokens), ttl: msUntil(tokens, limits.capacity, limits) };
}
