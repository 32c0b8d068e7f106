import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
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
 * a stolen table useless (slow password hashes exist for guessable secrets). `crypto.hash`, the
 * one-shot form: every merchant request hashes its token, and a Hash object per call was most of
 * the token lookup's CPU (docs/performance.md, "Where the time goes").
 */
export const hashSecret = (secret: string) => hash('sha256', secret, 'hex');

/** Compares two secrets in time independent of where they differ (and of their lengths). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(hash('sha256', a, 'buffer'), hash('sha256', b, 'buffer'));
}

/** Refresh tokens have their own prefix, so one is never mistaken for (or accepted as) a bearer token. */
const REFRESH_PREFIX: Record<StockistEnv, string> = { production: 'stkr_live_', sandbox: 'stkr_test_' };

export const newRefreshToken = (env: StockistEnv) => REFRESH_PREFIX[env] + randomToken(48);

export function environmentOfRefreshToken(token: string): StockistEnv | null {
  if (token.startsWith(REFRESH_PREFIX.production)) return 'production';
  if (token.startsWith(REFRESH_PREFIX.sandbox)) return 'sandbox';
  return null;
}

/**
 * The paths whose next segment is a one-time credential (issue 44, 11): a staff password reset
 * link, a business manager invitation and a business manager password reset link. The one list of
 * them: the links are built from it (staff.ts, merchant-users.ts) and the log cuts what follows
 * each (`redactSecretPaths`), so a new secret-bearing path is added here or nowhere.
 */
export const SECRET_PATHS = {
  staffPasswordReset: '/console/password-reset/',
  invitation: '/manager/invitations/',
  merchantUserPasswordReset: '/manager/password-reset/',
} as const;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A secret path anywhere in a text, with what follows it up to the end of the segment. Any case,
 * and a slash written `%2F` too: the router would refuse such a URL, but the log would still show
 * it. The segment ends at a separator or at what ends a quoted string or a word in a log line.
 */
const SECRET_IN_TEXT = new RegExp(
  `(${Object.values(SECRET_PATHS)
    .map((p) => p.split('/').map(escapeRegExp).join('(?:/|%2F)'))
    .join('|')})[^/?#\\s"'\\\\<>]+`,
  'gi',
);

/** The text (a URL, a log line) with the secret of every secret path in it replaced by `[redacted]`. */
export const redactSecretPaths = (text: string) => text.replace(SECRET_IN_TEXT, '$1[redacted]');
