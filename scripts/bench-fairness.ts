/**
 * CPU fairness between merchants (SPEC §2.4: one merchant sending large-but-valid bodies at its rate
 * limit must not raise another merchant's p99 latency more than 3×). Not a test — the numbers
 * depend on the machine — but the measurement docs/security.md ("Abuse") reports:
 *
 *   node --import tsx scripts/bench-fairness.ts [--seconds 5] [--rounds 12] [--attack all|junk,dense-order,dense-webhook,webhook,order] [--no-budget] [--root DIR]
 *
 * One real server process (`stockist serve`, TLS off, SQLite, demo data, default limits). A victim
 * merchant reads stock (`GET /openapi/v1/product/stocks?skus=` five SKUs) at a steady 15 requests
 * a second (under its 20/s limit), open loop, so a stall shows in its latencies rather than
 * slowing its clock. Rounds alternate the victim alone (idle) with the victim beside an attacker
 * merchant sending, at its own rate limit of 20 requests a second, the heaviest body of one kind —
 * many short rounds rather than a few long ones, so that whatever else the machine is doing falls on
 * every condition alike:
 *
 * - `junk`: the reported attack — 1 MiB of `{}` in an unknown field of an order;
 * - `dense-order`: the heaviest body the order route still parses — just under 128 KiB and 4,096 values;
 * - `dense-webhook`: the same for webhook registrations — just under 1 MiB and 16,384 values;
 * - `webhook`: the heaviest legitimate body — `PUT /v1/webhooks/{id}` with 10,000 SKUs of 64 characters;
 * - `order` (only when named): a 100-line order (6 KB) — heavy in work (100 stock rows), not in bytes.
 *
 * Printed: the attacker's answers by status, the victim's p50/p99 idle and attacked, and the ratio
 * of the p99s. `--no-budget` turns the body budget off (RATE_LIMIT_BODY_BYTES_PER_SECOND=0) to show
 * what the body limits do alone; `--root DIR` serves another checkout's sources (an earlier commit,
 * e.g. `git archive <commit> bin src package.json | tar -x -C DIR`) with this machine's node_modules
 * reachable from DIR, to compare before and after.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { BODY_LIMITS, jsonShapeProblem } from '../src/http/limits.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const MODES = ['junk', 'dense-order', 'dense-webhook', 'webhook', 'order'] as const;
type Mode = (typeof MODES)[number];
/** `all`: the body attacks. `order` is work, not bulk, and is run only when asked for (docs/security.md "Abuse", open). */
const BODY_MODES: Mode[] = ['junk', 'dense-order', 'dense-webhook', 'webhook'];
const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '12' },
    attack: { type: 'string', default: 'all' },
    'no-budget': { type: 'boolean', default: false },
    root: { type: 'string', default: ROOT },
  },
});
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const modes: Mode[] = args.attack === 'all' ? BODY_MODES : ((args.attack ?? '').split(',') as Mode[]);
if (!modes.every((m) => MODES.includes(m))) throw new Error(`--attack: one of all, ${MODES.join(', ')}`);
const ADMIN_KEY = 'bench-fairness-admin-key';
const VICTIM_RATE = 15;
const ATTACK_RATE = 20;
const log = (s: string) => process.stderr.write(`${s}\n`);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-fairness-'));
const child = spawn(process.execPath, ['bin/stockist.js', 'serve', '--port', '0', '--seed', 'demo'], {
  cwd: path.resolve(args.root),
  env: {
    ...process.env,
    STOCKIST_SOURCES: '1',
    TLS: 'off',
    DATA_DIR: dataDir,
    ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    REDIS_URL: '',
    DATABASE_URL: '',
    ...(args['no-budget'] ? { RATE_LIMIT_BODY_BYTES_PER_SECOND: '0' } : {}),
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
const port = await new Promise<number>((resolve, reject) => {
  let out = '';
  const on = (d: Buffer) => {
    out += d;
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (m) resolve(Number(m[1]));
  };
  child.stdout.on('data', on);
  child.stderr.on('data', on);
  child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
});
const stop = () => {
  child.kill('SIGTERM');
  fs.rmSync(dataDir, { recursive: true, force: true });
};
process.on('exit', stop);

const agents = {
  victim: new http.Agent({ keepAlive: true, maxSockets: 8 }),
  attacker: new http.Agent({ keepAlive: true, maxSockets: 64 }),
  setup: new http.Agent({ keepAlive: true }),
};

function call(agent: http.Agent, method: string, url: string, authorization: string, body?: Buffer): Promise<{ status: number; ms: number; text: string }> {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: url,
        agent,
        headers: { authorization, ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - started) / 1e6, text: Buffer.concat(chunks).toString() }),
        );
      },
    );
    // A refused body may be cut off before it is all sent: recorded as status 0, not a failure of the run.
    req.on('error', (error) => resolve({ status: 0, ms: Number(process.hrtime.bigint() - started) / 1e6, text: String(error) }));
    req.end(body);
  });
}

async function admin(method: string, url: string, body: unknown) {
  const r = await call(agents.setup, method, url, `Bearer ${ADMIN_KEY}`, Buffer.from(JSON.stringify(body)));
  if (r.status !== 200) throw new Error(`${method} ${url}: ${r.status} ${r.text}`);
  return JSON.parse(r.text).data;
}
async function merchantToken(name: string): Promise<string> {
  const m = await admin('POST', '/admin/v1/merchants', { name });
  return `Bearer ${(await admin('POST', `/admin/v1/merchants/${m.merchantId}/tokens`, {})).accessToken}`;
}
const victim = await merchantToken('Victim');
const attacker = await merchantToken('Attacker');
const hook = await call(
  agents.setup,
  'POST',
  '/openapi/v1/webhooks',
  attacker,
  Buffer.from(JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['stock.changed'] })),
);
const hookId = JSON.parse(hook.text).data.id as string;

/**
 * About `bytes` of JSON: as many empty objects in an unknown field as `maxValues` lets through (all
 * of them without one), the rest one long string beside them — the most parsing a route still does.
 */
function bulk(bytes: number, maxValues: number | null, known: Record<string, unknown>): Buffer {
  const text = (objects: number) => {
    const head = `${JSON.stringify(known).slice(0, -1)},"junk":[${Array(objects).fill('{}').join(',')}],"pad":"`;
    return `${head}${'x'.repeat(Math.max(0, bytes - head.length - 2))}"}`;
  };
  if (maxValues === null) return Buffer.from(text(Math.floor(bytes / 3) - 20));
  let objects = Math.floor(maxValues / 2);
  while (jsonShapeProblem(text(objects), 32, maxValues) !== null) objects--;
  return Buffer.from(text(objects));
}
const KiB = 1024;
// The order route's heaviest work: 100 lines, each a stock row to lock and decrement (stock topped up so none runs out).
const ORDER_SKUS = Array.from({ length: 100 }, (_, i) => `DEMO-${String(i + 1).padStart(4, '0')}`);
await admin('POST', '/admin/v1/import', { stocks: ORDER_SKUS.map((sku) => ({ sku, warehouseCode: 'G007', qty: 1_000_000_000 })) });
const largestOrder = {
  orderAddress: { country: 'US', phone: '5550100', recipient: 'Bench Buyer', province: 'CA', street1: '1 Main St', city: 'Los Angeles', zip: '90001' },
  orderItemsList: ORDER_SKUS.map((sku) => ({ sku, quantity: 1, warehouseCode: 'G007' })),
};
const skuList = Array.from({ length: 10_000 }, (_, i) => `S-${String(i).padStart(62, '0')}`);
const attacks: Record<Mode, { method: string; url: string; body: Buffer }> = {
  junk: { method: 'POST', url: '/openapi/v1/order/orders', body: bulk(1023 * KiB, null, { orderItemsList: [{ sku: 'DEMO-0001', quantity: 1 }] }) },
  'dense-order': {
    method: 'POST',
    url: '/openapi/v1/order/orders',
    body: bulk(BODY_LIMITS.merchant.bytes - 512, BODY_LIMITS.merchant.values, { orderItemsList: [] }),
  },
  order: { method: 'POST', url: '/openapi/v1/order/orders', body: Buffer.from(JSON.stringify(largestOrder)) },
  'dense-webhook': {
    method: 'POST',
    url: '/openapi/v1/webhooks',
    body: bulk(BODY_LIMITS.bulk.bytes - 512, BODY_LIMITS.bulk.values, { url: 'http://127.0.0.1:9/hook', events: [] }),
  },
  webhook: {
    method: 'PUT',
    url: `/openapi/v1/webhooks/${hookId}`,
    body: Buffer.from(JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['stock.changed'], skus: skuList }, null, 2)),
  },
};
const STOCK_URL = `/openapi/v1/product/stocks?skus=${[1, 2, 3, 4, 5].map((i) => `DEMO-${String(i).padStart(4, '0')}`).join(',')}`;

/**
 * The attacker, in a thread of its own: its 20 MB a second of uploads must not slow the victim's
 * client (whose own event loop would otherwise add to the latencies it measures).
 */
const ATTACKER = `
const { workerData, parentPort } = require('node:worker_threads');
const http = require('node:http');
const { port, method, url, authorization, body, rate, seconds } = workerData;
const payload = Buffer.from(body);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const statuses = {};
const send = () => new Promise((resolve) => {
  const req = http.request({ host: '127.0.0.1', port, method, path: url, agent, headers: { authorization, 'content-type': 'application/json', 'content-length': payload.length } }, (res) => {
    res.resume();
    res.on('end', () => resolve(res.statusCode));
  });
  req.on('error', () => resolve(0));
  req.end(payload);
});
(async () => {
  const pending = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(send().then((s) => { statuses[s] = (statuses[s] ?? 0) + 1; }));
  }
  await Promise.all(pending);
  agent.destroy();
  parentPort.postMessage(statuses);
})();
`;
function attack(mode: Mode): Promise<Record<number, number>> {
  const { method, url, body } = attacks[mode];
  const worker = new Worker(ATTACKER, { eval: true, workerData: { port, method, url, authorization: attacker, body, rate: ATTACK_RATE, seconds: SECONDS } });
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

/** Fires `send` every 1000/rate ms for `seconds`, whether or not earlier calls have answered (open loop). */
async function steady<T>(rate: number, seconds: number, send: () => Promise<T>): Promise<T[]> {
  const pending: Promise<T>[] = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(send());
  }
  return Promise.all(pending);
}

/** The server process's CPU time so far (Linux /proc; elsewhere NaN), to tell its own cost from the machine's noise. */
function serverCpuMs(): number {
  try {
    const fields = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 1/100 s
  } catch {
    return Number.NaN;
  }
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
const samples: Record<string, number[]> = { idle: [] };
const answers: Record<string, Record<number, number>> = {};
const cpuMs: Record<string, number> = { idle: 0 };
for (const mode of modes) {
  samples[mode] = [];
  answers[mode] = {};
  cpuMs[mode] = 0;
}

// Warm up: compile the routes' validators and serializers, fill caches.
await steady(VICTIM_RATE, 2, () => call(agents.victim, 'GET', STOCK_URL, victim));
for (let round = 1; round <= ROUNDS; round++) {
  let cpu = serverCpuMs();
  const idle = await steady(VICTIM_RATE, SECONDS, () => call(agents.victim, 'GET', STOCK_URL, victim));
  cpuMs.idle += serverCpuMs() - cpu;
  samples.idle.push(...idle.filter((r) => r.status === 200).map((r) => r.ms));
  log(
    `round ${round}: idle p99 ${quantile(
      [...idle.map((r) => r.ms)].sort((a, b) => a - b),
      0.99,
    ).toFixed(1)} ms`,
  );
  for (const mode of modes) {
    cpu = serverCpuMs();
    const [seen, hits] = await Promise.all([steady(VICTIM_RATE, SECONDS, () => call(agents.victim, 'GET', STOCK_URL, victim)), attack(mode)]);
    cpuMs[mode] += serverCpuMs() - cpu;
    samples[mode].push(...seen.filter((r) => r.status === 200).map((r) => r.ms));
    for (const [status, n] of Object.entries(hits)) answers[mode][Number(status)] = (answers[mode][Number(status)] ?? 0) + n;
    const refused = seen.filter((r) => r.status !== 200).length;
    log(
      `round ${round}: ${mode} p99 ${quantile(
        [...seen.map((r) => r.ms)].sort((a, b) => a - b),
        0.99,
      ).toFixed(1)} ms${refused ? ` (${refused} victim requests not 200)` : ''}`,
    );
  }
}

const summary = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return { n: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
};
const idle = summary(samples.idle);
const cpuShare = (condition: string) => `${((cpuMs[condition] / (ROUNDS * SECONDS * 1000)) * 100).toFixed(1)}%`;
const rows = [`| victim beside | attacker's answers | server CPU | victim n | p50 ms | p99 ms | p99 / idle p99 |`, '|---|---|---|---|---|---|---|'];
rows.push(`| nobody (idle) | — | ${cpuShare('idle')} | ${idle.n} | ${idle.p50.toFixed(1)} | ${idle.p99.toFixed(1)} | 1.00 |`);
for (const mode of modes) {
  const s = summary(samples[mode]);
  const statuses = Object.entries(answers[mode])
    .map(([status, n]) => `${n}× ${status}`)
    .join(', ');
  rows.push(
    `| ${mode} (${(attacks[mode].body.length / KiB).toFixed(0)} KiB, ${attacks[mode].method} ${attacks[mode].url.replace(/\/\d+$/, '/{id}')}) | ${statuses} | ${cpuShare(mode)} | ${s.n} | ${s.p50.toFixed(1)} | ${s.p99.toFixed(1)} | ${(s.p99 / idle.p99).toFixed(2)} |`,
  );
}
console.log(
  `${path.resolve(args.root) === ROOT ? '' : `server from ${args.root}; `}${ROUNDS} rounds of ${SECONDS} s per condition; victim ${VICTIM_RATE}/s, attacker ${ATTACK_RATE}/s; body budget ${args['no-budget'] ? 'off' : 'on (default)'}; ${os.cpus().length} CPUs, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(rows.join('\n'));
for (const agent of Object.values(agents)) agent.destroy();
stop();
process.exit(0);
