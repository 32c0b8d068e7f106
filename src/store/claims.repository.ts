import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { countUpTo, type Dialect, type Handle, type Trx } from './db.ts';
import type { ClaimReason, ClaimStatus } from '../domain/claims.ts';
import type { SplitOrderStatus } from '../domain/vocabulary.ts';
import type { ClaimLinesTable, ClaimsTable } from './schema.ts';
import {
  isMerchantScope,
  type AllMerchants,
  type MerchantScope,
  type ScopedClaimId,
  type ScopedOrderId,
  type ScopedSplitId,
  type TenantScope,
} from './tenancy.ts';
import { ownedBy, resolvedClaimId, resolvedOrderId, resolvedSplitId, type Owned } from './scope-mint.ts';
import { handleOf } from './scope-handle.ts';

/**
 * Claims after shipment (SPEC §18, migration 0045): the claim, its lines, its evidence files' metadata
 * and its one resolution. Merchant-owned rows, reached through a tenant scope; a claim's rows are
 * changed by a `ScopedClaimId`, which only a scoped read makes.
 */
export type ClaimRow = Selectable<ClaimsTable>;
export type ScopedClaimRow = ClaimRow & { id: ScopedClaimId; order_id: ScopedOrderId; split_order_id: ScopedSplitId };

const scoped = (row: ClaimRow): ScopedClaimRow => ({
  ...row,
  id: resolvedClaimId(row.id),
  order_id: resolvedOrderId(row.order_id),
  split_order_id: resolvedSplitId(row.split_order_id),
});
const claimsOf = (r: TenantScope) => (isMerchantScope(r) ? r.selectFrom('claims') : handleOf(r).selectFrom('claims'));

/** The split order a claim is opened on, as the opening transaction sees it. */
export interface ClaimedSplit {
  id: ScopedSplitId;
  orderId: ScopedOrderId;
  status: SplitOrderStatus;
  shippedAt: number | null;
  freightCents: number;
  warehouseId: number;
}

/**
 * The merchant's split order `splitId`, locked for the opening of a claim (`FOR UPDATE` on
 * PostgreSQL; SQLite's IMMEDIATE transaction already holds the one write lock), so two claims
 * opened at once on one split count each other's quantities. Undefined when the merchant has no such
 * split order.
 */
export async function lockSplitForClaim(scope: MerchantScope<Trx>, dialect: Dialect, splitId: number): Promise<ClaimedSplit | undefined> {
  const q = scope.selectFrom('split_orders').select(['id', 'order_id', 'status', 'shipped_at', 'freight_cents', 'warehouse_id']).where('id', '=', splitId);
  const row = await (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
  return (
    row && {
      id: resolvedSplitId(row.id),
      orderId: resolvedOrderId(row.order_id),
      status: row.status,
      shippedAt: row.shipped_at,
      freightCents: row.freight_cents,
      warehouseId: row.warehouse_id,
    }
  );
}

/**
 * The split order's lines with what other claims hold of them (every claim but rejected and
 * cancelled ones, and but `except`, the claim being resolved).
 */
export async function claimableItems(db: Handle, splitId: ScopedSplitId, except: ScopedClaimId | null = null) {
  const rows = await db
    .selectFrom('order_items as i')
    .select((eb) => [
      'i.id as itemId',
      'i.sku as sku',
      'i.unit_cents as unitCents',
      'i.quantity as quantity',
      'i.refunded_quantity as refunded',
      'i.product_id as productId',
      eb
        .selectFrom('claim_lines as l')
        .innerJoin('claims as c', 'c.id', 'l.claim_id')
        .select((e) => e.fn.coalesce(e.fn.sum<number | string>('l.quantity'), sql<number>`0`).as('n'))
        .whereRef('l.order_item_id', '=', 'i.id')
        .where('c.status', 'not in', ['rejected', 'cancelled'])
        .where('c.id', '<>', except ?? 0)
        .as('claimed'),
    ])
    .where('i.split_order_id', '=', splitId)
    .orderBy('i.id')
    .execute();
  return rows.map((r) => ({ ...r, claimed: Number(r.claimed ?? 0) }));
}

/** `claimableItems` of the merchant's own split order (the business manager's claim form reads it outside a transaction). */
export const claimableItemsOf = (scope: MerchantScope, splitId: ScopedSplitId) => claimableItems(handleOf(scope), splitId);

/** Writes a new claim and its lines; returns its id (the `claimNo`). */
export async function insertClaim(
  scope: MerchantScope<Trx>,
  claim: Omit<Insertable<ClaimsTable>, 'merchant_id'>,
  lines: Omit<Insertable<ClaimLinesTable>, 'merchant_id' | 'claim_id'>[],
): Promise<ScopedClaimId> {
  const row = await scope.insertInto('claims', claim).returning('id').executeTakeFirstOrThrow();
  const id = resolvedClaimId(Number(row.id));
  await scope
    .insertInto(
      'claim_lines',
      lines.map((l) => ({ ...l, claim_id: id })),
    )
    .execute();
  return id;
}

/**
 * Attaches the merchant's unattached files to the claim; returns the ids it attached (a file of
 * another merchant, or already on a claim, is not among them).
 */
export async function attachFiles(scope: MerchantScope<Trx>, claimId: ScopedClaimId, fileIds: number[]): Promise<number[]> {
  if (fileIds.length === 0) return [];
  const rows = await scope
    .updateTable('claim_files')
    .set({ claim_id: claimId })
    .where('id', 'in', fileIds)
    .where('claim_id', 'is', null)
    .returning('id')
    .execute();
  return rows.map((r) => Number(r.id));
}

/** The claim `claimNo` as the reader may see it: the merchant's own, or any for the operator. */
export async function resolveClaim(reader: TenantScope, claimNo: number): Promise<Owned<ScopedClaimRow> | undefined> {
  const row = await claimsOf(reader).selectAll().where('id', '=', claimNo).executeTakeFirst();
  return row && ownedBy(handleOf(reader), row.merchant_id, scoped(row));
}

/** The claim, locked for a decision (`FOR UPDATE` on PostgreSQL): a second decider waits, then sees the first one's state. */
export async function lockClaim(trx: Trx, dialect: Dialect, id: ScopedClaimId): Promise<ScopedClaimRow | undefined> {
  const q = trx.selectFrom('claims').selectAll().where('id', '=', id);
  const row = await (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
  return row && scoped(row);
}

/**
 * Moves the claim from one of `from` to the state `set` names (with its other columns), in one
 * conditional UPDATE: of two decisions racing, the second finds the state gone and changes nothing.
 * Undefined when the claim is no longer in one of `from`.
 */
export async function moveClaim(
  trx: Trx,
  id: ScopedClaimId,
  from: readonly ClaimStatus[],
  set: Updateable<ClaimsTable> & { status: ClaimStatus; updated_at: number },
): Promise<ScopedClaimRow | undefined> {
  const row = await trx
    .updateTable('claims')
    .set(set)
    .where('id', '=', id)
    .where('status', 'in', [...from])
    .returningAll()
    .executeTakeFirst();
  return row && scoped(row);
}

/** The claims' lines, by claim, in the order they were written. */
export async function claimLines(reader: TenantScope, ids: readonly ScopedClaimId[]) {
  if (ids.length === 0) return new Map<number, Selectable<ClaimLinesTable>[]>();
  const rows = await handleOf(reader)
    .selectFrom('claim_lines')
    .selectAll()
    .where('claim_id', 'in', [...ids])
    .orderBy('id')
    .execute();
  const byClaim = new Map<number, Selectable<ClaimLinesTable>[]>();
  for (const r of rows) byClaim.set(r.claim_id, [...(byClaim.get(r.claim_id) ?? []), r]);
  return byClaim;
}

/** The ids of the claims' evidence files, by claim. */
export async function claimEvidence(reader: TenantScope, ids: readonly ScopedClaimId[]) {
  const byClaim = new Map<number, number[]>();
  if (ids.length === 0) return byClaim;
  const rows = await handleOf(reader)
    .selectFrom('claim_files')
    .select(['id', 'claim_id'])
    .where('claim_id', 'in', [...ids])
    .orderBy('id')
    .execute();
  for (const r of rows) byClaim.set(r.claim_id!, [...(byClaim.get(r.claim_id!) ?? []), Number(r.id)]);
  return byClaim;
}

/**
 * Records the claim's one credit or reshipment. Its key is the claim: a second one fails on the
 * primary key and rolls back the whole decision.
 */
export async function insertResolution(
  scope: MerchantScope<Trx>,
  claimId: ScopedClaimId,
  r: { kind: 'credit' | 'reship'; journalEntryId: number | null; replacementOrderId: number | null },
  now: number,
): Promise<void> {
  await scope
    .insertInto('claim_resolutions', {
      claim_id: claimId,
      kind: r.kind,
      journal_entry_id: r.journalEntryId,
      replacement_order_id: r.replacementOrderId,
      created_at: now,
    })
    .execute();
}

export interface ClaimFilter {
  status: ClaimStatus | null;
  splitOrderId: number | null;
  createStart: number | null;
  createEnd: number | null;
}

/** Claims are counted up to this many; past it `total` says "this many or more". */
const CLAIM_TOTAL_CAP = 10_000;

function filtered(reader: TenantScope, f: ClaimFilter) {
  let q = claimsOf(reader);
  if (f.status !== null) q = q.where('status', '=', f.status);
  // A split order id, or the parent order's (ids never collide across the two: SPEC §1).
  const orderId = f.splitOrderId;
  if (orderId !== null) q = q.where((eb) => eb.or([eb('split_order_id', '=', orderId), eb('order_id', '=', orderId)]));
  if (f.createStart !== null) q = q.where('created_at', '>=', f.createStart);
  if (f.createEnd !== null) q = q.where('created_at', '<=', f.createEnd);
  return q;
}

/**
 * The merchant's claims, newest first (by id: ids grow with time), from `offset` or after the
 * keyset `beforeId`; one row more than `limit` tells whether a next page exists.
 */
export async function pageClaims(scope: MerchantScope, f: ClaimFilter, at: { offset: number; beforeId: number | null }, limit: number) {
  let q = filtered(scope, f).selectAll();
  if (at.beforeId !== null) q = q.where('id', '<', at.beforeId);
  const rows = await q
    .orderBy('id', 'desc')
    .offset(at.beforeId === null ? at.offset : 0)
    .limit(limit + 1)
    .execute();
  const total = await countUpTo(handleOf(scope), filtered(scope, f).select('id'), CLAIM_TOTAL_CAP);
  return { rows: rows.slice(0, limit).map(scoped), more: rows.length > limit, total };
}

/** The operator's queue filters (the console's: a state, a merchant, a reason; null: any). */
export interface ClaimQueueFilter {
  status: ClaimStatus | null;
  merchantId: number | null;
  reason: ClaimReason | null;
}

function queueFiltered(operator: AllMerchants, q: ClaimQueueFilter) {
  let rows = filtered(operator, { status: q.status, splitOrderId: null, createStart: null, createEnd: null });
  if (q.merchantId !== null) rows = rows.where('merchant_id', '=', q.merchantId);
  if (q.reason !== null) rows = rows.where('reason', '=', q.reason);
  return rows;
}

/** The operator's queue: every merchant's claims, open ones first, each group oldest first (created_at, id), filtered. */
export async function queueClaims(operator: AllMerchants, f: ClaimQueueFilter, offset: number, limit: number) {
  // Open claims first (the queue), each group oldest first.
  const rows = await queueFiltered(operator, f)
    .selectAll()
    .orderBy(sql`case when status = 'open' then 0 else 1 end`)
    .orderBy('created_at')
    .orderBy('id')
    .offset(offset)
    .limit(limit)
    .execute();
  const total = await countUpTo(handleOf(operator), queueFiltered(operator, f).select('id'), CLAIM_TOTAL_CAP);
  return { rows: rows.map(scoped), total };
}

/** How many claims are open, and how many of them were opened before `overdueBefore` (past the SLA). */
export async function openClaimCounts(operator: AllMerchants, overdueBefore: number): Promise<{ open: number; overdue: number }> {
  const row = await handleOf(operator)
    .selectFrom('claims')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('open'),
      sql<number | string | null>`sum(case when ${sql.ref('created_at')} < ${overdueBefore} then 1 else 0 end)`.as('overdue'),
    ])
    .where('status', '=', 'open')
    .executeTakeFirstOrThrow();
  return { open: Number(row.open), overdue: Number(row.overdue ?? 0) };
}

/** The claim's evidence files with their type and size (what a thumbnail or a link needs), in the order they were uploaded. */
export async function claimEvidenceFiles(reader: TenantScope, claimId: ScopedClaimId) {
  const rows = await handleOf(reader)
    .selectFrom('claim_files')
    .select(['id', 'content_type', 'size_bytes'])
    .where('claim_id', '=', claimId)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: Number(r.id), contentType: r.content_type, sizeBytes: Number(r.size_bytes) }));
}

/** The split order a claim is on, as its page shows it: state, warehouse, how and when it shipped. */
export async function claimSplitSummary(reader: TenantScope, splitId: ScopedSplitId) {
  return handleOf(reader)
    .selectFrom('split_orders')
    .select(['id', 'status', 'warehouse_code', 'carrier', 'tracking_code', 'shipped_at'])
    .where('id', '=', splitId)
    .executeTakeFirst();
}

/** The merchant's newest claim (a test event's record), if any. */
export async function latestClaimOf(scope: MerchantScope): Promise<ScopedClaimRow | undefined> {
  const row = await scope.selectFrom('claims').selectAll().orderBy('id', 'desc').limit(1).executeTakeFirst();
  return row && scoped(row);
}

/** Records an uploaded evidence file of the merchant (its bytes are already stored under `storage_key`). */
export async function insertClaimFile(
  scope: MerchantScope<Trx>,
  file: { content_type: string; size_bytes: number; sha256: string; storage_key: string; created_at: number },
): Promise<number> {
  const row = await scope
    .insertInto('claim_files', { ...file, claim_id: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** An evidence file as the reader may see it: the merchant's own, or any for the operator. */
export async function claimFileOf(reader: TenantScope, fileId: number) {
  const q = isMerchantScope(reader) ? reader.selectFrom('claim_files') : handleOf(reader).selectFrom('claim_files');
  return q.selectAll().where('id', '=', fileId).executeTakeFirst();
}

/** Evidence files no claim references, uploaded before `before` (at most `limit`). */
export async function orphanFiles(db: Handle, before: number, limit: number) {
  return db
    .selectFrom('claim_files')
    .select(['id', 'storage_key'])
    .where('claim_id', 'is', null)
    .where('created_at', '<', before)
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/**
 * The storage keys every evidence row names (all merchants'), read a page of `pageSize` rows at a
 * time by id: a restore places only the archive's files a row names.
 */
export async function claimFileStorageKeys(db: Handle, pageSize = 5000): Promise<Set<string>> {
  const keys = new Set<string>();
  let after = 0;
  for (;;) {
    const rows = await db.selectFrom('claim_files').select(['id', 'storage_key']).where('id', '>', after).orderBy('id').limit(pageSize).execute();
    for (const r of rows) keys.add(r.storage_key);
    if (rows.length < pageSize) return keys;
    after = Number(rows[rows.length - 1].id);
  }
}

/** Which of these storage keys an evidence row names (all merchants'). */
export async function namedStorageKeys(db: Handle, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await db.selectFrom('claim_files').select('storage_key').where('storage_key', 'in', keys).execute();
  return new Set(rows.map((r) => r.storage_key));
}

/** Deletes these evidence rows if they are still unreferenced; returns the ids deleted. */
export async function deleteOrphanFiles(trx: Trx, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await trx.deleteFrom('claim_files').where('id', 'in', ids).where('claim_id', 'is', null).returning('id').execute();
  return rows.map((r) => Number(r.id));
}
