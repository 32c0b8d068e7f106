import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Handle, Trx } from './db.ts';
import type { Database } from './schema.ts';

/**
 * The sign-in accounts of both front ends: the console's staff and the business manager's merchant
 * users. The two kinds keep their own tables (0020, 0022, 0031, 0032), alike in the columns that
 * sessions and reset links use; a descriptor names one kind's tables and the column that points a
 * session or a reset link at its account, and each function here works on either kind. What only
 * one kind has (staff roles and status; merchant teams, invitations, two-factor) stays in
 * staff.repository.ts and merchant-users.repository.ts.
 */
interface AccountTables {
  /** The accounts: `id`, `email_key`, `password_hash`, `password_changed_at`, `last_sign_in_at`, `updated_at`. */
  readonly users: keyof Database;
  /** Its sign-in sessions, keyed by `id_hash`. */
  readonly sessions: keyof Database;
  /** Its one-time password reset links. */
  readonly resets: keyof Database;
  /** The column of `sessions` and `resets` that holds the account's id. */
  readonly account: string;
}

/** `K`, when its `account` column is one of both its sessions' and its resets' columns (else `never`, a type error at the descriptor). */
type Checked<K extends AccountTables> = K['account'] extends keyof Database[K['sessions']] & keyof Database[K['resets']] ? K : never;

const describe = <const K extends AccountTables>(kind: Checked<K>): K => kind;

export const STAFF_ACCOUNTS = describe({ users: 'staff_users', sessions: 'console_sessions', resets: 'staff_password_resets', account: 'staff_id' });

export const MERCHANT_USER_ACCOUNTS = describe({
  users: 'merchant_users',
  sessions: 'manager_sessions',
  resets: 'merchant_password_resets',
  account: 'user_id',
});

/** One kind of account: `STAFF_ACCOUNTS` or `MERCHANT_USER_ACCOUNTS`. */
export type AccountKind = typeof STAFF_ACCOUNTS | typeof MERCHANT_USER_ACCOUNTS;

/** A session row of kind `K`, exactly as its own table types it. */
export type SessionRow<K extends AccountKind> = Selectable<Database[K['sessions']]>;

/** The columns of a new session of kind `K` that its kind decides (the account, the CSRF secret, the address, the manager's stage). */
export type NewSession<K extends AccountKind> = Omit<Insertable<Database[K['sessions']]>, keyof SessionTimes>;

interface SessionTimes {
  created_at: number;
  last_seen_at: number;
  idle_expires_at: number;
  expires_at: number;
}

export async function insertSession<K extends AccountKind>(db: Trx, kind: K, row: NewSession<K>, times: SessionTimes): Promise<void> {
  // The union of both tables' insert shapes is wider than either; `row` is typed exactly by `K`.
  await db
    .insertInto(kind.sessions)
    .values({ ...row, ...times } as Insertable<Database[AccountKind['sessions']]>)
    .execute();
}

/** Records activity: the idle expiry moves on (never past the absolute one, which the caller has applied). */
export async function touchSession(db: Trx, kind: AccountKind, idHash: string, now: number, idleExpiresAt: number): Promise<void> {
  await db.updateTable(kind.sessions).set({ last_seen_at: now, idle_expires_at: idleExpiresAt }).where('id_hash', '=', idHash).execute();
}

export async function deleteSession(db: Trx, kind: AccountKind, idHash: string): Promise<boolean> {
  const r = await db.deleteFrom(kind.sessions).where('id_hash', '=', idHash).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Ends every session of an account (disabled, or a new password), or all but one (`except`, an id hash); returns how many. */
export async function deleteSessionsOf(db: Trx, kind: AccountKind, accountId: number, except: string | null = null): Promise<number> {
  let q = db.deleteFrom(kind.sessions).where(kind.account, '=', accountId);
  if (except !== null) q = q.where('id_hash', '!=', except);
  const r = await q.executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** An account's sessions that still count by their stored expiries, newest activity first (the account page). */
export const listSessionsOf = <K extends AccountKind>(db: Handle, kind: K, accountId: number, now: number): Promise<SessionRow<K>[]> =>
  db
    .selectFrom(kind.sessions)
    .selectAll()
    .where(kind.account, '=', accountId)
    .where('expires_at', '>', now)
    .where('idle_expires_at', '>', now)
    .orderBy('last_seen_at', 'desc')
    .execute() as Promise<SessionRow<K>[]>;

/** Sessions past either expiry are dead weight: dropped when their owner signs in again. */
export async function deleteExpiredSessionsOf(db: Trx, kind: AccountKind, accountId: number, now: number): Promise<void> {
  await db
    .deleteFrom(kind.sessions)
    .where(kind.account, '=', accountId)
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('idle_expires_at', '<=', now)]))
    .execute();
}

/**
 * Deletes up to `limit` sessions past either stored expiry, any account's (the purge job); returns
 * how many went. With `limits`, also those expired by the limits in force now (which may have been
 * shortened since the session began). The tables hold a few rows per account, so the scan is
 * cheap; the batch bound keeps each statement short anyway.
 */
export async function purgeExpiredSessions(
  db: Trx,
  kind: AccountKind,
  now: number,
  limits: { idleMs: number; maxMs: number } | null,
  limit: number,
): Promise<number> {
  const r = await db
    .deleteFrom(kind.sessions)
    .where('id_hash', 'in', (eb) =>
      eb
        .selectFrom(kind.sessions)
        .select('id_hash')
        .where((w) =>
          w.or([
            w('idle_expires_at', '<=', now),
            w('expires_at', '<=', now),
            ...(limits ? [w('last_seen_at', '<=', now - limits.idleMs), w('created_at', '<=', now - limits.maxMs)] : []),
          ]),
        )
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/** An account row of kind `K`, exactly as its own table types it. */
export type AccountRow<K extends AccountKind> = Selectable<Database[K['users']]>;

/** Changes an account's own columns (`updated_at` too); returns the row as it is now. */
export async function updateAccount<K extends AccountKind>(
  db: Trx,
  kind: K,
  id: number,
  changes: Omit<Updateable<Database[K['users']]>, 'id' | 'updated_at'>,
  now: number,
): Promise<AccountRow<K>> {
  // Both tables' update shapes at once are wider than either; `changes` is typed exactly by `K`.
  const row = await db
    .updateTable(kind.users)
    .set({ ...changes, updated_at: now } as Updateable<Database[AccountKind['users']]>)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return row as AccountRow<K>;
}

/** Sets an account's password hash (the caller ends its sessions and reset links in the same transaction). */
export async function setPasswordHash(db: Trx, kind: AccountKind, accountId: number, passwordHash: string, now: number): Promise<void> {
  await db.updateTable(kind.users).set({ password_hash: passwordHash, password_changed_at: now, updated_at: now }).where('id', '=', accountId).execute();
}

/** Notes a completed sign-in on the account. */
export async function recordSignInTime(db: Trx, kind: AccountKind, accountId: number, now: number): Promise<void> {
  await db.updateTable(kind.users).set({ last_sign_in_at: now, updated_at: now }).where('id', '=', accountId).execute();
}

// ---- Password reset links (0031, 0032).

/** Revokes the account's open reset links (a newer one replaces them; a new password or disabling ends them); returns how many. */
export async function revokePasswordResetsOf(db: Trx, kind: AccountKind, accountId: number, now: number): Promise<number> {
  const r = await db
    .updateTable(kind.resets)
    .set({ revoked_at: now })
    .where(kind.account, '=', accountId)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** One-time: of two concurrent uses exactly one updates the row (and none of a revoked or expired one). */
export async function claimPasswordReset(db: Trx, kind: AccountKind, id: number, now: number): Promise<boolean> {
  const r = await db
    .updateTable(kind.resets)
    .set({ used_at: now })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** What checking an account's own password needs: its hash and the address key audit rows name it by. */
export const findAccountPassword = (db: Handle, kind: AccountKind, accountId: number) =>
  db.selectFrom(kind.users).select(['id', 'email_key', 'password_hash']).where('id', '=', accountId).executeTakeFirst();
