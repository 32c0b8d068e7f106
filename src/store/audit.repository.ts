import type { Selectable } from 'kysely';
import type { Actor, ActorKind, AuditAction, AuditEntry } from '../domain/audit.ts';
import type { Handle, Trx } from './db.ts';
import type { AuditLogTable } from './schema.ts';

export type AuditRow = Selectable<AuditLogTable>;

/**
 * The merchant a row concerns when the writer did not say: the operator's writes name it in their
 * summaries (`merchantId`) or target (`merchant:<id>`), so its admins see those rows too.
 */
function merchantOf(entry: AuditEntry): number | null {
  const named = entry.after?.merchantId ?? entry.before?.merchantId ?? /^merchant:(\d+)$/.exec(entry.target)?.[1] ?? null;
  const id = named === null ? Number.NaN : Number(named);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/** Takes a transaction: an audit row is only ever written together with the change it records. */
export async function insertAudit(trx: Trx, actor: Actor, entry: AuditEntry, now: number): Promise<void> {
  await trx
    .insertInto('audit_log')
    .values({
      actor_kind: actor.kind,
      actor_id: actor.id,
      action: entry.action,
      target: entry.target,
      before_summary: entry.before ? JSON.stringify(entry.before) : null,
      after_summary: entry.after ? JSON.stringify(entry.after) : null,
      request_id: actor.requestId,
      created_at: now,
      merchant_id: entry.merchantId ?? merchantOf(entry),
    })
    .execute();
}

/** Newest first; `beforeId` continues a walk (keyset: rows written meanwhile never shift a page). */
export async function listAudit(db: Handle, beforeId: number | null, limit: number): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').limit(limit);
  if (beforeId !== null) q = q.where('id', '<', beforeId);
  return q.execute();
}

export interface AuditFilter {
  /** `staff:7000000000001`, `admin_key:key_…`, `cli:root`: kind and id of who acted. */
  actor: { kind: ActorKind; id: string } | null;
  action: AuditAction | null;
  /** The exact target (`staff:ops@example.com`, `refund:8000000000001` …). */
  target: string | null;
}

/**
 * The console's audit page: like listAudit, narrowed to one actor, action and/or target. Each
 * filter has an index ending in the id (migration 0025), so a page is an indexed range.
 */
export async function listAuditFiltered(db: Handle, filter: AuditFilter, beforeId: number | null, limit: number): Promise<AuditRow[]> {
  let q = filteredAudit(db, filter).selectAll().orderBy('id', 'desc').limit(limit);
  if (beforeId !== null) q = q.where('id', '<', beforeId);
  return q.execute();
}

function filteredAudit(db: Handle, filter: AuditFilter) {
  let q = db.selectFrom('audit_log');
  if (filter.actor) q = q.where('actor_kind', '=', filter.actor.kind).where('actor_id', '=', filter.actor.id);
  if (filter.action !== null) q = q.where('action', '=', filter.action);
  if (filter.target !== null) q = q.where('target', '=', filter.target);
  return q;
}

/**
 * How many rows the filter matches, counting at most `cap` (the page says "about"); with
 * `fromId`, only those with that id or a newer one (the rows the pages before this one showed).
 */
export async function countAuditFiltered(db: Handle, filter: AuditFilter, cap: number, fromId: number | null): Promise<number> {
  let inner = filteredAudit(db, filter).select('id');
  if (fromId !== null) inner = inner.where('id', '>=', fromId);
  const row = await db
    .selectFrom(inner.limit(cap).as('w'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One merchant's rows, newest first (the business manager's audit page). */
export async function listMerchantAudit(db: Handle, merchantId: number, beforeId: number | null, limit: number): Promise<AuditRow[]> {
  let q = db.selectFrom('audit_log').selectAll().where('merchant_id', '=', merchantId).orderBy('id', 'desc').limit(limit);
  if (beforeId !== null) q = q.where('id', '<', beforeId);
  return q.execute();
}
