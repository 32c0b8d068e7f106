import type { FastifyInstance } from 'fastify';
import type { UsageRecorder } from '../services/usage.service.ts';

/**
 * Counts every authenticated merchant request once its answer is sent (the usage counters of the
 * business manager's Usage page): merchant, status and the envelope's error code, plus the route's
 * pattern and request id for a 4xx — never the URL (its query string) or a body. Requests refused
 * before their merchant is known (a bad token) belong to nobody and are not counted.
 */
export function installUsageRecording(app: FastifyInstance, recorder: UsageRecorder): void {
  app.addHook('onResponse', async (request, reply) => {
    const principal = request.principal;
    if (!principal) return;
    recorder.record({
      merchantId: principal.merchantId,
      requestId: request.id,
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: reply.statusCode,
      errorCode: request.errorCode,
    });
  });
}
