/**
 * `npm run bench:soak [-- --minutes 30] [-- --rate 60] [-- --db postgres] [-- --settle 5]`
 *
 * The memory soak (docs/performance.md, "Memory on Node 24"): one server (`serve --role all`, so
 * the job loops and the webhook worker run too, with the installed command's Node flags) under a
 * steady mixed load at a fixed rate — stock by 30 SKUs, order creation, orders by id, and the
 * operator console's pages for a signed-in owner — for `--minutes`, its VmRSS sampled every 10 s.
 * The report is RSS growth after the first `--settle` minutes (the JIT, caches and pools filling):
 * the mean of the last minute's samples against the sample at minute `settle`, and the largest
 * sample after it. A fixed rate, not the most the server can take: the soak asks whether memory
 * stays flat under ordinary use, and leaves the shared machine's cores to others.
 * Results: bench/results/runs/<time>-soak-<db>.{json,md}.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { createStaff } from '../src/services/staff.service.ts';
import { ORDER_ID_START } from '../src/store/migrations/0004_orders.ts';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { freshStore } from './fresh-store.ts';
import { benchSku, generate } from './generate.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    settle: { type: 'string', default: '5' },
    rate: { type: 'string', default: '60' },
    db: { type: 'string', default: 'sqlite' },
    skus: { type: 'string', default: '20000' },
    orders: { type: 'string', default: '10000' },
  },
});
const MINUTES = Number(args.minutes);
const SETTLE = Math.min(Number(args.settle), MINUTES / 2);
const RATE = Number(args.rate);
const SKUS = Number(args.skus);
const ORDERS = Number(args.orders);
const SAMPLE_MS = 10_000;
const PG_URL = process.env.TEST_DATABASE_URL || process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const PASSWORD = 'bench soak passphrase';
const log = (s: string) => process.stderr.write(`${s}\n`);
const rand = (n: number) => Math.floor(Math.random() * n);

/** The Node flags the installed command runs with: those of bin/stockist.js's first line (as bench/run.ts). */
const LAUNCH_FLAGS = fs
  .readFileSync(path.join(ROOT, 'bin/stockist.js'), 'utf8')
  .split('\n')[0]
  .split(' ')
  .filter((flag) => flag.startsWith('--'));

function status(pid: number): { rssMb: number; anonMb: number; fileMb: number } {
  const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const mb = (field: string) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? Number.NaN) / 102.4) / 10;
  return { rssMb: mb('VmRSS'), anonMb: mb('RssAnon'), fileMb: mb('RssFile') };
}

async function startServer(databaseUrl: string, dataDir: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...LAUNCH_FLAGS, 'bin/stockist.js', 'serve', '--role', 'all', '--port', '0'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      TLS: 'off',
      LOG_LEVEL: 'warn',
      STOCKIST_ENV: 'sandbox',
      SEED: 'none',
      DATA_DIR: dataDir,
      ADMIN_API_KEY: 'bench-admin-key-0123456789',
      RATE_LIMIT_PER_SECOND: '1000000',
      RATE_LIMIT_BURST: '1000000',
      RATE_LIMIT_BODY_BYTES_PER_SECOND: '0',
      DEFAULT_WAREHOUSE: 'G007',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`the server exited ${code}: ${out}`)));
  });
}

async function signIn(origin: string): Promise<string> {
  const r = await fetch(`${origin}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: 'soak-owner@example.com', password: PASSWORD }).toString(),
  });
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0];
  if (r.status !== 303 || !cookie) throw new Error(`console sign-in failed: ${r.status}`);
  return cookie;
}

interface Sample {
  second: number;
  rssMb: number;
  anonMb: number;
  fileMb: number;
}

async function main() {
  const started = Date.now();
  const { url, store, cleanup } = await freshStore({ openStore, migrateToLatest }, args.db!, PG_URL, 'soak');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-soak-'));
  let server: { child: ChildProcess; port: number } | null = null;
  try {
    const { token } = await generate(store, { skus: SKUS, orders: ORDERS, ledgerRows: SKUS * 3 });
    await createStaff(
      store.db,
      { kind: 'cli', id: 'soak', requestId: null },
      { email: 'soak-owner@example.com', role: 'owner', password: PASSWORD },
      Date.now(),
    );
    await store.close();
    log(`data: ${SKUS} SKUs × 3 warehouses, ${ORDERS} orders on ${args.db} in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    server = await startServer(url, dataDir);
    const pid = server.child.pid!;
    const origin = `http://127.0.0.1:${server.port}`;
    const cookie = await signIn(origin);
    const consolePages = [
      '/console',
      '/console/orders',
      `/console/orders/${ORDER_ID_START + 1 + rand(ORDERS)}`,
      '/console/products',
      '/console/audit',
      '/console/merchants',
    ];
    const bearer = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    let seq = 0;
    /** One request of the mix: 4 in 10 stock by 30 SKUs, 3 order creations, 2 orders by id, 1 console page. */
    const next = (): { method: 'GET' | 'POST'; path: string; headers: Record<string, string>; body?: string } => {
      const slot = seq++ % 10;
      if (slot < 4)
        return {
          method: 'GET',
          path: `/openapi/v1/product/stocks?skus=${Array.from({ length: 30 }, () => benchSku(rand(SKUS) + 1)).join(',')}`,
          headers: bearer,
        };
      if (slot < 7)
        return {
          method: 'POST',
          path: '/openapi/v1/order/orders',
          headers: { ...bearer, 'idempotency-key': `soak-${process.pid}-${seq}` },
          body: JSON.stringify({
            orderAddress: { country: 'DE', phone: '1', recipient: 'Soak', province: 'BE' },
            orderItemsList: [{ sku: benchSku(rand(SKUS) + 1), quantity: 1 }],
          }),
        };
      if (slot < 9)
        return {
          method: 'GET',
          path: `/openapi/v2/order/orders?ids=${Array.from({ length: 10 }, () => ORDER_ID_START + 1 + rand(ORDERS)).join(',')}`,
          headers: bearer,
        };
      return { method: 'GET', path: consolePages[seq % consolePages.length], headers: { cookie } };
    };

    const samples: Sample[] = [];
    const t0 = Date.now();
    const sample = () => {
      const s = { second: Math.round((Date.now() - t0) / 1000), ...status(pid) };
      samples.push(s);
      log(`  ${String(s.second).padStart(5)} s  RSS ${s.rssMb} MB (anon ${s.anonMb}, file ${s.fileMb})`);
    };
    sample();
    const timer = setInterval(sample, SAMPLE_MS);
    const statuses = new Map<number, number>();
    const result = await (autocannon({
      url: origin,
      connections: 4,
      overallRate: RATE,
      duration: MINUTES * 60,
      requests: [{ setupRequest: (req) => ({ ...req, ...next() }), onResponse: (code: number) => void statuses.set(code, (statuses.get(code) ?? 0) + 1) }],
    }) as unknown as Promise<autocannon.Result>);
    clearInterval(timer);
    sample();

    const settled = samples.find((s) => s.second >= SETTLE * 60) ?? samples[0];
    const after = samples.filter((s) => s.second >= settled.second);
    const lastMinute = samples.filter((s) => s.second >= samples[samples.length - 1].second - 60);
    const mean = (xs: Sample[]) => Math.round((xs.reduce((sum, s) => sum + s.rssMb, 0) / xs.length) * 10) / 10;
    const maxAfter = Math.max(...after.map((s) => s.rssMb));
    const pct = (x: number) => Math.round((x / settled.rssMb - 1) * 1000) / 10;
    const summary = {
      db: args.db,
      minutes: MINUTES,
      settleMinutes: SETTLE,
      rate: RATE,
      requests: result.requests.total,
      statuses: Object.fromEntries(statuses),
      errors: result.errors,
      rssAtStartMb: samples[0].rssMb,
      rssAtSettleMb: settled.rssMb,
      rssLastMinuteMeanMb: mean(lastMinute),
      rssMaxAfterSettleMb: maxAfter,
      growthAfterSettlePct: pct(mean(lastMinute)),
      maxGrowthAfterSettlePct: pct(maxAfter),
      samples,
    };
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const dir = path.join(ROOT, 'bench/results/runs');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${stamp}-soak-${args.db}.json`), `${JSON.stringify(summary, null, 2)}\n`);
    const md = [
      `# Memory soak, ${args.db}: ${MINUTES} min at ${RATE} req/s (${new Date().toISOString()})`,
      '',
      `${result.requests.total} requests; statuses ${JSON.stringify(summary.statuses)}; ${result.errors} connection errors.`,
      '',
      '| RSS at start | at minute ' +
        SETTLE +
        ' | last minute (mean) | largest after minute ' +
        SETTLE +
        ' | growth after minute ' +
        SETTLE +
        ' (mean of last minute / largest) |',
      '|---:|---:|---:|---:|---:|',
      `| ${summary.rssAtStartMb} MB | ${settled.rssMb} MB | ${summary.rssLastMinuteMeanMb} MB | ${maxAfter} MB | ${summary.growthAfterSettlePct} % / ${summary.maxGrowthAfterSettlePct} % |`,
      '',
      '| second | RSS MB | anon MB | file MB |',
      '|---:|---:|---:|---:|',
      ...samples.map((s) => `| ${s.second} | ${s.rssMb} | ${s.anonMb} | ${s.fileMb} |`),
      '',
    ].join('\n');
    fs.writeFileSync(path.join(dir, `${stamp}-soak-${args.db}.md`), md);
    process.stdout.write(`${md.split('\n').slice(0, 7).join('\n')}\n`);
  } finally {
    if (server) {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server!.child.once('exit', resolve));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    await cleanup();
  }
}

await main();
