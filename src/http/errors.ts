import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, MAX_LISTED_ERRORS, invalidJson, notFound, serviceUnavailable, validationFailed } from '../domain/errors.ts';
import { isStorageUnavailable } from '../store/faults.ts';
import { toFieldErrors } from '../schemas/validate.ts';
import { errorEnvelope } from '../present/envelope.ts';

/** Fastify's own errors that are the client's fault, by code → our error. */
function fromFramework(error: FastifyError): AppError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(413, 41300, 'request body is larger than the limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(415, 41500, 'send the body as JSON with Content-Type: application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return invalidJson('the body is empty');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(400, 40000, 'Content-Length does not match the body');
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

function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError) {
  request.errorCode = error.code;
  if (error.headers) reply.headers(error.headers);
  const body = errorEnvelope(error, request.id);
  // A 10,000-row import with every row wrong must not answer with a 10,000-entry list.
  if (error.errors && error.errors.length > MAX_LISTED_ERRORS) {
    body.errors = error.errors.slice(0, MAX_LISTED_ERRORS);
    body.message = `${error.message} (${error.errors.length} problems; the first ${MAX_LISTED_ERRORS} are listed)`;
  }
  return reply.code(error.status).type('application/json; charset=utf-8').send(body);
}

/**
 * Failures Fastify meets before routing (a URL that does not decode, a path parameter over
 * maxParamLength): the envelope too, not Fastify's own body.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('X-Request-Id', request.id);
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendError(request, reply, new AppError(414, 41400, 'a path parameter is longer than the limit'));
  return sendError(request, reply, new AppError(400, 40000, 'the URL is malformed'));
}

/** The one place where every failure becomes the envelope. */
export function installErrorHandling(app: FastifyInstance) {
  app.decorateRequest('errorCode', 0);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) return sendError(request, reply, error);
    if (error.validation) {
      return sendError(request, reply, validationFailed(toFieldErrors(error.validation as never, error.validationContext)));
    }
    const mapped = fromFramework(error);
    if (mapped) return sendError(request, reply, mapped);
    if (isStorageUnavailable(error)) {
      request.log.error({ err: error }, 'storage unavailable');
      const unavailable = serviceUnavailable('storage is unavailable, retry shortly');
      return sendError(request, reply, new AppError(503, unavailable.code, unavailable.message, undefined, { 'Retry-After': '1' }));
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      return sendError(request, reply, new AppError(error.statusCode, error.statusCode * 100, error.message));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(request, reply, new AppError(500, 50000, 'internal error; quote the requestId when contacting support'));
  });
  app.setNotFoundHandler((request, reply) => sendError(request, reply, notFound(`route ${request.method} ${request.url.split('?')[0]}`)));
}
