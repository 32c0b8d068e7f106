import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { systemActor, type Actor } from '../domain/audit.ts';
import { AppError, conflictState, fieldError, notFound } from '../domain/errors.ts';
import { randomToken } from '../domain/secrets.ts';
import { emailKey, emailProblem, passwordProblem, type StaffRole } from '../domain/staff.ts';
import { textProblem } from '../domain/text.ts';
import type { Db, Handle } from '../store/db.ts';
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

export function checkPassword(password: string) {
  const problem = passwordProblem(password);
  if (problem) throw fieldError('password', problem);
}

const staffSummary = (s: staff.StaffRow) => ({ email: s.email, role: s.role, status: s.status });

export async function createStaff(db: Db, actor: Actor, input: { email: string; role: StaffRole; password: string }, now: number): Promise<staff.StaffRow> {
  const email = checkEmail(input.email);
  checkPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    if (await staff.findStaffByEmail(trx, emailKey(email))) throw new AppError(409, 40903, `a staff account ${emailKey(email)} already exists`);
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
async function keepAnOwner(trx: Handle, account: staff.StaffRow, what: string): Promise<void> {
  const owners = await staff.lockActiveOwners(trx);
  if (owners.length === 1 && owners[0] === account.id) {
    throw conflictState(`${account.email_key} is the last active owner: make another account owner before you ${what} it`);
  }
}

/** Disables an account and ends its sessions at once; never the last active owner. */
export async function disableStaff(db: Db, actor: Actor, email: string, now: number): Promise<{ row: staff.StaffRow; sessionsEnded: number }> {
  const before = await requireStaff(db, email);
  return db.transaction().execute(async (trx) => {
    await keepAnOwner(trx, before, 'disable');
    const row = await staff.updateStaff(trx, before.id, { status: 'disabled' }, now);
    const sessionsEnded = await staff.deleteSessionsOf(trx, row.id);
    await insertAudit(
      trx,
      actor,
      { action: 'staff.disable', target: `staff:${row.email_key}`, before: staffSummary(before), after: { ...staffSummary(row), sessionsEnded } },
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

/** Sets a new password and ends the account's sessions (whoever held the old one is signed out). */
export async function resetPassword(
  db: Db,
  actor: Actor,
  email: string,
  password: string,
  now: number,
): Promise<{ row: staff.StaffRow; sessionsEnded: number }> {
  checkPassword(password);
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

/** The demo owner `npm start` creates in the sandbox when there is no staff account yet; null when there is one. */
export async function ensureDemoOwner(db: Db, email: string, now: number): Promise<{ email: string; password: string } | null> {
  if ((await staff.countStaff(db)) > 0) return null;
  const password = generatePassword();
  await createStaff(db, systemActor('demo-seed'), { email, role: 'owner', password }, now);
  return { email, password };
}
