import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { journalCsv, periodFor } from '../../src/services/books.service.ts';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { DIALECTS, PG_SKIP, buildTestApp, loadCatalogue, newMerchant, tableDigests, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { signedIn, staff, type Browser } from './console-client.ts';

/**
 * The supplier's books in the console (issue 41, 9): its accounts with their balances, the journal
 * of a period across merchants as CSV, and a bank statement matched against the recorded top-ups —
 * as the owner sees them, and refused to the other roles.
 */

const DAY = 24 * 3600 * 1000;
/** The month before the current one (UTC): the period the tests book into and read. */
const now0 = Date.now();
const thisMonthStart = Date.UTC(new Date(now0).getUTCFullYear(), new Date(now0).getUTCMonth(), 1);
const lastMonthStart = Date.UTC(new Date(now0).getUTCFullYear(), new Date(now0).getUTCMonth() - 1, 1);
const lastMonth = new Date(lastMonthStart).toISOString().slice(0, 7);
/** Noon of a day of last month (day 0: the last day of the month before it). */
const dayOfLastMonth = (d: number) => lastMonthStart + (d - 1) * DAY + 12 * 3600 * 1000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Books {
  t: TestApp;
  owner: Browser;
  clock: { at: number | null };
  alpha: Awaited<ReturnType<typeof newMerchant>>;
  beta: Awaited<ReturnType<typeof newMerchant>>;
  orderCents: number;
}

/** Two merchants with top-ups and an adjustment in last month, one top-up before it, and a top-up and an order this month; posted in time order. */
async function build(c: { after(fn: () => Promise<void>): void }, dialect: 'sqlite' | 'postgres', env: Record<string, string> = {}): Promise<Books> {
  const clock: { at: number | null } = { at: null };
  const t = await buildTestApp(c, dialect, env, { now: () => clock.at ?? Date.now() });
  await loadCatalogue(t, ORDER_CATALOGUE);
  await staff(t, 'owner@example.com', 'owner');
  const alpha = await newMerchant(t, 'Alpha Shop');
  const beta = await newMerchant(t, 'Beta 商店, "Ltd"');
  const environment = t.config.env;
  // Posted through the console's money forms, which take the app's clock (the operator API stamps the wall clock).
  const poster = await signedIn(t, 'owner@example.com');
  const csrf = await poster.csrf('/console');
  const topUp = async (m: { merchantId: string }, at: number, amount: string, reference: string) => {
    clock.at = at;
    const r = await poster.post(`/console/merchants/${m.merchantId}/account/top-ups`, { _csrf: csrf, environment, amount, reference });
    assert.equal(r.statusCode, 303, r.body.slice(0, 300));
  };
  await topUp(alpha, dayOfLastMonth(0), '10.00', 'BANK-OLD');
  await topUp(alpha, dayOfLastMonth(10), '100.00', 'BANK-0001');
  await topUp(beta, dayOfLastMonth(10), '50.00', 'BANK-0002');
  clock.at = dayOfLastMonth(10) + 60_000;
  const adjusted = await poster.post(`/console/merchants/${alpha.merchantId}/account/adjustments`, {
    _csrf: csrf,
    environment,
    amount: '-1.50',
    reason: 'wire fee',
    formKey: `abcdefghijklmnopqrstuvwx-${environment}`,
  });
  assert.equal(adjusted.statusCode, 303, adjusted.body.slice(0, 300));
  await topUp(beta, dayOfLastMonth(20), '75.00', 'BANK-0003');
  await topUp(alpha, dayOfLastMonth(25), '20.00', 'BANK-0004');
  await topUp(alpha, Math.max(thisMonthStart, Date.now() - 60_000), '30.00', 'BANK-NEW');
  // The merchant API stamps orders with the wall clock: the order is this month's, after the top-up.
  clock.at = null;
  const placed = await placeOrder(t, alpha.token, [{ sku: 'C', quantity: 2 }]);
  const orderCents = Math.round(placed.finalAmount * 100);
  clock.at = null;
  return { t, owner: await signedIn(t, 'owner@example.com'), clock, alpha, beta, orderCents };
}

const money = (cents: number) => `${cents < 0 ? '-' : ''}${Math.floor(Math.abs(cents) / 100)}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;
const balanceOf = (html: string, account: string) => new RegExp(`<tr data-account="${account}">(?:<td>[^<]*</td>){3}<td>([^<]+)</td>`).exec(html)?.[1];

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`console books (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it("shows the supplier's accounts with balances that sum to zero with the merchants'", async (c) => {
      const { t, owner, orderCents } = await build(c, dialect);
      const dashboard = (await owner.get('/console')).body;
      assert.match(dashboard, /<a href="\/console\/books"[^>]*>Books<\/a>/, 'linked from the navigation');
      const page = await owner.get('/console/books');
      assert.equal(page.statusCode, 200, page.body.slice(0, 300));
      const topUps = 1000 + 10000 + 5000 + 7500 + 2000 + 3000;
      assert.equal(balanceOf(page.body, 'cash'), `${money(-topUps)} USD`, 'cash: every top-up received, sign turned');
      assert.equal(balanceOf(page.body, 'sales'), `${money(orderCents)} USD`, 'sales: the order charged');
      assert.equal(balanceOf(page.body, 'refunds'), '0.00 USD');
      assert.equal(balanceOf(page.body, 'adjustments'), '1.50 USD', 'the wire fee charged to the merchant');
      assert.equal(balanceOf(page.body, 'merchants'), `${money(topUps - 150 - orderCents)} USD`);
      assert.match(page.body, /data-field="total">0\.00 USD</);
      // The other environment has no money yet.
      const other = t.config.env === 'sandbox' ? 'production' : 'sandbox';
      const empty = await owner.get(`/console/books?environment=${other}`);
      assert.equal(empty.statusCode, 200);
      assert.match(empty.body, new RegExp(`No money has moved in ${other} yet`));
      assert.equal((await owner.get('/console/books?environment=staging')).statusCode, 400);
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);
    });

    it('exports every journal entry of the month across merchants as CSV, debit and credit named', async (c) => {
      const { t, owner, alpha, beta, orderCents } = await build(c, dialect);
      const env = t.config.env;
      const r = await owner.get(`/console/books/journal.csv?environment=${env}&month=${lastMonth}`);
      assert.equal(r.statusCode, 200, r.body.slice(0, 300));
      assert.match(String(r.headers['content-type']), /^text\/csv; charset=utf-8/);
      assert.match(String(r.headers['content-disposition']), new RegExp(`attachment; filename="journal-${env}-${lastMonth}-\\d{4}-\\d{2}-\\d{2}\\.csv"`));
      assert.ok(r.rawPayload.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])), 'a UTF-8 byte order mark');
      const rows: Record<string, string>[] = parse(r.body, { bom: true, columns: true });
      assert.equal(
        r.body.split('\r\n')[0].replace('\uFEFF', ''),
        'date,created_at,entry_id,type,environment,merchant_id,merchant,debit_account,credit_account,amount,currency,reference,order_id,refund_no,description',
      );
      const refs = rows.map((x) => `${x.merchant_id}:${x.type}:${x.reference}`);
      assert.deepEqual(
        refs,
        [
          `${alpha.merchantId}:top_up:BANK-0001`,
          `${alpha.merchantId}:adjustment:`,
          `${alpha.merchantId}:top_up:BANK-0004`,
          `${beta.merchantId}:top_up:BANK-0002`,
          `${beta.merchantId}:top_up:BANK-0003`,
        ],
        "last month's entries only, merchant by merchant in each account's order",
      );
      const a = `merchant:${alpha.merchantId}:${env}`;
      const [topUp, fee] = rows;
      assert.deepEqual(
        {
          date: topUp.date,
          debit: topUp.debit_account,
          credit: topUp.credit_account,
          amount: topUp.amount,
          currency: topUp.currency,
          merchant: topUp.merchant,
        },
        { date: isoDay(dayOfLastMonth(10)), debit: `supplier:cash:${env}`, credit: a, amount: '100.00', currency: 'USD', merchant: 'Alpha Shop' },
      );
      assert.deepEqual(
        [fee.debit_account, fee.credit_account, fee.amount, fee.description],
        [a, `supplier:adjustments:${env}`, '1.50', 'Adjustment: wire fee'],
      );
      assert.equal(rows[3].merchant, 'Beta 商店, "Ltd"', 'names with commas, quotes and CJK survive the round trip');
      // Read one entry at a time, the file is the same: the batches join without a gap or a repeat.
      const oneByOne = journalCsv(t.store.db, env, periodFor({ month: lastMonth }, Date.now()), 1);
      const ids: unknown[] = [];
      for await (const row of oneByOne.rows) ids.push(row.entry_id);
      assert.deepEqual(
        ids,
        rows.map((x) => x.entry_id),
      );
      // Days instead of a month: both ends included.
      const days = await owner.get(`/console/books/journal.csv?environment=${env}&from=${isoDay(dayOfLastMonth(20))}&to=${isoDay(dayOfLastMonth(25))}`);
      assert.deepEqual(
        (parse(days.body, { bom: true, columns: true }) as Record<string, string>[]).map((x) => x.reference),
        ['BANK-0004', 'BANK-0003'],
      );
      // The page's link: this month's journal, with the order's charge — the merchant's account debited, sales credited.
      const link = /href="([^"]+)" download data-action="journal-this-month"/.exec((await owner.get('/console/books')).body)![1].replaceAll('&amp;', '&');
      const thisMonth: Record<string, string>[] = parse((await owner.get(link)).body, { bom: true, columns: true });
      assert.deepEqual(
        thisMonth.map((x) => `${x.type}:${x.reference}`),
        ['top_up:BANK-NEW', 'order_charge:'],
      );
      const charge = thisMonth[1];
      assert.deepEqual([charge.debit_account, charge.credit_account, charge.amount], [a, `supplier:sales:${env}`, money(orderCents)]);
      assert.match(charge.order_id, /^\d+$/);
    });

    it('refuses a malformed or future period with a 400 page, before the download', async (c) => {
      const { owner } = await build(c, dialect);
      const nextYear = `${new Date().getUTCFullYear() + 1}-01`;
      for (const [q, reason] of [
        ['month=2026-13', /month: must be a month as YYYY-MM/],
        [`month=${nextYear}`, /has not begun/],
        ['from=2026-11-05&to=2026-11-01', /to: must not be before from/],
        ['from=2026-02-30&to=2026-03-01', /from: must be a day as YYYY-MM-DD/],
        ['', /give a month/],
        ['month=2026-11&from=2026-11-01&to=2026-11-02', /not both/],
      ] as const) {
        const r = await owner.get(`/console/books/journal.csv?${q}`);
        assert.equal(r.statusCode, 400, `${q}: ${r.body.slice(0, 200)}`);
        assert.match(String(r.headers['content-type']), /^text\/html/, q);
        assert.match(r.body, reason, q);
      }
    });

    it('matches top-ups against a bank statement: matched, missing and unexpected, with near misses named', async (c) => {
      const { t, owner } = await build(c, dialect);
      const statement = [
        'Date,Reference,Amount,Memo',
        `${isoDay(dayOfLastMonth(11))},bank-0001,100.00,letter case does not count`,
        `${isoDay(dayOfLastMonth(16))},BANK-0002,50.00,six days after it was recorded`,
        `${isoDay(dayOfLastMonth(25))},BANK-0004,25.00,another amount`,
        `${isoDay(dayOfLastMonth(5))},BANK-9999,12.00,never recorded`,
        `${isoDay(dayOfLastMonth(28))},FEE,-3.00,outgoing`,
        `${isoDay(dayOfLastMonth(1))},BANK-OLD,"10.00",recorded the day before the month`,
      ].join('\r\n');
      const before = await tableDigests(t.store);
      const csrf = await owner.csrf('/console/books');
      const r = await owner.post('/console/books/bank-match', {
        _csrf: csrf,
        environment: t.config.env,
        month: lastMonth,
        fileName: 'bank.csv',
        fileText: statement,
      });
      assert.equal(r.statusCode, 200, r.body.slice(0, 500));
      const after = await tableDigests(t.store);
      for (const table of ['journal_entries', 'ledger_accounts', 'audit_log']) assert.equal(after[table], before[table], `${table}: nothing written`);
      const fact = (name: string) => new RegExp(`data-field="${name}">([^<]+)<`).exec(r.body)?.[1];
      assert.equal(fact('lines'), '6 (1 outgoing, not compared)');
      assert.equal(fact('matched'), '2 · 110.00');
      assert.equal(fact('missing'), '3 · 145.00');
      assert.equal(fact('unexpected'), '3 · 87.00');
      const rows = (kind: string) => [...r.body.matchAll(new RegExp(`<tr data-${kind}="(\\d+)">(.*?)</tr>`, 'g'))].map((m) => ({ key: m[1], row: m[2] }));
      assert.deepEqual(
        rows('matched').map((x) => x.key),
        ['2', '7'],
      );
      assert.deepEqual(
        rows('unexpected').map((x) => x.key),
        ['3', '4', '5'],
      );
      const missing = rows('missing');
      assert.equal(missing.length, 3);
      assert.match(missing.map((x) => x.row).join('\n'), /BANK-0002[\s\S]*BANK-0003[\s\S]*BANK-0004/, 'in the order recorded');
      const [late, amount, unknown] = rows('unexpected').map((x) => x.row);
      assert.match(late, /a top-up with this reference: 50\.00 recorded \d{4}-\d{2}-\d{2} for Beta 商店, &quot;Ltd&quot; \(more than 3 days apart\)/);
      assert.match(amount, /a top-up with this reference: 20\.00 recorded [^(]+\(another amount\)/);
      assert.doesNotMatch(unknown, /a top-up with this reference/);
      assert.match(missing[2].row, /statement line 4 has this reference: 25\.00/);
    });

    it('refuses a statement it cannot read, saying why, and writes nothing', async (c) => {
      const { t, owner } = await build(c, dialect, { BODY_LIMIT_BYTES: '65536' });
      const csrf = await owner.csrf('/console/books');
      const send = (fileText: string, extra: Record<string, string> = {}) =>
        owner.post('/console/books/bank-match', { _csrf: csrf, month: lastMonth, fileName: 'bank.csv', fileText, ...extra });
      const before = await tableDigests(t.store);
      const cases: [string, RegExp, Record<string, string>?][] = [
        ['', /Choose the bank statement file/],
        ['reference,amount\r\nBANK-1,10.00', /file: the header must name the columns reference, amount, date; it has no date/],
        ['reference,amount,date\r\n', /file: has no payment lines/],
        ['reference,amount,date\r\nBANK-1,"10.00\r\n', /file: is not a CSV file we can read/],
        ['reference,amount,date\r\nBANK-1,10.00,2026-11-01,extra', /file: is not a CSV file we can read: line 2/],
        [
          'reference,amount,date\r\nBANK-1,ten,2026-11-01\r\nBANK-2,5.00,03/11/2026\r\n,5.00,2026-11-02',
          /Not compared: the statement has 3 problems; fix them and send it again\.[\s\S]*<li>line 2: &quot;ten&quot; is not an amount such as 250\.00<\/li><li>line 3: &quot;03\/11\/2026&quot; is not a date such as 2026-11-03<\/li><li>line 4: the reference is empty<\/li>/,
        ],
        ['reference,amount,date\r\nBANK-1,10.00,2026-11-01', /month: must be a month as YYYY-MM/, { month: 'November' }],
      ];
      for (const [text, reason, extra] of cases) {
        const r = await send(text, extra);
        assert.equal(r.statusCode, 400, `${text}: ${r.body.slice(0, 300)}`);
        assert.match(r.body, /<div class="error" role="alert" id="match-error">/, text);
        assert.match(r.body, reason, text);
        assert.match(r.body, /<form method="post" action="\/console\/books\/bank-match#match-h"/, 'the form again');
      }
      // Bounded: a body over the limit is refused before it is read.
      const big = `reference,amount,date\r\n${'BANK-123456,100.00,2026-11-01\r\n'.repeat(3000)}`;
      assert.equal((await send(big)).statusCode, 413);
      const after = await tableDigests(t.store);
      for (const table of ['journal_entries', 'ledger_accounts', 'audit_log']) assert.equal(after[table], before[table], `${table}: nothing written`);
    });

    it('is the owner’s: support and warehouse are refused the page, the export and the match', async (c) => {
      const { t } = await build(c, dialect);
      for (const role of ['support', 'warehouse'] as const) {
        await staff(t, `${role}@example.com`, role);
        const b = await signedIn(t, `${role}@example.com`);
        assert.doesNotMatch((await b.get('/console')).body, /href="\/console\/books"/, `${role}: no link`);
        assert.equal((await b.get('/console/books')).statusCode, 403, role);
        assert.equal((await b.get(`/console/books/journal.csv?month=${lastMonth}`)).statusCode, 403, role);
        const csrf = await b.csrf('/console');
        const r = await b.post('/console/books/bank-match', {
          _csrf: csrf,
          month: lastMonth,
          fileText: 'reference,amount,date\r\nBANK-0001,100.00,2026-11-11',
        });
        assert.equal(r.statusCode, 403, role);
        assert.doesNotMatch(r.body, /BANK-0001/);
      }
    });
  });
}
