import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { fillStatement } from '../../bench/generate.ts';
import { buildTestApp, DIALECTS, newMerchant, type TestApp } from '../helpers.ts';
import { HOST, type Browser } from './console-client.ts';
import { member } from './manager-helpers.ts';

/**
 * Issue 41: statements are made off the event loop (PDFs on worker threads), streamed with bounded
 * memory, and limited per merchant (429/42901) and per process (503/50300).
 */

/** Lines in the busy month: far more PDF than the response's buffers hold, so an unread download stays in the making. */
const BUSY_LINES = 6_000;
const month = new Date().toISOString().slice(0, 7);
const monthStart = Date.parse(`${month}-01T00:00:00Z`);

async function busyMerchant(t: TestApp, name: string, lines = BUSY_LINES) {
  const m = await newMerchant(t, name);
  const sumCents = await fillStatement(t.store, Number(m.merchantId), lines, monthStart, Math.max(monthStart + 1, Date.now() - 1000));
  const viewer = await member(t, m.merchantId, `${name.toLowerCase().replace(/\W/g, '-')}@example.com`, 'viewer');
  return { ...m, viewer, sumCents };
}

/** A download as a stream the test reads at its own pace (app.inject passes the response's backpressure on). */
async function download(t: TestApp, b: Browser, format: 'pdf' | 'csv') {
  const r = await t.app.inject({
    method: 'GET',
    url: `/manager/balance/statement?month=${month}&format=${format}`,
    remoteAddress: b.address,
    headers: { host: HOST, cookie: b.cookie! },
    payloadAsStream: true,
  });
  return { statusCode: r.statusCode, headers: r.headers, stream: r.stream() as Readable };
}

/** The first chunk of a stream, leaving it paused after. */
function firstChunk(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    stream.once('error', reject);
    stream.once('readable', () => resolve(stream.read() as Buffer));
  });
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

for (const dialect of DIALECTS) {
  describe(`the statement CSV (${dialect})`, () => {
    it('starts with a UTF-8 BOM, names the merchant and the period, dates its closing row, and refuses a month not begun', async (c) => {
      const t = await buildTestApp(c, dialect);
      const m = await newMerchant(t, 'Statement Shop');
      const paid = await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/account/top-ups`, {
        environment: 'sandbox',
        amount: '12.50',
        reference: 'BANK-1',
      });
      assert.equal(paid.status, 200, paid.raw);
      const viewer = await member(t, m.merchantId, 'statement-viewer@example.com', 'viewer');
      const today = new Date().toISOString().slice(0, 10);
      const csv = await viewer.get(`/manager/balance/statement?month=${month}&format=csv`);
      assert.equal(csv.statusCode, 200, csv.body.slice(0, 300));
      assert.deepEqual([...csv.rawPayload.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'the UTF-8 byte order mark first');
      const rows = csv.rawPayload.subarray(3).toString('utf8').trimEnd().split('\r\n');
      assert.equal(rows[0], 'date,type,description,order,refund,reference,amount,balance,currency');
      assert.equal(
        rows[1],
        `${month}-01,opening_balance,Opening balance of Statement Shop (merchant ${m.merchantId}) for ${month}-01 to ${today} (sandbox),,,,,0.00,USD`,
      );
      assert.match(rows[2], /,top_up,Payment received: BANK-1,,,BANK-1,12\.50,12\.50,USD$/);
      assert.equal(rows[3], `${today},closing_balance,Closing balance,,,,,12.50,USD`, 'the month so far: closing as of today');
      assert.equal(rows.length, 4);

      // A month that is over: closing on its last day.
      const now = new Date();
      const previous = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
      const lastDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0)).toISOString().slice(0, 10);
      const past = await viewer.get(`/manager/balance/statement?month=${previous.toISOString().slice(0, 7)}&format=csv`);
      assert.equal(past.statusCode, 200);
      const pastRows = past.body
        .replace(/^\uFEFF/, '')
        .trimEnd()
        .split('\r\n');
      assert.match(pastRows[1], new RegExp(`for ${previous.toISOString().slice(0, 10)} to ${lastDay} \\(sandbox\\),,,,,0\\.00,USD$`));
      assert.equal(pastRows.at(-1), `${lastDay},closing_balance,Closing balance,,,,,0.00,USD`);

      // A month not begun has no statement: 400, as a page, in either format.
      const next = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString().slice(0, 7);
      for (const format of ['csv', 'pdf'] as const) {
        const future = await viewer.get(`/manager/balance/statement?month=${next}&format=${format}`);
        assert.equal(future.statusCode, 400, future.body.slice(0, 300));
        assert.match(String(future.headers['content-type']), /^text\/html/);
        assert.match(future.body, new RegExp(`${next} has not begun: the latest statement is of ${month}`));
      }
      // The refusal gave the merchant's statement slot back.
      assert.equal((await viewer.get(`/manager/balance/statement?month=${month}&format=csv`)).statusCode, 200);
    });
  });

  describe(`statements off the event loop (${dialect})`, () => {
    it('serves another merchant’s API request while a large statement PDF is being made, and the PDF is whole', async (c) => {
      const t = await buildTestApp(c, dialect, { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' });
      const big = await busyMerchant(t, 'Busy Shop', 20_000);
      const other = await newMerchant(t, 'Other Shop');
      const order: string[] = [];
      const r = await download(t, big.viewer, 'pdf');
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['content-type'], 'application/pdf');
      // Read as fast as it comes; once the first bytes are here, ask the API for the other merchant's account.
      const pdf = (async () => {
        const chunks: Buffer[] = [];
        let asked: Promise<void> | null = null;
        for await (const chunk of r.stream) {
          chunks.push(chunk as Buffer);
          asked ??= t.merchant(other.token, 'GET', '/openapi/v1/account').then((a) => {
            assert.equal(a.status, 200, a.raw);
            order.push('account');
          });
        }
        order.push('pdf');
        await asked;
        return Buffer.concat(chunks);
      })();
      const bytes = await pdf;
      assert.deepEqual(order, ['account', 'pdf'], 'the account answered before the PDF was finished');
      assert.equal(bytes.subarray(0, 5).toString(), '%PDF-');
      assert.match(bytes.subarray(-32).toString(), /%%EOF\s*$/);
      // 20,000 lines at ~48 a page (A4, 8.5 pt): every page of the month is there.
      const pages = bytes.toString('latin1').match(/\/Type \/Page\b/g)?.length ?? 0;
      assert.ok(pages >= 20_000 / 60 && pages <= 20_000 / 45, `${pages} pages`);
    });

    it('refuses a merchant’s second statement while its first is in the making (429/42901, Retry-After), as a page; others are served', async (c) => {
      const t = await buildTestApp(c, dialect, {
        RATE_LIMIT_PER_SECOND: '1000',
        RATE_LIMIT_BURST: '1000',
        STATEMENTS_PER_MERCHANT: '1',
        STATEMENT_THREADS: '2',
      });
      const a = await busyMerchant(t, 'Shop A');
      const b = await busyMerchant(t, 'Shop B', 3);
      const first = await download(t, a.viewer, 'pdf');
      assert.equal(first.statusCode, 200);
      // Read a little and stop: the rest waits for the reader, and the build holds A's slot.
      await firstChunk(first.stream);

      for (const format of ['pdf', 'csv'] as const) {
        const again = await a.viewer.get(`/manager/balance/statement?month=${month}&format=${format}`);
        assert.equal(again.statusCode, 429, again.body.slice(0, 300));
        assert.equal(again.headers['retry-after'], '5');
        assert.match(String(again.headers['content-type']), /^text\/html/);
        assert.match(again.body, /A statement of this account is already being prepared \(at most 1 at a time\); try again in 5 s/);
      }
      const theirs = await b.viewer.get(`/manager/balance/statement?month=${month}&format=csv`);
      assert.equal(theirs.statusCode, 200, 'another merchant is not held up');
      const theirPdf = await b.viewer.get(`/manager/balance/statement?month=${month}&format=pdf`);
      assert.equal(theirPdf.statusCode, 200);
      assert.equal(theirPdf.rawPayload.subarray(0, 5).toString(), '%PDF-');

      // The first download read to its end: whole, and A may ask again.
      const rest = await readAll(first.stream);
      assert.match(rest.subarray(-32).toString(), /%%EOF\s*$/);
      const next = await a.viewer.get(`/manager/balance/statement?month=${month}&format=csv`);
      assert.equal(next.statusCode, 200);
      const rows = next.body.trimEnd().split('\r\n');
      assert.equal(rows.length, BUSY_LINES + 3, 'header, opening, every line, closing');
      assert.equal(rows.at(-1)!.split(',')[7], (a.sumCents / 100).toFixed(2), 'closing = opening (0) + every line');
    });

    it('answers 503 with Retry-After when every PDF thread is busy and the queue is full', async (c) => {
      const t = await buildTestApp(c, dialect, { STATEMENT_THREADS: '1', STATEMENT_QUEUE: '0' });
      const a = await busyMerchant(t, 'Shop One');
      const b = await busyMerchant(t, 'Shop Two', 3);
      const first = await download(t, a.viewer, 'pdf');
      await firstChunk(first.stream);
      const full = await b.viewer.get(`/manager/balance/statement?month=${month}&format=pdf`);
      assert.equal(full.statusCode, 503, full.body.slice(0, 300));
      assert.equal(full.headers['retry-after'], '5');
      assert.match(full.body, /The server is preparing as many statements as it can/);
      // A CSV is made on the request's own thread: not held by the PDF pool.
      const csv = await b.viewer.get(`/manager/balance/statement?month=${month}&format=csv`);
      assert.equal(csv.statusCode, 200);
      first.stream.destroy();
    });
  });
}
