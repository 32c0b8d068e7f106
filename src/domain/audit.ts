import { hashSecret } from './secrets.ts';

/**
 * The audit log's vocabulary (SPEC §14): who acted, and what they did. Each row is written in the
 * same transaction as the change it records.
 */

/** A console user; the operator API's key; the `stockist` command line on the server; a business manager user. */
export const ACTOR_KINDS = ['staff', 'admin_key', 'cli', 'merchant_user'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export interface Actor {
  kind: ActorKind;
  /** staff: the staff id; admin_key: a fingerprint of the key (never the key); cli: the OS user; merchant_user: the user id. */
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
  'merchant_user.invite',
  'merchant_user.accept',
  'merchant_user.sign_in',
  'merchant_user.sign_out',
  'merchant_user.change_role',
  'merchant_user.remove',
  'merchant_user.enable_two_factor',
  'merchant_user.disable_two_factor',
  'merchant.require_two_factor',
  'oauth_client.create',
  'oauth_client.rotate',
  'oauth_client.revoke',
  'personal_token.create',
  'personal_token.revoke',
  'webhook.create',
  'webhook.delete',
  'webhook.rotate_secret',
  'webhook.send_test',
  'webhook.retry_delivery',
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
  /** The merchant the change concerns, when there is one: its admins see the row in the business manager. */
  merchantId?: number | null;
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
