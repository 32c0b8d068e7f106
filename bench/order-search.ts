/**
 * `node --import tsx bench/order-search.ts --url <sqlite:file | postgres URL> [--fill 1000000] [--runs 7] [--out file.md]`
 *
 * The order search with a text term at scale (issue "Front ends III" item 8): the console's and the
 * business manager's service calls (`searchOrdersForOperator`, `searchOrdersForMerchant` — a page
 * of 25, both counts, the orders loaded), each term kind timed `--runs` times, median and max ms.
 *
 * `--fill N` first writes N synthetic orders into a fresh database at `--url` (migrated here; on
 * PostgreSQL the URL's database, which must be empty — e.g. `createdb search1m`): 20 merchants
 * `Shop 01 Ltd` … `Shop 20 Ltd`, half of the orders the first merchant's (the manager's), the rest
 * spread over the others; recipients `Recipient <i mod 200,000>`, custom ids `PO-<i>`, one order
 * every 2.6 s, ids and times rising together as live orders' do. The orders have no items or split
 * orders (the search reads neither; loading a page of them is still timed). Written by SQL in the
 * database itself (a recursive CTE / generate_series), the text index kept by the migration's own
 * trigger (SQLite) or index (PostgreSQL, dropped during the fill and made again from its definition).
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { searchOrdersForMerchant, searchOrdersForOperator, type OrderSearchForm } from '../src/services/order-search.service.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { forMerchant } from '../src/store/scope-mint.ts';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    fill: { type: 'string' },
    runs: { type: 'string', default: '7' },
    only: { type: 'string' },
    explain: { type: 'boolean', default: false },
  },
});
if (!args.url) throw new Error('--url: sqlite:<file> or a PostgreSQL URL');
const url = args.url;
const dialect = url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
const RUNS = Number(args.runs);
const MERCHANTS = 20;
const START = Date.UTC(2026, 0, 1);

async function fill(store: Store, n: number) {
  const db = store.db;
  const t0 = performance.now();
  for (let k = 1; k <= MERCHANTS; k++) {
    await db
      .insertInto('merchants')
      .values({
        name: `Shop ${String(k).padStart(2, '0')} Ltd`,
        status: 'active',
        client_id: `bench-search-${k}`,
        client_secret_hash: 'x',
        created_at: START,
        updated_at: START,
      })
      .execute();
  }
  const merchants = (await db.selectFrom('merchants').select('id').orderBy('id').execute()).map((m) => m.id);
  const first = merchants[0];
  const others = merchants.slice(1);
  // merchant: even i → the first merchant; odd i → one of the others in turn.
  const merchantOf = (i: string) =>
    `case when ${i} % 2 = 0 then ${first} else ${others.length ? `(case (${i} / 2) % ${others.length} ${others.map((m, j) => `when ${j} then ${m}`).join(' ')} end)` : first} end`;
  const address = (i: string, concat: (...parts: string[]) => string) =>
    concat(
      `'{"country":"US","phone":"1","recipient":"Recipient '`,
      `(${i} % 200000)`,
      `'","province":"CA","street1":null,"street2":null,"city":null,"zip":null,"ioss":null,"vat":null}'`,
    );
  const columns = `merchant_id, custom_order_id, request_hash, sale_platform, channel_type, channel_code, remark, ship_to_country, address, status, financial_status,
    fulfillment_status, refund_status, currency_code, subtotal_cents, freight_cents, coupon_cents, promotion_cents, refunded_cents, pay_date, completed_date,
    cancel_date, refund_date, created_at, updated_at`;
  const values = (i: string, concat: (...parts: string[]) => string) =>
    `${merchantOf(i)}, ${concat(`'PO-'`, i)}, 'generated', 'Shopify', 'Standard', null, null, 'US', ${address(i, concat)}, 'processing', 'paid',
    'waiting_to_ship', null, 'USD', 3000, 900, 0, 0, 0, ${START} + ${i} * 2600, null, null, null, ${START} + ${i} * 2600, ${START} + ${i} * 2600`;
  const BATCH = 100_000;
  if (dialect === 'sqlite') {
    const concat = (...parts: string[]) => parts.join(' || ');
    for (let from = 1; from <= n; from += BATCH) {
      const to = Math.min(n, from + BATCH - 1);
      await sql
        .raw(
          `with recursive s(i) as (select ${from} union all select i + 1 from s where i < ${to}) insert into orders (${columns}) select ${values('i', concat)} from s`,
        )
        .execute(db);
      console.error(`filled ${to} orders (${Math.round(performance.now() - t0)} ms)`);
    }
    await sql`pragma optimize`.execute(db);
    await sql`analyze`.execute(db);
  } else {
    const concat = (...parts: string[]) => parts.map((p) => `(${p})::text`).join(' || ');
    const { rows } = await sql<{
      indexdef: string;
    }>`select indexdef from pg_indexes where indexname = 'orders_text_trgm_idx' and schemaname = current_schema()`.execute(db);
    if (rows[0]) await sql`drop index orders_text_trgm_idx`.execute(db);
    for (let from = 1; from <= n; from += BATCH) {
      const to = Math.min(n, from + BATCH - 1);
      await sql.raw(`insert into orders (${columns}) select ${values('i', concat)} from generate_series(${from}::bigint, ${to}::bigint) as s(i)`).execute(db);
      console.error(`filled ${to} orders (${Math.round(performance.now() - t0)} ms)`);
    }
    if (rows[0]) await sql.raw(rows[0].indexdef).execute(db);
    await sql`vacuum analyze orders`.execute(db);
    await sql`analyze merchants`.execute(db);
  }
  console.error(`fill done in ${Math.round(performance.now() - t0)} ms`);
}

// --explain (PostgreSQL): every statement's plan with its actual rows and times (auto_explain, as
// bench/explain.ts does), printed after each case's last run.
let plans: string[] = [];
function explaining(pgUrl: string): string {
  const u = new URL(pgUrl);
  const settings = [
    'session_preload_libraries=auto_explain',
    'auto_explain.log_min_duration=0',
    'auto_explain.log_analyze=on',
    'auto_explain.log_buffers=on',
    'auto_explain.log_level=notice',
  ];
  u.searchParams.set('options', [u.searchParams.get('options') ?? '', ...settings.map((x) => `-c ${x}`)].join(' ').trim());
  return u.toString();
}
if (args.explain) {
  const listening = new WeakSet<object>();
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
    if (!listening.has(this)) {
      listening.add(this);
      this.on('notice', (notice) => plans.push(notice.message ?? ''));
    }
    return (query as (...x: unknown[]) => unknown).apply(this, a);
  } as typeof query;
}

/** CPU time of a process in ms from /proc/<pid>/schedstat (nanoseconds on the CPU), finer than /proc/<pid>/stat's ticks. */
const schedMs = (pid: number) => Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
/** This process's CPU time in ms (user + system). */
const ownMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  // One connection on PostgreSQL, so its backend's CPU time is the whole server side of a call.
  const store = await openStore(args.explain && dialect === 'postgres' ? explaining(url) : url, { poolSize: 1 });
  try {
    if (args.fill) {
      await migrateToLatest(store);
      await fill(store, Number(args.fill));
    }
    const db = store.db;
    const merchants = (await db.selectFrom('merchants').select('id').orderBy('id').execute()).map((m) => m.id);
    const total = Number(
      (
        await db
          .selectFrom('orders')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
    const newest = await db.selectFrom('orders').select('id').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
    // A part of an order id that only one order has: the newest order's id without its first two digits.
    const idPart = String(newest.id).slice(2);
    const manager = forMerchant(store.db, merchants[0]);
    const backend = dialect === 'postgres' ? Number((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(store.db)).rows[0].pid) : null;
    const cpuNow = () => ownMs() + (backend === null ? 0 : schedMs(backend));

    type Case = { name: string; q: string; pages?: number };
    const cases: Case[] = [
      { name: 'rare recipient', q: 'recipient 147609' },
      { name: 'common term (every order)', q: 'recipient' },
      { name: 'common term, page 2', q: 'recipient', pages: 2 },
      { name: 'common term, page 5', q: 'recipient', pages: 5 },
      { name: 'part of an order id', q: idPart },
      { name: 'part of custom ids', q: 'PO-4242' },
      { name: 'exact custom id', q: 'PO-987654' },
      { name: 'merchant name', q: 'shop 07' },
      { name: 'merchant name, page 2', q: 'shop 07', pages: 2 },
      { name: 'no match', q: 'zzzz-none' },
    ];
    const only = args.only?.split(',');
    const lines: string[] = [];
    lines.push(
      `order search, ${dialect}, ${total} orders, ${RUNS} runs each (the call that reads the page asked for; the pages before it walked first, untimed): ` +
        `wall ms median / max, and CPU ms median (this process${backend === null ? '' : ' + the PostgreSQL backend'}: what the call costs whatever else the machine runs)`,
    );
    lines.push('');
    lines.push('| term | q | front | shown | about | wall median ms | wall max ms | CPU median ms |');
    lines.push('|---|---|---|---:|---:|---:|---:|---:|');
    for (const c of cases) {
      if (only && !only.includes(c.name)) continue;
      for (const front of ['console', 'manager'] as const) {
        const call = (form: OrderSearchForm) =>
          front === 'console' ? searchOrdersForOperator(store.db, dialect, form) : searchOrdersForMerchant(manager, dialect, form);
        // The pages before the timed one are walked first (their Next links), untimed.
        let after = '';
        for (let p = 1; p < (c.pages ?? 1); p++) {
          const r = await call({ q: c.q, after });
          if (!r.after) break;
          after = r.after;
        }
        const times: number[] = [];
        const cpu: number[] = [];
        let shown = 0;
        let about = 0;
        let capped = false;
        for (let r = 0; r < RUNS; r++) {
          plans = [];
          const c0 = cpuNow();
          const t = performance.now();
          const res = await call({ q: c.q, after });
          times.push(performance.now() - t);
          cpu.push(cpuNow() - c0);
          shown = res.list.length;
          about = res.counts.about;
          capped = res.counts.capped;
        }
        const row = `| ${c.name} | \`${c.q}\` | ${front} | ${shown} | ${about}${capped ? '+' : ''} | ${median(times).toFixed(1)} | ${Math.max(...times).toFixed(1)} | ${median(cpu).toFixed(1)} |`;
        lines.push(row);
        console.error(row);
        if (args.explain) for (const plan of plans) lines.push('', '```', plan, '```');
      }
    }
    console.log(lines.join('\n'));
  } finally {
    await store.close();
  }
}

await main();
