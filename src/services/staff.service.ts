import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { systemActor, type Actor } from '../domain/audit.ts';
import { AppError, conflictState, fieldError, notFound } from '../domain/errors.ts';
import { weakPasswordProblem } from '../domain/password-strength.ts';
import { hashSecret, randomToken } from '../domain/secrets.ts';
import { emailKey, emailProblem, STAFF_PASSWORD_RESET_TTL_MS, type StaffRole } from '../domain/staff.ts';
import { textProblem } from '../domain/text.ts';
import type { Db, Trx } from '../store/db.ts';
import { insertAudit } from '../store/audit.repository.ts';
import * as staff from '../store/staff.repository.ts';

/**
 * argon2id with the OWASP parameters (19 MiB, 2 passes, 1 lane): ~25 ms a hash on the 2-core
 * benchmark machine. The parameters live inside each PHC string, so raising them later only
 * affects new hashes (and `needsRehash` can upgrade old ones at sign-in).
 */
const ARGON2 = { algorithm: 2 as const, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export const hashPassword = (password: string) => argon2Hash(password, ARGON2);

/** A hash of no password: unknown accounts are checked against it so they answer in the same time as known ones. */
let decoy: Promise<string> | null = null;

/** True when `password` matches `hash`; false for a malformed hash rather than an error. */
export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  decoy ??= hashPassword(randomToken(32));
  try {
    const ok = await argon2Verify(hash ?? (await decoy), password);
    return hash !== null && ok;
  } catch {
    return false;
  }
}

/** 20 base62 characters (~119 bits): printed once by the CLI, to be changed or kept in a password manager. */
export const generatePassword = () => randomToken(20);

/** The address as typed (trimmed), or a 400 naming `email`. */
export function checkEmail(email: string): string {
  const problem = emailProblem(email) ?? textProblem(email);
  if (problem) throw fieldError('email', problem);
  return email.trim();
}

/**
 * The password rule of both front ends: 12–256 characters and hard enough to guess
 * (domain/password-strength.ts); `email`, the account's address, counts as a guess of its own.
 */
export function checkPassword(password: string, email?: string) {
  const problem = weakPasswordProblem(password, email ? [email] : []);
  if (problem) throw fieldError('password', problem);
}

const staffSummary = (s: staff.StaffRow) => ({ email: s.email, role: s.role, status: s.status });

export async function createStaff(db: Db, actor: Actor, input: { email: string; role: StaffRole; password: string }, now: number): Promise<staff.StaffRow> {
  const email = checkEmail(input.email);
  checkPassword(input.password, email);
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
    const row = await staff.updateStaff(trx, before.id, { status: 'disabled' }, now);
    const sessionsEnded = await staff.deleteSessionsOf(trx, row.id);
    const revokedResets = await staff.revokePasswordResetsOf(trx, row.id, now);
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
    const row = await staff.updateStaff(trx, before.id, { status: 'active' }, now);
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
    const row = await staff.updateStaff(trx, before.id, { role }, now);
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
  checkPassword(password, email);
  const before = await requireStaff(db, email);
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    const row = await staff.updateStaff(trx, before.id, { password_hash: passwordHash, password_changed_at: now }, now);
    const sessionsEnded = await staff.deleteSessionsOf(trx, row.id);
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

export interface StaffPasswordReset {
  email: string;
  /** The one-time token of the link (only its hash is stored). */
  token: string;
  expiresAt: number;
}

/**
 * Makes a reset link for one staff account: valid STAFF_PASSWORD_RESET_TTL_MS, once; the
 * account's older links stop. Nothing changes until the link is used: the password still works
 * and no session ends. A disabled account gets none (409): enable it first.
 */
export async function createStaffPasswordReset(db: Db, actor: Actor, email: string, now: number): Promise<StaffPasswordReset> {
  const account = await requireStaff(db, email);
  if (account.status !== 'active') throw conflictState(`${account.email_key} is disabled: enable it before making a password reset link`);
  return db.transaction().execute(async (trx) => {
    const replaced = await staff.revokePasswordResetsOf(trx, account.id, now);
    const token = randomToken(43);
    const row = await staff.insertPasswordReset(trx, {
      staff_id: account.id,
      token_hash: hashSecret(token),
      expires_at: now + STAFF_PASSWORD_RESET_TTL_MS,
      used_at: null,
      revoked_at: null,
      created_by: `${actor.kind}:${actor.id}`,
      created_at: now,
    });
    await insertAudit(
      trx,
      actor,
      {
        action: 'staff.create_password_reset',
        target: `staff:${account.email_key}`,
        before: null,
        after: { expiresAt: row.expires_at, revokedResets: replaced },
      },
      now,
    );
    return { email: account.email, token, expiresAt: row.expires_at };
  });
}

/** The reset a link names while it can still be used; null for unknown, used, revoked, expired and a disabled account's alike. */
export async function openStaffPasswordReset(db: Db, token: string, now: number) {
  if (!/^[A-Za-z0-9]{43}$/.test(token)) return null;
  const row = await staff.findPasswordResetByHash(db, hashSecret(token));
  if (!row || row.used_at !== null || row.revoked_at !== null || row.expires_at <= now || row.status !== 'active') return null;
  return row;
}

const RESET_GONE = 'password reset link (it may have expired, been replaced or been used already)';

/**
 * Sets the password a reset link is for, once, and ends every session of that account. The link
 * names its account: whoever opens it sets that account's password and no other's.
 */
export async function completeStaffPasswordReset(db: Db, token: string, password: string, requestId: string, now: number): Promise<{ sessionsEnded: number }> {
  const reset = await openStaffPasswordReset(db, token, now);
  if (!reset) throw notFound(RESET_GONE);
  checkPassword(password, reset.email);
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    if (!(await staff.claimPasswordReset(trx, reset.id, now))) throw notFound(RESET_GONE);
    await staff.updateStaff(trx, reset.staff_id, { password_hash: passwordHash, password_changed_at: now }, now);
    const sessionsEnded = await staff.deleteSessionsOf(trx, reset.staff_id);
    await insertAudit(
      trx,
      { kind: 'staff', id: String(reset.staff_id), requestId },
      { action: 'staff.reset_password', target: `staff:${reset.email_key}`, before: null, after: { sessionsEnded, link: true } },
      now,
    );
    return { sessionsEnded };
  });
}

/** The demo owner `npm start` creates in the sandbox when there is no staff account yet; null when there is one. */
export async function ensureDemoOwner(db: Db, email: string, now: number): Promise<{ email: string; password: string } | null> {
  if ((await staff.countStaff(db)) > 0) return null;
  const password = generatePassword();
  await createStaff(db, systemActor('demo-seed'), { email, role: 'owner', password }, now);
  return { email, password };
}
