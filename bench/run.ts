/**
 * `npm run bench [-- --quick] [-- --db postgres] [-- --orders N] [-- --skus N]`
 *
 * For each scenario: requests/s, p50/p99 latency and errors through HTTP against a real server
 * process (autocannon runs here, in the bench process, not in the server), the same work called
 * directly on the storage layer without HTTP (the storage ceiling), and a bare Fastify route (the
 * HTTP ceiling); then the ratios, the server's peak RSS, and results in bench/results/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.ts';
import { ORDER_ID_START } from '../src/store/migrations/0004_orders.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { queryStocks } from '../src/services/stock-query.service.ts';
import { placeOrder } from '../src/services/orders.service.ts';
import { queryOrders } from '../src/services/order-query.service.ts';
import { requestRefund } from '../src/services/refunds.service.ts';
import { forMerchant } from '../src/store/tenancy.ts';
import { benchSku, generate } from './generate.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    db: { type: 'string', default: 'sqlite' },
    skus: { type: 'string' },
    orders: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string', default: '10' },
    only: { type: 'string' },
    profile: { type: 'boolean', default: false },
  },
});
/** `--only a,b`: run just these scenarios (and their ceilings). */
const only = args.only ? new Set(args.only.split(',')) : null;
const wanted = (name: string) => only === null || only.has(name);
const quick = args.quick!;
const SKUS = Number(args.skus ?? (quick ? 20_000 : 100_000));
const ORDERS = Number(args.orders ?? 10_000);
const DURATION = Number(args.duration ?? (quick ? 4 : 10));
const CONNECTIONS = Number(args.connections);
const PG_URL = process.env.TEST_DATABASE_URL || process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

interface Result {
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** Successful requests (HTTP scenarios). */
  ok?: number;
}

const log = (s: string) => process.stderr.write(`${s}\n`);
const rand = (n: number) => Math.floor(Math.random() * n);
const pick30 = () => Array.from({ length: 30 }, () => benchSku(rand(SKUS) + 1)).join(',');
const DAY = 86_400_000;
const windowStart = () => new Date(Date.now() - (1 + rand(28)) * DAY).toISOString();
const orderIds = (n: number) => Array.from({ length: n }, () => ORDER_ID_START + 1 + rand(ORDERS)).join(',');
const ADDRESS = { country: 'DE', phone: '1', recipient: 'Bench', province: 'BE' };
/** Three lines over two warehouses: two from the default G007, one pinned to US01. */
const orderBody = () => ({
  orderAddress: ADDRESS,
  orderItemsList: [
    { sku: benchSku(rand(SKUS) + 1), quantity: 1 },
    { sku: benchSku(rand(SKUS) + 1), quantity: 2 },
    { sku: benchSku(rand(SKUS) + 1), quantity: 1, warehouseCode: 'US01' },
  ],
});
let nextRefundOrder = ORDER_ID_START + 1;

function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

async function prepare(): Promise<{ url: string; token: string; merchantId: number; cleanup: () => Promise<void> }> {
  const started = Date.now();
  let url: string;
  let store: Store;
  let cleanup: () => Promise<void>;
  if (args.db === 'postgres') {
    const schema = `bench_${Date.now().toString(36)}`;
    store = await openStore(PG_URL, { schema, poolSize: 4 });
    url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`;
    cleanup = async () => {
      const s = await openStore(PG_URL);
      await s.db.schema.dropSchema(schema).ifExists().cascade().execute();
      await s.close();
    };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-bench-'));
    url = `sqlite:${path.join(dir, 'bench.db')}`;
    store = await openStore(url);
    cleanup = async () => fs.rmSync(dir, { recursive: true, force: true });
  }
  await migrateToLatest(store);
  const { token, merchantId } = await generate(store, { skus: SKUS, orders: ORDERS, onProgress: (what, done, total) => done === total && log(`  generated ${total} ${what}`) });
  await store.close();
  log(`data: ${SKUS} SKUs × 3 warehouses, ${ORDERS} orders on ${args.db} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
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

async function load(name: string, port: number, opts: { method?: 'GET' | 'POST'; path: () => string; body?: () => unknown; token?: string }, duration = DURATION): Promise<Result> {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration,
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          method: opts.method ?? 'GET',
          path: opts.path(),
          headers: { 'content-type': 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}) },
          body: opts.body ? JSON.stringify(opts.body()) : undefined,
        }),
      },
    ],
  });
  return { scenario: name, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.non2xx, ok: result['2xx'] };
}

/** The same work as a scenario, called on the storage layer directly with the same concurrency. */
async function direct(name: string, op: () => Promise<unknown>): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  const end = Date.now() + DURATION * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < end) {
        const t0 = process.hrtime.bigint();
        try {
          await op();
        } catch {
          errors++;
        }
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] * 100) / 100;
  return { scenario: name, rps: latencies.length / DURATION, p50: q(0.5), p99: q(0.99), errors };
}

const STOCK_SCENARIO = 'create-order-stock-webhooks';
const STOCK_ENDPOINTS = 100;

interface StockWebhookResult {
  legs: (Result & { endpoints: number; cpuSeconds: number; cpuMsPerOrder: number })[];
  /** 1 − (mean req/s with the endpoints) / (mean req/s without). */
  drop: number;
  /** 1 − (server CPU per order without) / (with): the drop on a machine where the server has the CPU to itself. */
  cpuDrop: number;
  deliveries: number;
  changes: number;
}

/** The server process's CPU time so far (user + system), from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Order intake with and without 100 endpoints subscribed to every stock.changed, on one server
 * running the API and the worker (`--role all`, the embedded default), back to back in the same
 * run and alternated (without, with, three times), because the machine's load drifts. The
 * receiver (bench/stock-receiver.ts) answers 200 from a process of its own.
 *
 * Two measures: throughput (what the issue asks, but on a shared machine it moves with everyone
 * else's load), and the server's CPU time per order (user + system of its process, counted until
 * the deliveries of the leg have all been received), which other processes do not change: on a
 * machine where the server is CPU-bound, throughput drops by what CPU per order grows.
 */
async function stockWebhookScenario(dataUrl: string, orderToken: string): Promise<StockWebhookResult> {
  const receiver = await startChild(['--import', 'tsx', 'bench/stock-receiver.ts'], {}, /receiver listening (\d+)/);
  const hookUrl = `http://127.0.0.1:${receiver.port}/stock`;
  const received = async () => (await (await fetch(`http://127.0.0.1:${receiver.port}/stats`)).json()) as { deliveries: number; bytes: number; changes: number };
  const nodeFlags = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(ROOT, 'bench/results')}`] : [];
  const server = await startChild([...nodeFlags, 'bin/stockist.js', 'serve', '--role', 'all', '--port', '0'], {
    DATABASE_URL: dataUrl, TLS: 'off', LOG_LEVEL: 'warn', STOCKIST_ENV: 'sandbox', SEED: 'none', DATA_DIR: path.join(os.tmpdir(), 'stockist-bench-data'),
    ADMIN_API_KEY: 'bench-admin-key-0123456789', RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000', STOCK_WEBHOOK_INTERVAL_MS: '5000',
    // Measure throughput, not the shedding of a machine that other work slows down.
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
  }, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
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
    const legs: StockWebhookResult['legs'] = [];
    const seconds = Math.max(DURATION, 15);
    for (const withEndpoints of [false, true, false, true, false, true]) {
      if (withEndpoints) await register();
      const n = withEndpoints ? STOCK_ENDPOINTS : 0;
      log(`  create-order for ${seconds} s, ${n} stock.changed endpoints…`);
      const cpu0 = cpuSeconds(server.child.pid!);
      const r = await load(`create-order, ${n} endpoints`, server.port, { method: 'POST', path: () => '/openapi/v1/order/orders', body: orderBody, token: orderToken }, seconds);
      // Both kinds of leg wait the same way, so idle polling is counted alike.
      await quiet();
      const cpu = cpuSeconds(server.child.pid!) - cpu0;
      const cpuMsPerOrder = (1000 * cpu) / Math.max(1, r.ok ?? 0);
      legs.push({ ...r, endpoints: n, cpuSeconds: cpu, cpuMsPerOrder });
      const got = await received();
      log(`    ${Math.round(r.rps)} req/s, p99 ${r.p99} ms, ${r.errors} errors; server CPU ${cpu.toFixed(1)} s = ${cpuMsPerOrder.toFixed(2)} ms/order; ${got.deliveries} deliveries (${got.changes} changes, ${(got.bytes / 1e6).toFixed(0)} MB) received so far`);
      if (withEndpoints) await unregister();
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const withs = legs.filter((l) => l.endpoints);
    const withouts = legs.filter((l) => !l.endpoints);
    const drop = 1 - mean(withs.map((l) => l.rps)) / mean(withouts.map((l) => l.rps));
    const cpuDrop = 1 - mean(withouts.map((l) => l.cpuMsPerOrder)) / mean(withs.map((l) => l.cpuMsPerOrder));
    const { deliveries, changes } = await received();
    return { legs, drop, cpuDrop, deliveries, changes };
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    receiver.child.kill('SIGTERM');
  }
}

async function main() {
  const data = await prepare();
  const results: { http: Result[]; storage: Result[]; bare: Result[]; peakRssMb: number; stockWebhooks?: StockWebhookResult } = { http: [], storage: [], bare: [], peakRssMb: NaN };
  try {
    // Storage ceiling first, alone on the database.
    const config = loadConfig({ DATABASE_URL: data.url, TLS: 'off' });
    const store = await openStore(data.url, { poolSize: CONNECTIONS });
    const deps = { store, config };
    log('storage ceiling…');
    if (wanted('stock-by-30-skus')) results.storage.push(await direct('stock-by-30-skus', () => queryStocks(store, { skus: pick30() })));
    if (wanted('stock-by-window')) results.storage.push(await direct('stock-by-window', () => queryStocks(store, { dateStartTime: windowStart(), pageNumber: 1 + rand(20), pageSize: 30 })));
    if (wanted('create-order')) results.storage.push(await direct('create-order', () => placeOrder(deps, data.merchantId, orderBody() as never, null, 'bench')));
    if (wanted('query-order-by-ids')) results.storage.push(await direct('query-order-by-ids', () => queryOrders(forMerchant(store.db, data.merchantId), { ids: orderIds(10) })));
    if (wanted('query-order-by-window')) results.storage.push(await direct('query-order-by-window', () => queryOrders(forMerchant(store.db, data.merchantId), { updateStartTime: windowStart(), pageSize: 50 })));
    if (wanted('refund-request')) results.storage.push(await direct('refund-request', () => requestRefund({ store }, data.merchantId, String(nextRefundOrder++), {}, null, 'bench')));
    await store.close();

    log('server…');
    // --profile: the server writes a V8 CPU profile (bench/results/*.cpuprofile) when it exits.
    const nodeFlags = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(ROOT, 'bench/results')}`] : [];
    const server = await startChild([...nodeFlags, 'bin/stockist.js', 'serve', '--role', 'api', '--port', '0'], {
      DATABASE_URL: data.url, TLS: 'off', LOG_LEVEL: 'warn', STOCKIST_ENV: 'sandbox', SEED: 'none', DATA_DIR: path.join(os.tmpdir(), 'stockist-bench-data'),
      ADMIN_API_KEY: 'bench-admin-key-0123456789', RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000',
    }, /listening on http:\/\/127\.0\.0\.1:(\d+)/);
    const t = data.token;
    try {
      if (wanted('stock-by-30-skus')) results.http.push(await load('stock-by-30-skus', server.port, { path: () => `/openapi/v1/product/stocks?skus=${pick30()}`, token: t }));
      if (wanted('stock-by-window')) results.http.push(await load('stock-by-window', server.port, { path: () => `/openapi/v1/product/stocks?dateStartTime=${windowStart()}&pageNumber=${1 + rand(20)}&pageSize=30`, token: t }));
      if (wanted('create-order')) results.http.push(await load('create-order', server.port, { method: 'POST', path: () => '/openapi/v1/order/orders', body: orderBody, token: t }));
      if (wanted('query-order-by-ids')) results.http.push(await load('query-order-by-ids', server.port, { path: () => `/openapi/v2/order/orders?ids=${orderIds(10)}`, token: t }));
      if (wanted('query-order-by-window')) results.http.push(await load('query-order-by-window', server.port, { path: () => `/openapi/v2/order/orders?updateStartTime=${windowStart()}&pageSize=50`, token: t }));
      if (wanted('refund-request')) results.http.push(await load('refund-request', server.port, { method: 'POST', path: () => `/openapi/v2/order/orders/${nextRefundOrder++}/refund`, body: () => ({}), token: t }));
      results.peakRssMb = peakRssMb(server.child.pid!);
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
    }

    if (wanted(STOCK_SCENARIO)) {
      log(`${STOCK_SCENARIO}: the same server (API and worker), without and with ${STOCK_ENDPOINTS} endpoints, alternated…`);
      results.stockWebhooks = await stockWebhookScenario(data.url, data.token);
    }

    log('bare Fastify ceiling…');
    const bare = await startChild(['--import', 'tsx', 'bench/bare-server.ts'], { PORT: '0' }, /bare listening (\d+)/);
    try {
      results.bare.push(await load('bare-json-get', bare.port, { path: () => '/openapi/v1/product/stocks' }));
      results.bare.push(await load('bare-json-post', bare.port, { method: 'POST', path: () => '/openapi/v1/order/orders', body: orderBody }));
    } finally {
      bare.child.kill('SIGTERM');
    }
  } finally {
    await data.cleanup();
  }
  report(results);
}

function report(r: { http: Result[]; storage: Result[]; bare: Result[]; peakRssMb: number; stockWebhooks?: StockWebhookResult }) {
  const bareGet = r.bare[0].rps;
  const barePost = r.bare[1].rps;
  const rows = r.http.map((h) => {
    const s = r.storage.find((x) => x.scenario === h.scenario)!;
    const httpCeiling = h.scenario === 'create-order' || h.scenario === 'refund-request' ? barePost : bareGet;
    return { ...h, storageRps: s.rps, storageP99: s.p99, ofHttpCeiling: h.rps / httpCeiling, ofStorageCeiling: h.rps / s.rps };
  });
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  const lines = [
    `# Stockist benchmark (${args.db}${quick ? ', quick' : ''})`,
    '',
    `${new Date().toISOString()} · ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'} · Node ${process.version} · ${SKUS} SKUs × 3 warehouses · ${ORDERS} orders · ${CONNECTIONS} connections × ${DURATION} s`,
    '',
    '| scenario | req/s | p50 ms | p99 ms | errors | storage req/s | storage p99 ms | % of storage ceiling | % of HTTP ceiling |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((x) => `| ${x.scenario} | ${Math.round(x.rps)} | ${x.p50} | ${x.p99} | ${x.errors} | ${Math.round(x.storageRps)} | ${x.storageP99} | ${pct(x.ofStorageCeiling)} | ${pct(x.ofHttpCeiling)} |`),
    '',
    `HTTP ceiling (bare Fastify, same body size): GET ${Math.round(bareGet)} req/s (p99 ${r.bare[0].p99} ms), POST ${Math.round(barePost)} req/s (p99 ${r.bare[1].p99} ms).`,
    `Server peak RSS: ${r.peakRssMb} MB.`,
  ];
  if (r.stockWebhooks) {
    const w = r.stockWebhooks;
    lines.push(
      '',
      `## ${STOCK_SCENARIO}: order intake with ${STOCK_ENDPOINTS} stock.changed endpoints (one server with the worker, legs alternated back to back)`,
      '',
      '| leg | endpoints | req/s | p50 ms | p99 ms | errors | orders | server CPU s | CPU ms/order |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...w.legs.map((l, i) => `| ${i + 1} | ${l.endpoints} | ${Math.round(l.rps)} | ${l.p50} | ${l.p99} | ${l.errors} | ${l.ok} | ${l.cpuSeconds.toFixed(1)} | ${l.cpuMsPerOrder.toFixed(2)} |`),
      '',
      `Throughput drop with the endpoints: ${(w.drop * 100).toFixed(1)} % (mean of the legs with them against the mean of those without). ` +
        `Server CPU per order: +${((1 / (1 - w.cpuDrop) - 1) * 100).toFixed(1)} %, i.e. a ${(w.cpuDrop * 100).toFixed(1)} % drop where the server is CPU-bound on its own cores. ` +
        `The receiver got ${w.deliveries} deliveries carrying ${w.changes} changes.`,
    );
  }
  const md = lines.join('\n');
  process.stdout.write(`${md}\n`);
  const dir = path.join(ROOT, 'bench/results');
  fs.mkdirSync(dir, { recursive: true });
  const json = { at: new Date().toISOString(), db: args.db, quick, skus: SKUS, orders: ORDERS, connections: CONNECTIONS, durationSeconds: DURATION, scenarios: rows, bare: r.bare, peakRssMb: r.peakRssMb, stockWebhooks: r.stockWebhooks };
  fs.writeFileSync(path.join(dir, 'latest.json'), `${JSON.stringify(json, null, 2)}\n`);
  fs.writeFileSync(path.join(dir, 'latest.md'), `${md}\n`);
}

await main();
