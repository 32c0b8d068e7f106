import { Readable } from 'node:stream';
import { MessageChannel } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { serviceUnavailable, statementsBusy } from '../domain/errors.ts';
import type { StatementLine } from '../domain/ledger.ts';
import type { PdfMessage, PdfTask, RowsMessage } from './statement.worker.ts';
import { onDemandPool, workerModule } from './worker-threads.ts';

export interface StatementLimits {
  /** Worker threads rendering PDFs at once, in this process (the global cap). */
  threads: number;
  /** Statements (PDF or CSV) one merchant may have in the making at once; one more is refused with 429. */
  perMerchant: number;
  /** PDFs that may wait for a free thread; one more is refused with 503. */
  queued: number;
}

/** How long a refused statement is told to wait: a large month's PDF takes seconds. */
const STATEMENT_RETRY_AFTER_SECONDS = 5;

/** The head of a PDF statement: what the worker prints above and beside the lines. */
export type PdfHead = Omit<PdfTask, 'port'>;

/**
 * Where statements are made (issue 41): PDFs on a small pool of worker threads (piscina), streamed
 * to the response with bounded memory; at most `perMerchant` statements per merchant at once and
 * `threads` + `queued` PDFs in the process. One per app (app.ts wiring), closed with it.
 */
export class StatementBuilds {
  readonly #limits: StatementLimits;
  #pool: Piscina | null = null;
  readonly #perMerchant = new Map<number, number>();
  #pdfs = 0;

  constructor(limits: StatementLimits) {
    this.#limits = limits;
  }

  /** Statements in the making now: per merchant (PDF and CSV) and PDFs in all (running or waiting). */
  get inProgress() {
    return { pdfs: this.#pdfs, merchants: new Map(this.#perMerchant) };
  }

  /**
   * Takes one of the merchant's statement slots, or refuses (429) when it has none left; the
   * returned function gives it back (once, however often called).
   */
  claim(merchantId: number): () => void {
    const held = this.#perMerchant.get(merchantId) ?? 0;
    if (held >= this.#limits.perMerchant) throw statementsBusy(this.#limits.perMerchant, STATEMENT_RETRY_AFTER_SECONDS);
    this.#perMerchant.set(merchantId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#perMerchant.get(merchantId) ?? 1) - 1;
      if (left > 0) this.#perMerchant.set(merchantId, left);
      else this.#perMerchant.delete(merchantId);
    };
  }

  /**
   * The PDF as a stream: rendered on a worker thread from `batches`, which are read one at a time,
   * only when the worker asks for the next and the response has room. `release` gives the
   * merchant's slot (from `claim`) back once the file has ended or the worker has stopped;
   * `onStart` is called when a thread has taken the PDF (it may first wait in the queue).
   */
  pdf(head: PdfHead, batches: AsyncGenerator<StatementLine[]>, release: () => void, onStart: () => void = () => {}): Readable {
    if (this.#pdfs >= this.#limits.threads + this.#limits.queued) {
      release();
      throw serviceUnavailable(`The server is preparing as many statements as it can (${this.#pdfs}); try again shortly`, STATEMENT_RETRY_AFTER_SECONDS);
    }
    this.#pdfs++;
    const { port1, port2 } = new MessageChannel();
    const abort = new AbortController();
    // `asked`: the worker wants the next batch; `room`: the response's buffer is below its mark.
    let started = false;
    let asked = false;
    let room = false;
    let reading = false;
    let finished = false;
    const out = new Readable({
      read() {
        room = true;
        pump();
      },
      destroy(error, callback) {
        finished = true;
        // Still waiting for a thread: leave the queue. Rendering: closing the port stops the worker.
        if (!started) abort.abort();
        port1.close();
        void batches.return(undefined).catch(() => {});
        callback(error);
      },
    });
    const pump = () => {
      if (!asked || !room || reading || finished) return;
      asked = false;
      reading = true;
      batches.next().then(
        (next) => {
          reading = false;
          if (finished) return;
          port1.postMessage({ rows: next.done ? [] : next.value, last: next.done === true } satisfies RowsMessage);
        },
        (error: unknown) => out.destroy(error as Error),
      );
    };
    port1.on('message', (m: PdfMessage) => {
      if (!started) onStart();
      started = true;
      if (m.kind === 'bytes') {
        if (!out.push(m.bytes)) room = false;
      } else if (m.kind === 'more') {
        asked = true;
        pump();
      } else {
        finished = true;
        port1.close();
        out.push(null);
      }
    });
    // The merchant's slot is free once the file is whole (a next download may start at once), or
    // when the worker stops, whichever is first.
    out.once('end', release);
    const task: PdfTask = { port: port2, ...head };
    this.#workers()
      .run(task, { transferList: [port2], signal: abort.signal })
      .then(
        () => {},
        (error: unknown) => {
          if (!finished) out.destroy(error as Error);
        },
      )
      .finally(() => {
        this.#pdfs--;
        release();
      });
    return out;
  }

  #workers(): Piscina {
    this.#pool ??= onDemandPool({
      filename: workerModule(import.meta.dirname, 'statement.worker.ts', 'statement-worker.js'),
      maxThreads: this.#limits.threads,
      idleTimeout: 30_000,
      // Below the API's priority (Linux): when every core is busy, requests go first.
      niceIncrement: 19,
      // One document's state at a time: pages are written out as they fill.
      resourceLimits: { maxOldGenerationSizeMb: 128 },
    });
    return this.#pool;
  }

  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = null;
    await pool?.destroy();
  }
}
