/**
 * The statement PDF's renderer, run on a worker thread of services/statement-builds.ts (a piscina
 * pool): pdfkit's layout of a 73k-line month took seconds of CPU, and on the event loop every
 * other request waited for it (issue 41). It reads nothing itself: the main thread sends the
 * month's transactions in batches, one batch at a time and only when this thread asks for it and
 * the response has room, so neither thread holds more than a batch of rows and a few pages.
 */
import type { MessagePort } from 'node:worker_threads';
import PDFDocument from 'pdfkit';
import { formatSigned, statementRows, type StatementLine } from '../domain/ledger.ts';
import { formatInstant } from '../domain/time.ts';

/** What a build is given: the statement's head, and the port its rows come in and its bytes go out by. */
export interface PdfTask {
  port: MessagePort;
  month: string;
  environment: string;
  currency: string;
  openingCents: number;
  merchantName: string;
}

/** Main thread → worker: the next batch of lines; `last` when there are no more. */
export interface RowsMessage {
  rows: StatementLine[];
  last: boolean;
}

/** Worker → main thread: bytes of the PDF, a request for the next batch, or the end of the file. */
export type PdfMessage = { kind: 'bytes'; bytes: Uint8Array } | { kind: 'more' } | { kind: 'end' };

const COLUMNS = [
  { title: 'Date (UTC)', x: 48, width: 108, right: false },
  { title: 'Description', x: 160, width: 205, right: false },
  { title: 'Amount', x: 370, width: 80, right: true },
  { title: 'Balance', x: 455, width: 92, right: true },
];

/**
 * Renders one statement. Resolves when the PDF has ended and its last bytes are posted, or when
 * the main thread closed the port (the client went away): the thread is then free for the next.
 */
export default function renderStatementPdf(task: PdfTask): Promise<void> {
  const { port } = task;
  const doc = new PDFDocument({ size: 'A4', margin: 48, info: { Title: `Statement ${task.month} — ${task.merchantName}`, Author: 'Stockist' } });
  // pdfkit writes many small pieces (each object of a page); they are posted together, once per
  // batch, instead of one message each.
  let pending: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => pending.push(chunk));
  const flush = () => {
    if (pending.length === 0) return;
    // A fresh buffer of just these bytes, moved (not copied) to the main thread; pdfkit's own
    // buffers may be slices of Node's shared pool, which must not be transferred.
    const bytes = new Uint8Array(Buffer.concat(pending));
    pending = [];
    port.postMessage({ kind: 'bytes', bytes } satisfies PdfMessage, [bytes.buffer]);
  };
  // pdfkit emits its data on a later tick than the write: flush once that has run.
  const askForMore = () =>
    setImmediate(() => {
      flush();
      port.postMessage({ kind: 'more' } satisfies PdfMessage);
    });

  const line = (cells: string[], bold = false) => {
    if (doc.y > doc.page.height - 72) doc.addPage();
    const y = doc.y;
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(9);
    let bottom = y;
    cells.forEach((text, i) => {
      const c = COLUMNS[i];
      doc.text(text, c.x, y, { width: c.width, align: c.right ? 'right' : 'left' });
      bottom = Math.max(bottom, doc.y);
    });
    doc.y = bottom + 3;
  };

  return new Promise<void>((resolve, reject) => {
    let balance = task.openingCents;
    const fail = (error: unknown) => {
      port.close();
      reject(error);
    };
    doc.on('error', fail);
    doc.on('end', () => {
      flush();
      port.postMessage({ kind: 'end' } satisfies PdfMessage);
      port.close();
      resolve();
    });
    // The main thread closes its end when the response is abandoned: stop here, the file is not wanted.
    port.on('close', () => resolve());
    port.on('message', ({ rows, last }: RowsMessage) => {
      try {
        for (const row of statementRows(balance, rows)) {
          line([
            formatInstant(row.createdAt).replace('T', ' ').replace('Z', ''),
            row.description,
            formatSigned(row.amountCents),
            formatSigned(row.balanceCents),
          ]);
          balance = row.balanceCents;
        }
        if (!last) return askForMore();
        line(['', 'Closing balance', '', formatSigned(balance)], true);
        doc.end();
      } catch (error) {
        fail(error);
      }
    });
    try {
      doc.font('Helvetica-Bold').fontSize(16).text(`Statement ${task.month}`, 48, 48);
      doc.font('Helvetica').fontSize(10).text(`${task.merchantName} · ${task.environment} account · ${task.currency}`);
      doc.moveDown();
      line(
        COLUMNS.map((c) => c.title),
        true,
      );
      line([`${task.month}-01`, 'Opening balance', '', formatSigned(task.openingCents)], true);
      askForMore();
    } catch (error) {
      fail(error);
    }
  });
}
