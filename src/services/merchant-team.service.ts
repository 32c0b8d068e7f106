import type { Actor, AuditAction, AuditSummary } from '../domain/audit.ts';
import { conflictState, notFound } from '../domain/errors.ts';
import { PASSWORD_RESET_TTL_MS, type MerchantRole } from '../domain/merchant-users.ts';
import { emailKey } from '../domain/staff.ts';
import { MERCHANT_USER_ACCOUNTS } from '../store/accounts.repository.ts';
import { auditIn, insertAudit } from '../store/audit.repository.ts';
import type { Db, Trx } from '../store/db.ts';
import { findMerchant, merchantOfScope, setRequireTwoFactor } from '../store/merchants.repository.ts';
import * as users from '../store/merchant-users.repository.ts';
import { transactionIn, type MerchantScope } from '../store/tenancy.ts';
import { issuePasswordReset, type PasswordReset } from './accounts.service.ts';
import { merchantUserActor, type ManagerUser } from './manager-sessions.service.ts';

/** A merchant's team, run by its admins (and by the operator): roles, removal, the two-factor requirement, reset links. */

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
    return issuePasswordReset(
      MERCHANT_USER_ACCOUNTS,
      actor,
      member,
      PASSWORD_RESET_TTL_MS,
      {
        revokeOpen: () => users.revokePasswordResetsOf(scope, member.id, now),
        insert: (link) => users.insertPasswordReset(scope, { user_id: member.id, ...link }),
        audit: (entry) => auditIn(scope, actor, entry, now),
      },
      now,
    );
  });
}
