import type { FastifyPluginAsync } from 'fastify';
import { checkReady } from '../../services/readiness.service.ts';
import type { Store } from '../../store/db.ts';

/**
 * /healthz: the process answers. /readyz: the database answers, its schema is current and it takes
 * writes (services/readiness.service.ts).
 */
export const healthRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => {
    await checkReady(store);
    return { status: 'ready', database: store.dialect };
  });
};
