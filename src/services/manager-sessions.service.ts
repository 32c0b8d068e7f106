import type { Actor } from '../domain/audit.ts';
import type { MerchantRole } from '../domain/merchant-users.ts';
import { hashSecret, randomToken } from '../domain/secrets.ts';
import { emailKey, type SessionLimits } from '../domain/staff.ts';
import { listSessionsOf, MERCHANT_USER_ACCOUNTS, recordSignInTime, type NewSession } from '../store/accounts.repository.ts';
import { insertAudit } from '../store/audit.repository.ts';
import type { Db, Trx } from '../store/db.ts';
import * as users from '../store/merchant-users.repository.ts';
import * as accounts from './accounts.service.ts';

/**
 * The business manager's sessions and a merchant user's own account (password, sessions, reset
 * link): the console's steps (accounts.service.ts) plus what only merchant users have, an address
 * with accounts at several merchants and a second sign-in step. Invitations, the team and
 * two-factor: merchant-invitations, merchant-team and merchant-two-factor services.
 */

/** A signed-in business manager user, as every /manager request sees them. */
export interface ManagerUser {
  userId: number;
  merchantId: number;
  merchantName: string;
  email: string;
  role: MerchantRole;
  csrfSecret: string;
  sessionHash: string;
  /** `password`: a TOTP code is still due before anything else is allowed. */
  stage: 'password' | 'complete';
  twoFactor: boolean;
  /** The merchant requires two-factor sign-in and this user has not enrolled yet. */
  mustEnrol: boolean;
}

export const merchantUserActor = (user: { userId: number }, requestId: string | null): Actor =>
  accounts.accountActor(MERCHANT_USER_ACCOUNTS, user.userId, requestId);

/** What the shared account steps (services/accounts.service.ts) need of a merchant user. */
const signedIn = (user: ManagerUser): accounts.SignedInAccount => ({
  accountId: user.userId,
  email: user.email,
  sessionHash: user.sessionHash,
  merchantId: user.merchantId,
});

// ---- Sessions.

/** A business whose account the email and password open, when they open more than one. */
export interface SignInChoice {
  merchantId: number;
  merchantName: string;
}

/**
 * Checks an email and password and opens a session: complete, or (the user has TOTP) waiting for a
 * code. An address may have an account at several merchants (0030): the password is checked
 * against each (`merchantId` narrows to one), and when it opens more than one the caller asks
 * which (`choose`). Wrong email, wrong password and a disabled merchant all answer null.
 */
export async function signIn(
  db: Db,
  input: { email: string; password: string; address: string | null; requestId: string; merchantId?: number },
  limits: SessionLimits,
  now: number,
): Promise<{ sessionId: string; stage: 'password' | 'complete' } | { choose: SignInChoice[] } | null> {
  const candidates = (await users.findUsersByEmail(db, emailKey(input.email))).filter(
    (a) => input.merchantId === undefined || a.merchant_id === input.merchantId,
  );
  // No account: one check against a decoy hash, so an unknown address takes as long as a wrong password.
  if (candidates.length === 0) {
    await accounts.verifyPassword(null, input.password);
    return null;
  }
  const opened = [];
  for (const account of candidates) if (await accounts.verifyPassword(account.password_hash, input.password)) opened.push(account);
  const active = opened.filter((a) => a.merchant_status === 'active');
  if (active.length === 0) return null;
  if (active.length > 1) return { choose: active.map((a) => ({ merchantId: a.merchant_id, merchantName: a.merchant_name })) };
  const { merchant_name: _name, merchant_status: _status, ...row } = active[0];
  const sessionId = randomToken(43);
  const stage = row.totp_secret ? 'password' : 'complete';
  await db.transaction().execute(async (trx) => {
    const session: NewSession<typeof MERCHANT_USER_ACCOUNTS> = {
      id_hash: hashSecret(sessionId),
      user_id: row.id,
      csrf_secret: randomToken(32),
      stage,
      address: input.address,
    };
    await accounts.startSession(trx, MERCHANT_USER_ACCOUNTS, row.id, session, limits, now);
    if (stage === 'complete') await recordSignIn(trx, row, input.address, input.requestId, now);
  });
  return { sessionId, stage };
}

/** A completed sign-in (the password, and the code where one is due): noted on the account and audited. */
export async function recordSignIn(trx: Trx, row: users.MerchantUserRow, address: string | null, requestId: string, now: number) {
  await recordSignInTime(trx, MERCHANT_USER_ACCOUNTS, row.id, now);
  await insertAudit(
    trx,
    merchantUserActor({ userId: row.id }, requestId),
    {
      action: 'merchant_user.sign_in',
      target: `merchant_user:${row.email_key}`,
      before: null,
      after: { address, twoFactor: row.totp_secret !== null },
      merchantId: row.merchant_id,
    },
    now,
  );
}

/** The session a cookie names, if it still counts (accounts.service.ts `keepSession`) and its merchant is active. */
export async function resumeSession(db: Db, sessionId: string, limits: SessionLimits, now: number): Promise<ManagerUser | null> {
  const sessionHash = hashSecret(sessionId);
  const s = await users.findSession(db, sessionHash);
  if (!s || !(await accounts.keepSession(db, MERCHANT_USER_ACCOUNTS, sessionHash, s, s.merchantStatus === 'active', limits, now))) return null;
  return {
    userId: s.userId,
    merchantId: s.merchantId,
    merchantName: s.merchantName,
    email: s.email,
    role: s.role,
    csrfSecret: s.csrfSecret,
    sessionHash,
    stage: s.stage,
    twoFactor: s.totpSecret !== null,
    mustEnrol: s.requireTwoFactor === 1 && s.totpSecret === null,
  };
}

export const signOut = (db: Db, user: ManagerUser, requestId: string, now: number): Promise<void> =>
  accounts.signOut(db, MERCHANT_USER_ACCOUNTS, signedIn(user), requestId, now);

// ---- Own account: password and sessions (Hardening III, 5).

/** Changes the signed-in user's password (accounts.service.ts `changeOwnPassword`: other sessions and open reset links end). */
export const changePassword = (db: Db, user: ManagerUser, input: { current: string; password: string }, requestId: string, now: number) =>
  accounts.changeOwnPassword(db, MERCHANT_USER_ACCOUNTS, signedIn(user), input, requestId, now);

/** The signed-in user's sessions that still count, newest activity first; `current` marks the one asking. */
export const mySessions = async (db: Db, user: ManagerUser, now: number) =>
  (await listSessionsOf(db, MERCHANT_USER_ACCOUNTS, user.userId, now)).map((s) => ({
    ...accounts.sessionView(s, user.sessionHash),
    stage: s.stage,
  }));

/** Ends every session of the signed-in user, this one included. */
export const signOutEverywhere = (db: Db, user: ManagerUser, requestId: string, now: number): Promise<number> =>
  accounts.signOutEverywhere(db, MERCHANT_USER_ACCOUNTS, signedIn(user), requestId, now);

// ---- Password reset links (made by a merchant admin or the operator: merchant-team.service.ts).

/** The reset a link names while it can still be used; null for unknown, used, revoked and expired alike. */
export async function openPasswordReset(db: Db, token: string, now: number) {
  const tokenHash = accounts.resetTokenHash(token);
  return tokenHash === null ? null : accounts.usableReset(await users.findPasswordResetByHash(db, tokenHash), now);
}

/**
 * Sets the password a reset link is for, once, and ends every session of the account. Two-factor
 * stays as it was: whoever holds the link still needs the account's code to sign in.
 */
export async function completePasswordReset(db: Db, token: string, password: string, requestId: string, now: number): Promise<{ sessionsEnded: number }> {
  const reset = await openPasswordReset(db, token, now);
  const link = reset && { id: reset.id, accountId: reset.user_id, email: reset.email, email_key: reset.email_key, merchantId: reset.merchant_id };
  return accounts.completePasswordReset(
    db,
    MERCHANT_USER_ACCOUNTS,
    link,
    password,
    'password reset link (it may have expired or been used already)',
    requestId,
    now,
  );
}

/** Deletes expired manager sessions nobody came back for (past their stored expiries), in batches (the worker's purge). */
export const purgeExpiredManagerSessions = (db: Db, now: number, maxBatches = 100): Promise<number> =>
  accounts.purgeExpiredSessions(db, MERCHANT_USER_ACCOUNTS, null, now, maxBatches);
