import { ACTOR_KINDS, decodeAuditCursor, encodeAuditCursor, type ActorKind, type AuditAction } from '../domain/audit.ts';
import { emailKey } from '../domain/staff.ts';
import { fieldError } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import { auditChanges } from '../present/audit.presenter.ts';
import { listAudit, listAuditFiltered, listMerchantAudit, type AuditFilter, type AuditRow, type AuditRowWithActor } from '../store/audit.repository.ts';
import { findStaffByEmail } from '../store/staff.repository.ts';
import type { Handle } from '../store/db.ts';

const parse = (json: string | null) => (json === null ? null : (JSON.parse(json) as Record<string, unknown>));

const presentAudit = (r: AuditRow) => ({
  id: String(r.id),
  actorKind: r.actor_kind,
  actorId: r.actor_id,
  action: r.action,
  target: r.target,
  before: parse(r.before_summary),
  after: parse(r.after_summary),
  requestId: r.request_id,
  createdAt: formatInstant(r.created_at)!,
});

/** A row of the audit pages: who by email where the actor has one, the change as a list of fields, the time as epoch ms (the page renders it). */
const presentAuditPageRow = (r: AuditRowWithActor) => ({
  id: String(r.id),
  actorKind: r.actor_kind,
  actorId: r.actor_id,
  actorEmail: r.actor_email,
  action: r.action,
  target: r.target,
  changes: auditChanges(r.action, parse(r.before_summary), parse(r.after_summary)),
  requestId: r.request_id,
  createdAt: r.created_at,
});

/** GET /admin/v1/audit: newest first, walked with `nextCursor` (keyset on the id: rows written meanwhile never shift a page). */
export async function auditPage(db: Handle, cursor: string | null, limit: number) {
  const beforeId = cursor === null ? null : decodeAuditCursor(cursor);
  if (cursor !== null && beforeId === null) throw fieldError('cursor', 'is not a cursor this API returned');
  const rows = await listAudit(db, beforeId, limit + 1);
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { list: page.map(presentAudit), nextCursor: hasMore ? encodeAuditCursor(page.at(-1)!.id) : null, hasMore };
}

/** What the audit page was asked for: each filter empty for any. */
export interface AuditPageFilter {
  /** `kind:id` (`staff:7000000000001`, `admin_key:key_…`, `cli:root`) or a staff member's email. */
  actor: string;
  action: AuditAction | '';
  target: string;
}

/**
 * The console's audit page: newest first, narrowed by actor, action and target, walked with
 * `nextCursor` (the API's keyset cursor). Staff and merchant-user actors come with their email.
 */
export async function auditLogPage(db: Handle, filter: AuditPageFilter, cursor: string | null, limit: number) {
  const beforeId = cursor === null ? null : decodeAuditCursor(cursor);
  if (cursor !== null && beforeId === null) throw fieldError('cursor', 'is not a cursor this page gave');
  let actor: AuditFilter['actor'] = null;
  const actorText = filter.actor.trim();
  if (actorText !== '') {
    const colon = actorText.indexOf(':');
    const kind = colon > 0 ? actorText.slice(0, colon) : '';
    if ((ACTOR_KINDS as readonly string[]).includes(kind)) actor = { kind: kind as ActorKind, id: actorText.slice(colon + 1) };
    else if (actorText.includes('@')) {
      const member = await findStaffByEmail(db, emailKey(actorText));
      if (!member) throw fieldError('actor', `no staff account ${emailKey(actorText)}`);
      actor = { kind: 'staff', id: String(member.id) };
    } else throw fieldError('actor', `give kind:id (${ACTOR_KINDS.join(', ')}) or a staff email`);
  }
  const rows = await listAuditFiltered(
    db,
    { actor, action: filter.action === '' ? null : filter.action, target: filter.target.trim() === '' ? null : filter.target.trim() },
    beforeId,
    limit + 1,
  );
  const page = rows.slice(0, limit);
  return {
    list: page.map(presentAuditPageRow),
    nextCursor: rows.length > limit ? encodeAuditCursor(page.at(-1)!.id) : null,
  };
}

/**
 * One merchant's rows (the business manager's audit page), newest first; `nextBefore` continues
 * the walk. The merchant's own users are named by email; the operator's people are not (their
 * addresses are the operator's, not the merchant's): the page says "operator".
 */
export async function merchantAudit(db: Handle, merchantId: number, beforeId: number | null, limit: number) {
  const rows = await listMerchantAudit(db, merchantId, beforeId, limit + 1);
  const page = rows.slice(0, limit);
  const list = page.map((r) => ({ ...presentAuditPageRow(r), actorEmail: r.actor_kind === 'merchant_user' ? r.actor_email : null }));
  return { list, nextBefore: rows.length > limit ? String(page.at(-1)!.id) : null };
}
