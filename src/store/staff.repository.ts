import type { Insertable, Selectable } from 'kysely';
import type { Handle, Trx } from './db.ts';
import type { StaffPasswordResetsTable, StaffUsersTable } from './schema.ts';

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

// ---- Password reset links (0032); revoking and claiming them: accounts.repository.ts.

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
