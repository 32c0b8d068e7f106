import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StatementLine } from '../../src/domain/ledger.ts';
import { StatementBuilds, type PdfHead } from '../../src/services/statement-builds.ts';

const HEAD: PdfHead = {
  month: '2026-11',
  period: { first: '2026-11-01', closing: '2026-11-30' },
  running: false,
  environment: 'sandbox',
  currency: 'USD',
  openingCents: 0,
  summary: { chargesCents: 0, creditsCents: 0, topUpsCents: 0, adjustmentsCents: 0, entries: 0 },
  merchant: { id: 1, name: 'Unit Shop' },
  issuer: { name: 'Unit Supplier', address: null },
  generatedAt: Date.UTC(2026, 11, 6),
};

/** Batches of `size` lines, `count` of them; notes how many were read and whether the reader stopped early. */
function lines(count: number, size: number) {
  const seen = { batches: 0, closed: false };
  async function* batches(): AsyncGenerator<StatementLine[]> {
    try {
      for (let b = 0; b < count; b++) {
        seen.batches++;
        yield Array.from({ length: size }, (_, i) => ({
          id: b * size + i + 1,
          createdAt: Date.UTC(2026, 10, 1) + b * size + i,
          type: 'top_up' as const,
          amountCents: 100,
          description: `Payment received: R-${b}-${i}`,
          orderId: null,
          refundId: null,
          reference: `R-${b}-${i}`,
        }));
      }
    } finally {
      seen.closed = true;
    }
  }
  return { seen, batches: batches() };
}

describe('statement builds (worker pool, issue 41)', () => {
  it('reads batches only as the PDF is read: an unread PDF stops after a few, and an abandoned one frees its thread, its slot and its reader', async (c) => {
    const builds = new StatementBuilds({ threads: 1, perMerchant: 1, queued: 0 });
    c.after(() => builds.close());
    const release = builds.claim(7);
    assert.throws(
      () => builds.claim(7),
      (e: { code?: number }) => e.code === 42901,
    );
    let released!: () => void;
    const freed = new Promise<void>((resolve) => (released = resolve));
    const { seen, batches } = lines(1000, 500);
    const pdf = builds.pdf(HEAD, batches, () => {
      release();
      released();
    });
    const first = await new Promise<Buffer>((resolve) => pdf.once('readable', () => resolve(pdf.read())));
    assert.equal(first.subarray(0, 5).toString(), '%PDF-');
    // Not read further: the worker waits for room, and the main thread reads no more rows.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const readWhilePaused = seen.batches;
    assert.ok(readWhilePaused < 20, `${readWhilePaused} of 1,000 batches read while nobody read the PDF`);
    assert.equal(builds.inProgress.pdfs, 1);
    pdf.destroy();
    await freed;
    assert.equal(builds.inProgress.pdfs, 0, 'the worker is done');
    assert.equal(seen.closed, true, 'the row reader was closed');
    assert.equal(seen.batches, readWhilePaused);
    const again = builds.claim(7);
    again();
  });

  it('renders a whole PDF from batches, start to %%EOF', async (c) => {
    const builds = new StatementBuilds({ threads: 1, perMerchant: 1, queued: 0 });
    c.after(() => builds.close());
    const { batches } = lines(3, 10);
    const chunks: Buffer[] = [];
    for await (const chunk of builds.pdf(HEAD, batches, () => {})) chunks.push(chunk as Buffer);
    const pdf = Buffer.concat(chunks);
    assert.equal(pdf.subarray(0, 5).toString(), '%PDF-');
    assert.match(pdf.subarray(-32).toString(), /%%EOF\s*$/);
  });

  it('refuses a PDF past the threads and the queue with 503, and gives the slot back', async (c) => {
    const builds = new StatementBuilds({ threads: 1, perMerchant: 2, queued: 0 });
    c.after(() => builds.close());
    const held = builds.pdf(HEAD, lines(1000, 500).batches, () => {});
    await new Promise((resolve) => held.once('readable', resolve));
    let gaveBack = false;
    assert.throws(
      () => builds.pdf(HEAD, lines(1, 1).batches, () => (gaveBack = true)),
      (e: { code?: number; retryAfterSeconds?: number }) => e.code === 50300 && e.retryAfterSeconds === 5,
    );
    assert.equal(gaveBack, true);
    held.destroy();
  });
});
