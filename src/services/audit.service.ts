import { ACTOR_KINDS, decodeAuditCursor, encodeAuditCursor, type ActorKind, type AuditAction } from '../domain/audit.ts';
import { emailKey } from '../domain/staff.ts';
import { fieldError } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import type { CsvCell, CsvExport } from '../domain/csv.ts';
import { auditChanges, type AuditValue } from '../present/audit.presenter.ts';
import {
  countAuditFiltered,
  listAudit,
  listAuditFiltered,
  listMerchantAudit,
  type AuditFilter,
  type AuditRow,
  type AuditRowWithActor,
} from '../store/audit.repository.ts';
import { findStaffByEmail } from '../store/staff.repository.ts';
import type { Handle } from '../store/db.ts';
import { merchantNames } from '../store/merchants.repository.ts';

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

/** The audit page's count stops here ("10,000 or more"). */
const AUDIT_COUNT_CAP = 10_000;
/** Rows read per round trip while an export streams. */
const EXPORT_BATCH = 500;

/**
 * The console's audit page: newest first, narrowed by actor, action and target, walked with
 * `nextCursor` (the API's keyset cursor); `counts` place the page in the walk. Staff and
 * merchant-user actors come with their email.
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
    list: await withMerchantNames(db, page),
    nextCursor: rows.length > limit ? encodeAuditCursor(page.at(-1)!.id) : null,
    counts: { first: page.length ? shownBefore + 1 : 0, last: shownBefore + page.length, about, capped: about >= AUDIT_COUNT_CAP },
  };
}

/** `merchant:<id>` (a target) or `<id>` (a `merchantId` field) → the id; null for anything else. */
function merchantIdIn(text: string, prefix: string): number | null {
  const m = new RegExp(`^${prefix}([1-9][0-9]{0,15})$`).exec(text);
  return m && Number.isSafeInteger(Number(m[1])) ? Number(m[1]) : null;
}

/**
 * The console's audit rows with every merchant they show by name (issue 29, items 7 and 16): a
 * `merchant:<id>` target, a `merchantId` field of the change, and the merchant of a business
 * manager user who acted (the row's merchant). One read of the names per page.
 */
async function withMerchantNames(db: Handle, rows: AuditRowWithActor[]) {
  const shown = rows.map(presentAuditPageRow);
  const fieldIds = (c: ReturnType<typeof presentAuditPageRow>['changes'][number]) =>
    c.field === 'merchantId' ? [c.before, c.after].map((v) => (v !== null && 'text' in v ? merchantIdIn(v.text, '') : null)) : [];
  const ids = rows.flatMap((r, i) => [
    merchantIdIn(r.target, 'merchant:'),
    r.actor_kind === 'merchant_user' ? r.merchant_id : null,
    ...shown[i].changes.flatMap(fieldIds),
  ]);
  const names = await merchantNames(
    db,
    ids.filter((id): id is number => id !== null),
  );
  const named = (id: number | null) => (id !== null && names.has(id) ? { id: String(id), name: names.get(id)! } : null);
  const value = (v: AuditValue | null): AuditValue | null => {
    const merchant = v !== null && 'text' in v ? named(merchantIdIn(v.text, '')) : null;
    return merchant ? { merchant: merchant.id, name: merchant.name } : v;
  };
  return shown.map((e, i) => ({
    ...e,
    targetMerchant: named(merchantIdIn(rows[i].target, 'merchant:')),
    actorMerchant: rows[i].actor_kind === 'merchant_user' ? named(rows[i].merchant_id) : null,
    changes: e.changes.map((c) => (c.field === 'merchantId' ? { ...c, before: value(c.before), after: value(c.after) } : c)),
  }));
}

const AUDIT_CSV_COLUMNS = ['id', 'at', 'actor', 'actor_kind', 'actor_id', 'action', 'target', 'before', 'after', 'request_id'] as const;

/**
 * Rows of the audit log as CSV rows, newest first, read in keyset batches by `page(beforeId, limit)`
 * (rows with their actor's email, joined in the store); `emailOf` says whose email the export may
 * name — in the console anyone's, in a merchant's export only its own users' (it does not learn the
 * operator's staff) — and any other actor is named by kind and id.
 */
function auditCsvRows(
  page: (beforeId: number | null, limit: number) => Promise<AuditRowWithActor[]>,
  emailOf: (row: AuditRowWithActor) => string | null,
  batch: number,
) {
  return (async function* () {
    let beforeId: number | null = null;
    for (;;) {
      const rows = await page(beforeId, batch);
      for (const r of rows) {
        const e = presentAudit(r);
        yield {
          id: e.id,
          at: e.createdAt,
          actor: emailOf(r) ?? `${e.actorKind}:${e.actorId}`,
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
    rows: auditCsvRows(
      (beforeId, limit) => listAuditFiltered(db, storeFilter, beforeId, limit),
      (r) => r.actor_email,
      batch,
    ),
  };
}

/** One merchant's rows of the audit log (the business manager's audit page) as CSV: its own users by email, as on the page. */
export const merchantAuditCsv = (db: Handle, merchantId: number, batch = EXPORT_BATCH): CsvExport => ({
  name: 'audit-log',
  columns: AUDIT_CSV_COLUMNS,
  rows: auditCsvRows(
    (beforeId, limit) => listMerchantAudit(db, merchantId, beforeId, limit),
    (r) => (r.actor_kind === 'merchant_user' ? r.actor_email : null),
    batch,
  ),
});

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
