import { Secret, TOTP as Totp } from 'otpauth';
import { systemActor, type Actor, type AuditAction, type AuditSummary } from '../domain/audit.ts';
import { AppError, conflictState, fieldError, notFound } from '../domain/errors.ts';
import {
  INVITATION_TTL_MS,
  newRecoveryCode,
  PASSWORD_RESET_TTL_MS,
  RECOVERY_CODE_COUNT,
  recoveryCodeKey,
  TOTP,
  totpStep,
  type MerchantRole,
} from '../domain/merchant-users.ts';
import { weakPasswordProblem } from '../domain/password-strength.ts';
import { hashSecret, randomToken } from '../domain/secrets.ts';
import { emailKey, SESSION_TOUCH_EVERY_MS, sessionExpiry, type SessionLimits } from '../domain/staff.ts';
import { auditIn, insertAudit } from '../store/audit.repository.ts';
import type { Db, Trx } from '../store/db.ts';
import { findMerchant, merchantOfScope, setRequireTwoFactor } from '../store/merchants.repository.ts';
import * as users from '../store/merchant-users.repository.ts';
import { forMerchant, transactionIn, type MerchantScope } from '../store/tenancy.ts';
import { checkEmail, generatePassword, hashPassword, verifyPassword } from './staff.service.ts';

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

export const merchantUserActor = (user: { userId: number }, requestId: string | null): Actor => ({ kind: 'merchant_user', id: String(user.userId), requestId });

/** The password rule (domain/password-strength.ts): the account's address counts as a guess of its own. */
function checkPassword(password: string, email: string) {
  const problem = weakPasswordProblem(password, [email]);
  if (problem) throw fieldError('password', problem);
}

// ---- Invitations.

export interface Invitation {
  invitationId: number;
  merchantId: number;
  email: string;
  role: MerchantRole;
  /** The one-time token of the link (only its hash is stored). */
  token: string;
  expiresAt: number;
}

/**
 * The operator (or a merchant admin) invites someone to a merchant's business manager: a one-time
 * link, valid INVITATION_TTL_MS. Refused only when the address is on this merchant's team already:
 * an account at another merchant is a different account and changes nothing here (Hardening III, 6).
 */
export async function inviteUser(merchant: MerchantScope<Db>, actor: Actor, input: { email: string; role: MerchantRole }, now: number): Promise<Invitation> {
  const email = checkEmail(input.email);
  return transactionIn(merchant, async (scope) => {
    if (!(await merchantOfScope(scope))) throw notFound('merchant');
    return invite(scope, actor, email, input.role, now);
  });
}

async function invite(scope: MerchantScope<Trx>, actor: Actor, email: string, role: MerchantRole, now: number): Promise<Invitation> {
  const { merchantId } = scope;
  if (await users.findTeamMemberByEmail(scope, emailKey(email))) throw new AppError('conflict', 40903, `${emailKey(email)} is on this team already`);
  const token = randomToken(43);
  // A new invitation replaces the address's open ones: the last link handed out is the one that works.
  const replaced = await users.revokeOpenInvitations(scope, { emailKey: emailKey(email) }, now);
  const row = await users.insertInvitation(scope, {
    email,
    email_key: emailKey(email),
    role,
    token_hash: hashSecret(token),
    expires_at: now + INVITATION_TTL_MS,
    accepted_at: null,
    revoked_at: null,
    created_by: `${actor.kind}:${actor.id}`,
    created_at: now,
  });
  await auditIn(
    scope,
    actor,
    {
      action: 'merchant_user.invite',
      target: `merchant_user:${row.email_key}`,
      before: null,
      after: { role: row.role, expiresAt: row.expires_at, revokedInvitations: replaced.length },
    },
    now,
  );
  return { invitationId: row.id, merchantId, email, role: row.role, token, expiresAt: row.expires_at };
}

/**
 * The operator sends an open invitation again: a fresh link for the same address and role, valid
 * INVITATION_TTL_MS from now; the old link stops at once. Another merchant's invitation, or one
 * used, revoked or expired, is 404 (an expired one is invited anew instead).
 */
export async function resendInvitation(merchant: MerchantScope<Db>, actor: Actor, invitationId: number, now: number): Promise<Invitation> {
  return transactionIn(merchant, async (scope) => {
    if (!(await merchantOfScope(scope))) throw notFound('merchant');
    const open = (await users.listOpenInvitations(scope, now)).find((i) => i.id === invitationId);
    if (!open) throw notFound('open invitation');
    return invite(scope, actor, open.email, open.role, now);
  });
}

/** The invitation a link names, while it can still be accepted; null for unknown, used or expired alike. */
export async function openInvitation(db: Db, token: string, now: number) {
  if (!/^[A-Za-z0-9]{43}$/.test(token)) return null;
  const row = await users.findInvitationByHash(db, hashSecret(token));
  if (!row || row.accepted_at !== null || row.revoked_at !== null || row.expires_at <= now) return null;
  return row;
}

/** The merchant's open invitations (the team page, the operator API). */
export const openInvitations = (merchant: MerchantScope, now: number) => users.listOpenInvitations(merchant, now);

/**
 * An admin or the operator revokes an open invitation of this merchant: its link stops at once.
 * Another merchant's invitation, or one used, revoked or expired, is 404.
 */
export async function revokeInvitation(merchant: MerchantScope<Db>, actor: Actor, invitationId: number, now: number): Promise<users.InvitationRow> {
  return transactionIn(merchant, async (scope) => {
    if (!(await merchantOfScope(scope))) throw notFound('merchant');
    const [row] = await users.revokeOpenInvitations(scope, { id: invitationId }, now);
    if (!row) throw notFound('open invitation');
    await auditIn(
      scope,
      actor,
      { action: 'merchant_user.revoke_invitation', target: `merchant_user:${row.email_key}`, before: { role: row.role }, after: null },
      now,
    );
    return row;
  });
}

/** Sets the password and creates the account; the link works once. */
export async function acceptInvitation(db: Db, token: string, password: string, requestId: string, now: number): Promise<users.MerchantUserRow> {
  const invitation = await openInvitation(db, token, now);
  if (!invitation) throw notFound('invitation (it may have expired or been used already)');
  checkPassword(password, invitation.email);
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    if (!(await users.claimInvitation(trx, invitation.id, now))) throw notFound('invitation (it may have expired or been used already)');
    if (await users.findTeamMemberByEmail(forMerchant(trx, invitation.merchant_id), invitation.email_key))
      throw new AppError('conflict', 40903, `${invitation.email_key} is on this team already`);
    const user = await users.insertUser(forMerchant(trx, invitation.merchant_id), {
      email: invitation.email,
      email_key: invitation.email_key,
      role: invitation.role,
      password_hash: passwordHash,
      totp_secret: null,
      totp_pending_secret: null,
      totp_last_step: null,
      last_sign_in_at: null,
      password_changed_at: now,
      created_at: now,
      updated_at: now,
    });
    // Any other link for this address (an earlier role, say) stops working now.
    const others = await users.revokeOpenInvitations(forMerchant(trx, invitation.merchant_id), { emailKey: invitation.email_key }, now);
    await insertAudit(
      trx,
      merchantUserActor({ userId: user.id }, requestId),
      {
        action: 'merchant_user.accept',
        target: `merchant_user:${user.email_key}`,
        before: null,
        after: { role: user.role, revokedInvitations: others.length },
        merchantId: user.merchant_id,
      },
      now,
    );
    return user;
  });
}

/**
 * The demo merchant's business manager admin that `npm start` creates in the sandbox (demo data
 * only) when the merchant has no user yet: invited and accepted at once with a generated password,
 * which the caller prints once. Null when the merchant has a user already.
 */
export async function ensureDemoManager(db: Db, merchant: MerchantScope<Db>, email: string, now: number): Promise<{ email: string; password: string } | null> {
  if ((await users.listTeam(merchant)).length > 0) return null;
  const invitation = await inviteUser(merchant, systemActor('demo-seed'), { email, role: 'admin' }, now);
  const password = generatePassword();
  await acceptInvitation(db, invitation.token, password, 'demo-seed', now);
  return { email, password };
}

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
  const accounts = (await users.findUsersByEmail(db, emailKey(input.email))).filter(
    (a) => input.merchantId === undefined || a.merchant_id === input.merchantId,
  );
  // No account: one check against a decoy hash, so an unknown address takes as long as a wrong password.
  if (accounts.length === 0) {
    await verifyPassword(null, input.password);
    return null;
  }
  const opened = [];
  for (const account of accounts) if (await verifyPassword(account.password_hash, input.password)) opened.push(account);
  const active = opened.filter((a) => a.merchant_status === 'active');
  if (active.length === 0) return null;
  if (active.length > 1) return { choose: active.map((a) => ({ merchantId: a.merchant_id, merchantName: a.merchant_name })) };
  const { merchant_name: _name, merchant_status: _status, ...row } = active[0];
  const sessionId = randomToken(43);
  const stage = row.totp_secret ? 'password' : 'complete';
  await db.transaction().execute(async (trx) => {
    await users.deleteExpiredSessionsOf(trx, row.id, now);
    await users.insertSession(trx, {
      id_hash: hashSecret(sessionId),
      user_id: row.id,
      csrf_secret: randomToken(32),
      stage,
      address: input.address,
      created_at: now,
      last_seen_at: now,
      idle_expires_at: now + limits.idleMs,
      expires_at: now + limits.maxMs,
    });
    if (stage === 'complete') await recordSignIn(trx, row, input.address, input.requestId, now);
  });
  return { sessionId, stage };
}

async function recordSignIn(trx: Parameters<typeof insertAudit>[0], row: users.MerchantUserRow, address: string | null, requestId: string, now: number) {
  await users.updateUser(trx, row.id, { last_sign_in_at: now }, now);
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

/** The session a cookie names, if it still counts (see console-sessions.service.ts: the same rules). */
export async function resumeSession(db: Db, sessionId: string, limits: SessionLimits, now: number): Promise<ManagerUser | null> {
  const sessionHash = hashSecret(sessionId);
  const s = await users.findSession(db, sessionHash);
  if (!s) return null;
  if (s.merchantStatus !== 'active' || sessionExpiry({ createdAt: s.createdAt, lastSeenAt: s.lastSeenAt }, limits, now) !== null) {
    await db.transaction().execute((trx) => users.deleteSession(trx, sessionHash));
    return null;
  }
  if (now - s.lastSeenAt >= SESSION_TOUCH_EVERY_MS)
    await db.transaction().execute((trx) => users.touchSession(trx, sessionHash, now, Math.min(now + limits.idleMs, s.expiresAt)));
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

/** Checks a code (±1 step of clock drift) and takes its step, so the same code never works twice. */
async function takeCode(db: Parameters<typeof users.claimTotpStep>[0], userId: number, secret: string, code: string, now: number): Promise<boolean> {
  if (!/^\d{6}$/.test(code)) return false;
  const delta = Totp.validate({
    token: code,
    secret: Secret.fromBase32(secret),
    algorithm: TOTP.algorithm,
    digits: TOTP.digits,
    period: TOTP.period,
    timestamp: now,
    window: 1,
  });
  if (delta === null) return false;
  return users.claimTotpStep(db, userId, totpStep(now) + delta);
}

/**
 * The second step of signing in: a TOTP code, or one of the account's unused recovery codes (used
 * up by this, and audited with how many are left), completes the session.
 */
export async function verifySignInCode(db: Db, user: ManagerUser, code: string, address: string | null, requestId: string, now: number): Promise<boolean> {
  const row = await users.findUserById(db, user.userId);
  if (!row?.totp_secret) return false;
  const recoveryKey = recoveryCodeKey(code);
  return db.transaction().execute(async (trx) => {
    if (recoveryKey !== null) {
      const scope = forMerchant(trx, row.merchant_id);
      if (!(await users.claimRecoveryCode(scope, row.id, hashSecret(recoveryKey), now))) return false;
      await insertAudit(
        trx,
        merchantUserActor(user, requestId),
        {
          action: 'merchant_user.use_recovery_code',
          target: `merchant_user:${row.email_key}`,
          before: null,
          after: { recoveryCodesLeft: await users.countUnusedRecoveryCodes(scope, row.id) },
          merchantId: row.merchant_id,
        },
        now,
      );
    } else if (!(await takeCode(trx, row.id, row.totp_secret!, code, now))) return false;
    await users.completeSession(trx, user.sessionHash);
    await recordSignIn(trx, row, address, requestId, now);
    return true;
  });
}

export async function signOut(db: Db, user: ManagerUser, requestId: string, now: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (await users.deleteSession(trx, user.sessionHash))
      await insertAudit(
        trx,
        merchantUserActor(user, requestId),
        { action: 'merchant_user.sign_out', target: `merchant_user:${emailKey(user.email)}`, before: null, after: null, merchantId: user.merchantId },
        now,
      );
  });
}

// ---- Two-factor.

/** The secret being enrolled (made on first view, kept until a code confirms it) and its otpauth:// URI. */
export async function pendingTwoFactor(db: Db, user: ManagerUser, now: number): Promise<{ secret: string; uri: string }> {
  const row = (await users.findUserById(db, user.userId))!;
  let secret = row.totp_pending_secret;
  if (!secret) {
    secret = new Secret({ size: 20 }).base32;
    const pending = secret;
    await db.transaction().execute((trx) => users.updateUser(trx, row.id, { totp_pending_secret: pending }, now));
  }
  const totp = new Totp({
    issuer: TOTP.issuer,
    label: row.email,
    algorithm: TOTP.algorithm,
    digits: TOTP.digits,
    period: TOTP.period,
    secret: Secret.fromBase32(secret),
  });
  return { secret, uri: totp.toString() };
}

/** What turning two-factor on or off asks for: the account's current password and a code (Hardening III, 3). */
export interface TwoFactorProof {
  password: string;
  code: string;
}

const WRONG_PROOF = 'or the code is not right: enter your current password and the code the app shows now';

/** Makes RECOVERY_CODE_COUNT new recovery codes for the user, replacing any they had; returns them (the only time they are seen). */
async function newRecoveryCodes(trx: Trx, row: users.MerchantUserRow, now: number): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  await users.replaceRecoveryCodes(
    forMerchant(trx, row.merchant_id),
    row.id,
    codes.map((c) => hashSecret(recoveryCodeKey(c)!)),
    now,
  );
  return codes;
}

/**
 * Turns two-factor sign-in on; returns the account's new recovery codes, to be shown this once.
 * `actor` carries the web form's one-time key: its audit row is written first in the
 * transaction, so a second submission of the same form (a double click) stops there
 * (FormAlreadySent) instead of failing on the code the first one just used.
 */
export async function enableTwoFactor(db: Db, user: ManagerUser, actor: Actor, proof: TwoFactorProof, now: number): Promise<{ recoveryCodes: string[] }> {
  const row = (await users.findUserById(db, user.userId))!;
  if (!row.totp_secret && !row.totp_pending_secret) throw conflictState('open the two-factor page first: it shows the key to add to your app');
  const passwordRight = await verifyPassword(row.password_hash, proof.password);
  if (!row.totp_secret && !passwordRight) throw fieldError('password', WRONG_PROOF);
  return db.transaction().execute(async (trx) => {
    await insertAudit(
      trx,
      actor,
      {
        action: 'merchant_user.enable_two_factor',
        target: `merchant_user:${row.email_key}`,
        before: { twoFactor: false },
        after: { twoFactor: true, recoveryCodes: RECOVERY_CODE_COUNT },
        merchantId: user.merchantId,
      },
      now,
    );
    const current = (await users.findUserById(trx, row.id))!;
    if (current.totp_secret) throw conflictState('two-factor sign-in is already on for this account');
    if (!passwordRight || !current.totp_pending_secret || !(await takeCode(trx, row.id, current.totp_pending_secret, proof.code, now)))
      throw fieldError('password', WRONG_PROOF);
    await users.updateUser(trx, row.id, { totp_secret: current.totp_pending_secret, totp_pending_secret: null }, now);
    return { recoveryCodes: await newRecoveryCodes(trx, row, now) };
  });
}

export async function disableTwoFactor(db: Db, user: ManagerUser, proof: TwoFactorProof, requestId: string, now: number): Promise<void> {
  const row = (await users.findUserById(db, user.userId))!;
  const merchant = (await findMerchant(db, user.merchantId))!;
  if (merchant.require_two_factor === 1) throw conflictState('your team requires two-factor sign-in; an admin can lift the requirement on the Team page');
  if (!row.totp_secret) throw conflictState('two-factor sign-in is not on for this account');
  if (!(await verifyPassword(row.password_hash, proof.password))) throw fieldError('password', WRONG_PROOF);
  await db.transaction().execute(async (trx) => {
    if (!(await takeCode(trx, row.id, row.totp_secret!, proof.code, now))) throw fieldError('password', WRONG_PROOF);
    await users.updateUser(trx, row.id, { totp_secret: null, totp_last_step: null }, now);
    await users.replaceRecoveryCodes(forMerchant(trx, row.merchant_id), row.id, [], now);
    await insertAudit(
      trx,
      merchantUserActor(user, requestId),
      {
        action: 'merchant_user.disable_two_factor',
        target: `merchant_user:${row.email_key}`,
        before: { twoFactor: true },
        after: { twoFactor: false },
        merchantId: user.merchantId,
      },
      now,
    );
  });
}

/** How many unused recovery codes the signed-in user has (the two-factor page says it). */
export const recoveryCodesLeft = (db: Db, user: ManagerUser) => users.countUnusedRecoveryCodes(forMerchant(db, user.merchantId), user.userId);

/**
 * New recovery codes in place of the old ones (used or not), for a user with two-factor sign-in
 * on. Proof is the current password or a current TOTP code (a password is 12+ characters, a code
 * 6 digits, so one field takes either). Returns the codes, to be shown this once.
 */
export async function regenerateRecoveryCodes(db: Db, user: ManagerUser, actor: Actor, proof: string, now: number): Promise<{ recoveryCodes: string[] }> {
  const row = (await users.findUserById(db, user.userId))!;
  if (!row.totp_secret) throw conflictState('two-factor sign-in is not on for this account: turn it on first');
  const isCode = /^\d{6}$/.test(proof);
  const wrong = 'is not your current password nor a current code from your app';
  if (!isCode && !(await verifyPassword(row.password_hash, proof))) throw fieldError('password or code', wrong);
  return db.transaction().execute(async (trx) => {
    // The audit row (and with it the form's one-time key) first: a second submission of the same
    // form stops here rather than replace the codes the first one showed.
    await insertAudit(
      trx,
      actor,
      {
        action: 'merchant_user.regenerate_recovery_codes',
        target: `merchant_user:${row.email_key}`,
        before: null,
        after: { recoveryCodes: RECOVERY_CODE_COUNT, proof: isCode ? 'code' : 'password' },
        merchantId: user.merchantId,
      },
      now,
    );
    if (isCode && !(await takeCode(trx, row.id, row.totp_secret!, proof, now))) throw fieldError('password or code', wrong);
    return { recoveryCodes: await newRecoveryCodes(trx, row, now) };
  });
}

/**
 * Someone who lost their authenticator and recovery codes: a merchant admin (Team page, another
 * member only — your own you turn off with a code) or the operator (`stockist merchant
 * reset-two-factor`) turns the account's two-factor off. Its TOTP key, pending key and recovery
 * codes go, and every session of the account ends; the password is unchanged, so the person signs
 * in with it and enrols again (at once, where the merchant requires two-factor). Another
 * merchant's account is 404; an account without two-factor is 409.
 */
export async function resetTwoFactor(
  merchant: MerchantScope<Db>,
  actor: Actor,
  account: { userId: number } | { email: string },
  now: number,
): Promise<{ email: string; sessionsEnded: number }> {
  return transactionIn(merchant, async (scope) => {
    if (!(await merchantOfScope(scope))) throw notFound('merchant');
    const member = 'userId' in account ? await users.findTeamMember(scope, account.userId) : await users.findTeamMemberByEmail(scope, emailKey(account.email));
    if (!member) throw notFound('team member');
    if (actor.kind === 'merchant_user' && actor.id === String(member.id))
      throw conflictState('this is your own account: turn two-factor off on your Two-factor page, with a code');
    if (!member.totp_secret) throw conflictState('two-factor sign-in is not on for this account');
    await users.updateTeamMember(scope, member.id, { totp_secret: null, totp_pending_secret: null, totp_last_step: null }, now);
    await users.replaceRecoveryCodes(scope, member.id, [], now);
    const sessionsEnded = await users.deleteSessionsOfMember(scope, member.id);
    await auditIn(
      scope,
      actor,
      {
        action: 'merchant_user.reset_two_factor',
        target: `merchant_user:${member.email_key}`,
        before: { twoFactor: true },
        after: { twoFactor: false, sessionsEnded },
      },
      now,
    );
    return { email: member.email, sessionsEnded };
  });
}

// ---- Own account: password and sessions (Hardening III, 5).

/**
 * Changes the signed-in user's password: the current one is required, every other session of the
 * account ends (whoever else held it is signed out; this one stays), and so do the account's open
 * reset links: a link made before the change would otherwise undo it (issue 44, 12).
 */
export async function changePassword(
  db: Db,
  user: ManagerUser,
  input: { current: string; password: string },
  requestId: string,
  now: number,
): Promise<{ sessionsEnded: number; revokedResets: number }> {
  const row = (await users.findUserById(db, user.userId))!;
  if (!(await verifyPassword(row.password_hash, input.current))) throw fieldError('current', 'is not your current password');
  checkPassword(input.password, row.email);
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    await users.updateUser(trx, row.id, { password_hash: passwordHash, password_changed_at: now }, now);
    const sessionsEnded = await users.deleteSessionsOf(trx, row.id, user.sessionHash);
    const revokedResets = await users.revokePasswordResetsOf(forMerchant(trx, row.merchant_id), row.id, now);
    await insertAudit(
      trx,
      merchantUserActor(user, requestId),
      {
        action: 'merchant_user.change_password',
        target: `merchant_user:${row.email_key}`,
        before: null,
        after: { sessionsEnded, revokedResets },
        merchantId: user.merchantId,
      },
      now,
    );
    return { sessionsEnded, revokedResets };
  });
}

/** The signed-in user's sessions that still count, newest activity first; `current` marks the one asking. */
export async function mySessions(db: Db, user: ManagerUser, now: number) {
  return (await users.listSessionsOf(db, user.userId, now)).map((s) => ({
    current: s.id_hash === user.sessionHash,
    stage: s.stage,
    address: s.address,
    createdAt: s.created_at,
    lastSeenAt: s.last_seen_at,
  }));
}

/** Ends every session of the signed-in user, this one included. */
export async function signOutEverywhere(db: Db, user: ManagerUser, requestId: string, now: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const sessionsEnded = await users.deleteSessionsOf(trx, user.userId);
    await insertAudit(
      trx,
      merchantUserActor(user, requestId),
      {
        action: 'merchant_user.sign_out_everywhere',
        target: `merchant_user:${emailKey(user.email)}`,
        before: null,
        after: { sessionsEnded },
        merchantId: user.merchantId,
      },
      now,
    );
    return sessionsEnded;
  });
}

// ---- Password resets: a one-time link made by a merchant admin or the operator.

export interface PasswordReset {
  email: string;
  /** The one-time token of the link (only its hash is stored). */
  token: string;
  expiresAt: number;
}

/**
 * Makes a reset link for one account of this merchant (by id from the Team page, by address from
 * the operator API): valid PASSWORD_RESET_TTL_MS, once; the account's older links stop. Another
 * merchant's account is 404. Nothing changes until the link is used: the password still works.
 */
export async function createPasswordReset(
  merchant: MerchantScope<Db>,
  actor: Actor,
  account: { userId: number } | { email: string },
  now: number,
): Promise<PasswordReset> {
  return transactionIn(merchant, async (scope) => {
    if (!(await merchantOfScope(scope))) throw notFound('merchant');
    const member = 'userId' in account ? await users.findTeamMember(scope, account.userId) : await users.findTeamMemberByEmail(scope, emailKey(account.email));
    if (!member) throw notFound('team member');
    const replaced = await users.revokePasswordResetsOf(scope, member.id, now);
    const token = randomToken(43);
    const row = await users.insertPasswordReset(scope, {
      user_id: member.id,
      token_hash: hashSecret(token),
      expires_at: now + PASSWORD_RESET_TTL_MS,
      used_at: null,
      revoked_at: null,
      created_by: `${actor.kind}:${actor.id}`,
      created_at: now,
    });
    await auditIn(
      scope,
      actor,
      {
        action: 'merchant_user.create_password_reset',
        target: `merchant_user:${member.email_key}`,
        before: null,
        after: { expiresAt: row.expires_at, revokedResets: replaced },
      },
      now,
    );
    return { email: member.email, token, expiresAt: row.expires_at };
  });
}

/** The reset a link names while it can still be used; null for unknown, used, revoked and expired alike. */
export async function openPasswordReset(db: Db, token: string, now: number) {
  if (!/^[A-Za-z0-9]{43}$/.test(token)) return null;
  const row = await users.findPasswordResetByHash(db, hashSecret(token));
  if (!row || row.used_at !== null || row.revoked_at !== null || row.expires_at <= now) return null;
  return row;
}

/**
 * Sets the password a reset link is for, once, and ends every session of the account. Two-factor
 * stays as it was: whoever holds the link still needs the account's code to sign in.
 */
export async function completePasswordReset(db: Db, token: string, password: string, requestId: string, now: number): Promise<{ sessionsEnded: number }> {
  const reset = await openPasswordReset(db, token, now);
  if (!reset) throw notFound('password reset link (it may have expired or been used already)');
  checkPassword(password, reset.email);
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    if (!(await users.claimPasswordReset(trx, reset.id, now))) throw notFound('password reset link (it may have expired or been used already)');
    await users.updateUser(trx, reset.user_id, { password_hash: passwordHash, password_changed_at: now }, now);
    const sessionsEnded = await users.deleteSessionsOf(trx, reset.user_id);
    await insertAudit(
      trx,
      merchantUserActor({ userId: reset.user_id }, requestId),
      {
        action: 'merchant_user.reset_password',
        target: `merchant_user:${reset.email_key}`,
        before: null,
        after: { sessionsEnded },
        merchantId: reset.merchant_id,
      },
      now,
    );
    return { sessionsEnded };
  });
}

// ---- Team (merchant admins).

export async function team(scope: MerchantScope, now: number) {
  const [members, invitations, merchant] = await Promise.all([users.listTeam(scope), users.listOpenInvitations(scope, now), merchantOfScope(scope)]);
  return { members, invitations, requireTwoFactor: merchant?.require_two_factor === 1 };
}

/** A merchant keeps at least one admin: otherwise nobody could manage its team again without the operator. */
async function keepsAnAdmin(scope: MerchantScope, member: users.MerchantUserRow, newRole: MerchantRole | null) {
  if (member.role === 'admin' && newRole !== 'admin' && (await users.countAdmins(scope)) <= 1)
    throw conflictState('this is the merchant’s only admin; make someone else admin first');
}

export async function changeRole(merchant: MerchantScope<Db>, user: ManagerUser, userId: number, role: MerchantRole, requestId: string, now: number) {
  return transactionIn(merchant, async (scope) => {
    const member = await users.findTeamMember(scope, userId);
    if (!member) throw notFound('team member');
    await keepsAnAdmin(scope, member, role);
    const row = await users.updateTeamMember(scope, member.id, { role }, now);
    await auditIn(
      scope,
      merchantUserActor(user, requestId),
      {
        action: 'merchant_user.change_role',
        target: `merchant_user:${row.email_key}`,
        before: { role: member.role },
        after: { role },
      },
      now,
    );
    return row;
  });
}

/** Removes a member: the account and its sessions go at once. */
export const removeMember = (merchant: MerchantScope<Db>, user: ManagerUser, userId: number, requestId: string, now: number) =>
  removeTeamMember(merchant, merchantUserActor(user, requestId), userId, now);

/**
 * Removes a member of this merchant's team, by one of its admins or by the operator (the console's
 * merchant page); the merchant keeps at least one admin either way. Another merchant's user is 404.
 */
export async function removeTeamMember(merchant: MerchantScope<Db>, actor: Actor, userId: number, now: number) {
  await transactionIn(merchant, async (scope) => {
    const member = await users.findTeamMember(scope, userId);
    if (!member) throw notFound('team member');
    await keepsAnAdmin(scope, member, null);
    await users.deleteUser(scope, member.id);
    // An open link for the address would bring the member back: it goes too.
    const links = await users.revokeOpenInvitations(scope, { emailKey: member.email_key }, now);
    await auditIn(
      scope,
      actor,
      {
        action: 'merchant_user.remove',
        target: `merchant_user:${member.email_key}`,
        before: { role: member.role },
        after: links.length > 0 ? { revokedInvitations: links.length } : null,
      },
      now,
    );
  });
}

export async function requireTwoFactor(db: Db, user: ManagerUser, required: boolean, requestId: string, now: number) {
  await db.transaction().execute(async (trx) => {
    const merchant = (await findMerchant(trx, user.merchantId))!;
    await setRequireTwoFactor(trx, user.merchantId, required, now);
    await insertAudit(
      trx,
      merchantUserActor(user, requestId),
      {
        action: 'merchant.require_two_factor',
        target: `merchant:${user.merchantId}`,
        before: { requireTwoFactor: merchant.require_two_factor === 1 },
        after: { requireTwoFactor: required },
        merchantId: user.merchantId,
      },
      now,
    );
  });
}

/** The audit row of a business manager change made through another service (webhooks), written in that change's transaction. */
export const auditWrite =
  (actor: Actor, action: AuditAction, now: number, after: AuditSummary | null = null) =>
  (scope: MerchantScope<Trx>, target: string) =>
    auditIn(scope, actor, { action, target, before: null, after }, now);

const SESSION_PURGE_BATCH = 500;

/** Deletes expired manager sessions nobody came back for, in batches of 500, at most `maxBatches` a call (the worker's purge). */
export async function purgeExpiredManagerSessions(db: Db, now: number, maxBatches = 100): Promise<number> {
  let purged = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    // A transaction per batch: each commits on its own, so no lock is held across the whole purge.
    const deleted = await db.transaction().execute((trx) => users.purgeExpiredSessions(trx, now, SESSION_PURGE_BATCH));
    purged += deleted;
    if (deleted < SESSION_PURGE_BATCH) break;
  }
  return purged;
}
