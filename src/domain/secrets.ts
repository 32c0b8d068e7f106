import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { StockistEnv } from './vocabulary.ts';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A random base62 string; `length` 32 carries ~190 bits. */
export function randomToken(length = 32): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    // 248 = 4 × 62: rejecting bytes above it keeps every character equally likely.
    if (bytes[i] < 248) out += ALPHABET[bytes[i] % 62];
  }
  return out.length === length ? out : out + randomToken(length - out.length);
}

const TOKEN_PREFIX: Record<StockistEnv, string> = { production: 'stk_live_', sandbox: 'stk_test_' };

export function environmentOfToken(token: string): StockistEnv | null {
  if (token.startsWith(TOKEN_PREFIX.production)) return 'production';
  if (token.startsWith(TOKEN_PREFIX.sandbox)) return 'sandbox';
  return null;
}

export const newAccessToken = (env: StockistEnv) => TOKEN_PREFIX[env] + randomToken(40);

/**
 * Tokens and client secrets are high-entropy random strings, so a plain SHA-256 is enough to make
 * a stolen table useless (slow password hashes exist for guessable secrets).
 */
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** Compares two secrets in time independent of where they differ (and of their lengths). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/** Refresh tokens have their own prefix, so one is never mistaken for (or accepted as) a bearer token. */
const REFRESH_PREFIX: Record<StockistEnv, string> = { production: 'stkr_live_', sandbox: 'stkr_test_' };

export const newRefreshToken = (env: StockistEnv) => REFRESH_PREFIX[env] + randomToken(48);

export function environmentOfRefreshToken(token: string): StockistEnv | null {
  if (token.startsWith(REFRESH_PREFIX.production)) return 'production';
  if (token.startsWith(REFRESH_PREFIX.sandbox)) return 'sandbox';
  return null;
}
