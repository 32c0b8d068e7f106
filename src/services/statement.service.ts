import type { Readable } from 'node:stream';
import type { CsvCell } from '../domain/csv.ts';
import { fieldError } from '../domain/errors.ts';
import {
  formatSigned,
  monthOf,
  monthWindow,
  statementPeriod,
  statementRows,
  statementSummary,
  type StatementLine,
  type StatementSummary,
} from '../domain/ledger.ts';
import { formatInstant } from '../domain/time.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import { balanceBefore, entriesBetween, entryTotalsBetween, merchantAccount, type EntryRow } from '../store/ledger.repository.ts';
import type { MerchantScope } from '../store/tenancy.ts';
import { csvStream } from '../present/csv.presenter.ts';
import type { PdfHead, StatementBuilds } from './statement-builds.ts';

/**
 * Entries read per round trip while a statement streams: memory stays bounded however busy the
 * month. Each batch is read on the event loop (the worker thread only lays out the PDF), so its
 * size is how long another merchant's request can wait behind it: 500 rows held the loop about
 * 1.4 ms on SQLite, 100 rows about 0.3 ms, for the same total (docs/performance.md, issue 41 item 1).
 */
const BATCH = 100;

const lineOf = (e: EntryRow): StatementLine => ({
  id: e.id,
  createdAt: e.created_at,
  type: e.type,
  amountCents: e.amount_cents,
  description: e.description,
  orderId: e.order_id,
  refundId: e.refund_id,
  reference: e.reference,
});

export interface Statement {
  month: string;
  /** The month's first day and the day the closing balance is dated (`statementPeriod`). */
  period: { first: string; closing: string };
  /** The month is still running: its last balance is "so far", dated today. */
  running: boolean;
  environment: StockistEnv;
  currency: string;
  openingCents: number;
  /** The month's entries added up by kind — the same entries `batches` yields. */
  summary: StatementSummary;
  /** The month's transactions in the account's sequence (oldest first), in batches read by keyset as they are consumed. */
  batches(): AsyncGenerator<StatementLine[]>;
}

/** A merchant's statement of one month (SPEC §15): opening balance, every transaction, closing balance. */
async function statementOf(scope: MerchantScope, environment: StockistEnv, month: string, currency: string, now: number): Promise<Statement> {
  const window = monthWindow(month);
  if (!window) throw fieldError('month', 'must be a month as YYYY-MM, e.g. 2026-11');
  const period = statementPeriod(window, now);
  if (!period) throw fieldError('month', `${month} has not begun: the latest statement is of ${monthOf(now)}`);
  const account = await merchantAccount(scope, environment);
  const openingCents = account ? await balanceBefore(scope, account.id, window.start) : 0;
  // The entries as of now: a posting made while the file streams is in neither the summary nor the lines.
  const entries = account ? { ...window, uptoSeq: account.last_seq } : null;
  const summary = statementSummary(account && entries ? await entryTotalsBetween(scope, account.id, entries) : []);
  return {
    month,
    period,
    running: now < window.end,
    environment,
    currency: account?.currency ?? currency,
    openingCents,
    summary,
    async *batches() {
      if (!account || !entries) return;
      let afterSeq = 0;
      for (;;) {
        const batch = await entriesBetween(scope, account.id, entries, afterSeq, BATCH);
        if (batch.length > 0) yield batch.map(lineOf);
        if (batch.length < BATCH) return;
        afterSeq = batch[batch.length - 1].seq;
      }
    },
  };
}

/**
 * The statement as CSV, streamed (present/csv.presenter.ts: RFC 4180, CRLF, a UTF-8 byte order
 * mark, formula-safe cells): a header, an opening row naming the merchant and the period, one row
 * per transaction, and a closing row dated the period's last day. Every row carries the currency.
 */
function statementCsv(s: Statement, merchant: { id: number; name: string }): Readable {
  async function* rows(): AsyncGenerator<Record<(typeof STATEMENT_CSV_COLUMNS)[number], CsvCell>> {
    const opening = `Opening balance of ${merchant.name} (merchant ${merchant.id}) for ${s.period.first} to ${s.period.closing} (${s.environment})`;
    const row = (date: string, type: string, description: string, line: Partial<StatementLine> | null, balanceCents: number) => ({
      date,
      type,
      description,
      order: line?.orderId ?? null,
      refund: line?.refundId ?? null,
      reference: line?.reference ?? null,
      amount: line?.amountCents === undefined ? null : formatSigned(line.amountCents),
      balance: formatSigned(balanceCents),
      currency: s.currency,
    });
    yield row(s.period.first, 'opening_balance', opening, null, s.openingCents);
    let balance = s.openingCents;
    for await (const batch of s.batches()) {
      for (const l of statementRows(balance, batch)) {
        yield row(formatInstant(l.createdAt), l.type, l.description, l, l.balanceCents);
        balance = l.balanceCents;
      }
    }
    yield row(s.period.closing, 'closing_balance', 'Closing balance', null, balance);
  }
  // A failure part-way destroys the stream with its error: the download is cut short and logged
  // where the response is sent (the status line has gone by then).
  return csvStream({ columns: STATEMENT_CSV_COLUMNS, rows: rows() }, () => {});
}

const STATEMENT_CSV_COLUMNS = ['date', 'type', 'description', 'order', 'refund', 'reference', 'amount', 'balance', 'currency'] as const;

export type StatementFormat = 'csv' | 'pdf';

/**
 * A month's statement as a file, streamed (issue 41): the CSV on this thread a batch at a time,
 * the PDF rendered on a worker thread (services/statement-builds.ts). The merchant's statement
 * slot is taken first — 429 when it has none left — and given back when the file is done or
 * abandoned.
 */
export async function statementFile(
  builds: StatementBuilds,
  scope: MerchantScope,
  request: {
    environment: StockistEnv;
    month: string;
    currency: string;
    format: StatementFormat;
    merchantName: string;
    /** The supplier who issues the statement (SUPPLIER_NAME, SUPPLIER_ADDRESS). */
    issuer: { name: string; address: string | null };
    now: number;
  },
  /** Called when the file's making has begun (a PDF may first wait for a thread). */
  onStart: () => void = () => {},
): Promise<Readable> {
  const release = builds.claim(scope.merchantId);
  let s: Statement;
  try {
    s = await statementOf(scope, request.environment, request.month, request.currency, request.now);
  } catch (error) {
    release();
    throw error;
  }
  if (request.format === 'pdf') {
    const head: PdfHead = {
      month: s.month,
      period: s.period,
      running: s.running,
      environment: s.environment,
      currency: s.currency,
      openingCents: s.openingCents,
      summary: s.summary,
      merchant: { id: scope.merchantId, name: request.merchantName },
      issuer: request.issuer,
      generatedAt: request.now,
    };
    return builds.pdf(head, s.batches(), release, onStart);
  }
  onStart();
  const csv = statementCsv(s, { id: scope.merchantId, name: request.merchantName });
  // 'end' before the response's own end (a next download may start at once); 'close' if abandoned.
  csv.once('end', release).once('close', release);
  return csv;
}
