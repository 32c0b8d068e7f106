/**
 * `npm run bench:scale-out [-- --duration 6 --processes 1,2,4 --rounds 2 --warm-up 3]`: PostgreSQL + Redis,
 * `serve --role api` × each count of `--processes` and `serve --role worker` × 2, load spread over
 * the API ports (a client-side round robin stands in for the load balancer).
 *
 * For each process count it measures create-order throughput with the change feed's commit
 * numbering on and off, in alternating legs (on/off, then off/on in the next round), and samples
 * what PostgreSQL's backends wait on during each leg. "Off" is a **bench-only switch**: the bench
 * runs `ALTER TABLE stock_ledger DISABLE TRIGGER stock_ledger_stamp` in the throwaway schema it
 * created for itself, so nothing numbers the commits (no head row, no lock held through the commit);
 * there is no setting in the server that does this. The legs without it leave ledger rows with a
 * NULL `commit_seq`, which is harmless in a schema the bench drops at the end. A probe then
 * measures the head's own ceiling: 16 connections committing one ledger row (delta 0) each, as
 * fast as they can, with the numbering on and off.
 *
 * Finally it refunds a batch of orders through the API processes while both workers decide them,
 * and checks that no stock row was oversold, stock equals its ledger, and no refund was decided twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { ledgerMismatches } from '../src/store/stocks.repository.ts';
import { benchSku, generate } from './generate.ts';
import { cpuMs } from './proc-stats.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '8' },
    skus: { type: 'string', default: '5000' },
    connections: { type: 'string', default: '16' },
    processes: { type: 'string', default: '1,2,4' },
    rounds: { type: 'string', default: '2' },
    'probe-seconds': { type: 'string', default: '4' },
    'hot-qty': { type: 'string', default: '3000' },
    'warm-up': { type: 'string', default: '3' },
  },
});
const DURATION = Number(args.duration);
const SKUS = Number(args.skus);
const PROCESSES = args.processes.split(',').map(Number);
const ROUNDS = Number(args.rounds);
const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const log = (s: string) => process.stderr.write(`${s}\n`);

function start(role: 'api' | 'worker', env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['bin/stockist.js', 'serve', '--role', role, '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const on = (d: Buffer) => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (code) => reject(new Error(`${role} exited ${code}: ${out}`)));
  });
}

async function orderLoad(ports: number[], token: string, skus: number, duration = DURATION) {
  const rand = (n: number) => Math.floor(Math.random() * n);
  const runs = ports.map((port) =>
    autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: Math.max(1, Math.floor(Number(args.connections) / ports.length)),
      duration,
      requests: [
        {
          method: 'POST',
          path: '/openapi/v1/order/orders',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({
              orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'BE' },
              // A small hot set of SKUs, so processes contend for the same stock rows.
              orderItemsList: [
                { sku: benchSku(1 + rand(50)), quantity: 1 },
                { sku: benchSku(1 + rand(skus)), quantity: 1, warehouseCode: 'US01' },
              ],
            }),
          }),
        },
      ],
    }),
  );
  const results = await Promise.all(runs);
  return {
    orders: results.reduce((s, r) => s + r['2xx'], 0),
    rps: Math.round(results.reduce((s, r) => s + r.requests.average, 0)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    errors: results.reduce((s, r) => s + r.errors + r.non2xx, 0),
  };
}

/**
 * What the API processes' backends wait on, sampled every 10 ms while `during` runs: the mean
 * number of backends (of `application_name` = `app`) in each state. A backend waiting on a lock
 * in its COMMIT is waiting for the change feed's head row (the deferred trigger runs in COMMIT);
 * a lock wait in any other statement is a stock or order row; `flush` is WAL writes and syncs
 * (a COMMIT waiting for its WAL to reach the disk), `cpu` is running, `other` any other wait.
 */
async function sampleWaits<T>(client: pg.Client, app: string, during: Promise<T>) {
  const totals = { head: 0, rowLock: 0, flush: 0, cpu: 0, other: 0 };
  let samples = 0;
  let done = false;
  const finished = during.finally(() => {
    done = true;
  });
  while (!done) {
    const { rows } = await client.query<Record<keyof typeof totals, string>>(
      `select count(*) filter (where wait_event_type = 'Lock' and query ilike 'commit%') as head,
              count(*) filter (where wait_event_type = 'Lock' and query not ilike 'commit%') as "rowLock",
              count(*) filter (where wait_event like 'WAL%') as flush,
              count(*) filter (where wait_event is null) as cpu,
              count(*) filter (where wait_event is not null and wait_event_type <> 'Lock' and wait_event not like 'WAL%') as other
         from pg_stat_activity where application_name = $1 and state = 'active'`,
      [app],
    );
    for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += Number(rows[0][k]);
    samples++;
    await new Promise((r) => setTimeout(r, 10));
  }
  const result = await finished;
  const mean = Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, Math.round((v / Math.max(1, samples)) * 100) / 100]));
  return { result, waits: mean as typeof totals };
}

/** CPU used by the API processes and by their PostgreSQL backends while `during` runs (same host). */
async function measureCpu<T>(client: pg.Client, app: string, apiPids: number[], during: () => Promise<T>) {
  const backends = async () =>
    (await client.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [app])).rows.map((r) => r.pid);
  const before = new Map([...apiPids, ...(await backends())].map((pid) => [pid, cpuMs(pid)]));
  const result = await during();
  const pgPids = await backends();
  // A backend that opened during the leg started from zero; one that closed is lost (pools keep theirs open).
  const used = (pids: number[]) => pids.reduce((s, pid) => s + cpuMs(pid) - (before.get(pid) ?? 0), 0);
  return { result, apiCpuMs: used(apiPids), pgCpuMs: used(pgPids) };
}

/** The bench-only switch: the commit numbering of migration 0002/0012, on or off, in this bench's own schema. */
async function numbering(client: pg.Client, on: boolean) {
  await client.query(`alter table stock_ledger ${on ? 'enable' : 'disable'} trigger stock_ledger_stamp`);
}

/**
 * The head's own ceiling: `connections` clients each committing, in a loop, one transaction that
 * inserts one ledger row (delta 0, so stock still equals its ledger) — one round trip each, so
 * the clients cost little CPU and the commits are what is measured.
 */
async function commitProbe(url: string, rowKeys: { product_id: number; warehouse_id: number }[], seconds: number, connections = 16) {
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  let commits = 0;
  const latencies: number[] = [];
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    clients.map(async (c, i) => {
      for (let n = i; Date.now() < until; n += connections) {
        const key = rowKeys[n % rowKeys.length];
        const t = performance.now();
        await c.query(
          `begin; insert into stock_ledger (product_id, warehouse_id, delta, qty_after, kind, order_id, refund_id, created_at)
             select product_id, warehouse_id, 0, qty, 'adjustment', null, null, ${Date.now()} from stocks where product_id = ${key.product_id} and warehouse_id = ${key.warehouse_id}; commit`,
        );
        latencies.push(performance.now() - t);
        commits++;
      }
    }),
  );
  await Promise.all(clients.map((c) => c.end()));
  latencies.sort((a, b) => a - b);
  return {
    commitsPerSecond: Math.round(commits / seconds),
    p50ms: Math.round(latencies[Math.floor(latencies.length / 2)] * 100) / 100,
    p99ms: Math.round(latencies[Math.floor(latencies.length * 0.99)] * 100) / 100,
  };
}

/** Per process count: mean orders/s with and without the numbering, and their ratio. */
function summarise(legs: { processes: number; numbering: 'on' | 'off'; rps: number; p99: number; errors: number; cpu: Record<string, number> }[]) {
  const mean = (xs: number[]) => Math.round(xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length));
  const cpuOf = (ls: typeof legs) => ({
    api: Math.round((ls.reduce((s, l) => s + l.cpu.apiMsPerOrder, 0) / Math.max(1, ls.length)) * 100) / 100,
    pg: Math.round((ls.reduce((s, l) => s + l.cpu.pgMsPerOrder, 0) / Math.max(1, ls.length)) * 100) / 100,
  });
  return PROCESSES.map((n) => {
    const on = legs.filter((l) => l.processes === n && l.numbering === 'on');
    const off = legs.filter((l) => l.processes === n && l.numbering === 'off');
    const rpsOn = mean(on.map((l) => l.rps));
    const rpsOff = mean(off.map((l) => l.rps));
    return {
      processes: n,
      ordersPerSecondOn: rpsOn,
      ordersPerSecondOff: rpsOff,
      onOverOff: Math.round((rpsOn / Math.max(1, rpsOff)) * 100) / 100,
      p99msOn: Math.max(...on.map((l) => l.p99)),
      p99msOff: Math.max(...off.map((l) => l.p99)),
      errors: [...on, ...off].reduce((s, l) => s + l.errors, 0),
      cpuMsPerOrderOn: cpuOf(on),
      cpuMsPerOrderOff: cpuOf(off),
    };
  });
}

const schema = `scale_${Date.now().toString(36)}`;
const store = await openStore(PG_URL, { schema });
await migrateToLatest(store);
const { token } = await generate(store, { skus: SKUS, orders: 0 });
// A hot set of 50 SKUs every order takes one unit of, so processes contend for the same stock
// rows (an oversell would show as a negative row or a ledger mismatch); enough units that no leg
// runs out (an out-of-stock refusal is a cheaper request and would flatter the later legs).
await sql`update stocks set qty = ${Number(args['hot-qty'])} where product_id in (select id from products where sku <= ${benchSku(50)})`.execute(store.db);
await sql`insert into stock_ledger (product_id, warehouse_id, delta, qty_after, kind, order_id, refund_id, created_at) select product_id, warehouse_id, qty - 1000000, qty, 'adjustment', null, null, ${Date.now()} from stocks where product_id in (select id from products where sku <= ${benchSku(50)})`.execute(
  store.db,
);
const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`;
const APP = `stockist-${schema}`;
const env = {
  DATABASE_URL: `${url}&application_name=${APP}`,
  REDIS_URL: REDIS,
  TLS: 'off',
  LOG_LEVEL: 'warn',
  STOCKIST_ENV: 'sandbox',
  DATA_DIR: path.join(os.tmpdir(), 'stockist-scale'),
  ADMIN_API_KEY: 'scale-admin-key-0123456789',
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '1000000',
  REFUND_AUTO_DELAY_MS: '0',
};
const children: ChildProcess[] = [];
const admin = new pg.Client({ connectionString: url });
await admin.connect();
// The CPU bookkeeping's own connection: the wait sampler keeps `admin` busy during a leg.
const stats = new pg.Client({ connectionString: url });
await stats.connect();
const round2 = (x: number) => Math.round(x * 100) / 100;
try {
  const ports: number[] = [];
  const pids: number[] = [];
  const legs: {
    processes: number;
    round: number;
    numbering: 'on' | 'off';
    rps: number;
    p99: number;
    errors: number;
    waits: Record<string, number>;
    cpu: Record<string, number>;
  }[] = [];
  for (const n of PROCESSES) {
    while (ports.length < n) {
      const api = await start('api', env);
      children.push(api.child);
      ports.push(api.port);
      pids.push(api.child.pid!);
    }
    // Warm-up, not recorded: a fresh process's first seconds (JIT, pool connections) would count
    // against whichever side runs first.
    await numbering(admin, true);
    await orderLoad(ports.slice(0, n), token, SKUS, Number(args['warm-up']));
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which side goes first, so a drift in the machine's load favours neither.
      for (const on of round % 2 ? [true, false] : [false, true]) {
        await numbering(admin, on);
        log(`${n} API process(es), round ${round}, numbering ${on ? 'on' : 'off'}…`);
        const {
          result: { result, waits },
          apiCpuMs,
          pgCpuMs,
        } = await measureCpu(stats, APP, pids, () => sampleWaits(admin, APP, orderLoad(ports.slice(0, n), token, SKUS)));
        const cpu = { apiMsPerOrder: round2(apiCpuMs / result.orders), pgMsPerOrder: round2(pgCpuMs / result.orders) };
        legs.push({ processes: n, round, numbering: on ? 'on' : 'off', ...result, waits, cpu });
        log(
          `  ${result.rps} orders/s, p99 ${result.p99} ms, ${result.errors} errors; CPU per order ${JSON.stringify(cpu)}; backends waiting: ${JSON.stringify(waits)}`,
        );
      }
    }
  }
  await numbering(admin, true);

  const hot = await store.db
    .selectFrom('stocks')
    .innerJoin('products', 'products.id', 'stocks.product_id')
    .select(['stocks.product_id', 'stocks.warehouse_id'])
    .where('products.sku', '<=', benchSku(50))
    .execute();
  const probe: { round: number; numbering: 'on' | 'off'; commitsPerSecond: number; p50ms: number; p99ms: number }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const on of round % 2 ? [true, false] : [false, true]) {
      await numbering(admin, on);
      const r = await commitProbe(url, hot, Number(args['probe-seconds']));
      probe.push({ round, numbering: on ? 'on' : 'off', ...r });
      log(`commit probe, numbering ${on ? 'on' : 'off'}: ${JSON.stringify(r)}`);
    }
  }
  await numbering(admin, true);

  // Refund 300 of the orders through the API processes while two workers decide them.
  const w1 = await start('worker', env);
  const w2 = await start('worker', env);
  children.push(w1.child, w2.child);
  const orders = await store.db.selectFrom('orders').select('id').orderBy('id').limit(300).execute();
  const answers = await Promise.all(
    orders.map((o, i) =>
      fetch(`http://127.0.0.1:${ports[i % ports.length]}/openapi/v2/order/orders/${o.id}/refund`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      }).then((r) => r.status),
    ),
  );
  // How the refund requests were answered: a refund refused here is never decided below.
  const refundRequests: Record<number, number> = {};
  for (const status of answers) refundRequests[status] = (refundRequests[status] ?? 0) + 1;
  for (let i = 0; i < 120; i++) {
    const pending = await store.db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending_review')
      .executeTakeFirstOrThrow();
    if (Number(pending.n) === 0) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const refunds = await store.db
    .selectFrom('refunds')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  const returnsPerRefund = await sql<{
    n: number;
  }>`select count(*) as n from (select refund_id from stock_ledger where refund_id is not null group by refund_id, product_id, warehouse_id having count(*) > 1) d`.execute(
    store.db,
  );
  const negative = await store.db.selectFrom('stocks').select('qty').where('qty', '<', 0).execute();
  const mismatches = await ledgerMismatches(store.db);
  const summary = {
    createOrder: summarise(legs),
    commitProbe: probe,
    refundRequests,
    refunds: Object.fromEntries(refunds.map((r) => [r.status, Number(r.n)])),
    doubleDecidedReturns: Number(returnsPerRefund.rows[0].n),
    negativeStockRows: negative.length,
    ledgerMismatches: mismatches.length,
  };
  process.stdout.write(`${JSON.stringify({ ...summary, legs }, null, 2)}\n`);
  if (summary.negativeStockRows || summary.ledgerMismatches || summary.doubleDecidedReturns) process.exitCode = 1;
} finally {
  for (const c of children) c.kill('SIGTERM');
  await admin.end();
  await stats.end();
  await store.db.schema
    .dropSchema(schema)
    .cascade()
    .execute()
    .catch(() => undefined);
  await store.close();
}
