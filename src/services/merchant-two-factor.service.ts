import { Secret, TOTP as Totp } from 'otpauth';
import type { Actor } from '../domain/audit.ts';
import { conflictState, fieldError, notFound } from '../domain/errors.ts';
import { newRecoveryCode, RECOVERY_CODE_COUNT, recoveryCodeKey, TOTP, totpStep } from '../domain/merchant-users.ts';
import { hashSecret } from '../domain/secrets.ts';
import { emailKey } from '../domain/staff.ts';
import { MERCHANT_USER_ACCOUNTS, updateAccount } from '../store/accounts.repository.ts';
import { auditIn, insertAudit } from '../store/audit.repository.ts';
import type { Db, Trx } from '../store/db.ts';
import { findMerchant, merchantOfScope } from '../store/merchants.repository.ts';
import * as users from '../store/merchant-users.repository.ts';
import { forMerchant, transactionIn, type MerchantScope } from '../store/tenancy.ts';
import * as accounts from './accounts.service.ts';
import { merchantUserActor, recordSignIn, type ManagerUser } from './manager-sessions.service.ts';

/**
 * Two-factor sign-in of business manager users (only they have it): TOTP enrolment, the second
 * sign-in step, recovery codes, and an admin's or the operator's reset.
 */

/** Checks a code (±1 step of clock drift) and takes its step, so the same code never works twice. */
async function takeCode(db: Trx, userId: number, secret: string, code: string, now: number): Promise<boolean> {
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

/** The secret being enrolled (made on first view, kept until a code confirms it) and its otpauth:// URI. */
export async function pendingTwoFactor(db: Db, user: ManagerUser, now: number): Promise<{ secret: string; uri: string }> {
  const row = (await users.findUserById(db, user.userId))!;
  let secret = row.totp_pending_secret;
  if (!secret) {
    secret = new Secret({ size: 20 }).base32;
    const pending = secret;
    await db.transaction().execute((trx) => updateAccount(trx, MERCHANT_USER_ACCOUNTS, row.id, { totp_pending_secret: pending }, now));
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
  const passwordRight = await accounts.verifyPassword(row.password_hash, proof.password);
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
    await updateAccount(trx, MERCHANT_USER_ACCOUNTS, row.id, { totp_secret: current.totp_pending_secret, totp_pending_secret: null }, now);
    return { recoveryCodes: await newRecoveryCodes(trx, row, now) };
  });
}

export async function disableTwoFactor(db: Db, user: ManagerUser, proof: TwoFactorProof, requestId: string, now: number): Promise<void> {
  const row = (await users.findUserById(db, user.userId))!;
  const merchant = (await findMerchant(db, user.merchantId))!;
  if (merchant.require_two_factor === 1) throw conflictState('your team requires two-factor sign-in; an admin can lift the requirement on the Team page');
  if (!row.totp_secret) throw conflictState('two-factor sign-in is not on for this account');
  if (!(await accounts.verifyPassword(row.password_hash, proof.password))) throw fieldError('password', WRONG_PROOF);
  await db.transaction().execute(async (trx) => {
    if (!(await takeCode(trx, row.id, row.totp_secret!, proof.code, now))) throw fieldError('password', WRONG_PROOF);
    await updateAccount(trx, MERCHANT_USER_ACCOUNTS, row.id, { totp_secret: null, totp_last_step: null }, now);
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
  if (!isCode && !(await accounts.verifyPassword(row.password_hash, proof))) throw fieldError('password or code', wrong);
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
