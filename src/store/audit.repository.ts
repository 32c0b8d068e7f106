import { sql, type Selectable } from 'kysely';
import type { Actor, ActorKind, AuditAction, AuditEntry } from '../domain/audit.ts';
import { countUpTo, type Handle, type Trx } from './db.ts';
import type { MerchantScope } from './tenancy.ts';
import { consumeFormKey } from './web-forms.repository.ts';
import type { AuditLogTable } from './schema.ts';
import { handleOf } from './scope-handle.ts';
import { merchantIdOf } from './scope-mint.ts';

export type AuditRow = Selectable<AuditLogTable>;

/** A row of the audit pages: with the email of the staff member or merchant user who acted (null for other actors, or an account since removed). */
export type AuditRowWithActor = AuditRow & { actor_email: string | null };

/**
 * The audit rows with their actor's email, joined here rather than looked up per page. The ids
 * are compared as text (`actor_id` is text: other actors are named by text); the staff table is
 * small, and a merchant user is looked for among the row's merchant's users only (its index).
 */
function auditWithActors(db: Handle) {
  return db
    .selectFrom('audit_log')
    .leftJoin('staff_users', (join) =>
      join.on('audit_log.actor_kind', '=', 'staff').on(sql<boolean>`cast(${sql.ref('staff_users.id')} as text) = ${sql.ref('audit_log.actor_id')}`),
    )
    .leftJoin('merchant_users', (join) =>
      join
        .on('audit_log.actor_kind', '=', 'merchant_user')
        .onRef('merchant_users.merchant_id', '=', 'audit_log.merchant_id')
        .on(sql<boolean>`cast(${sql.ref('merchant_users.id')} as text) = ${sql.ref('audit_log.actor_id')}`),
    )
    .selectAll('audit_log')
    .select((eb) => eb.fn.coalesce('staff_users.email', 'merchant_users.email').as('actor_email'));
}

/**
 * The merchant a row concerns when the writer did not say: the operator's writes name it in their
 * summaries (`merchantId`) or target (`merchant:<id>`), so its admins see those rows too.
 */
function merchantOf(entry: AuditEntry): number | null {
  const named = entry.after?.merchantId ?? entry.before?.merchantId ?? /^merchant:(\d+)$/.exec(entry.target)?.[1] ?? null;
  const id = named === null ? Number.NaN : Number(named);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

/**
 * Takes a transaction: an audit row is only ever written together with the change it records. A
 * web form's one-time key rides on the actor and is recorded here, so every audited write a form
 * makes applies once (domain/form-keys.ts).
 */
export async function insertAudit(trx: Trx, actor: Actor, entry: AuditEntry, now: number): Promise<void> {
  if (actor.formKey) await consumeFormKey(trx, actor.formKey, actor.requestId ?? '', now);
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
/**
 * `insertAudit` for a change made within a merchant's scope: the row is the scope's merchant's
 * (`merchant_id`), so a service writes its audit row without taking the handle out of the scope.
 */
export const auditIn = (scope: MerchantScope<Trx>, actor: Actor, entry: Omit<AuditEntry, 'merchantId'>, now: number): Promise<void> =>
  insertAudit(handleOf(scope), actor, { ...entry, merchantId: merchantIdOf(scope) }, now);

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
export async function listAuditFiltered(db: Handle, filter: AuditFilter, beforeId: number | null, limit: number): Promise<AuditRowWithActor[]> {
  let q = auditWithActors(db).orderBy('audit_log.id', 'desc').limit(limit);
  if (filter.actor) q = q.where('audit_log.actor_kind', '=', filter.actor.kind).where('audit_log.actor_id', '=', filter.actor.id);
  if (filter.action !== null) q = q.where('audit_log.action', '=', filter.action);
  if (filter.target !== null) q = q.where('audit_log.target', '=', filter.target);
  if (beforeId !== null) q = q.where('audit_log.id', '<', beforeId);
  return q.execute();
}

/**
 * How many rows the filter matches, counting at most `cap` (the page says "about"); with
 * `fromId`, only those with that id or a newer one (the rows the pages before this one showed).
 * The same filters as listAuditFiltered, without the actors' join (a count needs no email).
 */
export async function countAuditFiltered(db: Handle, filter: AuditFilter, cap: number, fromId: number | null): Promise<number> {
  let inner = db.selectFrom('audit_log').select('id');
  if (filter.actor) inner = inner.where('actor_kind', '=', filter.actor.kind).where('actor_id', '=', filter.actor.id);
  if (filter.action !== null) inner = inner.where('action', '=', filter.action);
  if (filter.target !== null) inner = inner.where('target', '=', filter.target);
  if (fromId !== null) inner = inner.where('id', '>=', fromId);
  return countUpTo(db, inner, cap);
}

/** One merchant's rows, newest first (the business manager's audit page). */
/** One merchant's rows (the audit log is not merchant-owned: the operator's rows have no merchant). */
export async function listMerchantAudit(scope: MerchantScope, beforeId: number | null, limit: number): Promise<AuditRowWithActor[]> {
  let q = auditWithActors(handleOf(scope)).where('audit_log.merchant_id', '=', merchantIdOf(scope)).orderBy('audit_log.id', 'desc').limit(limit);
  if (beforeId !== null) q = q.where('audit_log.id', '<', beforeId);
  return q.execute();
}
