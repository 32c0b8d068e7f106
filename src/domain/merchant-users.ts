import { randomInt } from 'node:crypto';
import { COMMON_PASSWORDS } from './common-passwords.ts';
import { SECRET_PATHS } from './secrets.ts';
import { passwordProblem } from './staff.ts';

/**
 * The merchant's business manager (SPEC §14): merchant users' roles, what each may do, and the
 * rules for their invitations, passwords and second factor. One table decides every action; the
 * manager's route table (src/web/manager/manager-routes.ts) names the permission each route needs.
 */

export const MERCHANT_ROLES = ['admin', 'developer', 'viewer'] as const;
export type MerchantRole = (typeof MERCHANT_ROLES)[number];

/** Everything the business manager can do, one word per kind of action. */
export const MANAGER_PERMISSIONS = [
  'overview:read',
  'credentials:read',
  'credentials:write',
  'webhooks:read',
  'webhooks:write',
  'orders:read',
  'claims:read',
  'claims:write',
  'team:manage',
  'audit:read',
  'account:self',
  'usage:read',
  'balance:read',
] as const;
export type ManagerPermission = (typeof MANAGER_PERMISSIONS)[number];

/**
 * Who may do what. Admin: everything, the team included. Developer: credentials, webhooks, read
 * orders, claims (open, cancel, post a return: what a token it can make with `claims:write` does
 * through the API anyway), usage. Viewer: reads only (never a secret: secrets are shown once, to whoever created them).
 */
const MERCHANT_ROLE_PERMISSIONS: Readonly<Record<MerchantRole, readonly ManagerPermission[]>> = {
  admin: MANAGER_PERMISSIONS,
  developer: [
    'overview:read',
    'credentials:read',
    'credentials:write',
    'webhooks:read',
    'webhooks:write',
    'orders:read',
    'claims:read',
    'claims:write',
    'account:self',
    'usage:read',
    'balance:read',
  ],
  viewer: ['overview:read', 'credentials:read', 'webhooks:read', 'orders:read', 'claims:read', 'account:self', 'usage:read', 'balance:read'],
};

export const mayManage = (role: MerchantRole, permission: ManagerPermission): boolean => MERCHANT_ROLE_PERMISSIONS[role].includes(permission);

/** An invitation link works once, for 72 hours (issue 20). */
export const INVITATION_TTL_MS = 72 * 3600 * 1000;

/** A password reset link works once, for 24 hours (Hardening III). */
export const PASSWORD_RESET_TTL_MS = 24 * 3600 * 1000;

/** The page a password reset link opens. */
export const passwordResetUrl = (origin: string, token: string) => `${origin}${SECRET_PATHS.merchantUserPasswordReset}${token}`;

/** The page an invitation link opens, on `origin` (PUBLIC_BASE_URL, or the request's own origin). */
export const invitationUrl = (origin: string, token: string) => `${origin}${SECRET_PATHS.invitation}${token}`;

const TOO_COMMON = 'is too common (it is, or is built from, a password on the list of the most used ones, or a run or repetition of one kind of character)';
/** The longest password on the list: a padded listed password is looked for in slices no longer. */
const LONGEST_LISTED = Math.max(...[...COMMON_PASSWORDS].map((p) => p.length));
/** Slices shorter than this are not looked up (the list holds 3-character passwords, e.g. `123`). */
const MIN_BASE = 4;

type CharClass = 'digit' | 'letter' | 'other';
const classOf = (c: string): CharClass => (/[0-9]/.test(c) ? 'digit' : /\p{L}/u.test(c) ? 'letter' : 'other');

/** `s` is one shorter string repeated (`abcabc`, `1111`), with the unit; else null. */
function repeatedUnit(s: string): string | null {
  for (let size = 1; size <= s.length / 2; size++) {
    if (s.length % size !== 0) continue;
    const unit = s.slice(0, size);
    if (unit.repeat(s.length / size) === s) return unit;
  }
  return null;
}

/**
 * `s` (at least 4 characters, lower case) is made of one character class and is a repetition
 * (`aaaa`, `abcabc`, `#$%#$%`) or a run with a constant step (`1234…`, `0987…`, `1357…`, `abcd…`,
 * digits wrapping 9 → 0 and latin letters z → a).
 */
function isRunOrRepetition(s: string): boolean {
  const chars = [...s];
  if (chars.length < MIN_BASE) return false;
  const cls = classOf(chars[0]);
  if (!chars.every((c) => classOf(c) === cls)) return false;
  if (repeatedUnit(s) !== null) return true;
  if (cls === 'other') return false;
  const points = chars.map((c) => c.codePointAt(0)!);
  const ring = cls === 'digit' ? 10 : points.every((p) => p >= 97 && p <= 122) ? 26 : 0;
  const step = (a: number, b: number) => (ring ? (((b - a) % ring) + ring) % ring : b - a);
  const first = step(points[0], points[1]);
  return first !== 0 && points.every((p, i) => i === 0 || step(points[i - 1], p) === first);
}

/** Listed, or a listed password repeated (`dragondragon`). */
const isListed = (s: string) => {
  if (COMMON_PASSWORDS.has(s)) return true;
  const unit = repeatedUnit(s);
  return unit !== null && COMMON_PASSWORDS.has(unit);
};

/**
 * The staff rules (length 12–256, NIST SP 800-63B) plus a blocklist (Hardening III). Refused, in
 * lower case: a password on the list (src/domain/common-passwords.ts) or one repeated; either of
 * those with digits or symbols added before, after or on both sides (`2024password!`,
 * `123456789012` = `123456789` + `012`); and a run or repetition of one character class
 * (`111111111111`, `098765432109`, `abcdefghijklm`, `abcabcabcabc`), alone or padded with digits or
 * symbols. Letters-only passphrases and long random digit strings pass.
 */
export function merchantPasswordProblem(password: string): string | null {
  const basic = passwordProblem(password);
  if (basic) return basic;
  const lower = password.toLowerCase();
  const chars = [...lower];
  const n = chars.length;
  // The padding: leading and trailing characters that are not letters (all of them when none is).
  let lead = 0;
  while (lead < n && classOf(chars[lead]) !== 'letter') lead++;
  let trail = 0;
  while (trail < n - lead && classOf(chars[n - 1 - trail]) !== 'letter') trail++;
  if (lead === n) trail = n;
  // Every slice [i, j) whose outside is padding only: the listed passwords are short, so only
  // slices up to the longest one are looked up — except the whole and the unpadded core, which are
  // also looked up repeated and checked for runs and repetitions.
  const core = chars.slice(lead, n - trail).join('');
  if (isListed(lower) || isRunOrRepetition(lower) || (core.length >= MIN_BASE && (isListed(core) || isRunOrRepetition(core)))) return TOO_COMMON;
  for (let i = 0; i <= lead; i++) {
    for (let j = Math.max(n - trail, i + MIN_BASE); j <= Math.min(n, i + LONGEST_LISTED); j++) {
      if (COMMON_PASSWORDS.has(chars.slice(i, j).join(''))) return TOO_COMMON;
    }
  }
  return null;
}

/** RFC 6238 with the parameters every authenticator app supports: SHA-1, 6 digits, 30 s. */
export const TOTP = { algorithm: 'SHA1', digits: 6, period: 30, issuer: 'Stockist' } as const;

/** The time step a code belongs to (RFC 6238 §4.2): a code is accepted once, for a step after the last one accepted. */
export const totpStep = (now: number) => Math.floor(now / 1000 / TOTP.period);

/**
 * Recovery codes (issue 29, 13): made when two-factor sign-in is turned on or regenerated, each
 * signs in once instead of a TOTP code. 16 characters of a 31-letter alphabet without look-alikes
 * (0/o, 1/l/i) carry 79 bits, so the stored SHA-256 of one is as safe as a token's; shown in groups
 * of four, entered with or without the dashes and spaces, in either case.
 */
export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const RECOVERY_LENGTH = 16;

export function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < RECOVERY_LENGTH; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return code.match(/.{4}/g)!.join('-');
}

/** The form a recovery code is hashed in (lower case, no separators), or null when the input cannot be one. */
export function recoveryCodeKey(input: string): string | null {
  const key = input.toLowerCase().replace(/[\s-]+/g, '');
  return key.length === RECOVERY_LENGTH && [...key].every((c) => RECOVERY_ALPHABET.includes(c)) ? key : null;
}
