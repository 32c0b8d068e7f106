import { CLAIM_CSV_CELLS, claimCsvCells } from '../present/claim.presenter.ts';
import { lookupId } from '../domain/ids.ts';
import type { Config } from '../config.ts';
import { CLAIM_STATUSES, claimableQuantity, withinClaimWindow, type ClaimStatus } from '../domain/claims.ts';
import type { CsvExport } from '../domain/csv.ts';
import { fieldError, notFound } from '../domain/errors.ts';
import type { ClaimRecord } from '../schemas/claims.ts';
import * as claims from '../store/claims.repository.ts';
import { resolveSplitOrder } from '../store/split-orders.repository.ts';
import type { MerchantScope } from '../store/tenancy.ts';
import { listClaims } from './claims.service.ts';
import { orderForMerchant } from './order-search.service.ts';
import { claimRecords } from './webhook-events.service.ts';

/**
 * What the business manager's claim pages read (SPEC §18; docs/claims.md, "The business manager"):
 * the claim form of a shipped split order, which splits of an order may be claimed, the merchant's
 * claims list with its CSV, and one claim with its split order, evidence and history. The writes
 * are the merchant API's service functions (claims.service.ts, claim-files.service.ts).
 */

type WindowConfig = Pick<Config, 'claimWindowDays'>;

/** A SKU of a split order on the claim form: what shipped of it and what may still be claimed. */
export interface ClaimFormLine {
  sku: string;
  name: string;
  shipped: number;
  refunded: number;
  claimedElsewhere: number;
  claimable: number;
}

/** Why a split order takes no claim now (not shipped, past the window, nothing left), or null when it does. */
function closedReason(split: { id: number; status: string; shippedAt: number | null }, claimable: number, config: WindowConfig, now: number) {
  if ((split.status !== 'shipped' && split.status !== 'completed') || split.shippedAt === null)
    return `Split order ${split.id} has not shipped: before shipment, ask for a refund instead.`;
  if (!withinClaimWindow(split.shippedAt, now, config.claimWindowDays))
    return `Split order ${split.id} shipped more than ${config.claimWindowDays} days ago: past the claim window.`;
  if (claimable === 0) return `Everything of split order ${split.id} is refunded or on other claims already.`;
  return null;
}

/**
 * The claim form of the merchant's split order `splitId`: its order, its SKUs with what may still be
 * claimed of each (a SKU on several lines is one line here, as the API claims by SKU), and why it
 * takes no claim when it does not. Another merchant's split order, or none: 404.
 */
export async function claimFormFor(merchant: MerchantScope, config: WindowConfig, splitId: number, now: number) {
  const split = await resolveSplitOrder(merchant, splitId);
  if (!split) throw notFound('split order');
  const [summary, items, detail] = await Promise.all([
    claims.claimSplitSummary(merchant, split.id),
    claims.claimableItemsOf(merchant, split.id),
    orderForMerchant(merchant, split.order_id),
  ]);
  const names = new Map(detail.order.orderItems.map((i) => [i.skuCode, i.productName]));
  const bySku = new Map<string, ClaimFormLine>();
  for (const i of items) {
    const line = bySku.get(i.sku) ?? { sku: i.sku, name: names.get(i.sku) ?? '', shipped: 0, refunded: 0, claimedElsewhere: 0, claimable: 0 };
    line.shipped += Number(i.quantity);
    line.refunded += Number(i.refunded);
    line.claimedElsewhere += i.claimed;
    line.claimable += claimableQuantity({ quantity: Number(i.quantity), refunded: Number(i.refunded), claimed: i.claimed });
    bySku.set(i.sku, line);
  }
  const lines = [...bySku.values()];
  const shippedAt = summary?.shipped_at ?? null;
  const status = summary?.status ?? split.status;
  return {
    splitId: String(split.id),
    orderId: String(split.order_id),
    status,
    shippedAt,
    carrier: summary?.carrier ?? null,
    trackingCode: summary?.tracking_code ?? null,
    lines,
    closed: closedReason(
      { id: Number(split.id), status, shippedAt },
      lines.reduce((sum, l) => sum + l.claimable, 0),
      config,
      now,
    ),
  };
}

export type ClaimForm = Awaited<ReturnType<typeof claimFormFor>>;

/** The split orders of one of the merchant's orders a claim may be opened on now (shipped, within the window, something left). */
export async function claimableSplits(merchant: MerchantScope, config: WindowConfig, splits: readonly { id: string; status: string }[], now: number) {
  const open = new Set<string>();
  for (const s of splits) {
    if (s.status !== 'shipped' && s.status !== 'completed') continue;
    const form = await claimFormFor(merchant, config, Number(s.id), now);
    if (form.closed === null) open.add(s.id);
  }
  return open;
}

/** The claims list's filters as typed (`status`, `order`, `from`, `to` as YYYY-MM-DD, `page`); blank: any. */
export interface ManagerClaimFilters {
  status: string;
  order: string;
  from: string;
  to: string;
}

/** Claims on a page of the list. */
const LIST_PAGE = 25;

/** Checks the typed filters: an unknown state, an order id that is no number or a date that is no day is 400 naming the field. */
export function claimListFilters(input: Partial<ManagerClaimFilters>): ManagerClaimFilters {
  const f = { status: input.status?.trim() ?? '', order: input.order?.trim() ?? '', from: input.from?.trim() ?? '', to: input.to?.trim() ?? '' };
  if (f.status !== '' && !(CLAIM_STATUSES as readonly string[]).includes(f.status)) throw fieldError('status', `must be one of ${CLAIM_STATUSES.join(', ')}`);
  if (f.order !== '' && !/^\d{1,19}$/.test(f.order)) throw fieldError('order', 'must be an order or split order id (digits)');
  for (const field of ['from', 'to'] as const)
    if (f[field] !== '' && (!/^\d{4}-\d{2}-\d{2}$/.test(f[field]) || Number.isNaN(Date.parse(`${f[field]}T00:00:00Z`))))
      throw fieldError(field, 'must be a day (YYYY-MM-DD)');
  if (f.from !== '' && f.to !== '' && f.from > f.to) throw fieldError('from', 'must not be after to');
  return f;
}

const listQuery = (f: ManagerClaimFilters) => ({
  ...(f.status ? { status: f.status as ClaimStatus } : {}),
  ...(f.order ? { orderId: lookupId(f.order) } : {}),
  ...(f.from ? { createStartTime: `${f.from}T00:00:00Z` } : {}),
  ...(f.to ? { createEndTime: `${f.to}T23:59:59Z` } : {}),
});

/** A page of the merchant's claims, newest first (the API's list, by page number). */
export const claimsPageForMerchant = (merchant: MerchantScope, f: ManagerClaimFilters, pageNumber: number) =>
  listClaims(merchant, { ...listQuery(f), pageNumber, pageSize: LIST_PAGE });

export type ManagerClaimsPage = Awaited<ReturnType<typeof claimsPageForMerchant>>;

const CSV_COLUMNS = ['claim_no', ...CLAIM_CSV_CELLS] as const;

/** Rows read per query of the CSV export (the API's largest page). */
const CSV_BATCH = 250;

/** The merchant's claims as a CSV file: the list's filters, every page (a keyset walk), its own claims only. */
export function claimsCsvForMerchant(merchant: MerchantScope, f: ManagerClaimFilters, batch = CSV_BATCH): CsvExport {
  async function* rows() {
    let page = await listClaims(merchant, { ...listQuery(f), pageSize: batch });
    for (;;) {
      for (const c of page.list)
        yield {
          claim_no: c.claimNo,
          ...claimCsvCells(c),
        };
      if (page.nextCursor === null) return;
      page = await listClaims(merchant, { cursor: page.nextCursor });
    }
  }
  return { name: 'claims', columns: CSV_COLUMNS, rows: rows() };
}

/** One step of a claim's history as the merchant sees it: when, who (you or the supplier), what, and the state it left. */
export interface ManagerClaimStep {
  at: number;
  by: 'you' | 'the supplier';
  action: string;
  status: ClaimStatus;
  note: string | null;
}

/**
 * The merchant's claim `claimNo` as its page shows it: the claim, its split order, its evidence
 * files and its history, from the claim's own times (opened, decided, the return posted, received,
 * resolved or cancelled; the supplier's staff are not named). Another merchant's claim, or none: 404.
 */
export async function claimForMerchant(merchant: MerchantScope, claimNo: number) {
  const row = await claims.resolveClaim(merchant, claimNo);
  if (!row) throw notFound('claim');
  const [[claim], split, evidence, detail] = await Promise.all([
    claimRecords(merchant, [row]),
    claims.claimSplitSummary(merchant, row.split_order_id),
    claims.claimEvidenceFiles(merchant, row.id),
    orderForMerchant(merchant, row.order_id),
  ]);
  const names = new Map(detail.order.orderItems.map((i) => [i.skuCode, i.productName]));
  const history: ManagerClaimStep[] = [{ at: row.created_at, by: 'you', action: 'opened the claim', status: 'open', note: null }];
  if (row.decided_at !== null) {
    const rejected = row.status === 'rejected';
    history.push({
      at: row.decided_at,
      by: 'the supplier',
      action: rejected ? 'rejected the claim' : row.return_required ? 'approved the claim, the goods to come back first' : 'approved the claim',
      status: rejected ? 'rejected' : row.return_required ? 'awaiting_return' : 'approved',
      note: rejected ? row.decision_reason : null,
    });
  }
  if (row.returned_at !== null && row.return_carrier !== null)
    history.push({
      at: row.returned_at,
      by: 'you',
      action: 'posted the return tracking',
      status: 'awaiting_return',
      note: `${row.return_carrier} ${row.return_tracking_code ?? ''}`.trim(),
    });
  if (row.received_at !== null) history.push({ at: row.received_at, by: 'the supplier', action: 'received the goods back', status: 'received', note: null });
  if (row.status === 'credited') history.push({ at: row.updated_at, by: 'the supplier', action: 'credited your account', status: 'credited', note: null });
  if (row.status === 'reshipped')
    history.push({ at: row.updated_at, by: 'the supplier', action: 'placed a replacement order', status: 'reshipped', note: null });
  if (row.status === 'cancelled') history.push({ at: row.updated_at, by: 'you', action: 'cancelled the claim', status: 'cancelled', note: null });
  history.sort((a, b) => a.at - b.at);
  return {
    claim: claim as ClaimRecord,
    split: split && { status: split.status, carrier: split.carrier, trackingCode: split.tracking_code, shippedAt: split.shipped_at },
    names,
    evidence,
    history,
    currency: detail.order.currencyCode,
  };
}

export type ManagerClaim = Awaited<ReturnType<typeof claimForMerchant>>;

/**
 * The merchant's evidence files `ids` that are on no claim yet (what a claim form kept from an
 * earlier upload may name), with their type and size; other ids are left out.
 */
export async function unattachedEvidence(merchant: MerchantScope, ids: readonly number[]) {
  const rows = await Promise.all(ids.map((id) => claims.claimFileOf(merchant, id)));
  return rows.flatMap((r) => (r && r.claim_id === null ? [{ id: Number(r.id), contentType: r.content_type, sizeBytes: Number(r.size_bytes) }] : []));
}
