/** One entry of an error's `errors` list: the offending field and why, plus any extra detail. */
export interface FieldError {
  field: string;
  message: string;
  [extra: string]: unknown;
}

/**
 * What a refusal or failure means, in the domain's words. The domain never names an HTTP status:
 * src/http/errors.ts maps each kind to one (and adds the headers HTTP wants), for the API, the web
 * front ends and the token endpoint alike.
 */
export type ErrorKind =
  /** The input breaks a rule of its shape or values (SPEC code 400nn). */
  | 'invalid'
  /** No credential, or one that is not (or no longer) valid (401nn). */
  | 'unauthenticated'
  /** A valid credential that may not do this, or a transport that is not allowed (403nn). */
  | 'forbidden'
  | 'not_found'
  /** The request clashes with the current state, or with an earlier request (409nn). */
  | 'conflict'
  /** The save was made against a version of the row that is no longer the stored one (412nn; If-Match, the edit forms). */
  | 'precondition_failed'
  /** The body is larger, or holds more, than the route takes (413nn). */
  | 'too_large'
  /** A part of the address is longer than the limit (414nn). */
  | 'too_long_address'
  /** The body is not in a format this route reads (415nn). */
  | 'unsupported_format'
  /** Well-formed, but the business cannot do it: unknown SKU, no stock, no channel, no funds (422nn). */
  | 'unprocessable'
  | 'rate_limited'
  | 'internal'
  /** Not now: storage down, overloaded, not ready (503nn). */
  | 'unavailable';

/**
 * Every failure a request can meet is one of these: its kind (what it means), its SPEC error code
 * (`code`, HTTP status × 100 + n, SPEC §1) and, when the client should wait, how long. The HTTP
 * layer turns them into the envelope in one place (src/http/errors.ts).
 */
export class AppError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: number,
    message: string,
    readonly errors?: FieldError[],
    /** When trying again makes sense: after this many seconds (a rate limit, an overload, an outage). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** A refusal of the client's request (stored and replayed under its Idempotency-Key), not a failure of the server. */
export const isRefusal = (error: AppError) => error.kind !== 'internal' && error.kind !== 'unavailable';

/**
 * Refusals that depend on the merchant's balance, which money received changes: 42203 insufficient
 * funds. Not stored under an Idempotency-Key (docs/decisions.md, "A declined order is not kept
 * under its key"), as a card processor keeps no decline against the key: the merchant tops up and
 * retries with the same key, and the order is placed once.
 */
const BALANCE_REFUSALS: ReadonlySet<number> = new Set([42203]);

/** A refusal replayed for the same Idempotency-Key for 24 h (SPEC §4.4): every refusal but those that depend on the balance. */
export const isKeptRefusal = (error: AppError) => isRefusal(error) && !BALANCE_REFUSALS.has(error.code);

/** An error response lists at most this many field errors; its message counts the rest. */
export const MAX_LISTED_ERRORS = 50;

export const validationFailed = (errors: FieldError[], message = 'validation failed') => new AppError('invalid', 40000, message, errors);

export const fieldError = (field: string, message: string, extra: Record<string, unknown> = {}) =>
  validationFailed([{ field, message, ...extra }], `${field}: ${message}`);

export const invalidJson = (message: string) => new AppError('invalid', 40001, `body is not valid JSON: ${message}`);

/** 401/40100: the HTTP layer adds the `WWW-Authenticate: Bearer` challenge. */
export const unauthorized = (message: string) => new AppError('unauthenticated', 40100, message);

export const forbidden = (message: string) => new AppError('forbidden', 40300, message);

export const notFound = (what = 'resource') => new AppError('not_found', 40400, `${what} not found`);

export const conflictState = (message: string, errors?: FieldError[]) => new AppError('conflict', 40903, message, errors);

export const serviceUnavailable = (message: string, retryAfterSeconds?: number) => new AppError('unavailable', 50300, message, undefined, retryAfterSeconds);

/** 403/40301 (SPEC §2.5): the request reached Stockist over plain HTTP where HTTPS is required. */
export const httpsRequired = () => new AppError('forbidden', 40301, 'HTTPS is required: call this API over https://');

/** 429/42900 (SPEC §2.4); `retryAfterSeconds` goes into `Retry-After`. */
export const rateLimited = (retryAfterSeconds: number, message = 'rate limit exceeded') =>
  new AppError('rate_limited', 42900, `${message}; retry after ${retryAfterSeconds} s`, undefined, retryAfterSeconds);

/** 429/42901: the merchant already has as many statements in the making as it may (issue 41). */
export const statementsBusy = (perMerchant: number, retryAfterSeconds: number) =>
  new AppError(
    'rate_limited',
    42901,
    `A statement of this account is already being prepared (at most ${perMerchant} at a time); try again in ${retryAfterSeconds} s, once it has downloaded`,
    undefined,
    retryAfterSeconds,
  );
