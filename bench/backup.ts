/**
 * `node --import tsx bench/backup.ts [--db sqlite|postgres] [--orders N] [--skus N] [--pairs N] [--connections N] [--keep-data]
 *  [--url URL --token TOKEN]` (issue 39, SPEC §17): on the bench database (bench/generate.ts; 100k SKUs and 1M orders by
 * default, as docs/performance.md's 1M-order runs), with the built command (`bin/stockist.js` on `dist/`):
 *
 * 1. **Alone** (the server up and idle): `stockist backup`, `stockist backup verify` and `stockist restore` into an empty
 *    target, each a process of its own; wall time, peak RSS of the command (with `pg_dump`/`pg_restore` it starts), the
 *    archive's size.
 * 2. **Under load**: create-order requests (autocannon, this process) against `stockist serve`, in alternated legs —
 *    without a backup, with one, without, with … (`--pairs`, default 3) — so both sides see the same machine. A "with"
 *    leg starts the load and `stockist backup` together and ends when the backup exits; the "without" leg before it
 *    lasts as long as the last backup took. Per leg: orders/s, p50/p99, errors, the server's and the backup's peak RSS.
 *
 * `--url`/`--token` reuse a database kept by `--keep-data` (its URL and token are logged) instead of generating one.
 * Prints a Markdown report on stdout; progress on stderr. Runs `dist/` as it is: build first (`node scripts/build.mjs --if-stale`).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { dropSchema, freshStore, withSchema } from './fresh-store.ts';
import { benchSku, generate } from './generate.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    skus: { type: 'string', default: '100000' },
    orders: { type: 'string', default: '1000000' },
    pairs: { type: 'string', default: '3' },
    connections: { type: 'string', default: '10' },
    'keep-data': { type: 'boolean', default: false },
    url: { type: 'string' },
    token: { type: 'string' },
  },
});
if (args.db !== 'sqlite' && args.db !== 'postgres') throw new Error(`--db: sqlite or postgres, not ${args.db}`);
if (Boolean(args.url) !== Boolean(args.token)) throw new Error('--url and --token go together (both are logged by a --keep-data run)');
const SKUS = Number(args.skus);
const ORDERS = Number(args.orders);
const PAIRS = Number(args.pairs);
const CONNECTIONS = Number(args.connections);
const PG_URL = process.env.TEST_DATABASE_URL || process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const storeCode = { openStore, migrateToLatest };
const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
const MB = 1024 * 1024;

/** The Node flags the installed command runs with: those of bin/stockist.js's first line. */
const LAUNCH_FLAGS = fs
  .readFileSync(path.join(ROOT, 'bin/stockist.js'), 'utf8')
  .split('\n')[0]
  .split(' ')
  .filter((flag) => flag.startsWith('--'));

/** The bench database: generated here (as bench/run.ts makes it), or one kept by an earlier run. */
async function prepare(): Promise<{ url: string; token: string; cleanup: () => Promise<void> }> {
  if (args.url) return { url: args.url, token: args.token!, cleanup: async () => {} };
  const started = Date.now();
  const { url, store, cleanup } = await freshStore(storeCode, args.db!, PG_URL, 'bench');
  const { token } = await generate(store, {
    skus: SKUS,
    orders: ORDERS,
    ledgerRows: SKUS * 3,
    onProgress: (what, done, total) => done === total && log(`  generated ${total} ${what}`),
  });
  await store.close();
  log(`data: ${SKUS} SKUs × 3 warehouses, ${ORDERS} orders on ${args.db} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { url, token, cleanup };
}

/** The database's size on disk: the SQLite file (and its WAL), or the PostgreSQL schema's relations with their indexes and TOAST. */
async function databaseBytes(url: string): Promise<number> {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    return [file, `${file}-wal`].reduce((sum, f) => sum + (fs.existsSync(f) ? fs.statSync(f).size : 0), 0);
  }
  const store = await openStore(url);
  try {
    const { rows } = await sql<{ bytes: string }>`
      select coalesce(sum(pg_total_relation_size(c.oid)), 0) as bytes from pg_class c
      join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and c.relkind in ('r', 'm')`.execute(store.db);
    return Number(rows[0].bytes);
  } finally {
    await store.close();
  }
}

/** VmRSS of a process and all its descendants (the backup command and the pg_dump it runs), MB. */
function treeRssMb(pid: number): number {
  let kb = 0;
  const walk = (p: number) => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'));
      if (m) kb += Number(m[1]);
      for (const task of fs.readdirSync(`/proc/${p}/task`)) {
        for (const child of fs.readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) walk(Number(child));
      }
    } catch {
      // The process ended between two reads.
    }
  };
  walk(pid);
  return kb / 1024;
}

/** Samples the tree's RSS every 100 ms; `stop` returns the largest, MB. */
function sampleRss(pid: number): { stop(): number } {
  let peak = treeRssMb(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, treeRssMb(pid));
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return Math.round(Math.max(peak, treeRssMb(pid)));
    },
  };
}

interface Run {
  seconds: number;
  peakRssMb: number;
  stdout: string;
}

/** One `stockist …` command, as an operator runs it; fails the bench when it fails. */
function stockist(argv: string[], env: Record<string, string>): Promise<Run> {
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [...LAUNCH_FLAGS, 'bin/stockist.js', ...argv], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const rss = sampleRss(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      const peakRssMb = rss.stop();
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code === 0) resolve({ seconds, peakRssMb, stdout });
      else reject(new Error(`stockist ${argv.join(' ')} exited ${code}: ${stderr}${stdout}`));
    });
  });
}

function newestArchive(dir: string): string {
  const names = fs.readdirSync(dir).filter((n) => n.endsWith('.tar'));
  if (names.length !== 1) throw new Error(`expected one archive in ${dir}, found ${names.join(', ') || 'none'}`);
  return path.join(dir, names[0]);
}

/** The server: `stockist serve` (one process, every role) on the built program, as deployed. */
async function startServer(env: Record<string, string>) {
  const child = spawn(process.execPath, [...LAUNCH_FLAGS, 'bin/stockist.js', 'serve', '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  return { child, port };
}

const rand = (n: number) => Math.floor(Math.random() * n);
let keySeq = 0;
/** bench/run.ts's create-order: three lines over two warehouses, each order with its Idempotency-Key. */
const orderRequest = () => ({
  path: '/openapi/v1/order/orders',
  body: JSON.stringify({
    orderAddress: { country: 'DE', phone: '1', recipient: 'Bench', province: 'BE' },
    orderItemsList: [
      { sku: benchSku(rand(SKUS) + 1), quantity: 1 },
      { sku: benchSku(rand(SKUS) + 1), quantity: 2 },
      { sku: benchSku(rand(SKUS) + 1), quantity: 1, warehouseCode: 'US01' },
    ],
  }),
  headers: { 'idempotency-key': `bench-backup-${process.pid}-${++keySeq}` },
});

interface Leg {
  kind: 'without' | 'with';
  seconds: number;
  orders: number;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  serverPeakRssMb: number;
  backupSeconds?: number;
  backupPeakRssMb?: number;
}

/** Create-order load for `seconds`, or — with `during` — until that promise settles. */
async function orderLoad(port: number, token: string, serverPid: number, seconds: number, during?: () => Promise<Run>) {
  const rss = sampleRss(serverPid);
  const failures = new Map<number, string>();
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    // A "with" leg is stopped when its backup ends; the duration is only a bound.
    duration: during ? 3600 : seconds,
    requests: [
      {
        setupRequest: (req) => {
          const next = orderRequest();
          return {
            ...req,
            method: 'POST',
            path: next.path,
            body: next.body,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...next.headers },
          };
        },
        onResponse: (status: number, body: string) => {
          if ((status < 200 || status >= 300) && !failures.has(status)) failures.set(status, String(body).slice(0, 300));
        },
      },
    ],
  }) as unknown as Promise<autocannon.Result> & { stop(): void };
  let run: Run | undefined;
  if (during) {
    try {
      run = await during();
    } finally {
      instance.stop();
    }
  }
  const result = await instance;
  for (const [status, body] of failures) log(`    HTTP ${status}, the first: ${body}`);
  return { result, serverPeakRssMb: rss.stop(), run };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const startedAt = new Date();
  const data = await prepare();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-bench-backup-'));
  const dataDir = path.join(work, 'data');
  fs.mkdirSync(dataDir);
  const env = {
    DATABASE_URL: data.url,
    DATA_DIR: dataDir,
    TLS: 'off',
    LOG_LEVEL: 'warn',
    STOCKIST_ENV: 'sandbox',
    SEED: 'none',
    ADMIN_API_KEY: 'bench-admin-key-0123456789',
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    RATE_LIMIT_BODY_BYTES_PER_SECOND: '0',
    // Measure what a backup costs, not the shedding of a machine that other work slows down.
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    DEFAULT_WAREHOUSE: 'G007',
  };
  const restoreSchema = `bench_restore_${Date.now().toString(36)}`;
  try {
    const dbBytes = await databaseBytes(data.url);
    log(`database: ${fmt(dbBytes / MB, 1)} MiB`);
    const server = await startServer(env);
    try {
      // 1. Alone: the server is up but idle.
      const alone = path.join(work, 'alone');
      log('backup (server idle)…');
      const backup = await stockist(['backup', '--to', alone], env);
      const archive = newestArchive(alone);
      const archiveBytes = fs.statSync(archive).size;
      log(`  ${backup.stdout.split('\n')[0]}`);
      log('backup verify…');
      const verify = await stockist(['backup', 'verify', archive], env);
      log(`  ${verify.stdout.trim().split('\n').at(-1)}`);
      log('restore into an empty target…');
      let restoreEnv: Record<string, string>;
      if (args.db === 'postgres') {
        // An empty schema of its own on the same server, as an operator restores into an empty database.
        await (await openStore(PG_URL, { schema: restoreSchema })).close();
        restoreEnv = { ...env, DATABASE_URL: withSchema(PG_URL, restoreSchema), DATA_DIR: path.join(work, 'restored') };
      } else {
        restoreEnv = { ...env, DATABASE_URL: `sqlite:${path.join(work, 'restored', 'stockist.db')}`, DATA_DIR: path.join(work, 'restored') };
      }
      fs.mkdirSync(restoreEnv.DATA_DIR);
      const restore = await stockist(['restore', archive], restoreEnv);
      log(`  ${restore.stdout.split('\n').find((l) => l.startsWith('ledger:'))}`);
      // The restored copy is not needed any more: give its space back before the load.
      if (args.db === 'postgres') await dropSchema(storeCode, PG_URL, restoreSchema);
      fs.rmSync(restoreEnv.DATA_DIR, { recursive: true, force: true });
      fs.rmSync(alone, { recursive: true, force: true });

      // 2. Under load, alternated.
      log('warm-up: 5 s of orders, not counted…');
      await orderLoad(server.port, data.token, server.child.pid!, 5);
      const legs: Leg[] = [];
      let lastBackupSeconds = backup.seconds;
      for (let i = 0; i < PAIRS; i++) {
        const seconds = Math.max(5, Math.round(lastBackupSeconds));
        log(`pair ${i + 1}/${PAIRS}: without a backup, ${seconds} s…`);
        const off = await orderLoad(server.port, data.token, server.child.pid!, seconds);
        legs.push({
          kind: 'without',
          seconds: off.result.duration,
          orders: off.result['2xx'],
          rps: off.result['2xx'] / off.result.duration,
          p50: off.result.latency.p50,
          p99: off.result.latency.p99,
          errors: off.result.errors + off.result.non2xx,
          serverPeakRssMb: off.serverPeakRssMb,
        });
        log(`pair ${i + 1}/${PAIRS}: with a backup…`);
        const dir = path.join(work, `leg-${i}`);
        const on = await orderLoad(server.port, data.token, server.child.pid!, 0, () => stockist(['backup', '--to', dir], env));
        const run = on.run!;
        lastBackupSeconds = run.seconds;
        fs.rmSync(dir, { recursive: true, force: true });
        legs.push({
          kind: 'with',
          seconds: on.result.duration,
          orders: on.result['2xx'],
          rps: on.result['2xx'] / on.result.duration,
          p50: on.result.latency.p50,
          p99: on.result.latency.p99,
          errors: on.result.errors + on.result.non2xx,
          serverPeakRssMb: on.serverPeakRssMb,
          backupSeconds: run.seconds,
          backupPeakRssMb: run.peakRssMb,
        });
        for (const l of legs.slice(-2)) log(`  ${l.kind}: ${fmt(l.rps, 1)} orders/s, p50 ${l.p50} ms, p99 ${l.p99} ms, ${l.errors} errors`);
      }

      const lines = [
        `# Backup and restore, ${args.db}, ${fmt(ORDERS)} orders (bench/backup.ts)`,
        '',
        `Started ${startedAt.toISOString()}, ${os.cpus().length} CPUs (shared with other work: load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(' ')} at the end), Node ${process.version}, ${CONNECTIONS} connections, ${SKUS} SKUs.`,
        `Database ${fmt(dbBytes / MB, 1)} MiB before the run.`,
        '',
        '## Alone (the server up and idle)',
        '',
        '| command | seconds | peak RSS MB (with pg_dump / pg_restore) | archive MiB |',
        '|---|---|---|---|',
        `| backup | ${fmt(backup.seconds, 1)} | ${backup.peakRssMb} | ${fmt(archiveBytes / MB, 1)} |`,
        `| backup verify | ${fmt(verify.seconds, 1)} | ${verify.peakRssMb} | |`,
        `| restore | ${fmt(restore.seconds, 1)} | ${restore.peakRssMb} | |`,
        '',
        '```',
        backup.stdout.trim(),
        verify.stdout.trim(),
        restore.stdout.trim(),
        '```',
        '',
        '## Create-order under load, alternated legs',
        '',
        '| leg | seconds | orders | orders/s | p50 ms | p99 ms | errors | server peak RSS MB | backup s | backup peak RSS MB |',
        '|---|---|---|---|---|---|---|---|---|---|',
        ...legs.map(
          (l, i) =>
            `| ${i + 1} ${l.kind} | ${fmt(l.seconds, 1)} | ${l.orders} | ${fmt(l.rps, 1)} | ${l.p50} | ${l.p99} | ${l.errors} | ${l.serverPeakRssMb} | ${l.backupSeconds === undefined ? '' : fmt(l.backupSeconds, 1)} | ${l.backupPeakRssMb ?? ''} |`,
        ),
        '',
      ];
      const off = legs.filter((l) => l.kind === 'without');
      const on = legs.filter((l) => l.kind === 'with');
      lines.push(
        `Median of the legs: without a backup ${fmt(median(off.map((l) => l.rps)), 1)} orders/s, p99 ${median(off.map((l) => l.p99))} ms; ` +
          `with one ${fmt(median(on.map((l) => l.rps)), 1)} orders/s, p99 ${median(on.map((l) => l.p99))} ms ` +
          `(throughput ×${(median(on.map((l) => l.rps)) / median(off.map((l) => l.rps))).toFixed(2)}, p99 ×${(median(on.map((l) => l.p99)) / median(off.map((l) => l.p99))).toFixed(2)}).`,
      );
      process.stdout.write(`${lines.join('\n')}\n`);
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    if (args.db === 'postgres') await dropSchema(storeCode, PG_URL, restoreSchema);
    if (args['keep-data']) log(`data kept: --url '${data.url}' --token ${data.token}`);
    else await data.cleanup();
  }
}

await main();
