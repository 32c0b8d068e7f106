import type { FastifyPluginAsync } from 'fastify';
import { sql } from 'kysely';
import { serviceUnavailable } from '../../domain/errors.ts';
import type { Store } from '../../store/db.ts';
import { migrationsCurrent } from '../../store/migrate.ts';

/** /healthz: the process answers. /readyz: the database answers and its schema is current. */
export const healthRoutes: FastifyPluginAsync<{ store: Store }> = async (app, { store }) => {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => {
    try {
      await sql`select 1`.execute(store.db);
    } catch {
      throw serviceUnavailable('database unreachable');
    }
    if (!(await migrationsCurrent(store))) throw serviceUnavailable('database migrations are not current');
    return { status: 'ready', database: store.dialect };
  });
};
