/** One entry of an error's `errors` list: the offending field and why, plus any extra detail. */
export interface FieldError {
  field: string;
  message: string;
  [extra: string]: unknown;
}

/**
 * Every refusal the API sends, typed. For envelope errors `code` is the catalogue's number
 * (40000, 42201 …, docs/errors.md); for the OAuth token endpoint it is the RFC 6749 `error`
 * string (`invalid_client` …). `requestId` is the server's id of the request: quote it to support.
 */
export class StockistError extends Error {
  readonly status: number;
  readonly code: number | string;
  readonly errors: FieldError[];
  readonly requestId: string | null;
  /** Seconds from `Retry-After`, when the server sent one. */
  readonly retryAfterSeconds: number | null;

  constructor(init: {
    status: number;
    code: number | string;
    message: string;
    errors?: FieldError[];
    requestId?: string | null;
    retryAfterSeconds?: number | null;
  }) {
    super(init.message);
    this.name = 'StockistError';
    this.status = init.status;
    this.code = init.code;
    this.errors = init.errors ?? [];
    this.requestId = init.requestId ?? null;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
  }

  /** True for the token endpoint's RFC 6749 errors. */
  get isOAuthError(): boolean {
    return typeof this.code === 'string';
  }
}

/** `Retry-After` as seconds (delta-seconds or an HTTP date), or null. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** The typed error for a non-2xx response, from the envelope or an RFC 6749 body. */
export async function errorFromResponse(response: Response): Promise<StockistError> {
  const requestId = response.headers.get('x-request-id');
  const retryAfterSeconds = parseRetryAfter(response.headers.get('retry-after'));
  const text = await response.text();
  let body: Record<string, unknown> | null = null;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON (a proxy's page): keep the status and the start of the text
  }
  if (body && typeof body.code === 'number') {
    return new StockistError({
      status: response.status,
      code: body.code,
      message: String(body.message ?? ''),
      errors: Array.isArray(body.errors) ? (body.errors as FieldError[]) : [],
      requestId: typeof body.requestId === 'string' ? body.requestId : requestId,
      retryAfterSeconds,
    });
  }
  if (body && typeof body.error === 'string') {
    return new StockistError({
      status: response.status,
      code: body.error,
      message: String(body.error_description ?? body.error),
      requestId,
      retryAfterSeconds,
    });
  }
  return new StockistError({
    status: response.status,
    code: response.status * 100,
    message: `HTTP ${response.status}: ${text.slice(0, 200)}`,
    requestId,
    retryAfterSeconds,
  });
}
