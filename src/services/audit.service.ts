import { decodeAuditCursor, encodeAuditCursor } from '../domain/audit.ts';
import { fieldError } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import { listAudit, listMerchantAudit, type AuditRow } from '../store/audit.repository.ts';
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

/** GET /admin/v1/audit: newest first, walked with `nextCursor` (keyset on the id: rows written meanwhile never shift a page). */
export async function auditPage(db: Handle, cursor: string | null, limit: number) {
  const beforeId = cursor === null ? null : decodeAuditCursor(cursor);
  if (cursor !== null && beforeId === null) throw fieldError('cursor', 'is not a cursor this API returned');
  const rows = await listAudit(db, beforeId, limit + 1);
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return { list: page.map(presentAudit), nextCursor: hasMore ? encodeAuditCursor(page.at(-1)!.id) : null, hasMore };
}

/** One merchant's rows (the business manager's audit page), newest first; `nextBefore` continues the walk. */
export async function merchantAudit(db: Handle, merchantId: number, beforeId: number | null, limit: number) {
  const rows = await listMerchantAudit(db, merchantId, beforeId, limit + 1);
  const page = rows.slice(0, limit);
  return { list: page.map(presentAudit), nextBefore: rows.length > limit ? String(page.at(-1)!.id) : null };
}
