import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Handle, Trx } from './db.ts';
import type { MerchantInvitationsTable, MerchantPasswordResetsTable, MerchantRecoveryCodesTable, MerchantUsersTable } from './schema.ts';
import type { MerchantScope } from './tenancy.ts';
import { handleOf } from './scope-handle.ts';

/** Business manager accounts, invitations and sessions (SPEC §14); what their sessions and reset links share with the console's: accounts.repository.ts. */

export type MerchantUserRow = Selectable<MerchantUsersTable>;
export type InvitationRow = Selectable<MerchantInvitationsTable>;
export type PasswordResetRow = Selectable<MerchantPasswordResetsTable>;

/** An address's accounts, one per merchant at most (0030), oldest first, each with its merchant's name and status. */
export const findUsersByEmail = (db: Handle, emailKey: string) =>
  db
    .selectFrom('merchant_users')
    .innerJoin('merchants', 'merchants.id', 'merchant_users.merchant_id')
    .selectAll('merchant_users')
    .select(['merchants.name as merchant_name', 'merchants.status as merchant_status'])
    .where('merchant_users.email_key', '=', emailKey)
    .orderBy('merchant_users.id')
    .execute();

/** The account an address has on this merchant's team, if any. */
export const findTeamMemberByEmail = (scope: MerchantScope, emailKey: string) =>
  scope.selectFrom('merchant_users').selectAll().where('email_key', '=', emailKey).executeTakeFirst();

export const findUserById = (db: Handle, id: number) => db.selectFrom('merchant_users').selectAll().where('id', '=', id).executeTakeFirst();

/** A user of this merchant; another merchant's user is not there. */
export const findTeamMember = (scope: MerchantScope, id: number) => scope.selectFrom('merchant_users').selectAll().where('id', '=', id).executeTakeFirst();

export const listTeam = (scope: MerchantScope) => scope.selectFrom('merchant_users').selectAll().orderBy('email_key').execute();

export async function countAdmins(scope: MerchantScope): Promise<number> {
  const r = await scope
    .selectFrom('merchant_users')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('role', '=', 'admin')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function insertUser(scope: MerchantScope<Trx>, row: Omit<Insertable<MerchantUsersTable>, 'id' | 'merchant_id'>): Promise<MerchantUserRow> {
  return (await scope.insertInto('merchant_users', row).returningAll().executeTakeFirstOrThrow()) as MerchantUserRow;
}

/** accounts.repository.ts `updateAccount` of a member of the scope's merchant's team: another merchant's user is not written (and not returned). */
export async function updateTeamMember(scope: MerchantScope<Trx>, id: number, changes: Updateable<MerchantUsersTable>, now: number): Promise<MerchantUserRow> {
  return scope
    .updateTable('merchant_users')
    .set({ ...changes, updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Accepts a TOTP step only after the last accepted one: the conditional update is the claim, so a code works once. */
export async function claimTotpStep(db: Trx, id: number, step: number): Promise<boolean> {
  const r = await db
    .updateTable('merchant_users')
    .set({ totp_last_step: step })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function deleteUser(scope: MerchantScope<Trx>, id: number): Promise<void> {
  await handleOf(scope).deleteFrom('manager_sessions').where('user_id', '=', id).execute();
  await scope.deleteFrom('merchant_password_resets').where('user_id', '=', id).execute();
  await scope.deleteFrom('merchant_recovery_codes').where('user_id', '=', id).execute();
  await scope.deleteFrom('merchant_users').where('id', '=', id).execute();
}

export async function insertInvitation(
  scope: MerchantScope<Trx>,
  row: Omit<Insertable<MerchantInvitationsTable>, 'id' | 'merchant_id'>,
): Promise<InvitationRow> {
  return (await scope.insertInto('merchant_invitations', row).returningAll().executeTakeFirstOrThrow()) as InvitationRow;
}

/** An invitation link's row and the name of the business it is for (its page names it). */
export const findInvitationByHash = (db: Handle, tokenHash: string) =>
  db
    .selectFrom('merchant_invitations')
    .innerJoin('merchants', 'merchants.id', 'merchant_invitations.merchant_id')
    .selectAll('merchant_invitations')
    .select('merchants.name as merchant_name')
    .where('merchant_invitations.token_hash', '=', tokenHash)
    .executeTakeFirst();

/** Open invitations of a merchant (not accepted, not revoked, not expired), newest first. */
export const listOpenInvitations = (scope: MerchantScope, now: number) =>
  scope
    .selectFrom('merchant_invitations')
    .selectAll()
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('id', 'desc')
    .execute();

/** One-time: of two concurrent acceptances exactly one updates the row (and none of a revoked one). */
export async function claimInvitation(db: Trx, id: number, now: number): Promise<boolean> {
  const r = await db
    .updateTable('merchant_invitations')
    .set({ accepted_at: now })
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Revokes this merchant's open invitations: one (`id`), or every one for an address (`emailKey`).
 * Returns the rows revoked.
 */
export async function revokeOpenInvitations(scope: MerchantScope<Trx>, which: { id: number } | { emailKey: string }, now: number): Promise<InvitationRow[]> {
  let q = scope
    .updateTable('merchant_invitations')
    .set({ revoked_at: now })
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now);
  q = 'id' in which ? q.where('id', '=', which.id) : q.where('email_key', '=', which.emailKey);
  return (await q.returningAll().execute()) as InvitationRow[];
}

/** The session, its user and the user's merchant, in one read. */
export const findSession = (db: Handle, idHash: string) =>
  db
    .selectFrom('manager_sessions')
    .innerJoin('merchant_users', 'merchant_users.id', 'manager_sessions.user_id')
    .innerJoin('merchants', 'merchants.id', 'merchant_users.merchant_id')
    .select([
      'manager_sessions.csrf_secret as csrfSecret',
      'manager_sessions.stage as stage',
      'manager_sessions.created_at as createdAt',
      'manager_sessions.last_seen_at as lastSeenAt',
      'manager_sessions.expires_at as expiresAt',
      'merchant_users.id as userId',
      'merchant_users.email as email',
      'merchant_users.role as role',
      'merchant_users.totp_secret as totpSecret',
      'merchants.id as merchantId',
      'merchants.name as merchantName',
      'merchants.status as merchantStatus',
      'merchants.require_two_factor as requireTwoFactor',
    ])
    .where('manager_sessions.id_hash', '=', idHash)
    .executeTakeFirst();

export async function completeSession(db: Trx, idHash: string): Promise<void> {
  await db.updateTable('manager_sessions').set({ stage: 'complete' }).where('id_hash', '=', idHash).execute();
}

/** Ends a team member's sessions (accounts.repository.ts `deleteSessionsOf` in the scope): another merchant's user's are not touched. */
export async function deleteSessionsOfMember(scope: MerchantScope<Trx>, userId: number): Promise<number> {
  const r = await handleOf(scope)
    .deleteFrom('manager_sessions')
    .where('user_id', '=', userId)
    .where('user_id', 'in', scope.selectFrom('merchant_users').select('merchant_users.id').where('merchant_users.id', '=', userId))
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

export async function insertPasswordReset(
  scope: MerchantScope<Trx>,
  row: Omit<Insertable<MerchantPasswordResetsTable>, 'id' | 'merchant_id'>,
): Promise<PasswordResetRow> {
  return (await scope.insertInto('merchant_password_resets', row).returningAll().executeTakeFirstOrThrow()) as PasswordResetRow;
}

/** A reset link's row and its account's address. */
export const findPasswordResetByHash = (db: Handle, tokenHash: string) =>
  db
    .selectFrom('merchant_password_resets')
    .innerJoin('merchant_users', 'merchant_users.id', 'merchant_password_resets.user_id')
    .innerJoin('merchants', 'merchants.id', 'merchant_password_resets.merchant_id')
    .selectAll('merchant_password_resets')
    .select(['merchant_users.email as email', 'merchant_users.email_key as email_key', 'merchants.name as merchant_name'])
    .where('merchant_password_resets.token_hash', '=', tokenHash)
    .executeTakeFirst();

/** Revokes the user's open reset links (a newer one replaces them); returns how many. */
export async function revokePasswordResetsOf(scope: MerchantScope<Trx>, userId: number, now: number): Promise<number> {
  const r = await scope
    .updateTable('merchant_password_resets')
    .set({ revoked_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Replaces the user's recovery codes (used or not) with these hashes. */
export async function replaceRecoveryCodes(scope: MerchantScope<Trx>, userId: number, codeHashes: string[], now: number): Promise<void> {
  await scope.deleteFrom('merchant_recovery_codes').where('user_id', '=', userId).execute();
  if (codeHashes.length > 0)
    await scope
      .insertInto(
        'merchant_recovery_codes',
        codeHashes.map(
          (code_hash) => ({ user_id: userId, code_hash, used_at: null, created_at: now }) satisfies Omit<Insertable<MerchantRecoveryCodesTable>, 'merchant_id'>,
        ),
      )
      .execute();
}

/** One-time: of two concurrent uses of a code exactly one updates its row; a used or unknown code none. */
export async function claimRecoveryCode(scope: MerchantScope<Trx>, userId: number, codeHash: string, now: number): Promise<boolean> {
  const r = await scope
    .updateTable('merchant_recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** How many of the user's recovery codes are still unused. */
export async function countUnusedRecoveryCodes(scope: MerchantScope, userId: number): Promise<number> {
  const r = await scope
    .selectFrom('merchant_recovery_codes')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
