// Stock query throughput on 100k SKUs × 3 warehouses, through a real HTTP server:
//   node --import tsx bench/stock-query.ts [--url sqlite:/tmp/bench.db] [--duration 10] [--connections 10]
// Loads the data with the bulk import (skipped when the database already holds it), changes the
// stock of 1,000 SKUs, then runs autocannon against: 30 random SKUs per request; a window holding
// the 1,000 recent changes (random page of 30); and a window over all 100k SKUs (random page).
import { systemActor } from '../src/domain/audit.ts';
import { ALL_IMPORT_RIGHTS } from '../src/domain/import-format.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createMerchant, issueToken } from '../src/services/merchants.service.ts';
import { importFiles } from '../src/services/import.service.ts';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { bulkSetQty } from '../src/store/stocks.repository.ts';
import { stampBulkLedger } from '../src/store/stock-feed.repository.ts';
import { forMerchant } from '../src/store/scope-mint.ts';
import { benchSku, makeImportFiles } from './make-import-files.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const SKUS = 100_000;
const url = arg('url', `sqlite:${path.join(os.tmpdir(), 'stockist-bench-stock.db')}`);
const duration = Number(arg('duration', '10'));
const connections = Number(arg('connections', '10'));

const store = await openStore(url);
await migrateToLatest(store);
const count = await store.db
  .selectFrom('products')
  .select((eb) => eb.fn.countAll<number>().as('n'))
  .executeTakeFirstOrThrow();
if (Number(count.n) < SKUS) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-bench-'));
  const started = performance.now();
  await importFiles(store, systemActor('bench'), ALL_IMPORT_RIGHTS, await makeImportFiles(dir, SKUS * 3), Date.now());
  console.log(`loaded ${SKUS} SKUs × 3 warehouses in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  fs.rmSync(dir, { recursive: true, force: true });
}
const windowStart = new Date().toISOString();
await new Promise((r) => setTimeout(r, 5));
const wh = await store.db.selectFrom('warehouses').select('id').where('code', '=', 'G007').executeTakeFirstOrThrow();
const recent = await store.db
  .selectFrom('products')
  .select('id')
  .orderBy('id')
  .limit(1000)
  .offset(5000 + Math.floor(Math.random() * 50_000))
  .execute();
await store.db.transaction().execute(async (trx) => {
  await bulkSetQty(
    trx,
    store.dialect,
    recent.map((p) => ({ productId: p.id, warehouseId: wh.id, qty: 1 + Math.floor(Math.random() * 1000) })),
    Date.now(),
  );
  await stampBulkLedger(trx, store.dialect);
});

const config = loadConfig({ TLS: 'off', LOG_LEVEL: 'warn', ADMIN_API_KEY: 'bench-admin-key-0123456789' });
const app = await buildApp({ config, store, adminApiKey: config.adminApiKey ?? 'bench-admin-key-0123456789' }, { logger: false });
const base = await app.listen({ port: 0, host: '127.0.0.1' });
const merchant = await createMerchant(store.db, systemActor('bench'), 'bench', Date.now());
const { accessToken } = await issueToken(forMerchant(store.db, merchant.merchantId), systemActor('bench'), config.env, {}, Date.now());

const random = (n: number) => Math.floor(Math.random() * n);
const scenarios: [string, () => string][] = [
  ['30 SKUs', () => `/openapi/v1/product/stocks?skus=${Array.from({ length: 30 }, () => benchSku(random(SKUS))).join(',')}`],
  ['window, 1k changed SKUs', () => `/openapi/v1/product/stocks?dateStartTime=${windowStart}&pageNumber=${1 + random(34)}`],
  ['window, all 100k SKUs', () => `/openapi/v1/product/stocks?dateStartTime=2000-01-01T00:00:00Z&pageNumber=${1 + random(3334)}`],
];
console.log(`database ${url.replace(/\/\/[^@]*@/, '//')}, ${connections} connections, ${duration} s each`);
for (const [name, path] of scenarios) {
  const result = await autocannon({
    url: base,
    connections,
    duration,
    headers: { authorization: `Bearer ${accessToken}` },
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: path() }) }],
  });
  const errors = result.non2xx + result.errors;
  console.log(
    `${name.padEnd(26)} ${result.requests.average.toFixed(0).padStart(6)} req/s  p50 ${result.latency.p50} ms  p99 ${result.latency.p99} ms  errors ${errors}`,
  );
}
await app.close();
await store.close();
