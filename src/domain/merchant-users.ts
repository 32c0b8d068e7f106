import { randomInt } from 'node:crypto';
import { SECRET_PATHS } from './secrets.ts';

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
