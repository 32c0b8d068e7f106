import { systemActor, type Actor } from '../domain/audit.ts';
import { AppError, notFound } from '../domain/errors.ts';
import { INVITATION_TTL_MS, type MerchantRole } from '../domain/merchant-users.ts';
import { hashSecret, randomToken } from '../domain/secrets.ts';
import { emailKey } from '../domain/staff.ts';
import { auditIn, insertAudit } from '../store/audit.repository.ts';
import type { Db, Trx } from '../store/db.ts';
import { merchantOfScope } from '../store/merchants.repository.ts';
import * as users from '../store/merchant-users.repository.ts';
import { transactionIn, within, type MerchantScope } from '../store/tenancy.ts';
import * as accounts from './accounts.service.ts';
import { merchantUserActor } from './manager-sessions.service.ts';

/** Invitations to a merchant's business manager: the one-time link that creates a merchant user's account. */

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
  const email = accounts.checkEmail(input.email);
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
  await accounts.checkPassword(password, invitation.email);
  const passwordHash = await accounts.hashPassword(password);
  return db.transaction().execute(async (trx) => {
    if (!(await users.claimInvitation(trx, invitation.id, now))) throw notFound('invitation (it may have expired or been used already)');
    if (await users.findTeamMemberByEmail(within(invitation.owner, trx), invitation.email_key))
      throw new AppError('conflict', 40903, `${invitation.email_key} is on this team already`);
    const user = await users.insertUser(within(invitation.owner, trx), {
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
    const others = await users.revokeOpenInvitations(within(invitation.owner, trx), { emailKey: invitation.email_key }, now);
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
  const password = accounts.generatePassword();
  await acceptInvitation(db, invitation.token, password, 'demo-seed', now);
  return { email, password };
}
