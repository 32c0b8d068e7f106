import { hashSecret } from './secrets.ts';

/**
 * The audit log's vocabulary (SPEC §14): who acted, and what they did. Each row is written in the
 * same transaction as the change it records.
 */

/** A console user; the operator API's key; the `stockist` command line on the server. */
export const ACTOR_KINDS = ['staff', 'admin_key', 'cli'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export interface Actor {
  kind: ActorKind;
  /** staff: the staff id; admin_key: a fingerprint of the key (never the key); cli: the OS user. */
  id: string;
  /** The request that made the change (null on the command line). */
  requestId: string | null;
}

export const AUDIT_ACTIONS = [
  'refund.approve',
  'refund.reject',
  'staff.create',
  'staff.disable',
  'staff.reset_password',
  'staff.sign_in',
  'staff.sign_out',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** A short, JSON-able description of the target before or after the change (never a secret). */
export type AuditSummary = Record<string, string | number | boolean | null>;

export interface AuditEntry {
  action: AuditAction;
  /** `refund:8000000000001`, `staff:ops@example.com` … */
  target: string;
  before: AuditSummary | null;
  after: AuditSummary | null;
}

/**
 * The audit list's keyset cursor: `au1_` + the id of the last row returned (rows come newest
 * first, so the next page holds the smaller ids). Opaque to clients.
 */
const CURSOR_PREFIX = 'au1_';

export const encodeAuditCursor = (lastId: number) => `${CURSOR_PREFIX}${lastId.toString(36)}`;

export function decodeAuditCursor(cursor: string): number | null {
  if (!cursor.startsWith(CURSOR_PREFIX)) return null;
  const body = cursor.slice(CURSOR_PREFIX.length);
  if (!/^[0-9a-z]{1,11}$/.test(body)) return null;
  const id = Number.parseInt(body, 36);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/** The operator API's actor: a fingerprint of the key, so a rotated key shows as a new actor and the key itself is never stored. */
export const adminKeyActor = (adminApiKey: string, requestId: string | null): Actor => ({
  kind: 'admin_key',
  id: `key_${hashSecret(adminApiKey).slice(0, 12)}`,
  requestId,
});
