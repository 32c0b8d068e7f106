import { Readable } from 'node:stream';
import { fieldError } from '../domain/errors.ts';
import { csvField, formatSigned, monthWindow, statementRows, type StatementLine } from '../domain/ledger.ts';
import { formatInstant } from '../domain/time.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import { balanceBefore, entriesBetween, merchantAccount, type EntryRow } from '../store/ledger.repository.ts';
import type { MerchantScope } from '../store/tenancy.ts';

/** Entries read per round trip while a statement streams: memory stays bounded however busy the month. */
const BATCH = 500;

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
  environment: StockistEnv;
  currency: string;
  openingCents: number;
  /** The month's transactions, oldest first, read in batches as they are consumed. */
  lines(): AsyncGenerator<StatementLine>;
}

/** A merchant's statement of one month (SPEC §15): opening balance, every transaction, closing balance. */
export async function statementOf(scope: MerchantScope, environment: StockistEnv, month: string, currency: string): Promise<Statement> {
  const window = monthWindow(month);
  if (!window) throw fieldError('month', 'must be a month as YYYY-MM, e.g. 2026-11');
  const account = await merchantAccount(scope, environment);
  const openingCents = account ? await balanceBefore(scope, account.id, window.start) : 0;
  return {
    month,
    environment,
    currency: account?.currency ?? currency,
    openingCents,
    async *lines() {
      if (!account) return;
      let after: [number, number] | null = null;
      for (;;) {
        const batch = await entriesBetween(scope, account.id, window.start, window.end, after, BATCH);
        for (const e of batch) yield lineOf(e);
        if (batch.length < BATCH) return;
        const last = batch[batch.length - 1];
        after = [last.created_at, last.id];
      }
    },
  };
}

/** Running balances over the async lines, then the closing balance. */
async function* withBalances(s: Statement): AsyncGenerator<StatementLine & { balanceCents: number }, number> {
  let balance = s.openingCents;
  for await (const line of s.lines()) {
    const [row] = statementRows(balance, [line]);
    balance = row.balanceCents;
    yield row;
  }
  return balance;
}

/** The statement as CSV (RFC 4180, CRLF), streamed: a header, an opening row, one row per transaction, a closing row. */
export function statementCsv(s: Statement): Readable {
  async function* rows() {
    const row = (fields: (string | number | null)[]) => `${fields.map(csvField).join(',')}\r\n`;
    yield row(['date', 'type', 'description', 'order', 'refund', 'reference', 'amount', 'balance', 'currency']);
    yield row([`${s.month}-01`, 'opening_balance', `Opening balance (${s.environment})`, null, null, null, null, formatSigned(s.openingCents), s.currency]);
    const lines = withBalances(s);
    let next = await lines.next();
    while (!next.done) {
      const l = next.value;
      yield row([
        formatInstant(l.createdAt),
        l.type,
        l.description,
        l.orderId,
        l.refundId,
        l.reference,
        formatSigned(l.amountCents),
        formatSigned(l.balanceCents),
        s.currency,
      ]);
      next = await lines.next();
    }
    yield row([null, 'closing_balance', 'Closing balance', null, null, null, null, formatSigned(next.value), s.currency]);
  }
  return Readable.from(rows());
}

/**
 * The statement as a PDF (pdfkit, loaded only when a PDF is asked for: it reads its font metrics
 * from its own package folder, so it stays outside the bundle). Streamed page by page.
 */
export async function statementPdf(s: Statement, merchantName: string): Promise<Readable> {
  const { default: PDFDocument } = await import('pdfkit');
  const doc = new PDFDocument({ size: 'A4', margin: 48, info: { Title: `Statement ${s.month} — ${merchantName}`, Author: 'Stockist' } });
  const columns = [
    { title: 'Date (UTC)', x: 48, width: 108 },
    { title: 'Description', x: 160, width: 205 },
    { title: 'Amount', x: 370, width: 80, right: true },
    { title: 'Balance', x: 455, width: 92, right: true },
  ];
  const line = (cells: string[], bold = false) => {
    if (doc.y > doc.page.height - 72) doc.addPage();
    const y = doc.y;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(9);
    let bottom = y;
    cells.forEach((text, i) => {
      const c = columns[i];
      doc.text(text, c.x, y, { width: c.width, align: c.right ? 'right' : 'left' });
      bottom = Math.max(bottom, doc.y);
    });
    doc.y = bottom + 3;
  };
  (async () => {
    doc.font('Helvetica-Bold').fontSize(16).text(`Statement ${s.month}`, 48, 48);
    doc.font('Helvetica').fontSize(10).text(`${merchantName} · ${s.environment} account · ${s.currency}`);
    doc.moveDown();
    line(
      columns.map((c) => c.title),
      true,
    );
    line([`${s.month}-01`, 'Opening balance', '', formatSigned(s.openingCents)], true);
    const lines = withBalances(s);
    let next = await lines.next();
    while (!next.done) {
      const l = next.value;
      line([formatInstant(l.createdAt).replace('T', ' ').replace('Z', ''), l.description, formatSigned(l.amountCents), formatSigned(l.balanceCents)]);
      next = await lines.next();
    }
    line(['', 'Closing balance', '', formatSigned(next.value)], true);
    doc.end();
  })().catch((error: unknown) => doc.emit('error', error));
  return doc as unknown as Readable;
}
