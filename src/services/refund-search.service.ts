import type { Config } from '../config.ts';
import type { CsvExport } from '../domain/csv.ts';
import { fieldError } from '../domain/errors.ts';
import { blank, choiceFilter, dayRange, decodeTimeKeyset, encodeTimeKeyset, merchantFilter } from '../domain/list-filters.ts';
import { REFUND_STATES, type RefundState } from '../domain/vocabulary.ts';
import { presentRefund } from '../present/refund.presenter.ts';
import type { Handle } from '../store/db.ts';
import { findMerchant, merchantNames } from '../store/merchants.repository.ts';
import * as refunds from '../store/refunds.repository.ts';
import { allMerchants } from '../store/tenancy.ts';
import { REFUND_CSV_COLUMNS, refundCsvRows } from './refunds.service.ts';

/** Rows per page of the console's refund list. */
const REFUND_LIST_PAGE = 50;
/** The list's count stops here ("10,000 or more"). */
const REFUND_COUNT_CAP = 10_000;
/** Refunds read per round trip while an export streams. */
const EXPORT_BATCH = 500;

/** What the console's refund list form sends; every field may be empty (a blank form field). */
export interface RefundSearchForm {
  status?: string;
  merchant?: string;
  from?: string;
  to?: string;
  after?: string;
}

/** The search a form asks for (a malformed field is a 400 naming it), its fields as typed, and the page's keyset position. */
function parseRefundSearch(form: RefundSearchForm) {
  const statusText = blank(form.status);
  const status = choiceFilter<RefundState>('status', statusText, REFUND_STATES);
  const merchantText = blank(form.merchant);
  const merchantId = merchantFilter(merchantText);
  const fromText = blank(form.from);
  const toText = blank(form.to);
  const days = dayRange(fromText, toText);
  const afterText = blank(form.after);
  const before = afterText === '' ? null : decodeTimeKeyset(afterText);
  if (afterText !== '' && before === null) throw fieldError('after', 'is not a position this list gave (follow its Next link)');
  const search: refunds.RefundSearch = { status, merchantId, ...days };
  return { search, filters: { status: statusText, merchant: merchantText, from: fromText, to: toText }, before };
}

/**
 * The console's list of every refund (SPEC §14, issue 29 item 7), any status, newest first, one
 * keyset page at a time: narrowed by status, merchant and the day it was requested (UTC, both ends
 * included), each refund with its merchant's name; `counts` place the page in the walk ("51–100 of
 * 1,234", the count bounded at REFUND_COUNT_CAP). A malformed field is a 400 naming it.
 */
export async function searchRefundsForOperator(db: Handle, form: RefundSearchForm, pageSize = REFUND_LIST_PAGE) {
  const { search, filters, before } = parseRefundSearch(form);
  const [rows, about, shownBefore, merchant] = await Promise.all([
    refunds.searchRefunds(allMerchants(db), search, before, pageSize + 1),
    refunds.countSearchedRefunds(db, search, REFUND_COUNT_CAP, null),
    before === null ? 0 : refunds.countSearchedRefunds(db, search, REFUND_COUNT_CAP, before),
    search.merchantId === null ? undefined : findMerchant(db, search.merchantId),
  ]);
  const page = rows.slice(0, pageSize);
  const [items, names] = await Promise.all([
    refunds.refundItems(
      db,
      page.map((r) => r.id),
    ),
    merchantNames(
      db,
      page.map((r) => r.merchant_id),
    ),
  ]);
  const list = page.map((r) => ({
    ...presentRefund(r, items),
    merchantId: String(r.merchant_id),
    merchantName: names.get(r.merchant_id) ?? '',
    decidedBy: r.decided_by,
    decidedAt: r.decided_at,
  }));
  const last = page.at(-1);
  return {
    filters,
    /** The merchant the list is narrowed to, by name (null: none, or no such merchant). */
    merchant: merchant ? { id: String(merchant.id), name: merchant.name } : null,
    list,
    after: rows.length > pageSize && last ? encodeTimeKeyset([last.created_at, last.id]) : null,
    counts: { first: list.length ? shownBefore + 1 : 0, last: shownBefore + list.length, about, capped: about >= REFUND_COUNT_CAP },
  };
}

/**
 * Every refund the list's filters match (its `after` ignored), newest first, as CSV rows (the
 * queue export's columns): read in keyset batches while the file is written. The filters are
 * checked before the first row, so a malformed one is a 400 page, not a broken download.
 */
export function refundListCsv(db: Handle, config: Pick<Config, 'refundSlaHours'>, form: RefundSearchForm, now: number, batch = EXPORT_BATCH): CsvExport {
  const { search } = parseRefundSearch({ ...form, after: '' });
  const rows = refundCsvRows(db, config, now, batch, (before) => refunds.searchRefunds(allMerchants(db), search, before, batch));
  return { name: 'refunds', columns: REFUND_CSV_COLUMNS, rows };
}
