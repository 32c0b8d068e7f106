import type { Actor } from '../domain/audit.ts';
import { hashSecret, randomToken } from '../domain/secrets.ts';
import { emailKey, type SessionLimits, type StaffRole } from '../domain/staff.ts';
import { listSessionsOf, recordSignInTime, STAFF_ACCOUNTS } from '../store/accounts.repository.ts';
import type { Db } from '../store/db.ts';
import { insertAudit } from '../store/audit.repository.ts';
import * as staff from '../store/staff.repository.ts';
import * as accounts from './accounts.service.ts';

/** A signed-in staff member, as every console request sees them. */
export interface ConsoleUser {
  staffId: number;
  email: string;
  role: StaffRole;
  /** The session's synchronizer token (docs/decisions.md, "Console sessions and CSRF"). */
  csrfSecret: string;
  /** SHA-256 of the cookie's session id: the row's key, never the id itself. */
  sessionHash: string;
}

export const staffActor = (user: { staffId: number }, requestId: string | null): Actor => accounts.accountActor(STAFF_ACCOUNTS, user.staffId, requestId);

/** What the shared account steps (services/accounts.service.ts) need of a staff member. */
const signedIn = (user: ConsoleUser): accounts.SignedInAccount => ({ accountId: user.staffId, email: user.email, sessionHash: user.sessionHash });

/**
 * Checks an email and password and, when they name an active account, opens a session: the
 * returned `sessionId` goes into the cookie and nowhere else (the table keeps its hash). Wrong
 * email, wrong password and a disabled account all answer null, in the same time.
 */
export async function signIn(
  db: Db,
  input: { email: string; password: string; address: string | null; requestId: string },
  limits: SessionLimits,
  now: number,
): Promise<{ sessionId: string; user: ConsoleUser } | null> {
  const row = await staff.findStaffByEmail(db, emailKey(input.email));
  const ok = await accounts.verifyPassword(row?.password_hash ?? null, input.password);
  if (!row || !ok || row.status !== 'active') return null;
  const sessionId = randomToken(43);
  const user: ConsoleUser = { staffId: row.id, email: row.email, role: row.role, csrfSecret: randomToken(32), sessionHash: hashSecret(sessionId) };
  await db.transaction().execute(async (trx) => {
    const session = { id_hash: user.sessionHash, staff_id: row.id, csrf_secret: user.csrfSecret, address: input.address };
    await accounts.startSession(trx, STAFF_ACCOUNTS, row.id, session, limits, now);
    await recordSignInTime(trx, STAFF_ACCOUNTS, row.id, now);
    await insertAudit(
      trx,
      staffActor(user, input.requestId),
      { action: 'staff.sign_in', target: `staff:${row.email_key}`, before: null, after: { address: input.address } },
      now,
    );
  });
  return { sessionId, user };
}

/** The session a cookie names, if it still counts (accounts.service.ts `keepSession`) and its account is active. */
export async function resumeSession(db: Db, sessionId: string, limits: SessionLimits, now: number): Promise<ConsoleUser | null> {
  const sessionHash = hashSecret(sessionId);
  const s = await staff.findSession(db, sessionHash);
  if (!s || !(await accounts.keepSession(db, STAFF_ACCOUNTS, sessionHash, s, s.status === 'active', limits, now))) return null;
  return { staffId: s.staffId, email: s.email, role: s.role, csrfSecret: s.csrfSecret, sessionHash };
}

/** Ends the session server-side: the cookie's id no longer names anything. */
export const signOut = (db: Db, user: ConsoleUser, requestId: string, now: number): Promise<void> =>
  accounts.signOut(db, STAFF_ACCOUNTS, signedIn(user), requestId, now);

// ---- Own account (Hardening III, 5): password and sessions.

/** Changes the signed-in staff member's password (accounts.service.ts `changeOwnPassword`: other sessions and open reset links end). */
export const changeOwnPassword = (db: Db, user: ConsoleUser, input: { current: string; password: string }, requestId: string, now: number) =>
  accounts.changeOwnPassword(db, STAFF_ACCOUNTS, signedIn(user), input, requestId, now);

/** The signed-in staff member's live sessions, newest activity first; `current` marks the one asking. */
export const mySessions = async (db: Db, user: ConsoleUser, now: number) =>
  (await listSessionsOf(db, STAFF_ACCOUNTS, user.staffId, now)).map((s) => accounts.sessionView(s, user.sessionHash));

/** Ends every session of the signed-in staff member, this one included. */
export const signOutEverywhere = (db: Db, user: ConsoleUser, requestId: string, now: number): Promise<number> =>
  accounts.signOutEverywhere(db, STAFF_ACCOUNTS, signedIn(user), requestId, now);

/**
 * Deletes every expired console session, past its stored expiries or the limits in force now; see
 * accounts.service.ts `purgeExpiredSessions`. Run by the worker role (jobs/purger.ts).
 */
export const purgeExpiredSessions = (db: Db, limits: SessionLimits, now: number, maxBatches = 100): Promise<number> =>
  accounts.purgeExpiredSessions(db, STAFF_ACCOUNTS, limits, now, maxBatches);
