/**
 * `node --import tsx bench/statement-stall.ts [--db sqlite|postgres] [--lines 73000] [--pdfs 3] [--legs 6] [--loops 2]`
 *
 * Issue 41, item 1: does a statement PDF stall other merchants? A real server (the built command,
 * bin/stockist.js, in a child process) with `--pdfs` merchants whose month holds `--lines`
 * transactions each, and another merchant whose `GET /openapi/v1/account` is asked by `--loops`
 * back-to-back clients. Legs alternate: quiet (the account requests alone) and busy (the same,
 * while each busy merchant downloads its statement PDF, all at once); a busy leg lasts until the
 * PDFs have all arrived, a quiet leg as long as the busy leg before it (the first, 5 s). Prints
 * p50/p99 of the account requests per kind of leg, the PDFs' time and size, and the server's
 * peak RSS (VmRSS sampled every 100 ms). Target (issue 41): busy p99 within 2× quiet p99.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { freshStore } from './fresh-store.ts';
import { fillStatement, generate } from './generate.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    lines: { type: 'string', default: '73000' },
    pdfs: { type: 'string', default: '3' },
    legs: { type: 'string', default: '6' },
    loops: { type: 'string', default: '2' },
  },
});
const ROOT = path.resolve(import.meta.dirname, '..');
const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_KEY = 'bench-admin-key-0123456789';
const PASSWORD = 'bench statement passphrase';
const LINES = Number(args.lines);
const PDFS = Number(args.pdfs);
const LEGS = Number(args.legs);
const LOOPS = Number(args.loops);
const log = (s: string) => process.stderr.write(`${s}\n`);

function vmRssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

const build = spawnSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs'), '--if-stale'], { cwd: ROOT, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

// The data: a small catalogue and the asking merchant (generate), then the busy merchants' months.
const started = Date.now();
const { url, store, cleanup } = await freshStore({ openStore, migrateToLatest }, args.db!, PG_URL, 'stall');
const asking = await generate(store, { skus: 50, orders: 100 });

const server = spawn(process.execPath, ['--max-semi-space-size=4', 'bin/stockist.js', 'serve', '--port', '0'], {
  cwd: ROOT,
  env: {
    ...process.env,
    DATABASE_URL: url,
    TLS: 'off',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    STOCKIST_ENV: 'sandbox',
    SEED: 'none',
    DATA_DIR: path.join(os.tmpdir(), 'stockist-stall-data'),
    ADMIN_API_KEY: ADMIN_KEY,
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
const port = await new Promise<number>((resolve, reject) => {
  let out = '';
  const onData = (d: Buffer) => {
    out += d;
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (m) resolve(Number(m[1]));
  };
  server.stdout!.on('data', onData);
  server.stderr!.on('data', onData);
  server.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
});
const origin = `http://127.0.0.1:${port}`;
// The server's warnings and errors from here on, as they come.
server.stdout!.on('data', (d: Buffer) => process.stderr.write(`server: ${d}`));
server.stderr!.on('data', (d: Buffer) => process.stderr.write(`server: ${d}`));

const month = new Date().toISOString().slice(0, 7);
const monthStart = Date.parse(`${month}-01T00:00:00Z`);
const viewers: string[] = [];
for (let i = 0; i < PDFS; i++) {
  const admin = (p: string, body: unknown) =>
    fetch(`${origin}${p}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { data: Record<string, string> } }));
  const m = await admin('/admin/v1/merchants', { name: `Busy ${i + 1}` });
  if (m.status !== 200) throw new Error(`merchant: ${m.status} ${JSON.stringify(m.body)}`);
  const merchantId = m.body.data.merchantId;
  await fillStatement(store, Number(merchantId), LINES, monthStart, Math.max(monthStart + 1, Date.now() - 1000));
  const invitation = await admin(`/admin/v1/merchants/${merchantId}/users`, { email: `viewer-${i}@bench.example`, role: 'viewer' });
  const accept = await fetch(`${origin}${new URL(invitation.body.data.invitationUrl).pathname}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _formKey: randomBytes(18).toString('base64url'), password: PASSWORD, confirm: PASSWORD }).toString(),
  });
  const cookie = (accept.headers.get('set-cookie') ?? '').split(';')[0];
  if (accept.status !== 303 || !cookie) throw new Error(`invitation: ${accept.status}`);
  viewers.push(cookie);
}
await store.close();
log(`data: ${PDFS} merchants × ${LINES} transactions in ${month} on ${args.db}, in ${((Date.now() - started) / 1000).toFixed(1)} s`);

/** Back-to-back account requests on `LOOPS` clients until `until` settles; the latencies, ms. */
async function accountLoad(until: Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  await Promise.all(
    Array.from({ length: LOOPS }, async () => {
      while (!done) {
        const t0 = process.hrtime.bigint();
        const r = await fetch(`${origin}/openapi/v1/account`, { headers: { authorization: `Bearer ${asking.token}` } });
        await r.arrayBuffer();
        if (r.status !== 200) throw new Error(`account: ${r.status}`);
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  return latencies;
}

async function statementPdf(cookie: string): Promise<{ ms: number; bytes: number }> {
  const t0 = process.hrtime.bigint();
  const r = await fetch(`${origin}/manager/balance/statement?month=${month}&format=pdf`, { headers: { cookie } });
  if (r.status !== 200) throw new Error(`statement: ${r.status} ${await r.text()}`);
  const bytes = (await r.arrayBuffer()).byteLength;
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, bytes };
}

interface Leg {
  kind: 'quiet' | 'busy';
  latencies: number[];
  ms: number;
  peakRssMb: number;
  pdfs: { ms: number; bytes: number }[];
}
const legs: Leg[] = [];
// Warm-up: the routes compiled, the connections open, a PDF thread started once.
await accountLoad(new Promise((resolve) => setTimeout(resolve, 1000)));
await statementPdf(viewers[0]);
let quietMs = 5000;
for (let i = 0; i < LEGS; i++) {
  const kind = i % 2 === 0 ? 'quiet' : 'busy';
  let peak = vmRssMb(server.pid!);
  const sampler = setInterval(() => (peak = Math.max(peak, vmRssMb(server.pid!))), 100);
  const t0 = Date.now();
  const pdfs = kind === 'busy' ? Promise.all(viewers.map(statementPdf)) : new Promise<[]>((resolve) => setTimeout(() => resolve([]), quietMs));
  const latencies = await accountLoad(pdfs);
  const ms = Date.now() - t0;
  clearInterval(sampler);
  if (kind === 'busy') quietMs = ms;
  legs.push({ kind, latencies, ms, peakRssMb: Math.max(peak, vmRssMb(server.pid!)), pdfs: await pdfs });
  const sorted = [...latencies].sort((a, b) => a - b);
  log(
    `  leg ${i + 1} ${kind}: ${latencies.length} account requests in ${ms} ms, p50 ${q(sorted, 0.5)} ms, p99 ${q(sorted, 0.99)} ms, peak RSS ${legs.at(-1)!.peakRssMb} MB`,
  );
}
server.kill('SIGTERM');
await new Promise((resolve) => server.once('exit', resolve));
await cleanup();

function q(sorted: number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] * 10) / 10;
}
const summary = (kind: Leg['kind']) => {
  const of = legs.filter((l) => l.kind === kind);
  const all = of.flatMap((l) => l.latencies).sort((a, b) => a - b);
  return { requests: all.length, p50: q(all, 0.5), p99: q(all, 0.99), max: q(all, 1), rss: Math.max(...of.map((l) => l.peakRssMb)) };
};
const quiet = summary('quiet');
const busy = summary('busy');
const pdfs = legs.flatMap((l) => l.pdfs);
const pdfMs = pdfs.map((p) => p.ms).sort((a, b) => a - b);
process.stdout.write(
  [
    `statement stall (${args.db}): ${PDFS} PDFs of ${LINES} lines at once, ${LOOPS} account clients, ${LEGS} alternated legs, ${os.availableParallelism()} cores`,
    '',
    '| legs | account requests | p50 ms | p99 ms | max ms | server peak RSS MB |',
    '|---|---|---|---|---|---|',
    `| quiet | ${quiet.requests} | ${quiet.p50} | ${quiet.p99} | ${quiet.max} | ${quiet.rss} |`,
    `| busy (${PDFS} PDFs) | ${busy.requests} | ${busy.p50} | ${busy.p99} | ${busy.max} | ${busy.rss} |`,
    '',
    `busy/quiet p99: ${(busy.p99 / quiet.p99).toFixed(2)}× (target ≤ 2×); PDF ${(pdfs[0]?.bytes / 1e6).toFixed(1)} MB each, ${pdfs.length} made in ${Math.round(pdfMs[0])}–${Math.round(pdfMs.at(-1)!)} ms`,
    '',
  ].join('\n'),
);
