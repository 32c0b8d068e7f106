/**
 * `node --import tsx bench/explain.ts --url <postgres URL of a bench database> [--runs 7]`
 *
 * The PostgreSQL plans of the hot paths, as the server runs them: each bench scenario's service
 * call (the same code the API runs) on a database that `npm run bench -- --db postgres --keep-data`
 * left, with PostgreSQL's auto_explain reporting every statement's plan with its actual rows,
 * times and buffers (EXPLAIN ANALYZE of the real statement, real parameters, inside the real
 * transaction). Each call runs `--runs` times and the last run's plans are printed: the
 * server's statements are named prepared statements (src/store/db.ts), which PostgreSQL plans
 * afresh for their first five runs and may then replace by a generic plan — the last run shows the
 * plan the server keeps. Markdown on stdout (bench/results/postgres-plans.md).
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { queryOrders } from '../src/services/order-query.service.ts';
import { placeOrder } from '../src/services/orders.service.ts';
import { requestRefund } from '../src/services/refunds.service.ts';
import { queryStocks } from '../src/services/stock-query.service.ts';
import { openStore } from '../src/store/db.ts';
import { forMerchant } from '../src/store/scope-mint.ts';
import { benchSku } from './generate.ts';

const { values: args } = parseArgs({ options: { url: { type: 'string' }, runs: { type: 'string', default: '7' } } });
if (!args.url?.startsWith('postgres')) throw new Error('--url: the PostgreSQL URL a bench run printed with --keep-data');
const RUNS = Number(args.runs);

/** The URL with auto_explain loaded into each connection, reporting plans to the client as notices. */
function explaining(url: string): string {
  const u = new URL(url);
  const settings = [
    'session_preload_libraries=auto_explain',
    'auto_explain.log_min_duration=0',
    'auto_explain.log_analyze=on',
    'auto_explain.log_buffers=on',
    'auto_explain.log_timing=on',
    'auto_explain.log_level=notice',
  ];
  u.searchParams.set('options', [u.searchParams.get('options') ?? '', ...settings.map((s) => `-c ${s}`)].join(' ').trim());
  return u.toString();
}

// The store's pool is its own; its clients are pg's, so the plans (notices) are caught on the
// prototype — a measuring tool's shortcut, not something the server does.
let plans: string[] = [];
const listening = new WeakSet<object>();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...a: unknown[]) {
  if (!listening.has(this)) {
    listening.add(this);
    this.on('notice', (notice) => plans.push(notice.message ?? ''));
  }
  return (query as (...x: unknown[]) => unknown).apply(this, a);
} as typeof query;

const store = await openStore(explaining(args.url), { poolSize: 1 });
const config = loadConfig({ ...process.env, DATABASE_URL: args.url });
// Its notices are dropped: `plans` starts afresh before each call.
const { rows: facts } = await sql<{ merchant: number; skus: number; refundable: number }>`
  select (select id from merchants order by id limit 1) as merchant, (select count(*) from products) as skus,
    (select min(id) from orders where refund_status is null) as refundable`.execute(store.db);
const merchantId = Number(facts[0].merchant);
const skus = Number(facts[0].skus);
let nextRefundable = Number(facts[0].refundable);
let n = 0;
const sku = () => benchSku(1 + ((n++ * 7919) % skus));
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR = 3_600_000;

const calls: { name: string; run: () => Promise<unknown> }[] = [
  { name: 'stock by 30 SKUs', run: () => queryStocks(store, { skus: Array.from({ length: 30 }, sku).join(',') }) },
  {
    name: 'stock window, 1 hour, page 10 of 30',
    run: () =>
      queryStocks(store, {
        dateStartTime: iso(Date.now() - 15 * 24 * HOUR),
        dateEndTime: iso(Date.now() - 15 * 24 * HOUR + HOUR),
        pageNumber: 10,
        pageSize: 30,
      }),
  },
  {
    name: 'create order (3 lines, 2 warehouses, Idempotency-Key)',
    run: () =>
      placeOrder(
        { store, config },
        forMerchant(store.db, merchantId),
        {
          orderAddress: { country: 'DE', phone: '1', recipient: 'Plans', province: 'BE' },
          orderItemsList: [
            { sku: sku(), quantity: 1 },
            { sku: sku(), quantity: 2 },
            { sku: sku(), quantity: 1, warehouseCode: 'US01' },
          ],
        } as never,
        `plans-${process.pid}-${n++}`,
        'plans',
      ),
  },
  {
    name: 'order by 10 ids',
    run: () => queryOrders(forMerchant(store.db, merchantId), { ids: Array.from({ length: 10 }, (_, i) => nextRefundable + 100 + i * 37 + n++).join(',') }),
  },
  { name: 'refund request (whole order)', run: () => requestRefund({ store }, forMerchant(store.db, merchantId), nextRefundable++, {}, null, 'plans') },
];

const out: string[] = [
  `# PostgreSQL plans of the hot paths (bench/explain.ts)`,
  '',
  `${new Date().toISOString()} · ${skus} SKUs · run ${RUNS} of ${RUNS} of each call`,
  '',
];
for (const call of calls) {
  for (let i = 1; i <= RUNS; i++) {
    plans = [];
    await call.run();
  }
  out.push(`## ${call.name}`, '', '```', ...plans.map((p) => p.trim()), '```', '');
}
process.stdout.write(`${out.join('\n')}\n`);
await store.close();
process.exit(0);
