import { monthOf } from '../../domain/ledger.ts';
import { dayOf, MATCH_DAYS, nearMissDiffers, type RecordedTopUp, type StatementLine } from '../../domain/reconciliation.ts';
import type { SupplierAccountKind } from '../../domain/ledger.ts';
import { ENVIRONMENTS, type StockistEnv } from '../../domain/vocabulary.ts';
import type { BankMatch, SupplierBooks } from '../../services/books.service.ts';
import { moment, moneyFromCents, query, type Fact, type TableView } from '../shared/present.ts';
import type { PageModel } from '../shared/views.ts';

/**
 * The console's Books page (issue 41, 9; owner: `ledger:read`): the supplier's own accounts with
 * their balances, the journal export of a period, and a bank statement matched against the
 * recorded top-ups. Unit tests: test/unit/web-presenters-books.test.ts.
 */

const PREFIX = '/console/books';

/**
 * What each supplier account records, as the page explains it. A kind added to ACCOUNT_KINDS (the
 * claims account of SPEC §18) must say here what it is before the console compiles.
 */
const SUPPLIER_ACCOUNT_TEXT: Record<SupplierAccountKind, { name: string; reads: string }> = {
  sales: { name: 'Sales', reads: 'orders charged, less splits cancelled (positive: sold)' },
  refunds: { name: 'Refunds', reads: 'refunds credited to merchants (negative: given back)' },
  cash: { name: 'Cash', reads: 'payments received from merchants, the top-ups (negative: received)' },
  adjustments: { name: 'Adjustments', reads: 'corrections, fees and goodwill (positive: charged to merchants)' },
  claims: { name: 'Claims', reads: 'claims after shipment credited to merchants (negative: given back)' },
};

/** The period and environment fields as typed (the forms show them again). */
export interface PeriodFields {
  environment: StockistEnv;
  month: string;
  from: string;
  to: string;
}

export interface BooksView extends PageModel {
  environment: StockistEnv;
  /** The page of each environment (the current one marked). */
  environments: { name: StockistEnv; href: string; current: boolean }[];
  accounts: TableView;
  /** The supplier's accounts and the merchants' sum to this: zero, as double entry keeps it. */
  total: string;
  exportAction: string;
  exportFields: PeriodFields;
  /** A ready link: this month's journal of this environment. */
  exportThisMonth: string;
  matchAction: string;
  matchFields: PeriodFields & { fileName: string };
  matchDays: number;
  /** Why the statement was not compared, and the problems by line; null when it was (or was not sent). */
  refusal: { message: string; problems: string[] } | null;
  result: BankMatchView | null;
}

export interface BankMatchView {
  summary: Fact[];
  matched: TableView;
  missing: TableView;
  unexpected: TableView;
}

const merchantLink = (t: RecordedTopUp) => ({
  href: `/console/merchants/${t.merchantId}`,
  text: t.merchantName,
  data: { name: 'merchant', value: String(t.merchantId) },
});

const nearMissText = (line: StatementLine, topUp: RecordedTopUp, side: 'line' | 'topUp') => {
  const differs = nearMissDiffers(line, topUp);
  const what = differs.map((d) => (d === 'amount' ? 'another amount' : `more than ${MATCH_DAYS} days apart`)).join(' and ');
  return side === 'line'
    ? `a top-up with this reference: ${moneyFromCents(topUp.amountCents)} recorded ${dayOf(topUp.createdAt)} for ${topUp.merchantName} (${what})`
    : `statement line ${line.line} has this reference: ${moneyFromCents(line.amountCents)} on ${dayOf(line.day)} (${what})`;
};

function presentBankMatch(m: BankMatch): BankMatchView {
  const sum = (cents: number[]) => moneyFromCents(cents.reduce((a, b) => a + b, 0));
  return {
    summary: [
      { label: 'Environment', text: m.environment },
      { label: 'Period', text: m.period.label },
      { label: 'Statement lines', text: `${m.statementLines}${m.outgoing ? ` (${m.outgoing} outgoing, not compared)` : ''}`, field: 'lines' },
      { label: 'Matched', text: `${m.matched.length} · ${sum(m.matched.map((x) => x.line.amountCents))}`, field: 'matched' },
      { label: 'Missing from the statement', text: `${m.missing.length} · ${sum(m.missing.map((x) => x.item.amountCents))}`, field: 'missing' },
      { label: 'Not in the ledger', text: `${m.unexpected.length} · ${sum(m.unexpected.map((x) => x.item.amountCents))}`, field: 'unexpected' },
    ],
    matched: {
      label: { by: 'matched-h' },
      caption: 'Statement lines matched with a recorded top-up',
      columns: ['Line', 'Date', 'Reference', 'Amount', 'Merchant', 'Recorded', 'Entry'],
      rows: m.matched.map(({ line, topUp }) => ({
        data: { name: 'matched', value: String(line.line) },
        cells: [
          String(line.line),
          dayOf(line.day),
          line.reference,
          moneyFromCents(line.amountCents),
          merchantLink(topUp),
          { html: moment(topUp.createdAt) },
          String(topUp.entryId),
        ],
      })),
      empty: { text: 'No line matched.' },
    },
    missing: {
      label: { by: 'missing-h' },
      caption: 'Top-ups recorded in the period and not on the statement',
      columns: ['Recorded', 'Reference', 'Amount', 'Merchant', 'Entry', 'Nearest'],
      rows: m.missing.map(({ item, nearMiss }) => ({
        data: { name: 'missing', value: String(item.entryId) },
        cells: [
          { html: moment(item.createdAt) },
          item.reference,
          moneyFromCents(item.amountCents),
          merchantLink(item),
          String(item.entryId),
          nearMiss ? nearMissText(nearMiss, item, 'topUp') : '',
        ],
      })),
      empty: { text: 'Every top-up of the period is on the statement.' },
    },
    unexpected: {
      label: { by: 'unexpected-h' },
      caption: 'Statement lines with no recorded top-up',
      columns: ['Line', 'Date', 'Reference', 'Amount', 'Nearest'],
      rows: m.unexpected.map(({ item, nearMiss }) => ({
        data: { name: 'unexpected', value: String(item.line) },
        cells: [String(item.line), dayOf(item.day), item.reference, moneyFromCents(item.amountCents), nearMiss ? nearMissText(item, nearMiss, 'line') : ''],
      })),
      empty: { text: 'Every payment on the statement is recorded.' },
    },
  };
}

export function presentBooks(
  books: SupplierBooks,
  now: number,
  match: { fields?: Partial<BooksView['matchFields']>; refusal?: BooksView['refusal']; result?: BankMatch } = {},
): BooksView {
  const { environment } = books;
  const currency = books.accounts[0]?.currency ?? null;
  const month = monthOf(now);
  const rows: TableView['rows'][number][] = books.accounts.map((a) => ({
    data: { name: 'account', value: a.kind },
    cells: [SUPPLIER_ACCOUNT_TEXT[a.kind].name, a.accountKey, SUPPLIER_ACCOUNT_TEXT[a.kind].reads, moneyFromCents(a.balanceCents, a.currency)],
  }));
  const m = books.merchants;
  rows.push({
    data: { name: 'account', value: 'merchants' },
    cells: [
      `Merchants (${m.accounts} account${m.accounts === 1 ? '' : 's'})`,
      `merchant:*:${environment}`,
      `what merchants have paid in advance (${moneyFromCents(m.heldCents)}) less what they owe (${moneyFromCents(m.owedCents)})`,
      moneyFromCents(m.balanceCents, currency),
    ],
  });
  const total = books.accounts.reduce((s, a) => s + a.balanceCents, m.balanceCents);
  return {
    title: `Books (${environment})`,
    environment,
    environments: ENVIRONMENTS.map((name) => ({ name, href: `${PREFIX}?${query({ environment: name })}`, current: name === environment })),
    accounts: {
      label: { by: 'accounts-h' },
      caption: `The supplier's accounts and the merchants' accounts in sum, ${environment}`,
      columns: ['Account', 'Code', 'What it records', 'Balance'],
      rows: books.accounts.length === 0 ? [] : rows,
      empty: { text: `No money has moved in ${environment} yet: the accounts open with the first order, payment or adjustment.` },
    },
    total: moneyFromCents(total, currency),
    exportAction: `${PREFIX}/journal.csv`,
    exportFields: { environment, month, from: '', to: '' },
    exportThisMonth: `${PREFIX}/journal.csv?${query({ environment, month })}`,
    // The report and a refusal follow the form's heading: the browser scrolls there after the post.
    matchAction: `${PREFIX}/bank-match#match-h`,
    matchFields: {
      environment,
      month: match.fields?.month ?? month,
      from: match.fields?.from ?? '',
      to: match.fields?.to ?? '',
      fileName: match.fields?.fileName ?? '',
    },
    matchDays: MATCH_DAYS,
    refusal: match.refusal ?? null,
    result: match.result ? presentBankMatch(match.result) : null,
  };
}
