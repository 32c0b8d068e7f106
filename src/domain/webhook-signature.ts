import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, SPEC §13): the secret is
 * `whsec_<base64 key>`; `webhook-signature` is `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`,
 * several space-separated when more than one secret is live (during a rotation). Self-contained on
 * node:crypto so the typed client can reuse `verifyWebhook` as it is.
 */
const SECRET_PREFIX = 'whsec_';

/** The `webhook-id` of an event: one per event, the same on every attempt and endpoint (receivers de-duplicate on it). */
export const webhookId = (eventId: number) => `msg_${eventId}`;

/** A new secret: 32 random bytes (the specification asks for 24 to 64). */
export const newWebhookSecret = () => SECRET_PREFIX + randomBytes(32).toString('base64');

function secretKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new Error('webhook secret is empty');
  return key;
}

/**
 * `v1,<base64>` for one secret. `timestamp` is in seconds. The body is hashed as given (a string as
 * its UTF-8 bytes, the same bytes): not concatenated into one string first, which copied a 50 KB
 * stock.changed body for every endpoint and cost more than the HMAC itself.
 */
function signature(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  return `v1,${createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.`).update(body).digest('base64')}`;
}

/** The three headers of one delivery attempt, signed with every live secret. */
export function signedHeaders(secrets: string[], id: string, timestampSeconds: number, body: string | Buffer): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signature(s, id, timestampSeconds, body)).join(' '),
  };
}

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyOptions {
  /** Seconds either side of now a timestamp may be off (replay window); default 300 as in the specification. */
  toleranceSeconds?: number;
  /** Epoch ms; defaults to the wall clock. */
  now?: number;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/**
 * Verifies a delivery as a merchant's receiver would: the headers (a `Headers` or a plain object,
 * any case), the raw body exactly as received, and the endpoint's `whsec_` secret. Returns the
 * parsed body; throws `WebhookVerificationError` when a header is missing, the timestamp is outside
 * the tolerance (replays), or no `v1` signature matches.
 */
export function verifyWebhook(headers: HeaderBag, body: string | Buffer, secret: string, options: VerifyOptions = {}): unknown {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header');
  if (!/^[0-9]{1,12}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not a number of seconds');
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  const tolerance = options.toleranceSeconds ?? 300;
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) throw new WebhookVerificationError('webhook-timestamp is outside the tolerance');
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const expected = Buffer.from(signature(secret, id, Number(timestamp), text).slice(3), 'base64');
  for (const candidate of signatures.split(' ')) {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return text === '' ? null : JSON.parse(text);
  }
  throw new WebhookVerificationError('no matching signature');
}
