import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorKind, MAX_LISTED_ERRORS, invalidJson, notFound, serviceUnavailable, validationFailed } from '../domain/errors.ts';
import { isStorageUnavailable } from '../store/faults.ts';
import { toFieldErrors } from '../schemas/validate.ts';
import { errorEnvelope } from '../present/envelope.ts';

/**
 * The one mapping from what an error means (its kind, src/domain/errors.ts) to HTTP. Each SPEC code
 * is status × 100 + n (SPEC §1): test/docs/error-catalogue.test.ts checks that every code raised in
 * src/ gets the status its catalogue entry names through this table.
 */
export const HTTP_STATUS: Readonly<Record<ErrorKind, number>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  too_large: 413,
  too_long_address: 414,
  unsupported_format: 415,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

export const httpStatus = (error: AppError): number => HTTP_STATUS[error.kind];

/**
 * The headers HTTP adds to an error: the Bearer challenge of a 401 (RFC 6750), and `Retry-After`
 * when the error says when to try again.
 */
export function httpHeaders(error: AppError): Record<string, string> | undefined {
  if (error.kind === 'unauthenticated') {
    return { 'WWW-Authenticate': `Bearer realm="stockist", error="invalid_token", error_description="${error.message.replace(/"/g, "'")}"` };
  }
  if (error.retryAfterSeconds !== undefined) return { 'Retry-After': String(error.retryAfterSeconds) };
  return undefined;
}

/** Fastify's own errors that are the client's fault, by code → our error. */
function fromFramework(error: FastifyError): AppError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('too_large', 41300, 'request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_format', 41500, 'send the body as JSON with Content-Type: application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidJson('the body is empty');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid', 40000, 'Content-Length does not match the body');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return invalidJson(error.message);
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON|prototype|constructor/i.test(error.message))) {
    return invalidJson(error.message.replace(/^Body is not valid JSON but content-type is set to 'application\/json'/, 'malformed'));
  }
  return null;
}

/** Storage outages and faults are 503, not 500 (the rule lives beside the storage: src/store/faults.ts). */
export { isStorageUnavailable };

declare module 'fastify' {
  interface FastifyRequest {
    /** The code of the error envelope this request was answered with (0: none); usage counters read it. */
    errorCode: number;
  }
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError, status = httpStatus(error)) {
  request.errorCode = error.code;
  const headers = httpHeaders(error);
  if (headers) reply.headers(headers);
  const body = errorEnvelope(error, request.id);
  // A 10,000-row import with every row wrong must not answer with a 10,000-entry list.
  if (error.errors && error.errors.length > MAX_LISTED_ERRORS) {
    body.errors = error.errors.slice(0, MAX_LISTED_ERRORS);
    body.message = `${error.message} (${error.errors.length} problems; the first ${MAX_LISTED_ERRORS} are listed)`;
  }
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/**
 * Failures Fastify meets before routing (a URL that does not decode, a path parameter over
 * maxParamLength): the envelope too, not Fastify's own body.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('X-Request-Id', request.id);
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return sendError(request, reply, new AppError('too_long_address', 41400, 'a path parameter is longer than the limit'));
  return sendError(request, reply, new AppError('invalid', 40000, 'the URL is malformed'));
}

/**
 * What an error thrown while answering a request means: an AppError, the HTTP status to answer
 * with, and where it came from. The one fallback of the API's envelope (below), the front ends'
 * pages (src/web/foundation.ts) and the OAuth token endpoint's RFC 6749 bodies
 * (routes/oauth/token.ts), which differ only in the words they render it with. Storage outages
 * and unexpected errors are logged here, once.
 */
export interface MappedError {
  error: AppError;
  status: number;
  /** `app`: raised by our code; `validation`: the route's schema refused the input; `framework`: Fastify's own (a body it could not parse); `storage`: the store is unavailable; `unexpected`: a bug. */
  cause: 'app' | 'validation' | 'framework' | 'storage' | 'unexpected';
}

export function toAppError(error: FastifyError | Error, request: FastifyRequest): MappedError {
  if (error instanceof AppError) return { error, status: httpStatus(error), cause: 'app' };
  const e = error as FastifyError;
  if (e.validation) return { error: validationFailed(toFieldErrors(e.validation as never, e.validationContext)), status: 400, cause: 'validation' };
  const mapped = fromFramework(e);
  if (mapped) return { error: mapped, status: httpStatus(mapped), cause: 'framework' };
  if (isStorageUnavailable(error)) {
    request.log.error({ err: error }, 'storage unavailable');
    return { error: serviceUnavailable('storage is unavailable, retry shortly', 1), status: 503, cause: 'storage' };
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    // Another client error of Fastify's or a plugin's: its own status, code status × 100.
    return { error: new AppError('invalid', e.statusCode * 100, e.message), status: e.statusCode, cause: 'framework' };
  }
  request.log.error({ err: error }, 'unhandled error');
  return { error: new AppError('internal', 50000, 'internal error; quote the requestId when contacting support'), status: 500, cause: 'unexpected' };
}

/** The one place where every failure becomes the envelope. */
export function installErrorHandling(app: FastifyInstance) {
  app.decorateRequest('errorCode', 0);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const { error: appError, status } = toAppError(error, request);
    return sendError(request, reply, appError, status);
  });
  app.setNotFoundHandler((request, reply) => sendError(request, reply, notFound(`route ${request.method} ${request.url.split('?')[0]}`)));
}
