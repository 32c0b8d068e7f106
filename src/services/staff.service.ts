import { systemActor, type Actor } from '../domain/audit.ts';
import { AppError, conflictState, notFound } from '../domain/errors.ts';
import { emailKey, STAFF_PASSWORD_RESET_TTL_MS, type StaffRole } from '../domain/staff.ts';
import { deleteSessionsOf, revokePasswordResetsOf, STAFF_ACCOUNTS, updateAccount } from '../store/accounts.repository.ts';
import type { Db, Trx } from '../store/db.ts';
import { insertAudit } from '../store/audit.repository.ts';
import * as staff from '../store/staff.repository.ts';
import {
  checkEmail,
  checkPassword,
  completePasswordReset,
  generatePassword,
  hashPassword,
  issuePasswordReset,
  resetTokenHash,
  usableReset,
  type PasswordReset,
} from './accounts.service.ts';

/** Staff accounts (the console's Staff page and `stockist operator`); their sessions: console-sessions.service.ts. */

const staffSummary = (s: staff.StaffRow) => ({ email: s.email, role: s.role, status: s.status });

export async function createStaff(db: Db, actor: Actor, input: { email: string; role: StaffRole; password: string }, now: number): Promise<staff.StaffRow> {
  const email = checkEmail(input.email);
  await checkPassword(input.password, email);
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    if (await staff.findStaffByEmail(trx, emailKey(email))) throw new AppError('conflict', 40903, `a staff account ${emailKey(email)} already exists`);
    const row = await staff.insertStaff(trx, {
      email,
      email_key: emailKey(email),
      role: input.role,
      password_hash: passwordHash,
      status: 'active',
      last_sign_in_at: null,
      password_changed_at: now,
      created_at: now,
      updated_at: now,
    });
    await insertAudit(trx, actor, { action: 'staff.create', target: `staff:${row.email_key}`, before: null, after: staffSummary(row) }, now);
    return row;
  });
}

export const listStaff = (db: Db) => staff.listStaff(db);

async function requireStaff(db: Db, email: string) {
  const row = await staff.findStaffByEmail(db, emailKey(email));
  if (!row) throw notFound(`staff account ${emailKey(email)}`);
  return row;
}

/**
 * A 409 when `account` is the last active owner, whom a change is about to disable or demote: then
 * nobody could manage staff in the console. Checked on the owners locked in the change's own
 * transaction, so two owners removing each other at once cannot both succeed.
 */
async function keepAnOwner(trx: Trx, account: staff.StaffRow, what: string): Promise<void> {
  const owners = await staff.lockActiveOwners(trx);
  if (owners.length === 1 && owners[0] === account.id) {
    throw conflictState(`${account.email_key} is the last active owner: make another account owner before you ${what} it`);
  }
}

/** Disables an account and ends its sessions and open reset links at once; never the last active owner. */
export async function disableStaff(db: Db, actor: Actor, email: string, now: number): Promise<{ row: staff.StaffRow; sessionsEnded: number }> {
  const before = await requireStaff(db, email);
  return db.transaction().execute(async (trx) => {
    await keepAnOwner(trx, before, 'disable');
    const row = await updateAccount(trx, STAFF_ACCOUNTS, before.id, { status: 'disabled' }, now);
    const sessionsEnded = await deleteSessionsOf(trx, STAFF_ACCOUNTS, row.id);
    const revokedResets = await revokePasswordResetsOf(trx, STAFF_ACCOUNTS, row.id, now);
    await insertAudit(
      trx,
      actor,
      {
        action: 'staff.disable',
        target: `staff:${row.email_key}`,
        before: staffSummary(before),
        after: { ...staffSummary(row), sessionsEnded, ...(revokedResets > 0 ? { revokedResets } : {}) },
      },
      now,
    );
    return { row, sessionsEnded };
  });
}

/** Lets a disabled account sign in again (with its current password; its old sessions ended when it was disabled). */
export async function enableStaff(db: Db, actor: Actor, email: string, now: number): Promise<staff.StaffRow> {
  const before = await requireStaff(db, email);
  return db.transaction().execute(async (trx) => {
    const row = await updateAccount(trx, STAFF_ACCOUNTS, before.id, { status: 'active' }, now);
    await insertAudit(trx, actor, { action: 'staff.enable', target: `staff:${row.email_key}`, before: staffSummary(before), after: staffSummary(row) }, now);
    return row;
  });
}

/**
 * Changes what an account may do. Its open sessions keep going: each console request reads the
 * role afresh with the session, so the new role applies from the next request. The last active
 * owner keeps the role.
 */
export async function setStaffRole(db: Db, actor: Actor, email: string, role: StaffRole, now: number): Promise<staff.StaffRow> {
  const before = await requireStaff(db, email);
  return db.transaction().execute(async (trx) => {
    if (role !== 'owner') await keepAnOwner(trx, before, 'demote');
    const row = await updateAccount(trx, STAFF_ACCOUNTS, before.id, { role }, now);
    await insertAudit(trx, actor, { action: 'staff.set_role', target: `staff:${row.email_key}`, before: staffSummary(before), after: staffSummary(row) }, now);
    return row;
  });
}

/**
 * Sets a new password and ends the account's sessions (whoever held the old one is signed out).
 * The command line's way (`stockist operator reset-password`), where whoever runs it holds the
 * database anyway; the console makes a one-time link instead (createStaffPasswordReset).
 */
export async function resetPassword(
  db: Db,
  actor: Actor,
  email: string,
  password: string,
  now: number,
): Promise<{ row: staff.StaffRow; sessionsEnded: number }> {
  await checkPassword(password, email);
  const before = await requireStaff(db, email);
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    const row = await updateAccount(trx, STAFF_ACCOUNTS, before.id, { password_hash: passwordHash, password_changed_at: now }, now);
    const sessionsEnded = await deleteSessionsOf(trx, STAFF_ACCOUNTS, row.id);
    await insertAudit(
      trx,
      actor,
      { action: 'staff.reset_password', target: `staff:${row.email_key}`, before: staffSummary(before), after: { ...staffSummary(row), sessionsEnded } },
      now,
    );
    return { row, sessionsEnded };
  });
}

// ---- Password reset links (issue 32, 5): an owner makes one, the staff member sets the password.

/**
 * Makes a reset link for one staff account: valid STAFF_PASSWORD_RESET_TTL_MS, once; the
 * account's older links stop. Nothing changes until the link is used: the password still works
 * and no session ends. A disabled account gets none (409): enable it first.
 */
export async function createStaffPasswordReset(db: Db, actor: Actor, email: string, now: number): Promise<PasswordReset> {
  const account = await requireStaff(db, email);
  if (account.status !== 'active') throw conflictState(`${account.email_key} is disabled: enable it before making a password reset link`);
  return db.transaction().execute((trx) =>
    issuePasswordReset(
      STAFF_ACCOUNTS,
      actor,
      account,
      STAFF_PASSWORD_RESET_TTL_MS,
      {
        revokeOpen: () => revokePasswordResetsOf(trx, STAFF_ACCOUNTS, account.id, now),
        insert: (link) => staff.insertPasswordReset(trx, { staff_id: account.id, ...link }),
        audit: (entry) => insertAudit(trx, actor, entry, now),
      },
      now,
    ),
  );
}

/** The reset a link names while it can still be used; null for unknown, used, revoked, expired and a disabled account's alike. */
export async function openStaffPasswordReset(db: Db, token: string, now: number) {
  const tokenHash = resetTokenHash(token);
  const row = tokenHash === null ? null : usableReset(await staff.findPasswordResetByHash(db, tokenHash), now);
  return row?.status === 'active' ? row : null;
}

const RESET_GONE = 'password reset link (it may have expired, been replaced or been used already)';

/** Sets the password a reset link is for, once, and ends every session of that account (accounts.service.ts `completePasswordReset`). */
export async function completeStaffPasswordReset(db: Db, token: string, password: string, requestId: string, now: number): Promise<{ sessionsEnded: number }> {
  const reset = await openStaffPasswordReset(db, token, now);
  return completePasswordReset(
    db,
    STAFF_ACCOUNTS,
    reset && { id: reset.id, accountId: reset.staff_id, email: reset.email, email_key: reset.email_key },
    password,
    RESET_GONE,
    requestId,
    now,
  );
}

/** The demo owner `npm start` creates in the sandbox when there is no staff account yet; null when there is one. */
export async function ensureDemoOwner(db: Db, email: string, now: number): Promise<{ email: string; password: string } | null> {
  if ((await staff.countStaff(db)) > 0) return null;
  const password = generatePassword();
  await createStaff(db, systemActor('demo-seed'), { email, role: 'owner', password }, now);
  return { email, password };
}
