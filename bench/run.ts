/**
 * `npm run bench [-- --quick] [-- --db postgres] [-- --orders N] [-- --skus N] [-- --ledger N] [-- --keep-data] [-- --warmup S]`
 *
 * For each scenario, in the same run and with the same concurrency:
 * - **HTTP**: requests/s, p50/p99 latency, errors and the server's peak RSS, through a real server
 *   process (autocannon runs here, in the bench process, not in the server);
 * - **service ceiling**: the same service call without HTTP (bench process, same database);
 * - **driver baseline** (the storage limit): the same rows read or written with the bare driver in
 *   one transaction, no query builder, no service (bench/driver.ts);
 * - **HTTP ceiling**: a bare Fastify route of the same method and body size (bench/bare-server.ts; a
 *   GET answers one real response of the scenario, fetched from the server before the leg);
 *   each scenario runs these four legs back to back, so a ratio compares legs seconds apart,
 *   and each leg runs its load for `--warmup` seconds (1 quick, 2 full) before it is measured;
 * then the ratios: `serialLimitRps = 1 / (1/httpCeiling + 1/driver)` is what a server doing only
 * the HTTP work and the bare storage work one after the other would reach, and `ofSerialLimit`
 * how much of it the real server gets. Results (bench/result-files.ts, SPEC §11): a full run — every
 * scenario at the default scale — goes to bench/results/latest.json (the last full run of each
 * database) and <db>-full.md; any other run to bench/results/runs/<time>-<db>.{md,json}.
 * `console-pages` (run with the others, or alone with `--only console-pages`): each operator console
 * page rendered by the same server for a signed-in owner, with p50/p95/p99.
 * `open-claim` and `list-claims` (SPEC §18): a merchant opening a one-unit claim on a shipped split
 * order (the generated orders' split orders are marked shipped before its legs; the refund
 * scenario's reset un-ships them) and its newest page of claims. `evidence-upload` (alone or with
 * the others): another merchant's `GET /openapi/v1/account` p50/p99 with and without concurrent
 * 5 MB evidence uploads, legs alternated — whether an upload holds the event loop.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { ORDER_ID_START } from '../src/store/migrations/0004_orders.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { queryStocks } from '../src/services/stock-query.service.ts';
import { placeOrder } from '../src/services/orders.service.ts';
import { queryOrders } from '../src/services/order-query.service.ts';
import { requestRefund } from '../src/services/refunds.service.ts';
import { accountOf, transactionsOf } from '../src/services/ledger.service.ts';
import { createStaff } from '../src/services/staff.service.ts';
import { listClaims, openClaim } from '../src/services/claims.service.ts';
import { MAX_EVIDENCE_BYTES } from '../src/domain/claims.ts';
import { forMerchant } from '../src/store/scope-mint.ts';
import { postgresDriver, sqliteDriver, type BenchDriver, type OrderLineParam, type WindowParam } from './driver.ts';
import { freshStore } from './fresh-store.ts';
import { benchSku, generate } from './generate.ts';
import { partialBecause, resultFiles } from './result-files.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: args, tokens } = parseArgs({
  tokens: true,
  options: {
    quick: { type: 'boolean', default: false },
    db: { type: 'string', default: 'sqlite' },
    skus: { type: 'string' },
    orders: { type: 'string' },
    ledger: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string', default: '10' },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
    // Extra V8/Node flags for the API server process, e.g. --node-flags=--max-semi-space-size=4.
    'node-flags': { type: 'string' },
    'stock-layout': { type: 'string', default: 'all,split' },
    'keep-data': { type: 'boolean', default: false },
    // Seconds of the same load before each measured leg, not counted (JIT, caches, pools).
    warmup: { type: 'string' },
  },
});
/** `--only a,b`: run just these scenarios (and their ceilings). */
const only = args.only ? new Set(args.only.split(',')) : null;
const wanted = (name: string) => only === null || only.has(name);
/** `--stock-layout all|split|all,split`: the process layouts the stock.changed scenario runs in (both by default). */
const stockLayouts = args['stock-layout']!.split(',').map((l) => {
  if (l !== 'all' && l !== 'split') throw new Error(`--stock-layout: all or split, not ${l}`);
  return l;
});
const quick = args.quick!;
const SKUS = Number(args.skus ?? (quick ? 20_000 : 100_000));
const ORDERS = Number(args.orders ?? 10_000);
/** Ledger rows in all: one restock per stock row, the rest adjustments spread over the 30 days. */
const LEDGER = Number(args.ledger ?? SKUS * 3);
const DURATION = Number(args.duration ?? (quick ? 4 : 10));
const WARMUP = Number(args.warmup ?? (quick ? 1 : 2));
const CONNECTIONS = Number(args.connections);
const PG_URL = process.env.TEST_DATABASE_URL || process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const DEFAULT_WAREHOUSE = 'G007';

interface Result {
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Successful requests (HTTP scenarios). */
  ok?: number;
  /** The server's largest VmRSS sampled during the scenario (HTTP scenarios), MB. */
  peakRssMb?: number;
  /**
   * CPU time (user + system) per request of the process doing the work: the server's (HTTP legs),
   * the bench process's (service and driver legs; on PostgreSQL without the database's own CPU), µs.
   * Unlike req/s it does not move when other processes take the cores.
   */
  cpuUs: number;
}

/** The Node flags the installed command runs with: those of bin/stockist.js's first line. */
const LAUNCH_FLAGS = fs
  .readFileSync(path.join(ROOT, 'bin/stockist.js'), 'utf8')
  .split('\n')[0]
  .split(' ')
  .filter((flag) => flag.startsWith('--'));
/** The environment of every server the bench starts: its database, no TLS, limits out of the way. */
function serverEnv(databaseUrl: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    TLS: 'off',
    LOG_LEVEL: 'warn',
    STOCKIST_ENV: 'sandbox',
    SEED: 'none',
    DATA_DIR: path.join(os.tmpdir(), 'stockist-bench-data'),
    ADMIN_API_KEY: 'bench-admin-key-0123456789',
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    // The bench measures the server, not the per-merchant body budget (32 KiB/s: ~130 orders/s).
    RATE_LIMIT_BODY_BYTES_PER_SECOND: '0',
    DEFAULT_WAREHOUSE,
  };
}
const log = (s: string) => process.stderr.write(`${s}\n`);
const rand = (n: number) => Math.floor(Math.random() * n);
const pick30 = () => Array.from({ length: 30 }, () => benchSku(rand(SKUS) + 1));
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const orderIds = (n: number) => Array.from({ length: n }, () => ORDER_ID_START + 1 + rand(ORDERS));
const ADDRESS = { country: 'DE', phone: '1', recipient: 'Bench', province: 'BE' };
/** Three lines over two warehouses: two from the default G007, one pinned to US01. */
const orderLines = (): OrderLineParam[] => [
  { sku: benchSku(rand(SKUS) + 1), quantity: 1 },
  { sku: benchSku(rand(SKUS) + 1), quantity: 2 },
  { sku: benchSku(rand(SKUS) + 1), quantity: 1, warehouseCode: 'US01' },
];
const orderBody = (lines = orderLines()) => ({ orderAddress: ADDRESS, orderItemsList: lines });
/** Every order carries an Idempotency-Key, as a production client's should: one key row per order. */
let keySeq = 0;
const idempotencyKey = () => `bench-${process.pid}-${++keySeq}`;

/** The refund scenarios refund whole orders, each once: a counter over the orders, reset between legs. */
const refunds = { next: ORDER_ID_START + 1, last: ORDER_ID_START + ORDERS };
const nextRefundOrder = () => (refunds.next <= refunds.last ? refunds.next++ : null);

/**
 * The claim scenarios claim one unit of one line of a shipped split order, each line once: a list of
 * the lines (made by resetClaims) and a counter over it.
 */
interface ClaimTarget {
  splitId: number;
  orderId: number;
  itemId: number;
  sku: string;
  unitCents: number;
}
const claimTargets = { list: [] as ClaimTarget[], next: 0 };
const nextClaimTarget = () => claimTargets.list[claimTargets.next++] ?? null;
const claimBody = (t: ClaimTarget) => ({ orderId: t.splitId, reason: 'damaged' as const, resolution: 'refund' as const, items: [{ sku: t.sku, quantity: 1 }] });

/** A stock time window: `days` long (open-ended when null), starting at a random place in the data's 30 days. */
function stockWindow(lengthMs: number | null, startBack: () => number): WindowParam {
  const start = Date.now() - startBack();
  // The API's end bound covers its whole second (SPEC §1 Times): so does the driver's.
  const end = lengthMs === null ? null : Math.floor((start + lengthMs) / 1000) * 1000 + 999;
  return { start, end, pageNumber: 1 + rand(20), pageSize: 30 };
}
const windowQuery = (w: WindowParam) => ({
  dateStartTime: iso(w.start),
  ...(w.end === null ? {} : { dateEndTime: iso(w.end) }),
  pageNumber: w.pageNumber,
  pageSize: w.pageSize,
});
const queryString = (q: Record<string, string | number>) => new URLSearchParams(Object.entries(q).map(([k, v]) => [k, String(v)])).toString();

interface Deps {
  store: Store;
  config: ReturnType<typeof loadConfig>;
  merchantId: number;
}

/** One scenario, three ways: an HTTP request, the service call, the bare-driver work. */
/** Puts one real response of `path` (from the server) as the bare server's GET answer. */
async function answerLikeServer(barePort: number, serverPort: number, token: string, path: string) {
  const response = await fetch(`http://127.0.0.1:${serverPort}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`bench: ${path} answered ${response.status}`);
  const put = await fetch(`http://127.0.0.1:${barePort}/_bench/answer`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: await response.text(),
  });
  if (!put.ok) throw new Error(`bench: the bare server refused the answer (${put.status})`);
}

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  /** Refund scenarios use up orders: their legs start from a reset and stop when the orders run out. */
  consumesOrders?: boolean;
  /** Claim scenarios use up claimable lines: their legs start from a reset (and stop when the lines run out). */
  consumesClaims?: boolean;
  /** Reads claims: its legs start with at least CLAIMS_TO_LIST claims in place. */
  readsClaims?: boolean;
  http(): { path: string; body?: unknown; headers?: Record<string, string> } | null;
  service(d: Deps): Promise<unknown> | null;
  driver(d: BenchDriver): unknown;
}

function windowScenario(name: string, window: () => WindowParam): Scenario {
  return {
    name,
    method: 'GET',
    http: () => ({ path: `/openapi/v1/product/stocks?${queryString(windowQuery(window()))}` }),
    service: (d) => queryStocks(d.store, windowQuery(window())),
    driver: (d) => d.stockByWindow(window()),
  };
}

const SCENARIOS: Scenario[] = [
  {
    name: 'stock-by-30-skus',
    method: 'GET',
    http: () => ({ path: `/openapi/v1/product/stocks?skus=${pick30().join(',')}` }),
    service: (d) => queryStocks(d.store, { skus: pick30().join(',') }),
    driver: (d) => d.stockBySkus(pick30()),
  },
  // Open-ended, starting 1–28 days back: most of the catalogue changed in such a window.
  windowScenario('stock-by-window', () => stockWindow(null, () => (1 + rand(28)) * DAY)),
  windowScenario('stock-by-window-7d', () => stockWindow(7 * DAY, () => 7 * DAY + rand(23 * DAY))),
  windowScenario('stock-by-window-1h', () => stockWindow(HOUR, () => HOUR + rand(29 * DAY))),
  {
    name: 'create-order',
    method: 'POST',
    http: () => ({ path: '/openapi/v1/order/orders', body: orderBody(), headers: { 'idempotency-key': idempotencyKey() } }),
    service: (d) => placeOrder({ store: d.store, config: d.config }, forMerchant(d.store.db, d.merchantId), orderBody() as never, idempotencyKey(), 'bench'),
    driver: (d) => d.createOrder(orderLines(), idempotencyKey(), Date.now()),
  },
  {
    name: 'query-order-by-ids',
    method: 'GET',
    http: () => ({ path: `/openapi/v2/order/orders?ids=${orderIds(10).join(',')}` }),
    service: (d) => queryOrders(forMerchant(d.store.db, d.merchantId), { ids: orderIds(10).join(',') }),
    driver: (d) => d.queryOrdersByIds(orderIds(10)),
  },
  {
    name: 'query-order-by-window',
    method: 'GET',
    http: () => ({ path: `/openapi/v2/order/orders?updateStartTime=${iso(Date.now() - (1 + rand(28)) * DAY)}&pageSize=50` }),
    service: (d) => queryOrders(forMerchant(d.store.db, d.merchantId), { updateStartTime: iso(Date.now() - (1 + rand(28)) * DAY), pageSize: 50 }),
    driver: (d) => d.queryOrdersByWindow(Date.now() - (1 + rand(28)) * DAY, 50),
  },
  {
    name: 'refund-request',
    method: 'POST',
    consumesOrders: true,
    http: () => {
      const id = nextRefundOrder();
      return id === null ? null : { path: `/openapi/v2/order/orders/${id}/refund`, body: {} };
    },
    service: (d) => {
      const id = nextRefundOrder();
      return id === null ? null : requestRefund({ store: d.store }, forMerchant(d.store.db, d.merchantId), id, {}, null, 'bench');
    },
    driver: (d) => {
      const id = nextRefundOrder();
      return id === null ? null : d.requestRefund(id, Date.now());
    },
  },
  {
    name: 'account',
    method: 'GET',
    http: () => ({ path: '/openapi/v1/account' }),
    service: (d) => accountOf(forMerchant(d.store.db, d.merchantId), { env: d.config.env, supplierCurrency: d.config.supplierCurrency }),
    driver: (d) => d.account(),
  },
  // A page 1–20 of 20 transactions, newest first (the generated orders' charges and the bench's own).
  {
    name: 'account-transactions',
    method: 'GET',
    http: () => ({ path: `/openapi/v1/account/transactions?pageNumber=${1 + rand(20)}&pageSize=20` }),
    service: (d) => transactionsOf(forMerchant(d.store.db, d.merchantId), d.config.env, { pageNumber: 1 + rand(20), pageSize: 20 }),
    driver: (d) => d.accountTransactions(1 + rand(20), 20),
  },
  // SPEC §18: one unit of one line of a shipped split order (the split locked, what is claimable read, the claim written).
  {
    name: 'open-claim',
    method: 'POST',
    consumesClaims: true,
    http: () => {
      const t = nextClaimTarget();
      return t === null ? null : { path: '/openapi/v1/claims', body: claimBody(t) };
    },
    service: (d) => {
      const t = nextClaimTarget();
      return t === null ? null : openClaim({ store: d.store, config: d.config }, forMerchant(d.store.db, d.merchantId), claimBody(t) as never, null, 'bench');
    },
    driver: (d) => {
      const t = nextClaimTarget();
      return t === null ? null : d.openClaim(t.splitId, t.sku, Date.now());
    },
  },
  // The newest page of 20 claims (lines and evidence of each) and the count.
  {
    name: 'list-claims',
    method: 'GET',
    readsClaims: true,
    http: () => ({ path: '/openapi/v1/claims?pageSize=20' }),
    service: (d) => listClaims(forMerchant(d.store.db, d.merchantId), { pageSize: 20 }),
    driver: (d) => d.listClaims(20),
  },
];

/** Claims the list-claims scenario reads (written directly when fewer are there). */
const CLAIMS_TO_LIST = 1000;

/**
 * Removes every claim and marks every split order of the bench merchant shipped, then lists the
 * lines that may be claimed (one unit each). A retry as in resetRefunds: the leg before may still
 * have requests in the server.
 */
async function resetClaims(url: string, merchantId: number): Promise<void> {
  const store = await openStore(url);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await store.db.transaction().execute(async (trx) => {
          await trx.deleteFrom('claim_lines').execute();
          await trx.deleteFrom('claim_resolutions').execute();
          await trx.deleteFrom('claims').execute();
          const now = Date.now();
          await trx
            .updateTable('split_orders')
            .set({ status: 'shipped', shipped_at: now, carrier: 'UPS', tracking_code: 'BENCH', updated_at: now })
            .where('merchant_id', '=', merchantId)
            .where('status', '=', 'waiting_to_ship')
            .execute();
        });
        break;
      } catch (error) {
        if (attempt === 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    const rows = await store.db
      .selectFrom('order_items')
      .innerJoin('split_orders', 'split_orders.id', 'order_items.split_order_id')
      .select([
        'order_items.id as itemId',
        'order_items.order_id as orderId',
        'split_orders.id as splitId',
        'order_items.sku',
        'order_items.unit_cents as unitCents',
      ])
      .where('split_orders.merchant_id', '=', merchantId)
      .where('split_orders.status', '=', 'shipped')
      .where((eb) => eb('order_items.quantity', '>', eb.ref('order_items.refunded_quantity')))
      .orderBy('order_items.id')
      .execute();
    claimTargets.list = rows.map((r) => ({ ...r, splitId: Number(r.splitId), orderId: Number(r.orderId), itemId: Number(r.itemId) }));
    claimTargets.next = 0;
  } finally {
    await store.close();
  }
}

/** At least CLAIMS_TO_LIST claims of the bench merchant for list-claims: written directly (open, one line each) when fewer are there. */
async function ensureClaims(url: string, merchantId: number): Promise<void> {
  const store = await openStore(url);
  try {
    const { n } = await store.db
      .selectFrom('claims')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('merchant_id', '=', merchantId)
      .executeTakeFirstOrThrow();
    if (Number(n) >= CLAIMS_TO_LIST) return;
  } finally {
    await store.close();
  }
  await resetClaims(url, merchantId);
  const store2 = await openStore(url);
  try {
    const now = Date.now();
    for (const t of claimTargets.list.slice(0, CLAIMS_TO_LIST)) {
      await store2.db.transaction().execute(async (trx) => {
        const { id } = await trx
          .insertInto('claims')
          .values({
            merchant_id: merchantId,
            order_id: t.orderId,
            split_order_id: t.splitId,
            status: 'open',
            reason: 'damaged',
            resolution: 'refund',
            description: null,
            return_carrier: null,
            return_tracking_code: null,
            returned_at: null,
            received_warehouse_id: null,
            received_at: null,
            decision_reason: null,
            amount_cents: null,
            replacement_order_id: null,
            decided_at: null,
            created_at: now,
            updated_at: now,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        await trx
          .insertInto('claim_lines')
          .values({ claim_id: id, merchant_id: merchantId, order_item_id: t.itemId, sku: t.sku, quantity: 1, unit_cents: t.unitCents })
          .execute();
      });
    }
    claimTargets.next = CLAIMS_TO_LIST;
  } finally {
    await store2.close();
  }
}

/** Undoes every refund request (the data's orders become refundable again) and points the refund counter at the first order. */
async function resetRefunds(url: string): Promise<void> {
  const store = await openStore(url);
  try {
    // The leg before may still have requests in the server when its load ends; a refund one of
    // them commits between the two DELETEs (PostgreSQL) breaks the second: wait, and try again.
    for (let attempt = 1; ; attempt++) {
      try {
        await store.db.transaction().execute(async (trx) => {
          await trx.deleteFrom('refund_items').execute();
          await trx.deleteFrom('refunds').execute();
          await trx.updateTable('order_items').set({ pending_refund_quantity: 0 }).where('pending_refund_quantity', '>', 0).execute();
          await trx.updateTable('orders').set({ refund_status: null }).where('refund_status', 'is not', null).execute();
          // The claim scenarios' shipped split orders (the generated ones never ship): refundable again.
          await trx.deleteFrom('claim_lines').execute();
          await trx.deleteFrom('claim_resolutions').execute();
          await trx.deleteFrom('claims').execute();
          await trx
            .updateTable('split_orders')
            .set({ status: 'waiting_to_ship', shipped_at: null, carrier: null, tracking_code: null })
            .where('tracking_code', '=', 'BENCH')
            .execute();
        });
        break;
      } catch (error) {
        if (attempt === 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    const last = await store.db
      .selectFrom('orders')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirstOrThrow();
    refunds.next = ORDER_ID_START + 1;
    refunds.last = Number(last.id ?? ORDER_ID_START);
  } finally {
    await store.close();
  }
}

function vmRssMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

/** Samples the process's VmRSS every 100 ms (VmHWM cannot be reset between scenarios); `stop` returns the largest, MB. */
function sampleRss(pid: number): { stop(): number } {
  let peak = vmRssMb(pid, 'VmRSS');
  const timer = setInterval(() => {
    peak = Math.max(peak, vmRssMb(pid, 'VmRSS'));
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, vmRssMb(pid, 'VmRSS'));
    },
  };
}

async function prepare(): Promise<{ url: string; token: string; merchantId: number; cleanup: () => Promise<void> }> {
  const started = Date.now();
  const { url, store, cleanup } = await freshStore({ openStore, migrateToLatest }, args.db!, PG_URL, 'bench');
  const { token, merchantId } = await generate(store, {
    skus: SKUS,
    orders: ORDERS,
    ledgerRows: LEDGER,
    onProgress: (what, done, total) => done === total && log(`  generated ${total} ${what}`),
  });
  if (store.dialect === 'postgres') {
    const stale = await sql<{
      relname: string;
    }>`select relname from pg_stat_user_tables where schemaname = current_schema() and n_live_tup > 1000 and last_analyze is null and last_autoanalyze is null`.execute(
      store.db,
    );
    if (stale.rows.length) log(`  warning: tables without planner statistics: ${stale.rows.map((r) => r.relname).join(', ')}`);
  }
  await store.close();
  log(`data: ${SKUS} SKUs × 3 warehouses, ${LEDGER} ledger rows, ${ORDERS} orders on ${args.db} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { url, token, merchantId, cleanup };
}

async function startChild(args: string[], env: Record<string, string>, ready: RegExp): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = ready.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out}`)));
  });
}

interface LoadOptions {
  method?: 'GET' | 'POST';
  /** The next request; null when the scenario has run out of work (the leg then ends). */
  request: () => { path: string; body?: unknown; headers?: Record<string, string> } | null;
  token?: string;
  /** Samples this process's RSS during the load. */
  rssOf?: number;
  /** The serving process, for its CPU time per request (NaN without it). */
  cpuOf?: number;
}

async function load(name: string, port: number, opts: LoadOptions, duration = DURATION): Promise<Result> {
  const rss = opts.rssOf ? sampleRss(opts.rssOf) : null;
  const cpuBefore = opts.cpuOf ? cpuSeconds(opts.cpuOf) : Number.NaN;
  let exhausted = false;
  // Non-2xx answers by status, with the first body of each: a leg with errors says what they were.
  const failures = new Map<number, { n: number; body: string }>();
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration,
    requests: [
      {
        setupRequest: (req) => {
          const next = opts.request();
          if (next === null) {
            // Out of work: stop the run, and send something harmless meanwhile.
            if (!exhausted) setImmediate(() => instance.stop());
            exhausted = true;
            return { ...req, method: 'GET', path: '/healthz', headers: {} };
          }
          return {
            ...req,
            method: opts.method ?? 'GET',
            path: next.path,
            headers: { 'content-type': 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...next.headers },
            body: next.body === undefined ? undefined : JSON.stringify(next.body),
          };
        },
        onResponse: (status: number, body: string) => {
          if (status >= 200 && status < 300) return;
          const seen = failures.get(status);
          if (seen) seen.n++;
          else failures.set(status, { n: 1, body: String(body).slice(0, 300) });
        },
      },
    ],
    // Without a callback the instance is also the result's promise (the types show only the promise).
  }) as unknown as Promise<autocannon.Result> & { stop(): void };
  const result = await instance;
  const cpuUs = Math.round((((opts.cpuOf ? cpuSeconds(opts.cpuOf) : Number.NaN) - cpuBefore) * 1e6) / Math.max(1, result.requests.total));
  const peakRssMb = rss?.stop();
  if (exhausted) log(`    ${name}: ran out of orders to refund after ${result.duration.toFixed(1)} s`);
  for (const [status, f] of failures) log(`    ${name}: ${f.n} × HTTP ${status}, the first: ${f.body}`);
  return {
    scenario: name,
    rps: Math.round((result.requests.total / result.duration) * 10) / 10,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx,
    ok: result['2xx'],
    cpuUs,
    ...(peakRssMb === undefined ? {} : { peakRssMb }),
  };
}

/**
 * The same work as a scenario, called directly (a service, or the bare driver) with the same
 * concurrency; `op` returns null when the scenario has run out of work.
 */
async function direct(name: string, op: () => unknown, duration = DURATION): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: unknown = null;
  const started = Date.now();
  const cpuBefore = process.cpuUsage();
  const end = started + duration * 1000;
  let exhausted = false;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (!exhausted && Date.now() < end) {
        const t0 = process.hrtime.bigint();
        try {
          const pending = op();
          if (pending === null) {
            exhausted = true;
            break;
          }
          await pending;
        } catch (error) {
          errors++;
          firstError ??= error;
        }
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuUs = Math.round((cpu.user + cpu.system) / Math.max(1, latencies.length));
  if (firstError) log(`    ${name}: ${errors} errors, the first: ${firstError instanceof Error ? firstError.message : String(firstError)}`);
  if (exhausted) log(`    ${name}: ran out of orders to refund after ${seconds.toFixed(1)} s`);
  latencies.sort((a, b) => a - b);
  const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] * 100) / 100;
  return { scenario: name, rps: Math.round((latencies.length / seconds) * 10) / 10, p50: q(0.5), p99: q(0.99), errors, cpuUs };
}

const STOCK_SCENARIO = 'create-order-stock-webhooks';
const STOCK_ENDPOINTS = 100;
/** `all`: one `serve --role all` process (the embedded default); `split`: `--role api` beside `--role worker` (how a larger deployment runs it). */
type StockLayout = 'all' | 'split';

interface StockLeg extends Result {
  endpoints: number;
  /** 2xx orders per second: what the scenario measures (a leg with errors is invalid). */
  okRps: number;
  /**
   * CPU seconds (user + system) from the leg's start until its deliveries have all been received:
   * the API process (with the worker in it for `all`), the worker process (`split`), the receiver
   * and the load generator (this process).
   */
  cpu: { api: number; worker: number | null; receiver: number; loadgen: number };
  /** The API process's CPU per 2xx order (`all`: API and worker). */
  apiCpuMsPerOrder: number;
  /** API and worker processes together per 2xx order: what the product spends. */
  serverCpuMsPerOrder: number;
  /** What the receiver got during this leg. */
  deliveries: number;
  changes: number;
  bytes: number;
}

interface StockWebhookResult {
  layout: StockLayout;
  legs: StockLeg[];
  /** False when any leg had errors: then its ratios do not measure successful intake. */
  valid: boolean;
  /** 1 − (mean 2xx orders/s with the endpoints) / (mean without). */
  drop: number;
  /** (server CPU per order with) / (without) − 1, API and worker processes together. */
  serverCpuGrowth: number;
  /** The same for the API process alone (`split`: the order path's own cost; `all`: the same as serverCpuGrowth). */
  apiCpuGrowth: number;
  deliveries: number;
  changes: number;
  /** Bodies the receiver parsed in full, and those that were not a well-formed stock.changed. */
  sampled: number;
  bad: number;
  /** The servers' peak RSS over the scenario (VmHWM), MB: the API process's (`all`: the only one) and the worker's. */
  peakRssMb: { api: number; worker: number | null };
}

/** A process's CPU time so far (user + system), from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const fields = fs
    .readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const ownCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/**
 * Order intake with and without 100 endpoints subscribed to every stock.changed, back to back in
 * the same run and alternated (without, with, three times), because the machine's load drifts.
 * The receiver (bench/stock-receiver.ts) answers 200 from a process of its own.
 *
 * Measured on successful orders only: the data's stock rows hold 1,000,000 units each and an
 * order takes at most 2 from a row, so stock cannot run out, and the request-body budget is off
 * (at 400 orders/s one merchant's bodies exceed its default 32 KiB/s, and a leg turned into fast
 * 429s). Any non-2xx marks the result invalid and is printed with the first body of its status.
 *
 * Measures: 2xx orders/s (what the issue asks; on a shared machine it moves with everyone else's
 * load), and CPU time per order of each process, counted until the leg's deliveries have all been
 * received, which other processes do not change.
 */
async function stockWebhookScenario(dataUrl: string, orderToken: string, layout: StockLayout): Promise<StockWebhookResult> {
  const receiver = await startChild(['--import', 'tsx', 'bench/stock-receiver.ts'], {}, /receiver listening (\d+)/);
  const hookUrl = `http://127.0.0.1:${receiver.port}/stock`;
  const received = async () =>
    (await (await fetch(`http://127.0.0.1:${receiver.port}/stats`)).json()) as {
      deliveries: number;
      bytes: number;
      changes: number;
      sampled: number;
      bad: number;
    };
  const nodeFlags = (role: string) => [
    ...LAUNCH_FLAGS,
    ...(args.profile
      ? ['--cpu-prof', `--cpu-prof-dir=${path.join(ROOT, 'bench/results')}`, `--cpu-prof-name=stock-${layout}-${role}-${Date.now()}.cpuprofile`]
      : []),
  ];
  const env = {
    ...serverEnv(dataUrl),
    STOCK_WEBHOOK_INTERVAL_MS: '5000',
    // Measure throughput, not the shedding of a machine that other work slows down.
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
  };
  const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)/;
  const server = await startChild(
    [...nodeFlags(layout === 'all' ? 'all' : 'api'), 'bin/stockist.js', 'serve', '--role', layout === 'all' ? 'all' : 'api', '--port', '0'],
    env,
    listening,
  );
  const worker =
    layout === 'split' ? await startChild([...nodeFlags('worker'), 'bin/stockist.js', 'serve', '--role', 'worker', '--port', '0'], env, listening) : null;
  const base = `http://127.0.0.1:${server.port}`;
  const call = async (method: string, url: string, token: string, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
    const r = await fetch(base + url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const json = (await r.json()) as { data: any };
    if (!r.ok) throw new Error(`${method} ${url}: HTTP ${r.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  /** Until the receiver has had nothing new for 6 s (the interval plus a worker round or two), at most 3 min. */
  const quiet = async () => {
    let last = -1;
    for (let waited = 0; waited < 180; waited += 6) {
      const { deliveries } = await received();
      if (deliveries === last) return;
      last = deliveries;
      await new Promise((resolve) => setTimeout(resolve, 6000));
    }
  };
  try {
    // At most 16 endpoints per merchant: 100 endpoints over 7 merchants.
    const tokens: string[] = [];
    for (let i = 0; i < Math.ceil(STOCK_ENDPOINTS / 15); i++) {
      const m = await call('POST', '/admin/v1/merchants', 'bench-admin-key-0123456789', { name: `Hooked ${i}` });
      tokens.push((await call('POST', `/admin/v1/merchants/${m.merchantId}/tokens`, 'bench-admin-key-0123456789', {})).accessToken);
    }
    const endpoints: { token: string; id: string }[] = [];
    const register = async () => {
      for (let i = 0; i < STOCK_ENDPOINTS; i++) {
        const token = tokens[Math.floor(i / 15)];
        endpoints.push({ token, id: (await call('POST', '/openapi/v1/webhooks', token, { url: hookUrl, events: ['stock.changed'] })).id });
      }
    };
    const unregister = async () => {
      for (const e of endpoints.splice(0)) await call('DELETE', `/openapi/v1/webhooks/${e.id}`, e.token);
    };
    const legs: StockLeg[] = [];
    const seconds = Math.max(DURATION, 15);
    const pids = { api: server.child.pid!, worker: worker?.child.pid ?? null, receiver: receiver.child.pid! };
    const cpuNow = () => ({
      api: cpuSeconds(pids.api),
      worker: pids.worker === null ? null : cpuSeconds(pids.worker),
      receiver: cpuSeconds(pids.receiver),
      loadgen: ownCpuSeconds(),
    });
    for (const withEndpoints of [false, true, false, true, false, true]) {
      if (withEndpoints) await register();
      const n = withEndpoints ? STOCK_ENDPOINTS : 0;
      log(`  ${layout}: create-order for ${seconds} s, ${n} stock.changed endpoints…`);
      const got0 = await received();
      const cpu0 = cpuNow();
      const r = await load(
        `create-order, ${n} endpoints`,
        server.port,
        { method: 'POST', request: () => ({ path: '/openapi/v1/order/orders', body: orderBody() }), token: orderToken },
        seconds,
      );
      // Both kinds of leg wait the same way, so idle polling is counted alike.
      await quiet();
      const cpu1 = cpuNow();
      const cpu = {
        api: cpu1.api - cpu0.api,
        worker: cpu1.worker === null ? null : cpu1.worker - cpu0.worker!,
        receiver: cpu1.receiver - cpu0.receiver,
        loadgen: cpu1.loadgen - cpu0.loadgen,
      };
      const orders = Math.max(1, r.ok ?? 0);
      const got = await received();
      const leg: StockLeg = {
        ...r,
        endpoints: n,
        okRps: Math.round(((r.ok ?? 0) / seconds) * 10) / 10,
        cpu,
        apiCpuMsPerOrder: (1000 * cpu.api) / orders,
        serverCpuMsPerOrder: (1000 * (cpu.api + (cpu.worker ?? 0))) / orders,
        deliveries: got.deliveries - got0.deliveries,
        changes: got.changes - got0.changes,
        bytes: got.bytes - got0.bytes,
      };
      legs.push(leg);
      log(
        `    ${Math.round(leg.okRps)} orders/s (2xx), p99 ${r.p99} ms, ${r.errors} errors; CPU s: api ${cpu.api.toFixed(1)}${cpu.worker === null ? '' : `, worker ${cpu.worker.toFixed(1)}`}, receiver ${cpu.receiver.toFixed(1)}, load generator ${cpu.loadgen.toFixed(1)}; server ${leg.serverCpuMsPerOrder.toFixed(2)} ms/order; ${leg.deliveries} deliveries (${leg.changes} changes, ${(leg.bytes / 1e6).toFixed(0)} MB)`,
      );
      if (cpu.worker !== null && leg.deliveries > 0) log(`    worker: ${((1000 * cpu.worker) / leg.deliveries).toFixed(2)} ms CPU per delivery`);
      if (r.errors > 0)
        log(`    WARNING: this leg had ${r.errors} failed orders: the ${STOCK_SCENARIO} result is INVALID (it must measure successful orders only)`);
      if (withEndpoints) await unregister();
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const withs = legs.filter((l) => l.endpoints);
    const withouts = legs.filter((l) => !l.endpoints);
    const growth = (f: (l: StockLeg) => number) => mean(withs.map(f)) / mean(withouts.map(f)) - 1;
    const { deliveries, changes, sampled, bad } = await received();
    if (bad > 0) log(`    WARNING: ${bad} of ${sampled} sampled deliveries were not a well-formed stock.changed`);
    const peakRssMb = { api: vmRssMb(server.child.pid!, 'VmHWM'), worker: worker ? vmRssMb(worker.child.pid!, 'VmHWM') : null };
    log(`    peak RSS: api ${peakRssMb.api} MB${peakRssMb.worker === null ? '' : `, worker ${peakRssMb.worker} MB`}`);
    return {
      layout,
      peakRssMb,
      legs,
      valid: legs.every((l) => l.errors === 0) && bad === 0,
      drop: 1 - mean(withs.map((l) => l.okRps)) / mean(withouts.map((l) => l.okRps)),
      serverCpuGrowth: growth((l) => l.serverCpuMsPerOrder),
      apiCpuGrowth: growth((l) => l.apiCpuMsPerOrder),
      deliveries,
      changes,
      sampled,
      bad,
    };
  } finally {
    for (const child of [server.child, worker?.child]) {
      if (!child) continue;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    receiver.child.kill('SIGTERM');
  }
}

const CONSOLE_SCENARIO = 'console-pages';
const CONSOLE_PASSWORD = 'bench console passphrase';

interface ConsolePageResult {
  page: string;
  path: string;
  requests: number;
  p50: number;
  p95: number;
  p99: number;
  errors: number;
  /** The server's largest VmRSS while this page was under load, MB. */
  peakRssMb: number;
}

/**
 * Each operator console page (issue 16) rendered server-side by the running server, one page at a
 * time: a signed-in owner's session, CONNECTIONS concurrent requests for DURATION / 2 seconds per
 * page, latency measured here (fetch to the last byte), p50/p95/p99. The pages read the bench's
 * data (its orders, ledger and catalogue), so the dashboard's and the history's queries meet the
 * same table sizes as the API scenarios.
 */
async function consolePagesScenario(dataUrl: string, server: { port: number; pid: number }, token: string, merchantId: number): Promise<ConsolePageResult[]> {
  const store = await openStore(dataUrl);
  try {
    const exists = await store.db.selectFrom('staff_users').select('id').where('email_key', '=', 'bench-owner@example.com').executeTakeFirst();
    if (!exists)
      await createStaff(
        store.db,
        { kind: 'cli', id: 'bench', requestId: null },
        { email: 'bench-owner@example.com', role: 'owner', password: CONSOLE_PASSWORD },
        Date.now(),
      );
  } finally {
    await store.close();
  }
  const origin = `http://127.0.0.1:${server.port}`;
  const signIn = await fetch(`${origin}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: 'bench-owner@example.com', password: CONSOLE_PASSWORD }).toString(),
  });
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0];
  if (signIn.status !== 303 || !cookie) throw new Error(`console sign-in failed: ${signIn.status}`);
  const sku = benchSku(1 + rand(SKUS));
  // An endpoint for the webhook pages, registered the way a merchant does (the bench generates none).
  const hook = await fetch(`${origin}/openapi/v1/webhooks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'http://127.0.0.1:9/bench-hook', events: ['split_order.shipped'] }),
  });
  const hookBody = (await hook.json()) as { data?: { id?: string } };
  if (hook.status !== 200 || !hookBody.data?.id) throw new Error(`webhook registration failed: ${hook.status} ${JSON.stringify(hookBody)}`);
  const orderId = ORDER_ID_START + 1 + rand(ORDERS);
  const lastWeek = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
  const pages: [string, string][] = [
    ['dashboard', '/console'],
    ['refund review', '/console/refunds'],
    ['order search (first page)', '/console/orders'],
    ['order search (order id)', `/console/orders?q=${orderId}`],
    ['order search (merchant, status, from)', `/console/orders?merchant=${merchantId}&status=processing&from=${lastWeek}`],
    ['order detail', `/console/orders/${orderId}`],
    ['merchants', '/console/merchants'],
    ['merchant detail', `/console/merchants/${merchantId}`],
    ['webhooks', '/console/webhooks'],
    ['webhook detail', `/console/webhooks/${hookBody.data.id}`],
    ['product search (first page)', '/console/products'],
    ['product search (name text)', `/console/products?q=${encodeURIComponent('product 4242')}`],
    ['product stock and history', `/console/products/${sku}`],
    ['import form', '/console/import'],
    ['staff', '/console/staff'],
    ['audit log', '/console/audit'],
    ['audit log (action filter)', '/console/audit?action=staff.sign_in'],
  ];
  const out: ConsolePageResult[] = [];
  for (const [page, pagePath] of pages) {
    const latencies: number[] = [];
    let errors = 0;
    const rss = sampleRss(server.pid);
    const end = Date.now() + (DURATION * 1000) / 2;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (Date.now() < end) {
          const t0 = process.hrtime.bigint();
          const r = await fetch(`${origin}${pagePath}`, { headers: { cookie }, redirect: 'manual' });
          await r.arrayBuffer();
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          if (r.status !== 200) errors++;
        }
      }),
    );
    const peakRssMb = rss.stop();
    latencies.sort((a, b) => a - b);
    const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] * 10) / 10;
    out.push({ page, path: pagePath, requests: latencies.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), errors, peakRssMb });
    log(`    ${page}: ${latencies.length} requests, p50 ${q(0.5)} ms, p95 ${q(0.95)} ms, ${errors} errors, peak RSS ${peakRssMb} MB`);
  }
  return out;
}

const UPLOAD_SCENARIO = 'evidence-upload';
/** Concurrent uploaders of 5 MB evidence files in the legs with uploads. */
const UPLOADERS = 4;
/** Where bench/loop-delay.mjs, preloaded into the server, writes the server's event-loop delay. */
const LOOP_DELAY_FILE = path.join(os.tmpdir(), `stockist-bench-loop-delay-${process.pid}.json`);

interface UploadLeg {
  uploads: boolean;
  /** The other merchant's account reads: count, p50/p99 ms, errors. */
  reads: number;
  p50: number;
  p99: number;
  errors: number;
  /** The server's event-loop delay over the leg (bench/loop-delay.mjs), ms. */
  loopDelay: { p50: number; p99: number; max: number; mean: number };
  /** 5 MB uploads answered 200 in the leg, their p50 ms, and the MB/s they carried. */
  uploaded: number;
  uploadP50: number;
  uploadMbPerSecond: number;
  uploadErrors: number;
  /** The server process's CPU seconds in the leg. */
  serverCpuSeconds: number;
}

/** The server's event-loop delay since the last call (bench/loop-delay.mjs answers SIGUSR2 by writing it to `file`). */
async function loopDelaySince(pid: number, file: string): Promise<UploadLeg['loopDelay']> {
  fs.rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 500 && !fs.existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

/**
 * SPEC §18 evidence: does a 5 MB upload (streamed to DATA_DIR/files) hold the server's event loop?
 * Legs alternated (without, with, without, with uploads), DURATION seconds each: another merchant
 * reads its account with CONNECTIONS / 2 concurrent requests (latency measured here), while in the
 * legs with uploads a process of its own (bench/upload-load.mjs) posts 5 MB PNG files from UPLOADERS
 * concurrent loops; the server's own event-loop delay is read per leg (bench/loop-delay.mjs). The
 * uploaded files are removed afterwards (rows and bytes).
 */
async function evidenceUploadScenario(server: { port: number; pid: number }, token: string, dataUrl: string): Promise<UploadLeg[]> {
  const origin = `http://127.0.0.1:${server.port}`;
  const admin = (method: string, url: string, body?: unknown) =>
    fetch(`${origin}${url}`, {
      method,
      headers: { authorization: 'Bearer bench-admin-key-0123456789', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then((r) => r.json() as Promise<{ data: any }>);
  const other = await admin('POST', '/admin/v1/merchants', { name: `Bench reader ${process.pid}` });
  const otherToken = (await admin('POST', `/admin/v1/merchants/${other.data.merchantId}/tokens`, {})).data.accessToken as string;
  const quantile = (xs: number[], p: number) => (xs.length ? Math.round(xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] * 10) / 10 : NaN);
  const cpuSeconds = () => {
    const f = fs.readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  const legs: UploadLeg[] = [];
  for (const uploads of [false, true, false, true]) {
    const end = Date.now() + DURATION * 1000;
    const reads: number[] = [];
    let errors = 0;
    const cpu0 = cpuSeconds();
    await loopDelaySince(server.pid, LOOP_DELAY_FILE);
    const t0 = Date.now();
    const reader = async () => {
      while (Date.now() < end) {
        const started = process.hrtime.bigint();
        const r = await fetch(`${origin}/openapi/v1/account`, { headers: { authorization: `Bearer ${otherToken}` } });
        await r.arrayBuffer();
        reads.push(Number(process.hrtime.bigint() - started) / 1e6);
        if (r.status !== 200) errors++;
      }
    };
    const uploader = uploads
      ? new Promise<{ times: number[]; errors: number }>((resolve, reject) => {
          const child = spawn(process.execPath, ['bench/upload-load.mjs', origin, token, String(DURATION), String(UPLOADERS), String(MAX_EVIDENCE_BYTES)], {
            cwd: ROOT,
            stdio: ['ignore', 'pipe', 'inherit'],
          });
          let out = '';
          child.stdout!.on('data', (d: Buffer) => {
            out += d;
          });
          child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`bench/upload-load.mjs exited ${code}`))));
        })
      : Promise.resolve({ times: [] as number[], errors: 0 });
    const [uploaded] = await Promise.all([uploader, ...Array.from({ length: Math.max(1, CONNECTIONS / 2) }, reader)]);
    const seconds = (Date.now() - t0) / 1000;
    const loopDelay = await loopDelaySince(server.pid, LOOP_DELAY_FILE);
    reads.sort((a, b) => a - b);
    const uploadTimes = uploaded.times.sort((a, b) => a - b);
    legs.push({
      uploads,
      reads: reads.length,
      p50: quantile(reads, 0.5),
      p99: quantile(reads, 0.99),
      errors,
      loopDelay,
      uploaded: uploadTimes.length,
      uploadP50: quantile(uploadTimes, 0.5),
      uploadMbPerSecond: Math.round(((uploadTimes.length * MAX_EVIDENCE_BYTES) / 1048576 / seconds) * 10) / 10,
      uploadErrors: uploaded.errors,
      serverCpuSeconds: Math.round((cpuSeconds() - cpu0) * 10) / 10,
    });
    const l = legs.at(-1)!;
    log(
      `    ${uploads ? `with ${UPLOADERS} uploaders` : 'without uploads'}: ${l.reads} reads, p50 ${l.p50} ms, p99 ${l.p99} ms; ` +
        `event-loop delay p99 ${l.loopDelay.p99} ms, max ${l.loopDelay.max} ms; ${l.uploaded} uploads (${l.uploadMbPerSecond} MB/s, p50 ${l.uploadP50} ms, ${l.uploadErrors} errors)`,
    );
  }
  // The uploaded files: no claim names them; removed now rather than by the purger a day later.
  const store = await openStore(dataUrl);
  try {
    const files = await store.db.selectFrom('claim_files').select('storage_key').where('claim_id', 'is', null).execute();
    await store.db.deleteFrom('claim_files').where('claim_id', 'is', null).execute();
    for (const f of files) fs.rmSync(path.join(serverEnv(dataUrl).DATA_DIR, 'files', f.storage_key), { force: true });
  } finally {
    await store.close();
  }
  return legs;
}

interface Run {
  http: Result[];
  service: Result[];
  driver: Result[];
  bare: Result[];
  peakRssMb: number;
  stockWebhooks?: StockWebhookResult[];
  consolePages?: ConsolePageResult[];
  evidenceUploads?: UploadLeg[];
}

async function main() {
  const data = await prepare();
  const results: Run = { http: [], service: [], driver: [], bare: [], peakRssMb: NaN };
  const scenarios = SCENARIOS.filter((s) => wanted(s.name));
  const beforeLeg = async (s: Scenario) => {
    if (s.consumesOrders) await resetRefunds(data.url);
    if (s.consumesClaims) await resetClaims(data.url, data.merchantId);
    if (s.readsClaims) await ensureClaims(data.url, data.merchantId);
  };
  try {
    // Every process up front, then each scenario's four legs back to back (driver, service, HTTP,
    // bare Fastify of the same method): a ratio compares legs seconds apart, not minutes apart, so
    // the machine's load moving during the run (other work, CPU steal) moves both sides of it.
    const driver =
      args.db === 'postgres'
        ? await postgresDriver(data.url, { merchantId: data.merchantId, defaultWarehouse: DEFAULT_WAREHOUSE, connections: CONNECTIONS })
        : sqliteDriver(data.url.slice('sqlite:'.length), { merchantId: data.merchantId, defaultWarehouse: DEFAULT_WAREHOUSE });
    const config = loadConfig({ DATABASE_URL: data.url, TLS: 'off', DEFAULT_WAREHOUSE });
    const store = await openStore(data.url, { poolSize: CONNECTIONS });
    const deps: Deps = { store, config, merchantId: data.merchantId };
    // --profile: the server writes a V8 CPU profile (bench/results/*.cpuprofile) when it exits.
    const nodeFlags = [
      ...LAUNCH_FLAGS,
      ...(args.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(ROOT, 'bench/results')}`] : []),
      ...(args['node-flags']?.split(' ').filter(Boolean) ?? []),
      // evidence-upload reads the server's own event-loop delay (a 5 ms-resolution histogram, nothing else).
      ...(wanted(UPLOAD_SCENARIO) ? ['--import', pathToFileURL(path.join(ROOT, 'bench/loop-delay.mjs')).href] : []),
    ];
    const server = await startChild(
      [...nodeFlags, 'bin/stockist.js', 'serve', '--role', 'api', '--port', '0'],
      { ...serverEnv(data.url), BENCH_LOOP_DELAY_FILE: LOOP_DELAY_FILE },
      /listening on http:\/\/127\.0\.0\.1:(\d+)/,
    );
    const bare = await startChild(['--import', 'tsx', 'bench/bare-server.ts'], { PORT: '0' }, /bare listening (\d+)/);
    try {
      for (const s of scenarios) {
        log(`${s.name}: driver, service, server, bare Fastify…`);
        // Each leg: the same load for WARMUP seconds first, not counted, so every leg is measured
        // warm (the server's first requests of a route pay for compiling its code).
        const leg = async <R>(run: (seconds: number, measured: boolean) => Promise<R>): Promise<R> => {
          if (WARMUP > 0) {
            // A scenario that uses up orders or claimable lines needs some for its warm-up too: the
            // leg before may have used them all (a `--only refund-request` run has only the
            // generated orders), and a warm-up without work warms nothing.
            if (s.consumesClaims || s.consumesOrders) await beforeLeg(s);
            await run(WARMUP, false);
          }
          await beforeLeg(s);
          return run(DURATION, true);
        };
        results.driver.push(await leg((seconds) => direct(s.name, () => s.driver(driver), seconds)));
        results.service.push(await leg((seconds) => direct(s.name, () => s.service(deps), seconds)));
        results.http.push(
          await leg((seconds, measured) =>
            load(
              s.name,
              server.port,
              measured
                ? { method: s.method, request: () => s.http(), token: data.token, rssOf: server.child.pid, cpuOf: server.child.pid! }
                : { method: s.method, request: () => s.http(), token: data.token },
              seconds,
            ),
          ),
        );
        // GET: the bare route answers one real response of this scenario, at the scenario's paths.
        if (s.method === 'GET') await answerLikeServer(bare.port, server.port, data.token, s.http()!.path);
        const bareRequest = s.method === 'POST' ? () => ({ path: '/openapi/v1/order/orders', body: orderBody() }) : () => ({ path: s.http()!.path });
        results.bare.push(await leg((seconds) => load(s.name, bare.port, { method: s.method, request: bareRequest, cpuOf: bare.child.pid! }, seconds)));
      }
      if (wanted(CONSOLE_SCENARIO)) {
        log(`${CONSOLE_SCENARIO}: each console page rendered by the server…`);
        results.consolePages = await consolePagesScenario(data.url, { port: server.port, pid: server.child.pid! }, data.token, data.merchantId);
      }
      if (wanted(UPLOAD_SCENARIO)) {
        log(`${UPLOAD_SCENARIO}: another merchant's reads without and with ${UPLOADERS} concurrent 5 MB uploads, alternated…`);
        results.evidenceUploads = await evidenceUploadScenario({ port: server.port, pid: server.child.pid! }, data.token, data.url);
      }
      results.peakRssMb = vmRssMb(server.child.pid!, 'VmHWM');
    } finally {
      bare.child.kill('SIGTERM');
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
      await driver.close();
      await store.close();
    }

    if (wanted(STOCK_SCENARIO)) {
      results.stockWebhooks = [];
      for (const layout of stockLayouts) {
        log(
          `${STOCK_SCENARIO} (${layout === 'all' ? 'one process, --role all' : '--role api beside --role worker'}): without and with ${STOCK_ENDPOINTS} endpoints, alternated…`,
        );
        results.stockWebhooks.push(await stockWebhookScenario(data.url, data.token, layout));
      }
    }
  } finally {
    // --keep-data: leave the generated database for EXPLAIN (its URL is logged).
    if (args['keep-data']) log(`data kept: ${data.url}`);
    else await data.cleanup();
  }
  report(results);
}

/** The worker process's CPU per delivery over the legs with endpoints (`split`). */
function workerMsPerDelivery(w: StockWebhookResult): number {
  const withs = w.legs.filter((l) => l.endpoints > 0);
  return (
    (1000 * withs.reduce((a, l) => a + (l.cpu.worker ?? 0), 0)) /
    Math.max(
      1,
      withs.reduce((a, l) => a + l.deliveries, 0),
    )
  );
}

function report(r: Run) {
  const rows = r.http.map((h) => {
    const s = r.service.find((x) => x.scenario === h.scenario)!;
    const d = r.driver.find((x) => x.scenario === h.scenario)!;
    const b = r.bare.find((x) => x.scenario === h.scenario)!;
    const httpCeilingRps = b.rps;
    const serialLimitRps = 1 / (1 / httpCeilingRps + 1 / d.rps);
    return {
      scenario: h.scenario,
      rps: h.rps,
      p50: h.p50,
      p99: h.p99,
      errors: h.errors,
      peakRssMb: h.peakRssMb,
      serviceRps: s.rps,
      serviceP99: s.p99,
      serviceErrors: s.errors,
      driverRps: d.rps,
      driverP99: d.p99,
      driverErrors: d.errors,
      httpCeilingRps,
      httpCeilingP99: b.p99,
      serialLimitRps: Math.round(serialLimitRps * 10) / 10,
      ofSerialLimit: h.rps / serialLimitRps,
      ofHttpCeiling: h.rps / httpCeilingRps,
      ofServiceCeiling: h.rps / s.rps,
      cpuUs: { server: h.cpuUs, service: s.cpuUs, driver: d.cpuUs, bare: b.cpuUs },
      // The same ratio by CPU time, which other processes on the machine do not move.
      ofCpuLimit: (b.cpuUs + d.cpuUs) / h.cpuUs,
    };
  });
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  const lines = [
    `# Stockist benchmark (${args.db}${quick ? ', quick' : ''})`,
    '',
    `${new Date().toISOString()} · ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'} · Node ${process.version} · ${SKUS} SKUs × 3 warehouses · ${LEDGER} ledger rows · ${ORDERS} orders · ${CONNECTIONS} connections × ${DURATION} s`,
    '',
    '| scenario | req/s | p50 ms | p99 ms | errors | peak RSS MB | service req/s | service p99 ms | driver req/s | driver p99 ms | HTTP ceiling req/s | serial limit req/s | % of serial limit | % of service ceiling | % of HTTP ceiling |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (x) =>
        `| ${x.scenario} | ${Math.round(x.rps)} | ${x.p50} | ${x.p99} | ${x.errors} | ${x.peakRssMb} | ${Math.round(x.serviceRps)} | ${x.serviceP99} | ${Math.round(x.driverRps)} | ${x.driverP99} | ${Math.round(x.httpCeilingRps)} | ${Math.round(x.serialLimitRps)} | ${pct(x.ofSerialLimit)} | ${pct(x.ofServiceCeiling)} | ${pct(x.ofHttpCeiling)} |`,
    ),
    '',
    'HTTP ceiling: a bare Fastify route of the same method and body size (a GET answers one real response of the scenario), measured right after the scenario. ' +
      `Each scenario ran its driver, service, server and bare-Fastify legs back to back, each after ${WARMUP} s of the same load not counted (warm-up). Serial limit = 1 / (1/HTTP ceiling + 1/driver): the HTTP work and the bare storage work one after the other.`,
    `Server peak RSS (VmHWM over the whole run): ${r.peakRssMb} MB.`,
  ];
  const errors = rows.filter((x) => x.serviceErrors || x.driverErrors).map((x) => `${x.scenario} (service ${x.serviceErrors}, driver ${x.driverErrors})`);
  if (errors.length) lines.push(`Errors outside HTTP: ${errors.join(', ')}.`);
  lines.push(
    '',
    'CPU time per request (user + system, µs) of the process doing the work — unlike req/s, not moved by other processes on the cores. ' +
      "Server: the API process during the HTTP leg; service and driver: the bench process (on PostgreSQL without the database server's CPU); " +
      'bare: the bare Fastify process. CPU limit share = (bare + driver) / server.',
    '',
    '| scenario | server µs/req | service µs/op | driver µs/op | bare Fastify µs/req | % of CPU limit |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map((x) => `| ${x.scenario} | ${x.cpuUs.server} | ${x.cpuUs.service} | ${x.cpuUs.driver} | ${x.cpuUs.bare} | ${pct(x.ofCpuLimit)} |`),
  );
  for (const w of r.stockWebhooks ?? []) {
    const pctSigned = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
    lines.push(
      '',
      `## ${STOCK_SCENARIO} (${w.layout === 'all' ? 'one process: --role all' : '--role api beside --role worker'}): order intake with ${STOCK_ENDPOINTS} stock.changed endpoints, legs alternated back to back`,
      '',
      ...(w.valid ? [] : ['**INVALID: some legs had failed orders or malformed deliveries; the ratios below do not measure successful intake.**', '']),
      '| leg | endpoints | 2xx orders/s | p50 ms | p99 ms | errors | orders | CPU s: API | worker | receiver | load generator | API CPU ms/order | server CPU ms/order | deliveries | changes |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...w.legs.map(
        (l, i) =>
          `| ${i + 1} | ${l.endpoints} | ${Math.round(l.okRps)} | ${l.p50} | ${l.p99} | ${l.errors} | ${l.ok} | ${l.cpu.api.toFixed(1)} | ${l.cpu.worker === null ? '—' : l.cpu.worker.toFixed(1)} | ${l.cpu.receiver.toFixed(1)} | ${l.cpu.loadgen.toFixed(1)} | ${l.apiCpuMsPerOrder.toFixed(2)} | ${l.serverCpuMsPerOrder.toFixed(2)} | ${l.deliveries} | ${l.changes} |`,
      ),
      '',
      `Intake drop with the endpoints: ${(w.drop * 100).toFixed(1)} % (mean 2xx orders/s of the legs with them against those without). ` +
        `Server CPU per order (API and worker): ${pctSigned(w.serverCpuGrowth)}` +
        (w.layout === 'split'
          ? `; the API process's alone: ${pctSigned(w.apiCpuGrowth)}; the worker process's per delivery (legs with endpoints): ${workerMsPerDelivery(w).toFixed(2)} ms. `
          : '. ') +
        `The receiver got ${w.deliveries} deliveries carrying ${w.changes} changes (${w.bad} of ${w.sampled} sampled bodies malformed). ` +
        `Peak RSS (VmHWM): API ${w.peakRssMb.api} MB${w.peakRssMb.worker === null ? '' : `, worker ${w.peakRssMb.worker} MB`}.`,
    );
  }
  if (r.consolePages) {
    lines.push(
      '',
      `## ${CONSOLE_SCENARIO}: the operator console's pages, rendered server-side (signed-in owner, ${CONNECTIONS} concurrent requests, ${DURATION / 2} s a page)`,
      '',
      '| page | path | requests | p50 ms | p95 ms | p99 ms | errors | peak RSS MB |',
      '|---|---|---:|---:|---:|---:|---:|---:|',
      ...r.consolePages.map((c) => `| ${c.page} | \`${c.path}\` | ${c.requests} | ${c.p50} | ${c.p95} | ${c.p99} | ${c.errors} | ${c.peakRssMb} |`),
    );
  }
  if (r.evidenceUploads) {
    const mean = (with_: boolean, f: (l: UploadLeg) => number) => {
      const xs = r.evidenceUploads!.filter((l) => l.uploads === with_).map(f);
      return Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10;
    };
    lines.push(
      '',
      `## ${UPLOAD_SCENARIO}: another merchant's \`GET /openapi/v1/account\` (${Math.max(1, CONNECTIONS / 2)} concurrent) without and with ${UPLOADERS} concurrent 5 MB evidence uploads, legs alternated`,
      '',
      '| leg | uploaders | reads | read p50 ms | read p99 ms | errors | loop delay p50 ms | loop delay p99 ms | loop delay max ms | 5 MB uploads | upload p50 ms | upload MB/s | upload errors | server CPU s |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...r.evidenceUploads.map(
        (l, i) =>
          `| ${i + 1} | ${l.uploads ? UPLOADERS : 0} | ${l.reads} | ${l.p50} | ${l.p99} | ${l.errors} | ${l.loopDelay.p50} | ${l.loopDelay.p99} | ${l.loopDelay.max} | ${l.uploaded} | ${l.uploadP50} | ${l.uploadMbPerSecond} | ${l.uploadErrors} | ${l.serverCpuSeconds} |`,
      ),
      '',
      `Means of the legs, without → with uploads: the server's event-loop delay p99 ${mean(false, (l) => l.loopDelay.p99)} → ${mean(true, (l) => l.loopDelay.p99)} ms ` +
        `(max ${mean(false, (l) => l.loopDelay.max)} → ${mean(true, (l) => l.loopDelay.max)} ms); the other merchant's reads p50 ${mean(false, (l) => l.p50)} → ${mean(true, (l) => l.p50)} ms, ` +
        `p99 ${mean(false, (l) => l.p99)} → ${mean(true, (l) => l.p99)} ms. The delay is measured inside the server (bench/loop-delay.mjs); the uploads run in a process of their own.`,
    );
  }
  const md = lines.join('\n');
  process.stdout.write(`${md}\n`);
  const dir = path.join(ROOT, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const run = {
    at: new Date().toISOString(),
    db: args.db,
    quick,
    only: args.only ?? null,
    skus: SKUS,
    ledgerRows: LEDGER,
    orders: ORDERS,
    connections: CONNECTIONS,
    durationSeconds: DURATION,
    warmupSeconds: WARMUP,
    scenarios: rows,
    bare: r.bare,
    peakRssMb: r.peakRssMb,
    stockWebhooks: r.stockWebhooks,
    consolePages: r.consolePages,
    evidenceUploads: r.evidenceUploads,
  };
  // SPEC §11: latest.json keeps the last full run of each database, side by side; a partial run
  // (bench/result-files.ts says which) writes its own files under bench/results/runs/.
  const given = Object.fromEntries(tokens.flatMap((t) => (t.kind === 'option' ? [[t.name, args[t.name as keyof typeof args]]] : [])));
  const files = resultFiles(dir, { db: args.db!, given }, new Date(run.at));
  fs.mkdirSync(path.dirname(files.markdown), { recursive: true });
  fs.writeFileSync(files.markdown, `${md}\n`);
  if (files.ownJson) fs.writeFileSync(files.ownJson, `${JSON.stringify({ ...run, partialBecause: partialBecause({ db: args.db!, given }) }, null, 2)}\n`);
  if (files.latestJson) {
    let latest: Record<string, unknown> = {};
    try {
      const previous = JSON.parse(fs.readFileSync(files.latestJson, 'utf8'));
      if (previous && typeof previous === 'object' && !('scenarios' in previous)) latest = previous;
    } catch {}
    latest[args.db!] = run;
    fs.writeFileSync(files.latestJson, `${JSON.stringify(latest, null, 2)}\n`);
  }
  log(`results: ${[files.markdown, files.ownJson ?? files.latestJson].map((f) => path.relative(ROOT, f!)).join(', ')}`);
}

await main();
