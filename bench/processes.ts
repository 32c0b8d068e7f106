/**
 * `node --import tsx bench/processes.ts [--db sqlite|postgres] [--processes 1,2] [--duration 8] [--rounds 2] [--connections 16]`
 *
 * Issue 43 item 4: `serve --processes N` on one machine. One database (SQLite in WAL mode, or a
 * fresh PostgreSQL schema), the built server started as `serve --processes N` for each N, in
 * alternating order round by round (1,2 then 2,1), the load generator (autocannon, in this process)
 * beside it on the same cores. Per leg: stock by 30 SKUs, then create order (two lines, one of them
 * in a fixed warehouse), each for `--duration` seconds; throughput, p50/p99 and the CPU the whole
 * group used per request (primary and processes, from /proc). Prints one table and writes nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { freshStore } from './fresh-store.ts';
import { childrenOf, cpuMs } from './proc-stats.ts';
import { benchSku, generate } from './generate.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    processes: { type: 'string', default: '1,2' },
    duration: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16' },
    skus: { type: 'string', default: '5000' },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const COUNTS = args.processes!.split(',').map(Number);
const DURATION = Number(args.duration);
const SKUS = Number(args.skus);
const log = (s: string) => process.stderr.write(`${s}\n`);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

async function start(processes: number, env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--max-semi-space-size=4', 'bin/stockist.js', 'serve', '--processes', String(processes), '--port', String(port)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const on = (d: Buffer) => {
      out += d;
      if (/Stop: Ctrl-C/.test(out)) resolve();
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return { child, port };
}

interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  cpuUsPerRequest: number;
}

async function load(pid: number, port: number, token: string, kind: 'stock' | 'order'): Promise<Result> {
  const group = [pid, ...childrenOf(pid)];
  const before = group.map(cpuMs);
  const rand = (n: number) => Math.floor(Math.random() * n);
  const skus30 = () => Array.from({ length: 30 }, () => benchSku(1 + rand(SKUS))).join(',');
  const r = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: Number(args.connections),
    duration: DURATION,
    requests: [
      kind === 'stock'
        ? {
            method: 'GET',
            headers: { authorization: `Bearer ${token}` },
            setupRequest: (req) => ({ ...req, path: `/openapi/v1/product/stocks?skus=${skus30()}` }),
          }
        : {
            method: 'POST',
            path: '/openapi/v1/order/orders',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify({
                orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'BE' },
                orderItemsList: [
                  { sku: benchSku(1 + rand(50)), quantity: 1 },
                  { sku: benchSku(1 + rand(SKUS)), quantity: 1, warehouseCode: 'US01' },
                ],
              }),
            }),
          },
    ],
  });
  const used = group.reduce((s, p, i) => s + cpuMs(p) - before[i], 0);
  const requests = r.requests.total;
  return {
    rps: Math.round(r.requests.average),
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.non2xx,
    cpuUsPerRequest: Math.round((used * 1000) / Math.max(1, requests)),
  };
}

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stockist-processes-'));
const { url, store, cleanup } = await freshStore({ openStore, migrateToLatest }, args.db!, PG_URL, 'procs');
const { token } = await generate(store, { skus: SKUS, orders: 1000 });
await store.close();
const env = {
  DATABASE_URL: url,
  DATA_DIR: dataDir,
  TLS: 'off',
  LOG_LEVEL: 'warn',
  STOCKIST_ENV: 'sandbox',
  SEED: 'none',
  ADMIN_API_KEY: 'bench-processes-admin-key-0123',
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '1000000',
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
};
log(`${args.db}, ${SKUS} SKUs, ${os.availableParallelism()} cores, ${args.connections} connections, ${DURATION} s per leg`);
const rows: { round: number; processes: number; kind: string; result: Result }[] = [];
for (let round = 0; round < Number(args.rounds); round++) {
  const order = round % 2 === 0 ? COUNTS : [...COUNTS].reverse();
  for (const n of order) {
    const server = await start(n, env);
    await load(server.child.pid!, server.port, token, 'stock').catch(() => undefined); // warm-up leg, not counted
    for (const kind of ['stock', 'order'] as const) {
      const result = await load(server.child.pid!, server.port, token, kind);
      rows.push({ round, processes: n, kind, result });
      log(
        `round ${round + 1} --processes ${n} ${kind}: ${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.cpuUsPerRequest} µs CPU/request, errors ${result.errors}`,
      );
    }
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
  }
}
await cleanup();
rmSync(dataDir, { recursive: true, force: true });

const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);
process.stdout.write('| scenario | processes | req/s | p50 ms | p99 ms | CPU µs/request (group) | errors |\n|---|---|---|---|---|---|---|\n');
for (const kind of ['stock', 'order']) {
  for (const n of COUNTS) {
    const legs = rows.filter((r) => r.kind === kind && r.processes === n).map((r) => r.result);
    process.stdout.write(
      `| ${kind === 'stock' ? 'stock by 30 SKUs' : 'create order'} | ${n} | ${mean(legs.map((l) => l.rps))} | ${mean(legs.map((l) => l.p50))} | ${mean(legs.map((l) => l.p99))} | ${mean(legs.map((l) => l.cpuUsPerRequest))} | ${legs.reduce((s, l) => s + l.errors, 0)} |\n`,
    );
  }
}
