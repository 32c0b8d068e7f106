/**
 * `node --import tsx bench/order-http-ab.ts --a <checkout> --b <checkout> [--db sqlite|postgres] [--rounds N] [--batch N] [--scenario create-order|stock-by-30-skus|query-order-by-ids]`
 *
 * Like bench/order-cpu-ab.ts, one level up: each checkout's whole app (`buildApp`, its routes,
 * hooks, validation, serialisation, the service) answering POST /openapi/v1/order/orders (or, with
 * `--scenario stock-by-30-skus`, GET /openapi/v1/product/stocks for 30 random SKUs, with
 * `--scenario query-order-by-ids`, GET /openapi/v2/order/orders for 10 random order ids) through
 * `app.inject`, the two interleaved in batches in one process, CPU time per request summed per
 * checkout. No sockets (the HTTP parser and the kernel's share of a real request are left out), so
 * what differs between the two is their own code. Each side generates its own data (5,000 SKUs).
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { interleave, sideStore, type Side } from './interleave.ts';

const { values: args } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    db: { type: 'string', default: 'sqlite' },
    rounds: { type: 'string', default: '30' },
    batch: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '300' },
    scenario: { type: 'string', default: 'create-order' },
  },
});
if (!['create-order', 'stock-by-30-skus', 'query-order-by-ids'].includes(args.scenario!)) {
  throw new Error('--scenario is create-order, stock-by-30-skus or query-order-by-ids');
}
if (!args.a || !args.b) throw new Error('--a and --b are required');
const PG_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const SKUS = 5_000;
const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';

async function side(checkout: string) {
  const root = path.resolve(checkout);
  const load = (rel: string) => import(path.join(root, rel));
  const { loadConfig } = await load('src/config.ts');
  const { buildApp } = await load('src/app.ts');
  const { generate, benchSku } = await load('bench/generate.ts');
  const { url, store, cleanup } = await sideStore(root, args.db!, PG_URL, 'httpab');
  const { token } = await generate(store, { skus: SKUS, orders: 1_000, ledgerRows: SKUS * 3, onProgress: () => {} });
  // The statistics a server opening this database would read (SQLite gathers them when a connection
  // opens): this connection opened before the data, and would plan as for empty tables.
  if (args.db === 'sqlite') {
    const { sql } = await import(path.join(root, 'node_modules/kysely/dist/esm/index.js'));
    await sql`pragma optimize`.execute(store.db);
  }
  const config = loadConfig({
    DATABASE_URL: url,
    TLS: 'off',
    DEFAULT_WAREHOUSE: 'G007',
    STOCKIST_ENV: 'sandbox',
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    RATE_LIMIT_BODY_BYTES_PER_SECOND: '0',
    // A loaded machine must slow both sides alike, not refuse one of them (503 before any work).
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
  });
  const app = await buildApp({ config, store, adminApiKey: ADMIN_KEY }, { logger: false });
  const rand = (n: number) => Math.floor(Math.random() * n);
  let seq = 0;
  const name = path.basename(root);
  const stockBy30 = async () => {
    const skus = Array.from({ length: 30 }, () => benchSku(rand(SKUS) + 1)).join(',');
    const r = await app.inject({ method: 'GET', url: `/openapi/v1/product/stocks?skus=${skus}`, headers: { authorization: `Bearer ${token}` } });
    if (r.statusCode !== 200) throw new Error(`${name}: ${r.statusCode} ${r.body}`);
  };
  const { ORDER_ID_START } = await load('src/store/migrations/0004_orders.ts');
  const orderByIds = async () => {
    const ids = Array.from({ length: 10 }, () => ORDER_ID_START + 1 + rand(1_000)).join(',');
    const r = await app.inject({ method: 'GET', url: `/openapi/v2/order/orders?ids=${ids}`, headers: { authorization: `Bearer ${token}` } });
    if (r.statusCode !== 200) throw new Error(`${name}: ${r.statusCode} ${r.body}`);
  };
  const createOrder = async () => {
    const r = await app.inject({
      method: 'POST',
      url: '/openapi/v1/order/orders',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': `http-ab-${name}-${++seq}`, 'content-type': 'application/json' },
      payload: {
        orderAddress: { country: 'DE', phone: '1', recipient: 'Bench', province: 'BE' },
        orderItemsList: [
          { sku: benchSku(rand(SKUS) + 1), quantity: 1 },
          { sku: benchSku(rand(SKUS) + 1), quantity: 2 },
          { sku: benchSku(rand(SKUS) + 1), quantity: 1, warehouseCode: 'US01' },
        ],
      },
    });
    if (r.statusCode !== 200) throw new Error(`${name}: ${r.statusCode} ${r.body}`);
  };
  return {
    name,
    one: args.scenario === 'stock-by-30-skus' ? stockBy30 : args.scenario === 'query-order-by-ids' ? orderByIds : createOrder,
    close: async () => {
      await app.close();
      await store.close();
      await cleanup();
    },
  };
}

const sides: [Side, Side] = [await side(args.a), await side(args.b)];
process.stdout.write(
  await interleave(`${args.db} ${args.scenario} (HTTP, app.inject)`, sides, {
    rounds: Number(args.rounds),
    batch: Number(args.batch),
    warmup: Number(args.warmup),
  }),
);
