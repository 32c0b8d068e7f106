/**
 * The statement PDF's renderer, run on a worker thread of services/statement-builds.ts (a piscina
 * pool): pdfkit's layout of a 73k-line month took seconds of CPU, and on the event loop every
 * other request waited for it (issue 41). It reads nothing itself: the main thread sends the
 * month's transactions in batches, one batch at a time and only when this thread asks for it and
 * the response has room, so neither thread holds more than a batch of rows and a few pages.
 */
import type { MessagePort } from 'node:worker_threads';
import PDFDocument from 'pdfkit';
import { formatStatementAmount, statementRows, type StatementLine, type StatementSummary } from '../domain/ledger.ts';
import { formatInstant } from '../domain/time.ts';
import { StatementText, type TextBlock, type TextCanvas, type Weight } from './statement-text.ts';

/** What a build is given: the statement's head, and the port its rows come in and its bytes go out by. */
export interface PdfTask {
  port: MessagePort;
  month: string;
  /** The month's first day and the day its last balance is dated. */
  period: { first: string; closing: string };
  /** The month is still running: its last balance is "so far". */
  running: boolean;
  environment: string;
  currency: string;
  openingCents: number;
  summary: StatementSummary;
  merchant: { id: number; name: string };
  /** The supplier who issues the statement (SUPPLIER_NAME, SUPPLIER_ADDRESS). */
  issuer: { name: string; address: string | null };
  /** When the statement was asked for (epoch ms). */
  generatedAt: number;
}

/** Main thread → worker: the next batch of lines; `last` when there are no more. */
export interface RowsMessage {
  rows: StatementLine[];
  last: boolean;
}

/** Worker → main thread: bytes of the PDF, a request for the next batch, or the end of the file. */
export type PdfMessage = { kind: 'bytes'; bytes: Uint8Array } | { kind: 'more' } | { kind: 'end' };

// A4 in points, and the page's frame: everything is placed inside the margins, nothing runs off.
const PAGE = { width: 595.28, height: 841.89 };
const LEFT = 48;
const RIGHT = PAGE.width - 48;
const TOP = 44;
/** Rows stop above this; the footer is below it. */
const BOTTOM = PAGE.height - 58;
const FOOTER_Y = PAGE.height - 44;
const SIZE = 8.5;
const LINE = 10.5;
const ROW_PAD = 2;
const GREY = '#555555';
const INK = '#111111';

const COLUMNS = [
  { title: 'Date (UTC)', x: LEFT, width: 86, align: 'left' },
  { title: 'Description', x: LEFT + 92, width: 212, align: 'left' },
  { title: 'Amount', x: LEFT + 310, width: 88, align: 'right' },
  { title: 'Balance', x: LEFT + 404, width: RIGHT - (LEFT + 404), align: 'right' },
] as const;

/** pdfkit's current font as its drawing code holds it (`doc._font`, not in its typings): resource name, dictionary, glyph encoder. */
interface PdfkitFont {
  id: string;
  ref(): unknown;
  encode(text: string): [string[], unknown];
}

/**
 * "of N" in every footer, though N is known only at the end: each page draws the same form
 * XObject, and the form's content — N in Noto Sans — is written once the last page is done (a PDF
 * may define an object after the pages that use it). The alternative, pdfkit's `bufferPages`,
 * keeps every page in memory until the end: 1,500 pages for a 73k-line month.
 */
class PageCount {
  readonly #doc: PDFKit.PDFDocument;
  readonly #form: PDFKit.PDFKitReference;
  constructor(doc: PDFKit.PDFDocument) {
    this.#doc = doc;
    this.#form = doc.ref({ Type: 'XObject', Subtype: 'Form', BBox: [0, -4, 80, 12], Resources: { Font: {} } });
  }

  /** Draws the count on this page with its left end at (x, baseline) (pdfkit's top-down coordinates). */
  place(x: number, baseline: number): void {
    this.#doc.page.xobjects.PageCount = this.#form;
    this.#doc.addContent(`q 1 0 0 -1 ${x.toFixed(2)} ${baseline.toFixed(2)} cm /PageCount Do Q`);
  }

  /** Writes the count, in `fontName` at `size` and grey `rgb` (0..1): before `doc.end()`, which embeds the font's subset. */
  finish(pages: number, fontName: string, size: number, rgb: number): void {
    this.#doc.font(fontName);
    const font = (this.#doc as unknown as { _font: PdfkitFont })._font;
    const [glyphs] = font.encode(pages.toLocaleString('en-US'));
    (this.#form as unknown as { data: { Resources: { Font: Record<string, unknown> } } }).data.Resources.Font[font.id] = font.ref();
    this.#form.end(`${rgb} ${rgb} ${rgb} rg BT /${font.id} ${size} Tf 0 0 Td <${glyphs.join('')}> Tj ET`);
  }
}

const monthName = (month: string) => new Date(`${month}-01T00:00:00Z`).toLocaleString('en-GB', { month: 'long', year: 'numeric', timeZone: 'UTC' });

/**
 * Renders one statement. Resolves when the PDF has ended and its last bytes are posted, or when
 * the main thread closed the port (the client went away): the thread is then free for the next.
 *
 * The layout (docs/money.md, "The statement PDF"): page 1 names the issuer, the merchant, the period and
 * when it was generated, then a summary (opening, charges, credits, top-ups, adjustments, and the
 * closing balance — "balance so far" for the month still running); every page carries the table's
 * header and its number. Text in any script is drawn by statement-text.ts, wrapped to its column.
 */
export default function renderStatementPdf(task: PdfTask): Promise<void> {
  const { port } = task;
  const doc = new PDFDocument({
    size: 'A4',
    margin: 0,
    autoFirstPage: false,
    // Words are laid out once each and not kept: a 73k-line month's amounts would fill the cache.
    fontLayoutCache: false,
    info: { Title: `Statement ${task.month} — ${task.merchant.name}`, Author: task.issuer.name, Creator: 'Stockist' },
  });
  // pdfkit's typings predate its taking a fontkit font (TextCanvas.registerFont).
  const text = new StatementText(doc as unknown as TextCanvas);
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

  const lastLabel = task.running ? 'Balance so far' : 'Closing balance';
  let y = TOP;
  let page = 0;
  let continuedHead: TextBlock | undefined;
  const pageCount = new PageCount(doc);

  /** Text at (x, y) in a box `width` wide; returns the y below it. */
  const write = (
    value: string,
    x: number,
    top: number,
    width: number,
    o: { size?: number; weight?: Weight; color?: string; align?: 'left' | 'right' } = {},
  ) => {
    const size = o.size ?? SIZE;
    doc.fillColor(o.color ?? INK);
    const block = text.wrap(value, width, o.weight ?? 'regular', size);
    return text.draw(block, x, top, { width, size, weight: o.weight ?? 'regular', lineHeight: size * 1.3, align: o.align });
  };
  const rule = (at: number, width = 0.5) => {
    doc.moveTo(LEFT, at).lineTo(RIGHT, at).lineWidth(width).strokeColor('#888888').stroke();
  };

  const tableHeader = () => {
    doc.rect(LEFT, y, RIGHT - LEFT, LINE + 2 * ROW_PAD).fill('#eeeeee');
    for (const c of COLUMNS) write(c.title, c.x, y + ROW_PAD, c.width, { weight: 'bold', align: c.align });
    y += LINE + 2 * ROW_PAD + 1;
  };

  const newPage = () => {
    doc.addPage({ size: 'A4', margin: 0 });
    page++;
    y = TOP;
    // The footer first: the page's number is known now; the pages in all only at the end.
    write(`Statement ${task.month} · merchant ${task.merchant.id} · ${task.environment}`, LEFT, FOOTER_Y, 300, { size: 7.5, color: GREY });
    // "Page 3 of" right-aligned up to where the count (drawn at the end) begins.
    write(`Page ${page.toLocaleString('en-US')} of`, RIGHT - 150, FOOTER_Y, 120, { size: 7.5, color: GREY, align: 'right' });
    pageCount.place(RIGHT - 27.5, FOOTER_Y + 7.5 * 1.069);
    if (page > 1) {
      // Laid out once: a long name in several scripts is shaped again for every try at a line break.
      continuedHead ??= text.wrap(`Statement ${task.month} — ${task.merchant.name}`, RIGHT - LEFT, 'regular', 8);
      doc.fillColor(GREY);
      y = text.draw(continuedHead, LEFT, y, { width: RIGHT - LEFT, size: 8, weight: 'regular', lineHeight: 8 * 1.3 });
      y += 4;
      tableHeader();
    }
  };

  /** One row of the table: each cell wrapped to its column; a row never splits across pages. */
  const row = (cells: readonly string[], weight: Weight = 'regular') => {
    const blocks: TextBlock[] = cells.map((cell, i) => text.wrap(cell, COLUMNS[i].width, weight, SIZE));
    const height = Math.max(...blocks.map((b) => b.lines.length)) * LINE + 2 * ROW_PAD;
    if (y + height > BOTTOM) newPage();
    doc.fillColor(INK);
    blocks.forEach((block, i) => {
      const c = COLUMNS[i];
      text.draw(block, c.x, y + ROW_PAD, { width: c.width, size: SIZE, weight, lineHeight: LINE, align: c.align });
    });
    y += height;
  };

  const firstPage = () => {
    newPage();
    // The issuer on the left, the statement's own facts on the right.
    let left = write(task.issuer.name, LEFT, y, 250, { size: 12, weight: 'bold' });
    if (task.issuer.address) left = write(task.issuer.address, LEFT, left + 2, 250, { size: 8.5, color: GREY });
    const rx = LEFT + 262;
    const rw = RIGHT - rx;
    let right = write('Statement of account', rx, y, rw, { size: 15, weight: 'bold', align: 'right' });
    right = write(monthName(task.month) + (task.running ? ' (month in progress)' : ''), rx, right + 1, rw, { size: 10, align: 'right' });
    right = write(`Period ${task.period.first} to ${task.period.closing}`, rx, right + 2, rw, { size: 8.5, color: GREY, align: 'right' });
    right = write(`Generated ${formatInstant(task.generatedAt).replace('T', ' ').replace('Z', ' UTC')}`, rx, right, rw, {
      size: 8.5,
      color: GREY,
      align: 'right',
    });
    right = write(`${task.environment} account · amounts in ${task.currency}`, rx, right, rw, { size: 8.5, color: GREY, align: 'right' });
    y = Math.max(left, right) + 10;
    rule(y);
    y += 8;
    y = write('Statement for', LEFT, y, RIGHT - LEFT, { size: 8, color: GREY });
    y = write(task.merchant.name, LEFT, y, RIGHT - LEFT, { size: 13, weight: 'bold' });
    y = write(`Merchant ${task.merchant.id}`, LEFT, y + 1, RIGHT - LEFT, { size: 8.5, color: GREY });
    y += 10;

    // The summary: what the month added up to, then the balance it ends on.
    const s = task.summary;
    const closing = task.openingCents + s.chargesCents + s.creditsCents + s.topUpsCents + s.adjustmentsCents;
    const labelW = 250;
    const valueX = LEFT + labelW;
    const valueW = 110;
    y = write(`Summary (${task.currency})`, LEFT, y, labelW, { size: 10, weight: 'bold' });
    y += 2;
    const line = (label: string, cents: number, weight: Weight = 'regular') => {
      write(label, LEFT, y, labelW - 8, { weight });
      y = write(formatStatementAmount(cents), valueX, y, valueW, { weight, align: 'right' });
    };
    line(`Opening balance on ${task.period.first}`, task.openingCents);
    line('Charges (orders)', s.chargesCents);
    line('Credits (refunds and cancellations)', s.creditsCents);
    line('Top-ups (payments received)', s.topUpsCents);
    line('Adjustments', s.adjustmentsCents);
    doc
      .moveTo(LEFT, y + 1)
      .lineTo(valueX + valueW, y + 1)
      .lineWidth(0.5)
      .strokeColor('#888888')
      .stroke();
    y += 3;
    line(`${lastLabel} on ${task.period.closing}`, closing, 'bold');
    y = write(`${s.entries.toLocaleString('en-US')} transactions in the period`, LEFT, y + 2, labelW, { size: 8, color: GREY });
    y += 12;
    tableHeader();
    row([task.period.first, 'Opening balance', '', formatStatementAmount(task.openingCents)], 'bold');
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
        for (const r of statementRows(balance, rows)) {
          row([
            formatInstant(r.createdAt).replace('T', ' ').replace('Z', ''),
            r.description,
            formatStatementAmount(r.amountCents),
            formatStatementAmount(r.balanceCents),
          ]);
          balance = r.balanceCents;
        }
        if (!last) return askForMore();
        row([task.period.closing, lastLabel, '', formatStatementAmount(balance)], 'bold');
        y += 6;
        write(`End of statement · ${page.toLocaleString('en-US')} ${page === 1 ? 'page' : 'pages'}`, LEFT, Math.min(y, BOTTOM), RIGHT - LEFT, {
          size: 7.5,
          color: GREY,
        });
        pageCount.finish(page, text.fontName(0, 'regular'), 7.5, 1 / 3);
        doc.end();
      } catch (error) {
        fail(error);
      }
    });
    try {
      firstPage();
      askForMore();
    } catch (error) {
      fail(error);
    }
  });
}
