/**
 * `node --import tsx bench/books.ts [--db sqlite|postgres] [--merchants N] [--per-account N] [--top-up-every N]`
 *
 * The supplier's books (issue 41, 9) on a large journal: N merchants with `per-account` entries
 * each, spread evenly over the last 12 months (charges; every Nth a top-up, default 10, and every
 * 5Nth an adjustment), written straight into a fresh database. Measures the Books page's read
 * (`supplierBooks`), beside the plain sum of every supplier line it avoids; the journal export of
 * the last full month, drained through the CSV writer (rows, bytes, time, peak RSS over the
 * start); and matching a statement that holds every top-up of that month. Prints one JSON line.
 */
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { journalCsv, matchBankStatement, periodFor, supplierBooks } from '../src/services/books.service.ts';
import { csvStream } from '../src/present/csv.presenter.ts';
import { freshStore } from './fresh-store.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    merchants: { type: 'string', default: '1000' },
    'per-account': { type: 'string', default: '300' },
    'top-up-every': { type: 'string', default: '10' },
  },
});
const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const MERCHANTS = Number(args.merchants);
const PER_ACCOUNT = Number(args['per-account']);
const TOP_UP_EVERY = Number(args['top-up-every']);
const ENV = 'production';
const NOW = Date.now();
const YEAR = 365 * 24 * 3600 * 1000;

const fresh = await freshStore({ openStore, migrateToLatest }, args.db!, PG_URL, 'books');
const { db } = fresh.store;
try {
  const started = performance.now();
  const kinds = ['sales', 'refunds', 'cash', 'adjustments'] as const;
  const supplierIds: Record<string, number> = {};
  for (const kind of kinds) {
    const row = await db
      .insertInto('ledger_accounts')
      .values({
        account_key: `supplier:${kind}:${ENV}`,
        merchant_id: 0,
        environment: ENV,
        kind,
        currency: 'USD',
        balance_cents: 0,
        billing_mode: 'on_account',
        credit_limit_cents: 0,
        low_balance_threshold_cents: null,
        created_at: NOW - YEAR,
        updated_at: NOW - YEAR,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    supplierIds[kind] = row.id;
  }
  for (let m = 1; m <= MERCHANTS; m++) {
    await db.transaction().execute(async (trx) => {
      const merchant = await trx
        .insertInto('merchants')
        .values({ name: `Merchant ${m}`, status: 'active', client_id: `bench-${m}`, client_secret_hash: 'x', created_at: NOW - YEAR, updated_at: NOW - YEAR })
        .returning('id')
        .executeTakeFirstOrThrow();
      const account = await trx
        .insertInto('ledger_accounts')
        .values({
          account_key: `merchant:${merchant.id}:${ENV}`,
          merchant_id: merchant.id,
          environment: ENV,
          kind: 'merchant',
          currency: 'USD',
          balance_cents: 0,
          billing_mode: 'on_account',
          credit_limit_cents: 0,
          low_balance_threshold_cents: null,
          created_at: NOW - YEAR,
          updated_at: NOW - YEAR,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      let balance = 0;
      const rows = [];
      for (let k = 1; k <= PER_ACCOUNT; k++) {
        const at = NOW - YEAR + Math.floor((k * YEAR) / (PER_ACCOUNT + 1)) + m;
        const type = k % TOP_UP_EVERY === 0 ? 'top_up' : k % (5 * TOP_UP_EVERY) === 1 ? 'adjustment' : 'order_charge';
        const amount = type === 'top_up' ? 50_000 : type === 'adjustment' ? -150 : -(1000 + ((k * 37 + m) % 4000));
        balance += amount;
        rows.push({
          cause: `bench:${m}:${k}`,
          merchant_id: merchant.id,
          environment: ENV,
          account_id: account.id,
          seq: k,
          counter_account_id: supplierIds[type === 'top_up' ? 'cash' : type === 'adjustment' ? 'adjustments' : 'sales'],
          type,
          amount_cents: amount,
          balance_after_cents: balance,
          currency: 'USD',
          order_id: null,
          refund_id: null,
          split_order_id: null,
          reference: type === 'top_up' ? `BANK-${m}-${k}` : null,
          description: type,
          created_at: at,
        } as const);
      }
      for (let i = 0; i < rows.length; i += 500)
        await trx
          .insertInto('journal_entries')
          .values(rows.slice(i, i + 500))
          .execute();
      await trx
        .updateTable('ledger_accounts')
        .set({ balance_cents: balance, last_seq: PER_ACCOUNT, last_posted_at: rows[rows.length - 1].created_at })
        .where('id', '=', account.id)
        .execute();
    });
  }
  if (args.db === 'postgres') await sql`analyze`.execute(db);
  const generatedS = (performance.now() - started) / 1000;

  const median = async (runs: number, fn: () => Promise<unknown>) => {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await fn();
      times.push(performance.now() - t0);
    }
    return Math.round(times.sort((a, b) => a - b)[Math.floor(runs / 2)]);
  };
  const booksMs = await median(5, () => supplierBooks(db, ENV));
  const plainSumMs = await median(5, () =>
    sql`select counter_account_id, sum(amount_cents) from journal_entries where environment = ${ENV} group by counter_account_id`.execute(db),
  );

  const lastMonth = new Date(Date.UTC(new Date(NOW).getUTCFullYear(), new Date(NOW).getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
  const period = periodFor({ month: lastMonth }, NOW);
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, 20);
  let bytes = 0;
  let lines = 0;
  const t0 = performance.now();
  await pipeline(
    csvStream(journalCsv(db, ENV, period), (error) => {
      throw error;
    }),
    new Writable({
      write(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        for (const b of chunk) if (b === 10) lines++;
        done();
      },
    }),
  );
  const exportMs = Math.round(performance.now() - t0);
  clearInterval(sampler);

  const topUps = await db
    .selectFrom('journal_entries')
    .select(['reference', 'amount_cents', 'created_at'])
    .where('type', '=', 'top_up')
    .where('created_at', '>=', period.start)
    .where('created_at', '<', period.end)
    .execute();
  const statement = `reference,amount,date\n${topUps.map((t) => `${t.reference},${(t.amount_cents / 100).toFixed(2)},${new Date(t.created_at).toISOString().slice(0, 10)}`).join('\n')}\n`;
  let matched = 0;
  const matchMs =
    topUps.length === 0
      ? null
      : await median(3, async () => {
          matched = (await matchBankStatement(db, ENV, period, statement)).matched.length;
        });

  console.log(
    JSON.stringify({
      db: args.db,
      merchants: MERCHANTS,
      entries: MERCHANTS * PER_ACCOUNT,
      topUpEvery: TOP_UP_EVERY,
      generatedS: Math.round(generatedS),
      booksPageMs: booksMs,
      plainSupplierSumMs: plainSumMs,
      month: lastMonth,
      exportRows: lines - 1,
      exportBytes: bytes,
      exportMs,
      exportPeakRssOverStartMb: Math.round((rssPeak - rssBefore) / 1e6),
      statementLines: topUps.length,
      matched,
      matchMs,
    }),
  );
} finally {
  await fresh.store.close();
  await fresh.cleanup();
}
