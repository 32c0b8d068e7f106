import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import type { Actor, ActorKind, AuditEntry, AuditSummary } from '../domain/audit.ts';
import { fieldError, notFound } from '../domain/errors.ts';
import { hashSecret, randomToken } from '../domain/secrets.ts';
import { emailKey, emailProblem, passwordProblem, SESSION_TOUCH_EVERY_MS, sessionExpiry, type SessionLimits } from '../domain/staff.ts';
import { textProblem } from '../domain/text.ts';
import * as accounts from '../store/accounts.repository.ts';
import { insertAudit } from '../store/audit.repository.ts';
import type { Db, Trx } from '../store/db.ts';
import { passwordProblemOf } from './password-checks.ts';

/**
 * What both front ends' accounts share (the console's staff, the business manager's merchant
 * users): passwords, sessions, the own-account page and password reset links. Each function takes
 * the kind of account (store/accounts.repository.ts's descriptor); what only one kind has lives in
 * console-sessions.service.ts and staff.service.ts, or manager-sessions.service.ts and the
 * merchant-invitations, merchant-team and merchant-two-factor services.
 */

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
 * (domain/password-strength.ts, estimated on a worker thread: services/password-checks.ts); `email`,
 * the account's address, counts as a guess of its own.
 */
export async function checkPassword(password: string, email?: string): Promise<void> {
  // The length rules first, here: a password they refuse starts no thread.
  const problem = passwordProblem(password) ?? (await passwordProblemOf(password, email ? [email] : []));
  if (problem) throw fieldError('password', problem);
}

/** The actor kind of each kind of account: also the prefix of its audit actions and targets (`staff.sign_in`, `merchant_user:a@b.example`). */
const ACTOR_KIND = { staff_users: 'staff', merchant_users: 'merchant_user' } as const satisfies Record<accounts.AccountKind['users'], ActorKind>;

const actorKindOf = (kind: accounts.AccountKind) => ACTOR_KIND[kind.users];

/** The account acting by itself (signing in, on its own account page, through a link made for it). */
export const accountActor = (kind: accounts.AccountKind, accountId: number, requestId: string | null): Actor => ({
  kind: actorKindOf(kind),
  id: String(accountId),
  requestId,
});

/** An audit row about an account of `kind`: `staff.<what>` on `staff:<email key>`, and likewise for merchant users. */
const auditAccount = (
  trx: Trx,
  kind: accounts.AccountKind,
  actor: Actor,
  what: 'sign_out' | 'sign_out_everywhere' | 'change_password' | 'reset_password',
  account: { emailKey: string; merchantId?: number },
  after: AuditSummary | null,
  now: number,
) =>
  insertAudit(
    trx,
    actor,
    { action: `${actorKindOf(kind)}.${what}`, target: `${actorKindOf(kind)}:${account.emailKey}`, before: null, after, merchantId: account.merchantId },
    now,
  );

/** The signed-in account a request acts as, as the shared steps need it. */
export interface SignedInAccount {
  accountId: number;
  email: string;
  /** SHA-256 of the cookie's session id: the row's key, never the id itself. */
  sessionHash: string;
  /** The merchant audit rows are shown to (a merchant user's); none for staff. */
  merchantId?: number;
}

// ---- Sessions.

/**
 * Opens a session for an account that has just proved its password: drops its expired sessions
 * (dead weight) and stores the new one with both expiries. `row` is the kind's own columns (the
 * account, the session's CSRF secret, the address, the manager's stage).
 */
export async function startSession<K extends accounts.AccountKind>(
  trx: Trx,
  kind: K,
  accountId: number,
  row: accounts.NewSession<K>,
  limits: SessionLimits,
  now: number,
): Promise<void> {
  await accounts.deleteExpiredSessionsOf(trx, kind, accountId, now);
  await accounts.insertSession(trx, kind, row, { created_at: now, last_seen_at: now, idle_expires_at: now + limits.idleMs, expires_at: now + limits.maxMs });
}

/**
 * Whether a session a cookie names still counts: not idle past the limit, not older than the
 * absolute limit, its account still allowed in (`accountActive`). One that does not is deleted on
 * sight. Activity is recorded at most once a minute (SESSION_TOUCH_EVERY_MS), so browsing is not a
 * write per page.
 */
export async function keepSession(
  db: Db,
  kind: accounts.AccountKind,
  sessionHash: string,
  session: { createdAt: number; lastSeenAt: number; expiresAt: number },
  accountActive: boolean,
  limits: SessionLimits,
  now: number,
): Promise<boolean> {
  if (!accountActive || sessionExpiry({ createdAt: session.createdAt, lastSeenAt: session.lastSeenAt }, limits, now) !== null) {
    await db.transaction().execute((trx) => accounts.deleteSession(trx, kind, sessionHash));
    return false;
  }
  if (now - session.lastSeenAt >= SESSION_TOUCH_EVERY_MS)
    await db.transaction().execute((trx) => accounts.touchSession(trx, kind, sessionHash, now, Math.min(now + limits.idleMs, session.expiresAt)));
  return true;
}

/** Ends the session server-side: the cookie's id no longer names anything. Audited when there was one to end. */
export async function signOut(db: Db, kind: accounts.AccountKind, me: SignedInAccount, requestId: string, now: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (await accounts.deleteSession(trx, kind, me.sessionHash))
      await auditAccount(
        trx,
        kind,
        accountActor(kind, me.accountId, requestId),
        'sign_out',
        { emailKey: emailKey(me.email), merchantId: me.merchantId },
        null,
        now,
      );
  });
}

/** Ends every session of the signed-in account, this one included. */
export async function signOutEverywhere(db: Db, kind: accounts.AccountKind, me: SignedInAccount, requestId: string, now: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const sessionsEnded = await accounts.deleteSessionsOf(trx, kind, me.accountId);
    const account = { emailKey: emailKey(me.email), merchantId: me.merchantId };
    await auditAccount(trx, kind, accountActor(kind, me.accountId, requestId), 'sign_out_everywhere', account, { sessionsEnded }, now);
    return sessionsEnded;
  });
}

/** A session as the account page lists it; `current` marks the one asking. */
export const sessionView = (s: { id_hash: string; address: string | null; created_at: number; last_seen_at: number }, sessionHash: string) => ({
  current: s.id_hash === sessionHash,
  address: s.address,
  createdAt: s.created_at,
  lastSeenAt: s.last_seen_at,
});

/**
 * Changes the signed-in account's password: the current one is required; every other session of
 * the account ends (whoever else held it is signed out; this one stays), and so do the account's
 * open reset links: a link made before the change would otherwise undo it (issue 44, 12).
 */
export async function changeOwnPassword(
  db: Db,
  kind: accounts.AccountKind,
  me: SignedInAccount,
  input: { current: string; password: string },
  requestId: string,
  now: number,
): Promise<{ sessionsEnded: number; revokedResets: number }> {
  const row = (await accounts.findAccountPassword(db, kind, me.accountId))!;
  if (!(await verifyPassword(row.password_hash, input.current))) throw fieldError('current', 'is not your current password');
  await checkPassword(input.password, me.email);
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (trx) => {
    await accounts.setPasswordHash(trx, kind, row.id, passwordHash, now);
    const sessionsEnded = await accounts.deleteSessionsOf(trx, kind, row.id, me.sessionHash);
    const revokedResets = await accounts.revokePasswordResetsOf(trx, kind, row.id, now);
    const account = { emailKey: row.email_key, merchantId: me.merchantId };
    await auditAccount(trx, kind, accountActor(kind, me.accountId, requestId), 'change_password', account, { sessionsEnded, revokedResets }, now);
    return { sessionsEnded, revokedResets };
  });
}

/** Sessions deleted per statement by the purge job. */
const PURGE_BATCH = 500;

/**
 * Deletes expired sessions of one kind nobody came back for, in batches of PURGE_BATCH, at most
 * `maxBatches` a call; returns how many went. Expired sessions already sign nobody in (see
 * keepSession); this keeps them from piling up. With `limits`, a session past the limits in force
 * now goes too. Run by the worker role (jobs/purger.ts).
 */
export async function purgeExpiredSessions(db: Db, kind: accounts.AccountKind, limits: SessionLimits | null, now: number, maxBatches = 100): Promise<number> {
  let purged = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    // A transaction per batch: each commits on its own, so no lock is held across the whole purge.
    const deleted = await db.transaction().execute((trx) => accounts.purgeExpiredSessions(trx, kind, now, limits, PURGE_BATCH));
    purged += deleted;
    if (deleted < PURGE_BATCH) break;
  }
  return purged;
}

// ---- Password reset links: made by someone allowed to, used once by whoever the account is.

export interface PasswordReset {
  email: string;
  /** The one-time token of the link (only its hash is stored). */
  token: string;
  expiresAt: number;
}

/** The columns of a new reset link that do not name its account (the kind's insert adds that). */
export interface NewResetLink {
  token_hash: string;
  expires_at: number;
  used_at: null;
  revoked_at: null;
  created_by: string;
  created_at: number;
}

/** Where a kind keeps a new reset link: the console's in its transaction, a merchant user's in the merchant's scope. */
export interface ResetLinkStore {
  /** Revokes the account's open links; returns how many. */
  revokeOpen(): Promise<number>;
  /** Stores the new link (adding the account's column). */
  insert(link: NewResetLink): Promise<unknown>;
  /** Writes the audit row, in the same transaction. */
  audit(entry: Omit<AuditEntry, 'merchantId'>): Promise<void>;
}

/**
 * Makes a reset link for one account, valid `ttlMs`, once; the account's older links stop.
 * Nothing changes until the link is used: the password still works and no session ends.
 */
export async function issuePasswordReset(
  kind: accounts.AccountKind,
  actor: Actor,
  account: { email: string; email_key: string },
  ttlMs: number,
  store: ResetLinkStore,
  now: number,
): Promise<PasswordReset> {
  const replaced = await store.revokeOpen();
  const token = randomToken(43);
  const expiresAt = now + ttlMs;
  await store.insert({
    token_hash: hashSecret(token),
    expires_at: expiresAt,
    used_at: null,
    revoked_at: null,
    created_by: `${actor.kind}:${actor.id}`,
    created_at: now,
  });
  await store.audit({
    action: `${actorKindOf(kind)}.create_password_reset`,
    target: `${actorKindOf(kind)}:${account.email_key}`,
    before: null,
    after: { expiresAt, revokedResets: replaced },
  });
  return { email: account.email, token, expiresAt };
}

/** The hash a reset link's token is stored under, or null when the token cannot be one (43 base62 characters). */
export const resetTokenHash = (token: string): string | null => (/^[A-Za-z0-9]{43}$/.test(token) ? hashSecret(token) : null);

/** The reset row while its link can still be used; null for unknown, used, revoked and expired alike. */
export const usableReset = <R extends { used_at: number | null; revoked_at: number | null; expires_at: number }>(row: R | undefined, now: number): R | null =>
  !row || row.used_at !== null || row.revoked_at !== null || row.expires_at <= now ? null : row;

/**
 * Sets the password a reset link is for, once, and ends every session of the account. The link
 * names its account: whoever opens it sets that account's password and no other's. `reset` is the
 * open link (null: `gone`, a 404, as when another use claims it first).
 */
export async function completePasswordReset(
  db: Db,
  kind: accounts.AccountKind,
  reset: { id: number; accountId: number; email: string; email_key: string; merchantId?: number } | null,
  password: string,
  gone: string,
  requestId: string,
  now: number,
): Promise<{ sessionsEnded: number }> {
  if (!reset) throw notFound(gone);
  await checkPassword(password, reset.email);
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    if (!(await accounts.claimPasswordReset(trx, kind, reset.id, now))) throw notFound(gone);
    await accounts.setPasswordHash(trx, kind, reset.accountId, passwordHash, now);
    const sessionsEnded = await accounts.deleteSessionsOf(trx, kind, reset.accountId);
    // Staff rows say the password came by link: the command line resets a staff password directly too.
    const after: AuditSummary = kind.users === 'staff_users' ? { sessionsEnded, link: true } : { sessionsEnded };
    const account = { emailKey: reset.email_key, merchantId: reset.merchantId };
    await auditAccount(trx, kind, accountActor(kind, reset.accountId, requestId), 'reset_password', account, after, now);
    return { sessionsEnded };
  });
}
