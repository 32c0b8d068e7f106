import type { FastifyInstance } from 'fastify';
import type { UsageRecorder } from '../services/usage.service.ts';

/**
 * Counts every authenticated merchant request once its answer is sent (the usage counters of the
 * business manager's Usage page): merchant, status and the envelope's error code, plus the route's
 * pattern and request id for a 4xx — never the URL (its query string) or a body. Requests refused
 * before their merchant is known (a bad token) belong to nobody and are not counted.
 */
export function installUsageRecording(app: FastifyInstance, recorder: UsageRecorder): void {
  // A callback hook, not an async one: no promise per request. `routeOptions` builds an object on
  // each read, so it is read for the 4xx only.
  app.addHook('onResponse', (request, reply, done) => {
    const principal = request.principal;
    if (principal) {
      const status = reply.statusCode;
      const code = recorder.count(principal.merchantId, status, request.errorCode);
      if (status >= 400 && status < 500) {
        recorder.addRecent(principal.merchantId, {
          requestId: request.id,
          method: request.method,
          route: request.routeOptions.url ?? 'unmatched',
          status,
          code,
        });
      }
    }
    done();
  });
}
