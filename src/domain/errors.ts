/** One entry of an error's `errors` list: the offending field and why, plus any extra detail. */
export interface FieldError {
  field: string;
  message: string;
  [extra: string]: unknown;
}

/**
 * Every failure a request can meet is one of these; the HTTP layer maps them to the envelope in
 * one place (src/http/errors.ts). `code` is HTTP status × 100 + n (SPEC §1).
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly errors?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

/** An error response lists at most this many field errors; its message counts the rest. */
export const MAX_LISTED_ERRORS = 50;

export const validationFailed = (errors: FieldError[], message = 'validation failed') => new AppError(400, 40000, message, errors);

export const fieldError = (field: string, message: string, extra: Record<string, unknown> = {}) =>
  validationFailed([{ field, message, ...extra }], `${field}: ${message}`);

export const invalidJson = (message: string) => new AppError(400, 40001, `body is not valid JSON: ${message}`);

export const unauthorized = (message: string) =>
  new AppError(401, 40100, message, undefined, {
    'WWW-Authenticate': `Bearer realm="stockist", error="invalid_token", error_description="${message.replace(/"/g, "'")}"`,
  });

export const forbidden = (message: string) => new AppError(403, 40300, message);

export const notFound = (what = 'resource') => new AppError(404, 40400, `${what} not found`);

export const conflictState = (message: string, errors?: FieldError[]) => new AppError(409, 40903, message, errors);

export const serviceUnavailable = (message: string) => new AppError(503, 50300, message);

/** 403/40301 (SPEC §2.5): the request reached Stockist over plain HTTP where HTTPS is required. */
export const httpsRequired = () => new AppError(403, 40301, 'HTTPS is required: call this API over https://');

/** 429/42900 (SPEC §2.4); `retryAfterSeconds` goes into `Retry-After`. */
export const rateLimited = (retryAfterSeconds: number, message = 'rate limit exceeded') =>
  new AppError(429, 42900, `${message}; retry after ${retryAfterSeconds} s`, undefined, { 'Retry-After': String(retryAfterSeconds) });
