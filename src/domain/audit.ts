import { hashSecret } from './secrets.ts';
import type { FormKey } from './form-keys.ts';

/**
 * The audit log's vocabulary (SPEC §14): who acted, and what they did. Each row is written in the
 * same transaction as the change it records.
 */

/** A console user; the operator API's key; the `stockist` command line on the server; the server's own jobs; a business manager user. */
/** `system`: the server itself acting on an operator's behalf (the sandbox shipper, the demo seed). */
export const ACTOR_KINDS = ['staff', 'admin_key', 'cli', 'system', 'merchant_user'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export interface Actor {
  kind: ActorKind;
  /** staff: the staff id; admin_key: a fingerprint of the key (never the key); cli: the OS user; system: the job; merchant_user: the user id. */
  id: string;
  /** The request that made the change (null on the command line). */
  requestId: string | null;
  /**
   * A web form's one-time key (domain/form-keys.ts): recorded with the audit row, in the write's
   * transaction, so a second submission of the same form applies nothing.
   */
  formKey?: FormKey;
}

export const AUDIT_ACTIONS = [
  'refund.approve',
  'refund.reject',
  'staff.create',
  'staff.disable',
  'staff.reset_password',
  'staff.create_password_reset',
  'staff.sign_in',
  'staff.sign_out',
  'staff.change_password',
  'staff.sign_out_everywhere',
  'warehouse.save',
  'category.save',
  'product.save',
  'channel.save',
  'catalog.import',
  'stock.set',
  'stock.adjust',
  'merchant.create',
  'merchant.disable',
  'merchant.enable',
  'token.issue',
  'token.revoke',
  'split_order.ship',
  'split_order.deliver',
  'split_order.cancel',
  'webhook.disable',
  'webhook.enable',
  'staff.enable',
  'staff.set_role',
  'webhook.retry',
  'merchant_user.invite',
  'merchant_user.revoke_invitation',
  'merchant_user.accept',
  'merchant_user.sign_in',
  'merchant_user.sign_out',
  'merchant_user.change_role',
  'merchant_user.remove',
  'merchant_user.enable_two_factor',
  'merchant_user.disable_two_factor',
  'merchant_user.reset_two_factor',
  'merchant_user.change_password',
  'merchant_user.sign_out_everywhere',
  'merchant_user.create_password_reset',
  'merchant_user.reset_password',
  'merchant_user.regenerate_recovery_codes',
  'merchant_user.use_recovery_code',
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
  'account.update',
  'account.top_up',
  'account.adjust',
  'webhook.update',
  'order.note',
  'backup.start',
  'backup.download',
  'claim.open',
  'claim.cancel',
  'claim.post_return',
  'claim.approve',
  'claim.reject',
  'claim.receive',
  'claim.set_resolution',
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

/** The server's own jobs (the sandbox shipper, the demo seed): named by the job, with no request. */
export const systemActor = (job: string): Actor => ({ kind: 'system', id: job, requestId: null });

/** At most this many keys in one summary: a 1,000-row stock request stays a row of a few KB. */
const MAX_SUMMARY_ENTRIES = 20;

/**
 * A many-row change as a pair of bounded summaries: the first MAX_SUMMARY_ENTRIES entries by key
 * (`SKU-A@G007` → quantity), plus `rows` (how many in all) and `omitted` (how many are not listed).
 */
export function boundedSummaries(entries: { key: string; before: number | string | null; after: number | string | null }[]): {
  before: AuditSummary;
  after: AuditSummary;
} {
  const shown = entries.slice(0, MAX_SUMMARY_ENTRIES);
  const counts = { rows: entries.length, omitted: entries.length - shown.length };
  return {
    before: { ...counts, ...Object.fromEntries(shown.map((e) => [e.key, e.before])) },
    after: { ...counts, ...Object.fromEntries(shown.map((e) => [e.key, e.after])) },
  };
}
