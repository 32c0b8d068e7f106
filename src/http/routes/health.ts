import type { FastifyPluginAsync } from 'fastify';
import { serviceUnavailable } from '../../domain/errors.ts';
import { ping, type Store } from '../../store/db.ts';
import { probeWrite, storageFaultKind } from '../../store/faults.ts';
import { migrationsCurrent } from '../../store/migrate.ts';

/**
 * /healthz: the process answers. /readyz: the database answers, its schema is current and it takes
 * writes — a probe write succeeds and no write of this process failed with a storage fault
 * (read-only, full, I/O) in the last few seconds (src/store/faults.ts).
 */
export const healthRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => {
    try {
      await ping(store.db);
    } catch {
      throw serviceUnavailable('database unreachable');
    }
    if (!(await migrationsCurrent(store))) throw serviceUnavailable('database migrations are not current');
    try {
      await probeWrite(store.db);
    } catch (error) {
      const kind = storageFaultKind(error);
      throw serviceUnavailable(kind ? `database does not take writes: ${kind} (${(error as { code: string }).code})` : 'database unreachable');
    }
    const fault = store.health.recentFault();
    if (fault) throw serviceUnavailable(`database does not take writes: ${fault.kind} (${fault.code}, ${Math.ceil(fault.ageMs / 1000)} s ago)`);
    return { status: 'ready', database: store.dialect };
  });
};
