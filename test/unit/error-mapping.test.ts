import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError, rateLimited, serviceUnavailable, unauthorized, validationFailed } from '../../src/domain/errors.ts';
import { HTTP_STATUS, httpHeaders, httpStatus } from '../../src/http/errors.ts';
import { ERROR_CATALOGUE } from '../../src/http/openapi/error-catalogue.ts';
import { envelopeStatus } from '../../src/present/envelope.ts';

/** Issue 30, item 4: domain errors carry a kind and a SPEC code; HTTP statuses and headers come from src/http/errors.ts. */
describe('domain errors to HTTP', () => {
  it('each kind has one status, and every catalogue code of that status class maps back to it', () => {
    const kinds = new Map(Object.entries(HTTP_STATUS).map(([kind, status]) => [status, kind]));
    assert.equal(kinds.size, Object.keys(HTTP_STATUS).length, 'no two kinds share a status');
    for (const e of ERROR_CATALOGUE) {
      const kind = kinds.get(e.status);
      // 408 and 431 are raised by Node before Fastify (src/http/limits.ts), never as an AppError.
      if (kind === undefined) assert.ok([408, 431].includes(e.status), `${e.code}: HTTP ${e.status} has a kind`);
      else assert.equal(envelopeStatus(e.code), httpStatus(new AppError(kind as never, e.code, 'x')), String(e.code));
    }
  });

  it('adds the Bearer challenge to a 401 and Retry-After when the error says when to retry', () => {
    assert.deepEqual(httpHeaders(unauthorized('token "x" expired')), {
      'WWW-Authenticate': `Bearer realm="stockist", error="invalid_token", error_description="token 'x' expired"`,
    });
    assert.deepEqual(httpHeaders(rateLimited(3)), { 'Retry-After': '3' });
    assert.deepEqual(httpHeaders(serviceUnavailable('storage is unavailable', 1)), { 'Retry-After': '1' });
    assert.equal(httpHeaders(serviceUnavailable('database unreachable')), undefined);
    assert.equal(httpHeaders(validationFailed([])), undefined);
    assert.equal(httpStatus(rateLimited(3)), 429);
    assert.equal(httpStatus(unauthorized('no')), 401);
  });
});
