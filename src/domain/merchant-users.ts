import { COMMON_PASSWORDS } from './common-passwords.ts';
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
  'team:manage',
  'audit:read',
  'account:self',
  'usage:read',
  'balance:read',
] as const;
export type ManagerPermission = (typeof MANAGER_PERMISSIONS)[number];

/**
 * Who may do what. Admin: everything, the team included. Developer: credentials, webhooks, read
 * orders, usage. Viewer: reads only (never a secret: secrets are shown once, to whoever created them).
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
    'account:self',
    'usage:read',
    'balance:read',
  ],
  viewer: ['overview:read', 'credentials:read', 'webhooks:read', 'orders:read', 'account:self', 'usage:read', 'balance:read'],
};

export const mayManage = (role: MerchantRole, permission: ManagerPermission): boolean => MERCHANT_ROLE_PERMISSIONS[role].includes(permission);

/** An invitation link works once, for 72 hours (issue 20). */
export const INVITATION_TTL_MS = 72 * 3600 * 1000;

/** The page an invitation link opens, on `origin` (PUBLIC_BASE_URL, or the request's own origin). */
export const invitationUrl = (origin: string, token: string) => `${origin}/manager/invitations/${token}`;

/**
 * The staff rules (length 12–256, NIST SP 800-63B) plus a blocklist: a password that is a common
 * one, a common one with digits or symbols added at the end, or a common one repeated, is refused.
 */
export function merchantPasswordProblem(password: string): string | null {
  const basic = passwordProblem(password);
  if (basic) return basic;
  const lower = password.toLowerCase();
  const stem = lower.replace(/[^a-z]+$/, '');
  const half = lower.length % 2 === 0 ? lower.slice(0, lower.length / 2) : null;
  if (COMMON_PASSWORDS.has(lower) || (stem.length >= 4 && COMMON_PASSWORDS.has(stem)) || (half !== null && half + half === lower && COMMON_PASSWORDS.has(half)))
    return 'is too common (it is, or is built from, a password on the list of the most used ones)';
  return null;
}

/** RFC 6238 with the parameters every authenticator app supports: SHA-1, 6 digits, 30 s. */
export const TOTP = { algorithm: 'SHA1', digits: 6, period: 30, issuer: 'Stockist' } as const;

/** The time step a code belongs to (RFC 6238 §4.2): a code is accepted once, for a step after the last one accepted. */
export const totpStep = (now: number) => Math.floor(now / 1000 / TOTP.period);
