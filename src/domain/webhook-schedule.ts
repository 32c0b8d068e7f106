/**
 * SPEC §13 retry schedule. A failed attempt is retried first within 10 s, then with exponential
 * backoff (×3 per attempt, capped at 4 h) and jitter, until 24 h after the event; the last retry
 * lands on the 24 h mark rather than being skipped.
 */
export const RETRY_WINDOW_MS = 24 * 3600 * 1000;
export const FIRST_RETRY_MS = 10_000;
export const MAX_RETRY_DELAY_MS = 4 * 3600 * 1000;
/** An endpoint that has taken no event for this long (counted from when the first event it failed to take began waiting) is disabled. */
export const DISABLE_AFTER_MS = 24 * 3600 * 1000;

/**
 * Delay before retry number `retry` (1 = after the first failure). Jitter keeps a burst of
 * failures (an endpoint that was down) from coming back as a synchronised burst: the delay is
 * drawn from [½, 1] of the nominal one, so the first retry lands 5–10 s after the failure.
 */
export function retryDelayMs(retry: number, random: () => number = Math.random): number {
  const nominal = Math.min(FIRST_RETRY_MS * 3 ** Math.max(0, retry - 1), MAX_RETRY_DELAY_MS);
  return Math.round(nominal * (0.5 + 0.5 * random()));
}

/** When to try next after a failure at `now`, or null to give up (the window is over). */
export function nextAttemptAt(retry: number, now: number, giveUpAt: number, random: () => number = Math.random): number | null {
  if (now >= giveUpAt) return null;
  return Math.min(now + retryDelayMs(retry, random), giveUpAt);
}
