/**
 * `node --import tsx bench/usage-cost.ts [--requests N] [--rounds N]`
 *
 * The cost of the per-merchant usage counters (docs/performance.md "Usage counters"), measured in
 * CPU time rather than throughput, so that other work on a shared machine moves it less. Each
 * round runs two child processes one after the other, counters off (USAGE_FLUSH_MS=0) and on
 * (5000), alternating which goes first; each builds an app on its own SQLite database, warms it up
 * and answers the same merchant requests (stock of 30 SKUs) through `app.inject` (no network: the
 * hook's share is larger than behind a socket); the result is CPU microseconds per request.
 * Separate processes: two apps in one process share the JIT's feedback and differed by 40 % with
 * counters off in both. Then the bare `UsageRecorder.count` call, in nanoseconds.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { UsageRecorder } from '../src/services/usage.service.ts';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';

const { values: args } = parseArgs({
  options: { requests: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '5' }, child: { type: 'string' } },
});
const REQUESTS = Number(args.requests);
const ROUNDS = Number(args.rounds);
const ADMIN_KEY = 'bench-admin-key-0123456789';

/** One process, one app: CPU µs per request, printed as the last line. */
async function measure(flushMs: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-usage-cost-'));
  const store = await openStore(`sqlite:${path.join(dir, 'bench.db')}`);
  await migrateToLatest(store);
  const config = loadConfig({
    TLS: 'off',
    LOG_LEVEL: 'silent',
    ADMIN_API_KEY: ADMIN_KEY,
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    USAGE_FLUSH_MS: flushMs,
  });
  const app = await buildApp({ config, store, adminApiKey: ADMIN_KEY }, { logger: false });
  const admin = (url: string, payload: unknown) =>
    app.inject({ method: 'POST', url, payload: payload as never, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const imported = await admin('/admin/v1/import', {
    warehouses: [{ warehouseCode: 'G007', name: 'Shenzhen', countryCode: 'CN' }],
    products: Array.from({ length: 30 }, (_, i) => ({ sku: `SKU-${i}`, name: `Product ${i}`, price: 1, weightGrams: 100 })),
    stocks: Array.from({ length: 30 }, (_, i) => ({ sku: `SKU-${i}`, warehouseCode: 'G007', qty: 100 })),
  });
  if (imported.statusCode !== 200) throw new Error(imported.body);
  const merchant = (await admin('/admin/v1/merchants', { name: 'Bench' })).json().data;
  const token = (await admin(`/admin/v1/merchants/${merchant.merchantId}/tokens`, {})).json().data.accessToken;
  const url = `/openapi/v1/product/stocks?skus=${Array.from({ length: 30 }, (_, i) => `SKU-${i}`).join(',')}`;
  const run = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const r = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      if (r.statusCode !== 200) throw new Error(r.body);
    }
  };
  await run(2000);
  const started = process.cpuUsage();
  await run(REQUESTS);
  const used = process.cpuUsage(started);
  await app.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(((used.user + used.system) / REQUESTS).toFixed(1));
}

if (args.child !== undefined) {
  await measure(args.child);
} else {
  const child = (flushMs: string) =>
    Number(
      execFileSync(process.execPath, ['--import', 'tsx', import.meta.filename, '--child', flushMs, '--requests', String(REQUESTS)], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .at(-1),
    );
  const results: { on: number[]; off: number[] } = { on: [], off: [] };
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so a drift in the machine's load falls on both alike.
    for (const mode of r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) results[mode].push(child(mode === 'on' ? '5000' : '0'));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

  // The bare call: what the hook adds per request beyond Fastify running one more onResponse hook.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-usage-cost-'));
  const store = await openStore(`sqlite:${path.join(dir, 'bench.db')}`);
  const recorder = new UsageRecorder(store, 'sandbox', { warn: () => undefined });
  const CALLS = 2_000_000;
  const cpu = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) recorder.count(1 + (i % 8), 200, 0);
  const spent = process.cpuUsage(cpu);
  const countNs = ((spent.user + spent.system) * 1000) / CALLS;
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });

  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' ');
  console.log(`GET stock of 30 SKUs through app.inject, ${REQUESTS} requests per process after 2000 to warm up, ${ROUNDS} processes each; CPU µs per request:`);
  console.log(`  counters off: median ${median(results.off).toFixed(1)}  (${fmt(results.off)})`);
  console.log(`  counters on:  median ${median(results.on).toFixed(1)}  (${fmt(results.on)})`);
  console.log(`  difference: ${(((median(results.on) - median(results.off)) / median(results.off)) * 100).toFixed(1)} %`);
  console.log(`UsageRecorder.count: ${countNs.toFixed(0)} ns of CPU per call (${CALLS} calls, 8 merchants)`);
}
