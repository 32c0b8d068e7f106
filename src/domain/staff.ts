/**
 * The operator console's staff (SPEC §14): roles, what each may do, and the rules for their
 * credentials and sessions. One table decides every console action; the console's route table
 * (src/web/console/console-routes.ts) names the permission each route needs.
 */
import { createHash } from 'node:crypto';
import { IMPORT_SECTIONS, type ImportRights, type ImportSection } from './import-format.ts';
import { SECRET_PATHS } from './secrets.ts';

export const STAFF_ROLES = ['owner', 'support', 'warehouse'] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

export const STAFF_STATUSES = ['active', 'disabled'] as const;
export type StaffStatus = (typeof STAFF_STATUSES)[number];

/** Everything the console can do, one word per kind of action. */
export const PERMISSIONS = [
  'dashboard:read',
  'orders:read',
  'orders:fulfil',
  /** Cancel a split order that has not shipped: it credits the merchant, so not the warehouse's. */
  'orders:cancel',
  /** Write the internal note on an order (issue 29, 10): the people who talk to merchants. */
  'orders:note',
  'refunds:read',
  'refunds:review',
  /** The claims queue and a claim's page (SPEC §18): everyone who decides or receives claims. */
  'claims:read',
  /** Approve, reject, require the goods back, switch the resolution: it credits or reships, so the people who talk to merchants. */
  'claims:decide',
  /** Mark a claim's returned goods received into a warehouse: a stock change, so the warehouse. */
  'claims:receive',
  'merchants:read',
  'merchants:write',
  'webhooks:manage',
  'catalog:write',
  'stock:adjust',
  'import:run',
  'staff:manage',
  'audit:read',
  /** The Backups page (SPEC §17): list, back up now, download — an archive holds every merchant's data. */
  'backups:manage',
  /** The supplier's books (issue 41, 9): its own accounts, every merchant's journal as CSV, bank statement matching. */
  'ledger:read',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/**
 * Who may do what. Owner: everything (the supplier's books, every merchant's money at once, only the owner). Support: orders (and their internal notes), refund review,
 * claim decisions, merchants read-only, webhooks. Warehouse: ship/deliver, stock adjustments, imports (and the orders it ships), marking a claim's
 * returned goods received.
 */
export const ROLE_PERMISSIONS: Readonly<Record<StaffRole, readonly Permission[]>> = {
  owner: PERMISSIONS,
  support: [
    'dashboard:read',
    'orders:read',
    'orders:cancel',
    'orders:note',
    'refunds:read',
    'refunds:review',
    'claims:read',
    'claims:decide',
    'merchants:read',
    'webhooks:manage',
  ],
  warehouse: ['dashboard:read', 'orders:read', 'orders:fulfil', 'stock:adjust', 'import:run', 'claims:read', 'claims:receive'],
};

export const can = (role: StaffRole, permission: Permission): boolean => ROLE_PERMISSIONS[role].includes(permission);

/**
 * What writing each kind of import row takes: the permission of the same write by hand (issue 44,
 * 10). `import:run` opens the import pages; it grants no write of its own, so the warehouse role
 * imports stock levels and not prices, fees, warehouses or categories.
 */
export const IMPORT_ROW_PERMISSION: Readonly<Record<ImportSection, Permission>> = {
  warehouses: 'catalog:write',
  categories: 'catalog:write',
  products: 'catalog:write',
  stocks: 'stock:adjust',
  channels: 'catalog:write',
};

/** The import rights of a role: every kind of row whose permission the role lacks is refused, saying why. */
export function staffImportRights(role: StaffRole): ImportRights {
  const refused: Partial<Record<ImportSection, string>> = {};
  for (const section of IMPORT_SECTIONS) {
    const needs = IMPORT_ROW_PERMISSION[section];
    if (!can(role, needs)) refused[section] = `the ${role} role may not write ${section} (that needs ${needs})`;
  }
  return { refused };
}

/** A staff password reset link works once, for 24 hours, as the business manager's do (issue 32, 5). */
export const STAFF_PASSWORD_RESET_TTL_MS = 24 * 3600 * 1000;

/** The console page a staff password reset link opens, on the console's own origin (the admin surface). */
export const staffPasswordResetUrl = (origin: string, token: string) => `${origin}${SECRET_PATHS.staffPasswordReset}${token}`;

/** Emails are compared case-insensitively: this is the form the unique index holds. */
export const emailKey = (email: string) => email.trim().toLowerCase();

/**
 * What the logs say of an address someone typed (issue 30, 4): the first 16 hex digits of the
 * SHA-256 of its key. The same address always gives the same fingerprint, so an operator can group
 * a run of failed sign-ins and check a suspected address against it, but the log does not hold the
 * address (a person's identifier, and for an unknown one often a typo of a real one).
 */
export const emailFingerprint = (email: string) => createHash('sha256').update(emailKey(email)).digest('hex').slice(0, 16);

/** A deliberately plain check (the address is an identifier here, nothing is ever sent to it). */
export function emailProblem(email: string): string | null {
  const e = email.trim();
  if (e.length < 3 || e.length > 254) return 'must be 3 to 254 characters';
  if (!/^[^\s@]+@[^\s@]+$/.test(e)) return 'must look like name@example.com';
  return null;
}

const PASSWORD_MIN = 12;
const PASSWORD_MAX = 256;

/**
 * NIST SP 800-63B: length over composition rules. Leading and trailing spaces are refused because
 * every console form field is trimmed (SPEC §1 Text); control characters because they cannot be typed.
 */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  if (password !== password.trim()) return 'must not start or end with whitespace';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses
  if (/[\u0000-\u001f\u007f]/.test(password)) return 'must not contain control characters';
  return null;
}

export interface SessionTimes {
  createdAt: number;
  lastSeenAt: number;
}

export interface SessionLimits {
  idleMs: number;
  maxMs: number;
}

/** Why a session no longer counts, or null while it does: idle too long, or older than the absolute limit. */
export function sessionExpiry(session: SessionTimes, limits: SessionLimits, now: number): 'idle' | 'absolute' | null {
  if (now >= session.createdAt + limits.maxMs) return 'absolute';
  if (now >= session.lastSeenAt + limits.idleMs) return 'idle';
  return null;
}

/** last_seen_at is written at most this often: a page view is a read, not a write per request. */
export const SESSION_TOUCH_EVERY_MS = 60_000;

/**
 * Sign-in attempts, counted before the password is checked (successes count too): per account a
 * burst of 5, one more a minute; per address a burst of 30, one more each 20 s.
 */
export const SIGN_IN_LIMITS = {
  account: { capacity: 5, refillMs: 5 * 60_000 },
  address: { capacity: 30, refillMs: 10 * 60_000 },
} as const;
