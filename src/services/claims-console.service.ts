import { CLAIM_CSV_CELLS, claimCsvCells } from '../present/claim.presenter.ts';
import type { Config } from '../config.ts';
import { CLAIM_REASONS, CLAIM_STATUSES, type ClaimReason, type ClaimStatus } from '../domain/claims.ts';
import type { CsvExport } from '../domain/csv.ts';
import { fieldError, notFound } from '../domain/errors.ts';
import type { ClaimRecord } from '../schemas/claims.ts';
import { listAuditFiltered } from '../store/audit.repository.ts';
import * as claims from '../store/claims.repository.ts';
import type { Db, Handle } from '../store/db.ts';
import { merchantNames } from '../store/merchants.repository.ts';
import { allMerchants } from '../store/tenancy.ts';
import { listWarehouses } from '../store/warehouses.repository.ts';
import { evidenceDownload } from './claim-files.service.ts';
import { listClaimsForOperator } from './claims.service.ts';
import { claimRecords } from './webhook-events.service.ts';

/**
 * What the console's claims pages read (SPEC §18; docs/claims.md, "The console"): the queue with
 * its filters and CSV, one claim with its split order, lines, evidence and history, the dashboard's
 * counts and the evidence bytes. The decisions are the operator API's (claims.service.ts).
 */

type SlaConfig = Pick<Config, 'claimSlaHours'>;

/** The console's queue filters as typed (`status`, `merchant`, `reason`); blank: any. */
export interface ClaimQueueInput {
  status?: string;
  merchant?: string;
  reason?: string;
}

/** Checks the typed filters: an unknown state or reason, or a merchant id that is no number, is 400 naming the field. */
export function claimQueueFilter(input: ClaimQueueInput): claims.ClaimQueueFilter {
  const status = input.status?.trim() ?? '';
  const reason = input.reason?.trim() ?? '';
  const merchant = input.merchant?.trim() ?? '';
  if (status !== '' && !(CLAIM_STATUSES as readonly string[]).includes(status)) throw fieldError('status', `must be one of ${CLAIM_STATUSES.join(', ')}`);
  if (reason !== '' && !(CLAIM_REASONS as readonly string[]).includes(reason)) throw fieldError('reason', `must be one of ${CLAIM_REASONS.join(', ')}`);
  if (merchant !== '' && !/^\d{1,16}$/.test(merchant)) throw fieldError('merchant', 'must be a merchant id (digits)');
  return {
    status: status === '' ? null : (status as ClaimStatus),
    merchantId: merchant === '' ? null : Number(merchant),
    reason: reason === '' ? null : (reason as ClaimReason),
  };
}

/** A page of the queue (open claims first, each group oldest first), each claim with its merchant's name. */
export async function claimQueueForConsole(db: Db, config: SlaConfig, filter: claims.ClaimQueueFilter, pageNumber: number, pageSize: number, now: number) {
  const page = await listClaimsForOperator(db, config, filter, pageNumber, pageSize, now);
  const names = await merchantNames(db, [...new Set(page.list.map((c) => Number(c.merchantId)))]);
  return { ...page, list: page.list.map((c) => ({ ...c, merchantName: names.get(Number(c.merchantId)) ?? '' })) };
}

const CLAIM_CSV_COLUMNS = ['claim_no', 'merchant_id', 'merchant', ...CLAIM_CSV_CELLS, 'waiting_hours', 'past_sla'] as const;

/** Rows read per query of the CSV export. */
const CSV_BATCH = 500;

/** The queue as a CSV file (every page, the same filters and order): what a spreadsheet of the after-sales desk needs. */
export function claimsCsvForConsole(db: Db, config: SlaConfig, filter: claims.ClaimQueueFilter, now: number, batch = CSV_BATCH): CsvExport {
  async function* rows() {
    for (let pageNumber = 1; ; pageNumber++) {
      const page = await claimQueueForConsole(db, config, filter, pageNumber, batch, now);
      for (const c of page.list)
        yield {
          claim_no: c.claimNo,
          merchant_id: c.merchantId,
          merchant: c.merchantName,
          ...claimCsvCells(c),
          waiting_hours: Math.floor(c.ageSeconds / 3600),
          past_sla: c.overSla ? 'yes' : 'no',
        };
      if (page.list.length < batch) return;
    }
  }
  return { name: 'claims', columns: CLAIM_CSV_COLUMNS, rows: rows() };
}

/** One entry of a claim's history: when, who (the staff member's email, else the kind of actor), what, and the state it left. */
export interface ClaimHistoryEntry {
  at: number;
  by: string;
  action: string;
  status: string | null;
  note: string | null;
}

/** The merchant's audited steps (business manager), shown from the claim's own times instead. */
const MERCHANT_STEPS: ReadonlySet<string> = new Set(['claim.open', 'claim.cancel', 'claim.post_return']);

/** The operator's decisions as the history reads them (the audit log keeps the action's code). */
const DECISION_WORDS: Record<string, string> = {
  'claim.approve': 'approved',
  'claim.reject': 'rejected',
  'claim.receive': 'marked the goods received',
  'claim.set_resolution': 'switched the resolution',
};

/** History rows shown at most (a claim has a handful of decisions). */
const HISTORY_ROWS = 50;

const summary = (json: string | null): Record<string, unknown> => {
  if (json === null) return {};
  try {
    const value = JSON.parse(json);
    return value && typeof value === 'object' ? value : {};
  } catch {
    return {};
  }
};

/**
 * A claim as the console's page shows it: the claim, its merchant, its split order and that split's
 * lines (with what this and other claims hold), its evidence files, its history (the merchant's
 * steps from the claim's own times, the operator's from the audit log), whether it is past the SLA,
 * and the warehouses returned goods may go to. Any merchant's claim; none → 404.
 */
export async function claimForConsole(db: Db, config: SlaConfig, claimNo: number, now: number) {
  const operator = allMerchants(db);
  const row = await claims.resolveClaim(operator, claimNo);
  if (!row) throw notFound('claim');
  const [[claim], split, items, ownLines, evidence, audit, names, warehouses] = await Promise.all([
    claimRecords(operator, [row]),
    claims.claimSplitSummary(operator, row.split_order_id),
    claims.claimableItems(db as Handle, row.split_order_id, row.id),
    claims.claimLines(operator, [row.id]),
    claims.claimEvidenceFiles(operator, row.id),
    listAuditFiltered(db, { actor: null, action: null, target: `claim:${row.id}` }, null, HISTORY_ROWS),
    merchantNames(db, [row.merchant_id]),
    listWarehouses(db),
  ]);
  const mine = new Map<number, number>();
  for (const l of ownLines.get(row.id) ?? []) mine.set(l.order_item_id, (mine.get(l.order_item_id) ?? 0) + Number(l.quantity));
  const history: ClaimHistoryEntry[] = [
    { at: row.created_at, by: 'the merchant', action: 'opened', status: 'open', note: row.description },
    ...audit
      .slice()
      .reverse()
      // The merchant's own steps made from the business manager are audited too; they come from the claim's times below.
      .filter((a) => !MERCHANT_STEPS.has(a.action))
      .map((a) => {
        const after = summary(a.after_summary);
        return {
          at: a.created_at,
          by: a.actor_email ?? a.actor_kind,
          action: DECISION_WORDS[a.action] ?? a.action.replace(/^claim\./, '').replace(/_/g, ' '),
          status: typeof after.status === 'string' ? after.status : null,
          note: typeof after.decisionReason === 'string' ? after.decisionReason : null,
        };
      }),
  ];
  if (row.returned_at !== null && row.return_carrier !== null)
    history.push({
      at: row.returned_at,
      by: 'the merchant',
      action: 'posted the return',
      status: 'awaiting_return',
      note: `${row.return_carrier} ${row.return_tracking_code ?? ''}`.trim(),
    });
  if (row.status === 'cancelled') history.push({ at: row.updated_at, by: 'the merchant', action: 'cancelled', status: 'cancelled', note: null });
  history.sort((a, b) => a.at - b.at);
  const sla = config.claimSlaHours * 3600 * 1000;
  return {
    claim: claim as ClaimRecord,
    merchant: { id: row.merchant_id, name: names.get(row.merchant_id) ?? '' },
    split: split && {
      id: Number(split.id),
      status: split.status,
      warehouseCode: split.warehouse_code,
      carrier: split.carrier,
      trackingCode: split.tracking_code,
      shippedAt: split.shipped_at,
    },
    lines: items.map((i) => ({
      sku: i.sku,
      unitCents: Number(i.unitCents),
      quantity: Number(i.quantity),
      refunded: Number(i.refunded),
      claimedHere: mine.get(Number(i.itemId)) ?? 0,
      claimedElsewhere: i.claimed,
    })),
    evidence,
    history,
    ageSeconds: Math.max(0, Math.floor((now - row.created_at) / 1000)),
    overSla: row.status === 'open' && now - row.created_at > sla,
    slaHours: config.claimSlaHours,
    warehouseCodes: warehouses.map((w) => w.code),
  };
}

export type ConsoleClaim = Awaited<ReturnType<typeof claimForConsole>>;

/** An evidence file of any merchant, for the console's thumbnails and links (the operator's download). */
export const evidenceForConsole = (db: Db, config: Pick<Config, 'dataDir' | 'backupS3'>, fileId: number) => evidenceDownload(allMerchants(db), config, fileId);
