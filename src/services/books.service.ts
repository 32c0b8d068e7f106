import { CsvError, parse } from 'csv-parse/sync';
import type { CsvCell, CsvExport } from '../domain/csv.ts';
import { fieldError, validationFailed, type FieldError } from '../domain/errors.ts';
import { ACCOUNT_KINDS, formatSigned, parseAmount, type SupplierAccountKind } from '../domain/ledger.ts';
import {
  dayOf,
  dayStart,
  debitAndCredit,
  MATCH_DAYS,
  matchTopUps,
  PeriodProblem,
  periodOf,
  supplierBalances,
  type MatchReport,
  type Period,
  type StatementLine,
} from '../domain/reconciliation.ts';
import { formatInstant, parseInstant } from '../domain/time.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import type { Handle } from '../store/db.ts';
import {
  entriesInSeqRange,
  firstSeqsAtOrAfter,
  merchantAccountsAfter,
  merchantTotals,
  nonChargeSums,
  supplierAccountKeys,
  supplierAccounts,
  topUpsBetween,
} from '../store/ledger-books.repository.ts';

/**
 * The supplier's books (issue 41, 9; docs/money.md, "The supplier's books"): its own accounts and
 * their balances, the journal of a period across every merchant as CSV, and the matching of the
 * recorded top-ups against a bank statement. Reads only: nothing here writes.
 */

/** A supplier account as the Books page lists it. */
export interface SupplierAccountBalance {
  kind: SupplierAccountKind;
  accountKey: string;
  currency: string;
  balanceCents: number;
}

export interface SupplierBooks {
  environment: StockistEnv;
  /** In ACCOUNT_KINDS order; only the accounts that exist (opened with the first money moved in the environment). */
  accounts: SupplierAccountBalance[];
  merchants: Awaited<ReturnType<typeof merchantTotals>>;
}

/** The supplier's accounts of an environment with their balances, and the merchants' accounts in sum (the two sum to zero). */
export async function supplierBooks(db: Handle, environment: StockistEnv): Promise<SupplierBooks> {
  const [rows, merchants, sums] = await Promise.all([supplierAccounts(db, environment), merchantTotals(db, environment), nonChargeSums(db, environment)]);
  const balances = supplierBalances(merchants.balanceCents, sums);
  const order = (kind: string) => ACCOUNT_KINDS.indexOf(kind as SupplierAccountKind);
  const accounts = rows
    .map((r) => ({
      kind: r.kind as SupplierAccountKind,
      accountKey: r.account_key,
      currency: r.currency,
      balanceCents: balances.get(r.kind as SupplierAccountKind) ?? 0,
    }))
    .sort((a, b) => order(a.kind) - order(b.kind));
  return { environment, accounts, merchants };
}

/** The period of a query or form, or a 400 naming the field. */
export function periodFor(input: { month?: string; from?: string; to?: string }, now: number): Period {
  try {
    return periodOf(input, now);
  } catch (error) {
    if (error instanceof PeriodProblem) throw fieldError(error.field, error.reason);
    throw error;
  }
}

/** The journal export's columns: what an accountant's import takes (docs/money.md, "The supplier's books"). */
export const JOURNAL_CSV_COLUMNS = [
  'date',
  'created_at',
  'entry_id',
  'type',
  'environment',
  'merchant_id',
  'merchant',
  'debit_account',
  'credit_account',
  'amount',
  'currency',
  'reference',
  'order_id',
  'refund_no',
  'description',
] as const;

/** Accounts walked per read, and entries per read: memory stays bounded however large the journal. */
const ACCOUNT_BATCH = 200;
const ENTRY_BATCH = 500;

/**
 * Every journal entry of the period in one environment, across merchants, as CSV rows: merchant
 * account by merchant account (by the account's id), each account's entries in its sequence (the
 * order they changed its balance). Read in batches as the file is taken (store/ledger-books).
 */
export function journalCsv(db: Handle, environment: StockistEnv, period: Period, batch = ENTRY_BATCH): CsvExport {
  async function* rows(): AsyncGenerator<Record<(typeof JOURNAL_CSV_COLUMNS)[number], CsvCell>> {
    const counters = await supplierAccountKeys(db);
    let afterId = 0;
    for (;;) {
      const accounts = await merchantAccountsAfter(db, environment, afterId, ACCOUNT_BATCH);
      // The period's bounds in every account of the batch that has entries in or after it, bisected together.
      const inPeriod = accounts.filter((a) => a.last_seq > 0 && a.last_posted_at >= period.start);
      const starts = await firstSeqsAtOrAfter(
        db,
        inPeriod.map((account) => ({ account, at: period.start, from: 1 })),
      );
      // An account with nothing posted since the period ended (the month still running) ends at its last entry.
      const ending = inPeriod.map((account, i) => ({ account, at: period.end, from: starts[i] })).filter((s) => s.account.last_posted_at >= period.end);
      const ends = new Map((await firstSeqsAtOrAfter(db, ending)).map((seq, i) => [ending[i].account.id, seq]));
      for (const [i, account] of inPeriod.entries()) {
        const from = starts[i];
        const to = ends.get(account.id) ?? account.last_seq + 1;
        for (let next = from; next < to; ) {
          const entries = await entriesInSeqRange(db, account, next, to, batch);
          if (entries.length === 0) break;
          for (const e of entries) {
            const counter = counters.get(e.counter_account_id)?.key ?? `account:${e.counter_account_id}`;
            const { debit, credit, amountCents } = debitAndCredit(e.amount_cents, account.account_key, counter);
            yield {
              date: dayOf(e.created_at),
              created_at: formatInstant(e.created_at),
              entry_id: String(e.id),
              type: e.type,
              environment: e.environment,
              merchant_id: String(e.merchant_id),
              merchant: account.merchant_name,
              debit_account: debit,
              credit_account: credit,
              amount: formatSigned(amountCents),
              currency: e.currency,
              reference: e.reference,
              order_id: e.order_id === null ? null : String(e.order_id),
              refund_no: e.refund_id === null ? null : String(e.refund_id),
              description: e.description,
            };
          }
          next = entries[entries.length - 1].seq + 1;
        }
      }
      if (accounts.length < ACCOUNT_BATCH) return;
      afterId = accounts[accounts.length - 1].id;
    }
  }
  return { name: `journal-${environment}-${period.slug}`, columns: JOURNAL_CSV_COLUMNS, rows: rows() };
}

/** The most lines a bank statement may have (the upload is bounded by the body limit too). */
const MAX_STATEMENT_LINES = 20_000;
/** Problems listed before the rest are only counted. */
const LISTED_PROBLEMS = 20;
const REQUIRED_COLUMNS = ['reference', 'amount', 'date'] as const;

/** A bank statement read: the payments received, and how many outgoing lines (amount ≤ 0) it also had. */
export interface BankStatement {
  lines: StatementLine[];
  outgoing: number;
}

/** An amount as a bank exports it: `250.00`, `-12.5`, `1,250.00` (thousands separated by commas). */
function statementAmount(text: string): number | null {
  const plain = /^[+-]?\d{1,3}(,\d{3})+(\.\d{1,2})?$/.test(text) ? text.replaceAll(',', '') : text;
  return parseAmount(plain, true);
}

/** A statement's date: a day (`2026-11-03`) or an instant with its offset (its UTC day). */
function statementDay(text: string): number | null {
  const day = dayStart(text);
  if (day !== null) return day;
  const instant = parseInstant(text);
  return instant === null ? null : dayStart(dayOf(instant));
}

/**
 * Reads a bank statement CSV (docs/money.md, "Matching top-ups against the bank statement"): a
 * header naming `reference`, `amount` and `date` (any letter case, in any order, other columns
 * ignored), then one payment a line. The whole file is refused, with every problem's line (the
 * first 20), when any line is wrong: a match against half a statement would report the rest as
 * missing.
 */
export function readBankStatement(text: string): BankStatement {
  // A bank's export in a comma-decimal locale separates columns with ";" or a tab: say so rather than guess what "1,250" means there.
  const headerLine = text.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0];
  if (!headerLine.includes(',') && /[;\t]/.test(headerLine))
    throw fieldError('file', 'separates its columns with ";" or tabs: export it with commas (",") between the columns and amounts written as 1250.00');
  let records: { record: Record<string, string>; info: { lines: number } }[];
  try {
    records = parse(text, {
      bom: true,
      columns: (header: string[]) => header.map((h) => h.trim().toLowerCase()),
      info: true,
      skip_empty_lines: true,
      trim: true,
      to_line: MAX_STATEMENT_LINES + 2,
    });
  } catch (error) {
    if (error instanceof CsvError) {
      const line = typeof error.lines === 'number' ? `line ${error.lines}: ` : '';
      throw fieldError('file', `is not a CSV file we can read: ${line}${error.message.replace(/ (on|at) line \d+.*$/, '')}`);
    }
    throw error;
  }
  if (records.length === 0) throw fieldError('file', `has no payment lines: give a header line (${REQUIRED_COLUMNS.join(',')}) and one line per payment`);
  const header = Object.keys(records[0].record);
  const absent = REQUIRED_COLUMNS.filter((c) => !header.includes(c));
  if (absent.length > 0)
    throw fieldError('file', `the header must name the columns ${REQUIRED_COLUMNS.join(', ')}; it has no ${absent.join(', ')} (it has: ${header.join(', ')})`);
  if (records.length > MAX_STATEMENT_LINES)
    throw fieldError('file', `has more than ${MAX_STATEMENT_LINES.toLocaleString('en')} lines: split the statement into shorter periods`);
  const problems: FieldError[] = [];
  const lines: StatementLine[] = [];
  let outgoing = 0;
  for (const { record, info } of records) {
    // `info.lines` is the line the record ends on; a record spans one line unless a quoted field holds a break.
    const line = info.lines;
    const reference = record.reference ?? '';
    const amountCents = statementAmount(record.amount ?? '');
    const day = statementDay(record.date ?? '');
    if (reference === '') problems.push({ field: 'reference', message: `line ${line}: the reference is empty` });
    else if (reference.length > 200) problems.push({ field: 'reference', message: `line ${line}: the reference is longer than 200 characters` });
    if (amountCents === null)
      problems.push({ field: 'amount', message: `line ${line}: "${(record.amount ?? '').slice(0, 40)}" is not an amount such as 250.00` });
    if (day === null) problems.push({ field: 'date', message: `line ${line}: "${(record.date ?? '').slice(0, 40)}" is not a date such as 2026-11-03` });
    if (amountCents === null || day === null || reference === '' || reference.length > 200) continue;
    if (amountCents <= 0) outgoing++;
    else lines.push({ line, reference, amountCents, day });
  }
  if (problems.length > 0) {
    const listed = problems.length > LISTED_PROBLEMS ? ` (the first ${LISTED_PROBLEMS} are listed)` : '';
    throw validationFailed(
      problems.slice(0, LISTED_PROBLEMS),
      `the statement has ${problems.length} problem${problems.length === 1 ? '' : 's'}${listed}; fix ${problems.length === 1 ? 'it' : 'them'} and send it again`,
    );
  }
  return { lines, outgoing };
}

export interface BankMatch extends MatchReport {
  environment: StockistEnv;
  period: Period;
  statementLines: number;
  outgoing: number;
}

/**
 * Matches a bank statement against the top-ups recorded in the period (and MATCH_DAYS either side
 * of it, for lines near its edges), every merchant's of the environment. Writes nothing.
 */
export async function matchBankStatement(db: Handle, environment: StockistEnv, period: Period, text: string): Promise<BankMatch> {
  const statement = readBankStatement(text);
  const margin = MATCH_DAYS * 24 * 3600 * 1000;
  const rows = await topUpsBetween(db, environment, period.start - margin, period.end + margin);
  const topUps = rows.map((r) => ({
    entryId: r.id,
    merchantId: r.merchant_id,
    merchantName: r.merchant_name,
    reference: r.reference ?? '',
    amountCents: r.amount_cents,
    createdAt: r.created_at,
  }));
  const report = matchTopUps(statement.lines, topUps, period);
  return { ...report, environment, period, statementLines: statement.lines.length + statement.outgoing, outgoing: statement.outgoing };
}
