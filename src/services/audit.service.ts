import { ACTOR_KINDS, decodeAuditCursor, encodeAuditCursor, type ActorKind, type AuditAction } from '../domain/audit.ts';
import { emailKey } from '../domain/staff.ts';
import { fieldError } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import { countAuditFiltered, listAudit, listAuditFiltered, listMerchantAudit, type AuditFilter, type AuditRow } from '../store/audit.repository.ts';
import type { CsvCell, CsvExport } from '../domain/csv.ts';
import { findStaffByEmail, staffEmails } from '../store/staff.repository.ts';
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

/** What the audit page was asked for: each filter empty for any. */
export interface AuditPageFilter {
  /** `kind:id` (`staff:7000000000001`, `admin_key:key_…`, `cli:root`) or a staff member's email. */
  actor: string;
  action: AuditAction | '';
  target: string;
}

/** The store's filter for what the page was asked for; an actor that names no one is a 400 naming the field. */
async function auditFilterOf(db: Handle, filter: AuditPageFilter): Promise<AuditFilter> {
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
  return { actor, action: filter.action === '' ? null : filter.action, target: filter.target.trim() === '' ? null : filter.target.trim() };
}

/** A page of rows with the staff actors' emails (`actorName`; null for other actors). */
async function withActorNames(db: Handle, page: AuditRow[]) {
  const staffIds = [...new Set(page.filter((r) => r.actor_kind === 'staff').map((r) => Number(r.actor_id)))].filter(Number.isSafeInteger);
  const emails = await staffEmails(db, staffIds);
  return page.map((r) => ({ ...presentAudit(r), actorName: r.actor_kind === 'staff' ? (emails.get(Number(r.actor_id)) ?? null) : null }));
}

/** The audit page's count stops here ("10,000 or more"). */
const AUDIT_COUNT_CAP = 10_000;
/** Rows read per round trip while an export streams. */
const EXPORT_BATCH = 500;

/**
 * The console's audit page: newest first, narrowed by actor, action and target, walked with
 * `nextCursor` (the API's keyset cursor); `counts` place the page in the walk. Staff actors are
 * shown with their email.
 */
export async function auditLogPage(db: Handle, filter: AuditPageFilter, cursor: string | null, limit: number) {
  const beforeId = cursor === null ? null : decodeAuditCursor(cursor);
  if (cursor !== null && beforeId === null) throw fieldError('cursor', 'is not a cursor this page gave');
  const storeFilter = await auditFilterOf(db, filter);
  const [rows, about, shownBefore] = await Promise.all([
    listAuditFiltered(db, storeFilter, beforeId, limit + 1),
    countAuditFiltered(db, storeFilter, AUDIT_COUNT_CAP, null),
    beforeId === null ? 0 : countAuditFiltered(db, storeFilter, AUDIT_COUNT_CAP, beforeId),
  ]);
  const page = rows.slice(0, limit);
  return {
    list: await withActorNames(db, page),
    nextCursor: rows.length > limit ? encodeAuditCursor(page.at(-1)!.id) : null,
    counts: { first: page.length ? shownBefore + 1 : 0, last: shownBefore + page.length, about, capped: about >= AUDIT_COUNT_CAP },
  };
}

const AUDIT_CSV_COLUMNS = ['id', 'at', 'actor', 'actor_kind', 'actor_id', 'action', 'target', 'before', 'after', 'request_id'] as const;

/**
 * Rows of the audit log as CSV rows, newest first, read in keyset batches by `page(beforeId, limit)`;
 * with `staffNames`, a staff actor is named by email (the console), else by kind and id (a merchant's
 * export does not learn the operator's staff).
 */
function auditCsvRows(db: Handle, page: (beforeId: number | null, limit: number) => Promise<AuditRow[]>, staffNames: boolean, batch: number) {
  return (async function* () {
    let beforeId: number | null = null;
    for (;;) {
      const rows = await page(beforeId, batch);
      const named = staffNames ? await withActorNames(db, rows) : rows.map((r) => ({ ...presentAudit(r), actorName: null }));
      for (const e of named) {
        yield {
          id: e.id,
          at: e.createdAt,
          actor: e.actorName ?? `${e.actorKind}:${e.actorId}`,
          actor_kind: e.actorKind,
          actor_id: e.actorId,
          action: e.action,
          target: e.target,
          before: e.before ? JSON.stringify(e.before) : null,
          after: e.after ? JSON.stringify(e.after) : null,
          request_id: e.requestId,
        } satisfies Record<(typeof AUDIT_CSV_COLUMNS)[number], CsvCell>;
      }
      if (rows.length < batch) return;
      beforeId = rows[rows.length - 1].id;
    }
  })();
}

/** The console's audit log with the page's filters, every row, as CSV (the filters are checked before the first row). */
export async function auditCsv(db: Handle, filter: AuditPageFilter, batch = EXPORT_BATCH): Promise<CsvExport> {
  const storeFilter = await auditFilterOf(db, filter);
  return {
    name: 'audit-log',
    columns: AUDIT_CSV_COLUMNS,
    rows: auditCsvRows(db, (beforeId, limit) => listAuditFiltered(db, storeFilter, beforeId, limit), true, batch),
  };
}

/** One merchant's rows of the audit log (the business manager's audit page) as CSV. */
export const merchantAuditCsv = (db: Handle, merchantId: number, batch = EXPORT_BATCH): CsvExport => ({
  name: 'audit-log',
  columns: AUDIT_CSV_COLUMNS,
  rows: auditCsvRows(db, (beforeId, limit) => listMerchantAudit(db, merchantId, beforeId, limit), false, batch),
});

/** One merchant's rows (the business manager's audit page), newest first; `nextBefore` continues the walk. */
export async function merchantAudit(db: Handle, merchantId: number, beforeId: number | null, limit: number) {
  const rows = await listMerchantAudit(db, merchantId, beforeId, limit + 1);
  const page = rows.slice(0, limit);
  return { list: page.map(presentAudit), nextBefore: rows.length > limit ? String(page.at(-1)!.id) : null };
}
