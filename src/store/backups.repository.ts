import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Handle, Trx } from './db.ts';
import type { BackupRunsTable } from './schema.ts';

export type BackupRunRow = Selectable<BackupRunsTable>;

/** The migration that made `backup_lease` and `backup_runs`: a database before it cannot record a run. */
export const BACKUP_RUNS_MIGRATION = '0042_backups';

/** The one lease name: one backup at a time, whatever asked for it. */
const LEASE = 'backup';

/**
 * Takes the lease for `holder` until `now + ttlMs` when nobody holds it or the holder's claim has
 * lapsed (its process died or stalled). One statement: of two processes racing, PostgreSQL makes
 * the second wait on the first's row and then re-evaluate the condition against it; SQLite runs
 * one writer at a time. True when `holder` has it.
 */
export async function takeLease(trx: Trx, holder: string, now: number, ttlMs: number): Promise<boolean> {
  const row = await trx
    .insertInto('backup_lease')
    .values({ name: LEASE, holder, expires_at: now + ttlMs })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ holder, expires_at: now + ttlMs })
        .where('backup_lease.expires_at', '<=', now),
    )
    .returning('holder')
    .executeTakeFirst();
  return row?.holder === holder;
}

/** Extends `holder`'s lease; false when it lapsed and another process took it meanwhile. */
export async function renewLease(trx: Trx, holder: string, now: number, ttlMs: number): Promise<boolean> {
  const r = await trx
    .updateTable('backup_lease')
    .set({ expires_at: now + ttlMs })
    .where('name', '=', LEASE)
    .where('holder', '=', holder)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Gives the lease up (only `holder`'s own: a lapsed one taken over stays with its new holder). */
export async function releaseLease(trx: Trx, holder: string): Promise<void> {
  await trx.deleteFrom('backup_lease').where('name', '=', LEASE).where('holder', '=', holder).execute();
}

/** The lease in force at `now`, if any. */
export async function currentLease(db: Handle, now: number): Promise<{ holder: string; expiresAt: number } | null> {
  const row = await db.selectFrom('backup_lease').select(['holder', 'expires_at']).where('name', '=', LEASE).where('expires_at', '>', now).executeTakeFirst();
  return row ? { holder: row.holder, expiresAt: Number(row.expires_at) } : null;
}

export async function insertRun(trx: Trx, row: Omit<Insertable<BackupRunsTable>, 'id'>): Promise<number> {
  const r = await trx.insertInto('backup_runs').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(r.id);
}

export async function updateRun(trx: Trx, id: number, changes: Updateable<BackupRunsTable>): Promise<void> {
  await trx.updateTable('backup_runs').set(changes).where('id', '=', id).execute();
}

/**
 * Runs still marked running under another holder: their process lost the lease (it died), so they
 * will never finish. Called by the lease's new holder, which alone may know that.
 */
export async function abandonStaleRuns(trx: Trx, holder: string, now: number, error: string): Promise<number> {
  const r = await trx
    .updateTable('backup_runs')
    .set({ status: 'failed', finished_at: now, error })
    .where('status', '=', 'running')
    .where('holder', '<>', holder)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** The newest runs first, for the Backups page. */
export const recentRuns = (db: Handle, limit: number) =>
  db.selectFrom('backup_runs').selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc').limit(limit).execute();

/** Every run whose archive is still stored (not pruned): what pruning weighs and the listing describes. */
export const storedArchiveRuns = (db: Handle) =>
  db.selectFrom('backup_runs').selectAll().where('file', 'is not', null).where('pruned_at', 'is', null).orderBy('started_at', 'desc').execute();

export async function markPruned(trx: Trx, ids: readonly number[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await trx
    .updateTable('backup_runs')
    .set({ pruned_at: now })
    .where('id', 'in', [...ids])
    .execute();
}

/** What /metrics reports: the newest successful run's end and duration, and how many runs failed. */
export async function backupStats(db: Handle): Promise<{ lastSuccessAt: number | null; lastDurationMs: number | null; failures: number }> {
  const last = await db
    .selectFrom('backup_runs')
    .select(['finished_at', 'duration_ms'])
    .where('status', '=', 'succeeded')
    .orderBy('finished_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  const failed = await db
    .selectFrom('backup_runs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'failed')
    .executeTakeFirstOrThrow();
  return {
    lastSuccessAt: last?.finished_at == null ? null : Number(last.finished_at),
    lastDurationMs: last?.duration_ms == null ? null : Number(last.duration_ms),
    failures: Number(failed.n),
  };
}
