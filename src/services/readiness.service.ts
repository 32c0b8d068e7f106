import { serviceUnavailable } from '../domain/errors.ts';
import { ping, probeWrite, type Store } from '../store/db.ts';
import { storageFaultKind } from '../store/faults.ts';
import { migrationsCurrent } from '../store/migrate.ts';

/**
 * Whether the database is ready for requests (GET /readyz): it answers, its schema is current and
 * it takes writes — a probe write commits and no write of this process failed with a storage
 * fault (read-only, full, I/O) in the last few seconds (src/store/faults.ts). Throws 503/50300
 * saying which of these failed.
 */
export async function checkReady(store: Store, now = Date.now()): Promise<void> {
  try {
    await ping(store.db);
  } catch {
    throw serviceUnavailable('database unreachable');
  }
  if (!(await migrationsCurrent(store))) throw serviceUnavailable('database migrations are not current');
  try {
    await store.db.transaction().execute((trx) => probeWrite(trx, now));
  } catch (error) {
    const kind = storageFaultKind(error);
    throw serviceUnavailable(kind ? `database does not take writes: ${kind} (${(error as { code: string }).code})` : 'database unreachable');
  }
  const fault = store.health.recentFault(now);
  if (fault) throw serviceUnavailable(`database does not take writes: ${fault.kind} (${fault.code}, ${Math.ceil(fault.ageMs / 1000)} s ago)`);
}
