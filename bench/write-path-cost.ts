/**
 * `node --import tsx bench/write-path-cost.ts [--db sqlite|postgres] [--orders N] [--refunds N]`
 *
 * The cost of one order and one whole-order refund request through the service (no HTTP), one
 * call at a time, measured as CPU time and wall time per call and as statements per call
 * (docs/performance.md "What was changed after profiling"). One call at a time, so a shared
 * machine's load moves it less than the bench's throughput, and on PostgreSQL the wall time per
 * call is mostly its round trips. Data: bench/generate.ts (2,000 SKUs, 3 warehouses), the orders
 * and the Idempotency-Keys as the bench sends them; the same process warms up first.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { statementCounter } from './statement-counter.ts';
import { loadConfig } from '../src/config.ts';
import { ORDER_ID_START } from '../src/store/migrations/0004_orders.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { forMerchant } from '../src/store/scope-mint.ts';
import { placeOrder } from '../src/services/orders.service.ts';
import { requestRefund } from '../src/services/refunds.service.ts';
import { benchSku, generate } from './generate.ts';

const { values: args } = parseArgs({
  options: {
    db: { type: 'string', default: 'sqlite' },
    orders: { type: 'string', default: '3000' },
    refunds: { type: 'string', default: '3000' },
    'checkpoint-ms': { type: 'string' },
  },
});
const ORDERS = Number(args.orders);
const REFUNDS = Number(args.refunds);
const SKUS = 2000;
const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

async function open(): Promise<{ store: Store; cleanup: () => Promise<void> }> {
  if (args.db === 'postgres') {
    const schema = `wpcost_${Date.now().toString(36)}`;
    const store = await openStore(PG_URL, { schema, poolSize: 4 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        const admin = await openStore(PG_URL);
        await admin.db.schema.dropSchema(schema).ifExists().cascade().execute();
        await admin.close();
      },
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-wpcost-'));
  const checkpointEveryMs = args['checkpoint-ms'] === undefined ? undefined : Number(args['checkpoint-ms']);
  const store = await openStore(`sqlite:${path.join(dir, 'bench.db')}`, { checkpointEveryMs });
  walFile = `${path.join(dir, 'bench.db')}-wal`;
  return {
    store,
    cleanup: async () => {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** SQLite: the WAL file, whose largest size is reported. */
let walFile: string | null = null;
let walPeak = 0;
const rand = (n: number) => Math.floor(Math.random() * n);
let keySeq = 0;
const orderBody = () => ({
  orderAddress: { country: 'DE', phone: '1', recipient: 'Bench', province: 'BE' },
  orderItemsList: [
    { sku: benchSku(rand(SKUS) + 1), quantity: 1 },
    { sku: benchSku(rand(SKUS) + 1), quantity: 2 },
    { sku: benchSku(rand(SKUS) + 1), quantity: 1, warehouseCode: 'US01' },
  ],
});

async function measure(name: string, n: number, op: () => Promise<unknown>, counter: { n: number }) {
  const warm = Math.min(500, Math.floor(n / 4));
  for (let i = 0; i < warm; i++) await op();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const s0 = counter.n;
  for (let i = 0; i < n; i++) {
    await op();
    if (walFile && i % 50 === 0) walPeak = Math.max(walPeak, fs.statSync(walFile).size);
  }
  const wall = Number(process.hrtime.bigint() - t0) / 1e3 / n;
  const used = process.cpuUsage(cpu0);
  const cpu = (used.user + used.system) / n;
  process.stdout.write(
    `${name}: ${cpu.toFixed(0)} µs CPU, ${wall.toFixed(0)} µs wall, ${((counter.n - s0) / n).toFixed(1)} statements per call${walFile ? `, WAL peak ${(walPeak / 2 ** 20).toFixed(1)} MiB` : ''}\n`,
  );
}

const { store, cleanup } = await open();
try {
  await migrateToLatest(store);
  const { merchantId } = await generate(store, { skus: SKUS, orders: REFUNDS + 1000, ledgerRows: SKUS * 3 });
  const counter = statementCounter();
  const counted = { ...store, db: store.db.withPlugin(counter) };
  const config = loadConfig({ TLS: 'off' });
  await measure(
    `create-order (${args.db})`,
    ORDERS,
    () => placeOrder({ store: counted, config }, forMerchant(counted.db, merchantId), orderBody() as never, `cost-${++keySeq}`, 'bench'),
    counter,
  );
  let next = ORDER_ID_START + 1;
  await measure(
    `refund-request (${args.db})`,
    REFUNDS,
    () => requestRefund({ store: counted }, forMerchant(counted.db, merchantId), next++, {}, null, 'bench'),
    counter,
  );
} finally {
  await cleanup();
}
