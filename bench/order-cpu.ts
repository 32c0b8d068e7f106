/**
 * `node --import tsx bench/order-cpu.ts --db sqlite|postgres --data <file|schema> [--generate] [--orders N]`
 *
 * The order path's own CPU, without HTTP and without concurrency: `placeOrder` called one order
 * at a time, CPU time (user + system) of this process per order. On SQLite that includes the
 * database's work (it runs in this process); on PostgreSQL it does not.
 *
 * Made for A/B comparisons of two checkouts (docs/performance.md, "What the ledger costs an
 * order"): `--generate` writes a bench database once per checkout (the quick bench's size); each
 * later run works on a fresh copy of it (SQLite) or on the schema (PostgreSQL, which grows by the
 * run's orders — alternate the checkouts so both grow alike), so runs of two checkouts can be
 * alternated in a shell loop and compared pairwise.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { forMerchant } from '../src/store/scope-mint.ts';
import { placeOrder } from '../src/services/orders.service.ts';
import { benchSku, generate } from './generate.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    data: { type: 'string' },
    generate: { type: 'boolean', default: false },
    orders: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '300' },
    // SQLite: also count the WAL frames (pages) the commits of this many orders write.
    frames: { type: 'string', default: '0' },
  },
});
if (!args.data) throw new Error('--data <sqlite file | postgres schema> is required');
const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SKUS = 20_000;
const DEFAULT_WAREHOUSE = 'G007';

const baseUrl = args.db === 'postgres' ? `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=-c%20search_path%3D${args.data}` : `sqlite:${args.data}`;

// The generated merchant's id, beside the SQLite file or, for a PostgreSQL schema, in the temporary folder.
const merchantFile = args.db === 'postgres' ? path.join(os.tmpdir(), `order-cpu-${args.data}.merchant`) : `${args.data}.merchant`;

if (args.generate) {
  const store = args.db === 'postgres' ? await openStore(PG_URL, { schema: args.data, poolSize: 4 }) : await openStore(baseUrl);
  await migrateToLatest(store);
  const { merchantId } = await generate(store, { skus: SKUS, orders: 10_000, ledgerRows: SKUS * 3, onProgress: () => {} });
  await store.close();
  fs.writeFileSync(merchantFile, String(merchantId));
  process.stdout.write(`generated ${args.data} (merchant ${merchantId})\n`);
  process.exit(0);
}

const merchantId = Number(fs.readFileSync(merchantFile, 'utf8'));
let url = baseUrl;
let scratch: string | null = null;
if (args.db !== 'postgres') {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'order-cpu-'));
  fs.copyFileSync(args.data, path.join(scratch, 'bench.db'));
  url = `sqlite:${path.join(scratch, 'bench.db')}`;
}
const config = loadConfig({ DATABASE_URL: url, TLS: 'off', DEFAULT_WAREHOUSE });
const store = await openStore(url, { poolSize: 1, checkpointEveryMs: 1e9 });
const rand = (n: number) => Math.floor(Math.random() * n);
const ADDRESS = { country: 'DE', phone: '1', recipient: 'Bench', province: 'BE' };
const body = () => ({
  orderAddress: ADDRESS,
  orderItemsList: [
    { sku: benchSku(rand(SKUS) + 1), quantity: 1 },
    { sku: benchSku(rand(SKUS) + 1), quantity: 2 },
    { sku: benchSku(rand(SKUS) + 1), quantity: 1, warehouseCode: 'US01' },
  ],
});
let seq = 0;
const one = () => placeOrder({ store, config }, forMerchant(store.db, merchantId), body() as never, `cpu-${process.pid}-${++seq}`, 'bench');
for (let i = 0; i < Number(args.warmup); i++) await one();
let framesPerOrder = '';
if (scratch && Number(args.frames) > 0) {
  // The store checkpoints on a timer (disabled above) and past a backstop of 10,000 pages: keep `frames` × pages below it.
  await sql`pragma wal_checkpoint(truncate)`.execute(store.db);
  for (let i = 0; i < Number(args.frames); i++) await one();
  const walBytes = fs.statSync(path.join(scratch, 'bench.db-wal')).size;
  framesPerOrder = ` wal_frames_per_order ${(walBytes / (4096 + 24) / Number(args.frames)).toFixed(2)}`;
}
const n = Number(args.orders);
const before = process.cpuUsage();
const started = process.hrtime.bigint();
for (let i = 0; i < n; i++) await one();
const cpu = process.cpuUsage(before);
const wallUs = Number(process.hrtime.bigint() - started) / 1000 / n;
await store.close();
if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
process.stdout.write(`cpu_us_per_order ${((cpu.user + cpu.system) / n).toFixed(1)} wall_us_per_order ${wallUs.toFixed(1)}${framesPerOrder}\n`);
