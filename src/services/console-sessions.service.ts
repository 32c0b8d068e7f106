import type { Actor } from '../domain/audit.ts';
import { hashSecret, randomToken } from '../domain/secrets.ts';
import { emailKey, SESSION_TOUCH_EVERY_MS, sessionExpiry, type SessionLimits, type StaffRole } from '../domain/staff.ts';
import type { Db } from '../store/db.ts';
import { insertAudit } from '../store/audit.repository.ts';
import * as staff from '../store/staff.repository.ts';
import { fieldError } from '../domain/errors.ts';
import { checkPassword, hashPassword, verifyPassword } from './staff.service.ts';

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

export const staffActor = (user: { staffId: number }, requestId: string | null): Actor => ({ kind: 'staff', id: String(user.staffId), requestId });

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
  const ok = await verifyPassword(row?.password_hash ?? null, input.password);
  if (!row || !ok || row.status !== 'active') return null;
  const sessionId = randomToken(43);
  const user: ConsoleUser = { staffId: row.id, email: row.email, role: row.role, csrfSecret: randomToken(32), sessionHash: hashSecret(sessionId) };
  await db.transaction().execute(async (trx) => {
    await staff.deleteExpiredSessionsOf(trx, row.id, now);
    await staff.insertSession(trx, {
      id_hash: user.sessionHash,
      staff_id: row.id,
      csrf_secret: user.csrfSecret,
      address: input.address,
      created_at: now,
      last_seen_at: now,
      idle_expires_at: now + limits.idleMs,
      expires_at: now + limits.maxMs,
    });
    await staff.updateStaff(trx, row.id, { last_sign_in_at: now }, now);
    await insertAudit(
      trx,
      staffActor(user, input.requestId),
      { action: 'staff.sign_in', target: `staff:${row.email_key}`, before: null, after: { address: input.address } },
      now,
    );
  });
  return { sessionId, user };
}

/**
 * The session a cookie names, if it still counts: not idle past the limit, not older than the
 * absolute limit, its account active. An expired session is deleted on sight. Activity is
 * recorded at most once a minute (SESSION_TOUCH_EVERY_MS), so browsing is not a write per page.
 */
export async function resumeSession(db: Db, sessionId: string, limits: SessionLimits, now: number): Promise<ConsoleUser | null> {
  const sessionHash = hashSecret(sessionId);
  const s = await staff.findSession(db, sessionHash);
  if (!s) return null;
  if (s.status !== 'active' || sessionExpiry({ createdAt: s.createdAt, lastSeenAt: s.lastSeenAt }, limits, now) !== null) {
    await db.transaction().execute((trx) => staff.deleteSession(trx, sessionHash));
    return null;
  }
  if (now - s.lastSeenAt >= SESSION_TOUCH_EVERY_MS)
    await db.transaction().execute((trx) => staff.touchSession(trx, sessionHash, now, Math.min(now + limits.idleMs, s.expiresAt)));
  return { staffId: s.staffId, email: s.email, role: s.role, csrfSecret: s.csrfSecret, sessionHash };
}

/** Ends the session server-side: the cookie's id no longer names anything. */
export async function signOut(db: Db, user: ConsoleUser, requestId: string, now: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (await staff.deleteSession(trx, user.sessionHash)) {
      await insertAudit(
        trx,
        staffActor(user, requestId),
        { action: 'staff.sign_out', target: `staff:${emailKey(user.email)}`, before: null, after: null },
        now,
      );
    }
  });
}

// ---- Own account (Hardening III, 5): password and sessions.

/**
 * Changes the signed-in staff member's password: the current one is required; every other session
 * ends (this one stays), and so do the account's open reset links: a link made before the change
 * would otherwise undo it (issue 44, 12).
 */
export async function changeOwnPassword(
  db: Db,
  user: ConsoleUser,
  input: { current: string; password: string },
  requestId: string,
  now: number,
): Promise<{ sessionsEnded: number; revokedResets: number }> {
  const row = (await staff.findStaffByEmail(db, emailKey(user.email)))!;
  if (!(await verifyPassword(row.password_hash, input.current))) throw fieldError('current', 'is not your current password');
  checkPassword(input.password, user.email);
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    await staff.updateStaff(trx, row.id, { password_hash: passwordHash, password_changed_at: now }, now);
    const sessionsEnded = await staff.deleteSessionsOf(trx, row.id, user.sessionHash);
    const revokedResets = await staff.revokePasswordResetsOf(trx, row.id, now);
    await insertAudit(
      trx,
      staffActor(user, requestId),
      { action: 'staff.change_password', target: `staff:${row.email_key}`, before: null, after: { sessionsEnded, revokedResets } },
      now,
    );
    return { sessionsEnded, revokedResets };
  });
}

/** The signed-in staff member's live sessions, newest activity first; `current` marks the one asking. */
export async function mySessions(db: Db, user: ConsoleUser, now: number) {
  return (await staff.listSessionsOf(db, user.staffId, now)).map((s) => ({
    current: s.id_hash === user.sessionHash,
    address: s.address,
    createdAt: s.created_at,
    lastSeenAt: s.last_seen_at,
  }));
}

/** Ends every session of the signed-in staff member, this one included. */
export async function signOutEverywhere(db: Db, user: ConsoleUser, requestId: string, now: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const sessionsEnded = await staff.deleteSessionsOf(trx, user.staffId);
    await insertAudit(
      trx,
      staffActor(user, requestId),
      { action: 'staff.sign_out_everywhere', target: `staff:${emailKey(user.email)}`, before: null, after: { sessionsEnded } },
      now,
    );
    return sessionsEnded;
  });
}

/** Sessions deleted per statement by the purge job. */
const PURGE_BATCH = 500;

/**
 * Deletes every expired console session, in batches of PURGE_BATCH, at most `maxBatches` per call;
 * returns how many went. Expired sessions already sign nobody in (resumeSession checks); this keeps
 * the ones nobody comes back for from piling up. Run by the worker role (jobs/purger.ts).
 */
export async function purgeExpiredSessions(db: Db, limits: SessionLimits, now: number, maxBatches = 100): Promise<number> {
  let purged = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    // A transaction per batch: each commits on its own, so no lock is held across the whole purge.
    const deleted = await db.transaction().execute((trx) => staff.purgeExpiredSessions(trx, now, limits, PURGE_BATCH));
    purged += deleted;
    if (deleted < PURGE_BATCH) break;
  }
  return purged;
}
