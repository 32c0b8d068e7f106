import type { Insertable, Selectable } from 'kysely';
import type { StaffRole, StaffStatus } from '../domain/staff.ts';
import type { Handle, Trx } from './db.ts';
import type { ConsoleSessionsTable, StaffPasswordResetsTable, StaffUsersTable } from './schema.ts';

export type StaffRow = Selectable<StaffUsersTable>;
export type StaffPasswordResetRow = Selectable<StaffPasswordResetsTable>;

export async function insertStaff(db: Trx, row: Omit<Insertable<StaffUsersTable>, 'id'>): Promise<StaffRow> {
  return db.insertInto('staff_users').values(row).returningAll().executeTakeFirstOrThrow();
}

export const findStaffByEmail = (db: Handle, emailKey: string) => db.selectFrom('staff_users').selectAll().where('email_key', '=', emailKey).executeTakeFirst();

export const listStaff = (db: Handle) => db.selectFrom('staff_users').selectAll().orderBy('email_key').execute();

export const countStaff = async (db: Handle) =>
  Number(
    (
      await db
        .selectFrom('staff_users')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

export async function updateStaff(
  db: Trx,
  id: number,
  changes: Partial<{ status: StaffStatus; role: StaffRole; password_hash: string; password_changed_at: number; last_sign_in_at: number }>,
  now: number,
): Promise<StaffRow> {
  return db
    .updateTable('staff_users')
    .set({ ...changes, updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The ids of the active owners, each row locked until the transaction ends. An UPDATE that changes
 * nothing takes the row locks on PostgreSQL (SELECT … FOR UPDATE does not compile for SQLite, whose
 * write transaction already shuts out every other): of two owners demoting each other at once, the
 * second waits for the first, then re-reads the rows and finds one owner left.
 */
export async function lockActiveOwners(db: Trx): Promise<number[]> {
  const rows = await db
    .updateTable('staff_users')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('role', '=', 'owner')
    .where('status', '=', 'active')
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

export async function insertSession(db: Trx, row: Insertable<ConsoleSessionsTable>): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute();
}

/** The session and its staff member, in one read. */
export async function findSession(db: Handle, idHash: string) {
  return db
    .selectFrom('console_sessions')
    .innerJoin('staff_users', 'staff_users.id', 'console_sessions.staff_id')
    .select([
      'console_sessions.id_hash as idHash',
      'console_sessions.csrf_secret as csrfSecret',
      'console_sessions.created_at as createdAt',
      'console_sessions.last_seen_at as lastSeenAt',
      'console_sessions.expires_at as expiresAt',
      'staff_users.id as staffId',
      'staff_users.email as email',
      'staff_users.role as role',
      'staff_users.status as status',
    ])
    .where('console_sessions.id_hash', '=', idHash)
    .executeTakeFirst();
}

export async function touchSession(db: Trx, idHash: string, now: number, idleExpiresAt: number): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at: now, idle_expires_at: idleExpiresAt }).where('id_hash', '=', idHash).execute();
}

export async function deleteSession(db: Trx, idHash: string): Promise<boolean> {
  const r = await db.deleteFrom('console_sessions').where('id_hash', '=', idHash).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Ends every session of a staff member (disabled, or a new password), or all but one (`except`, an id hash). */
export async function deleteSessionsOf(db: Trx, staffId: number, except: string | null = null): Promise<number> {
  let q = db.deleteFrom('console_sessions').where('staff_id', '=', staffId);
  if (except !== null) q = q.where('id_hash', '!=', except);
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** A staff member's sessions that still count by their stored expiries, newest activity first. */
export const listSessionsOf = (db: Handle, staffId: number, now: number) =>
  db
    .selectFrom('console_sessions')
    .select(['id_hash', 'address', 'created_at', 'last_seen_at'])
    .where('staff_id', '=', staffId)
    .where('expires_at', '>', now)
    .where('idle_expires_at', '>', now)
    .orderBy('last_seen_at', 'desc')
    .execute();

/** Sessions past either expiry are dead weight: dropped when their owner signs in again. */
export async function deleteExpiredSessionsOf(db: Trx, staffId: number, now: number): Promise<void> {
  await db
    .deleteFrom('console_sessions')
    .where('staff_id', '=', staffId)
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('idle_expires_at', '<=', now)]))
    .execute();
}

/**
 * Deletes up to `limit` sessions past either expiry, any staff member's (the purge job); returns
 * how many went. Expired by the limits in force now (which may have been shortened since the
 * session began) or by the expiries stored with it. The table holds a few rows per staff member,
 * so the scan is cheap; the batch bound keeps each statement short anyway.
 */
export async function purgeExpiredSessions(db: Trx, now: number, limits: { idleMs: number; maxMs: number }, limit: number): Promise<number> {
  const r = await db
    .deleteFrom('console_sessions')
    .where('id_hash', 'in', (eb) =>
      eb
        .selectFrom('console_sessions as s')
        .select('s.id_hash')
        .where((w) =>
          w.or([
            w('s.idle_expires_at', '<=', now),
            w('s.expires_at', '<=', now),
            w('s.last_seen_at', '<=', now - limits.idleMs),
            w('s.created_at', '<=', now - limits.maxMs),
          ]),
        )
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

// ---- Password reset links (0032).

export async function insertPasswordReset(db: Trx, row: Omit<Insertable<StaffPasswordResetsTable>, 'id'>): Promise<StaffPasswordResetRow> {
  return db.insertInto('staff_password_resets').values(row).returningAll().executeTakeFirstOrThrow();
}

/** A reset link's row with its account's address and state. */
export const findPasswordResetByHash = (db: Handle, tokenHash: string) =>
  db
    .selectFrom('staff_password_resets')
    .innerJoin('staff_users', 'staff_users.id', 'staff_password_resets.staff_id')
    .selectAll('staff_password_resets')
    .select(['staff_users.email as email', 'staff_users.email_key as email_key', 'staff_users.status as status'])
    .where('staff_password_resets.token_hash', '=', tokenHash)
    .executeTakeFirst();

/** Revokes the account's open reset links (a newer one replaces them; disabling ends them); returns how many. */
export async function revokePasswordResetsOf(db: Trx, staffId: number, now: number): Promise<number> {
  const r = await db
    .updateTable('staff_password_resets')
    .set({ revoked_at: now })
    .where('staff_id', '=', staffId)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** One-time: of two concurrent uses exactly one updates the row (and none of a revoked or expired one). */
export async function claimPasswordReset(db: Trx, id: number, now: number): Promise<boolean> {
  const r = await db
    .updateTable('staff_password_resets')
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
