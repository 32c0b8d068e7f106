/**
 * `npm run bench:scale-out [-- --duration 10]`: PostgreSQL + Redis, `serve --role api` × 1 then × 2
 * and `serve --role worker` × 2, load spread over the API ports (a client-side round robin stands
 * in for the load balancer). Reports create-order throughput with 1 and 2 API processes, then
 * refunds a batch of orders through both APIs while both workers decide them, and checks that no
 * stock row was oversold, stock equals its ledger, and no refund was decided twice.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { openStore } from '../src/store/db.ts';
import { migrateToLatest } from '../src/store/migrate.ts';
import { ledgerMismatches } from '../src/store/stocks.repository.ts';
import { benchSku, generate } from './generate.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: { duration: { type: 'string', default: '8' }, skus: { type: 'string', default: '5000' }, connections: { type: 'string', default: '16' } },
});
const DURATION = Number(args.duration);
const SKUS = Number(args.skus);
const PG = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const log = (s: string) => process.stderr.write(`${s}\n`);

function start(role: 'api' | 'worker', env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['bin/stockist.js', 'serve', '--role', role, '--port', '0'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const on = (d: Buffer) => {
      out += d;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (code) => reject(new Error(`${role} exited ${code}: ${out}`)));
  });
}

async function orderLoad(ports: number[], token: string, skus: number) {
  const rand = (n: number) => Math.floor(Math.random() * n);
  const runs = ports.map((port) =>
    autocannon({
      url: `http://127.0.0.1:${port}`,
      connections: Math.max(1, Math.floor(Number(args.connections) / ports.length)),
      duration: DURATION,
      requests: [
        {
          method: 'POST',
          path: '/openapi/v1/order/orders',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          setupRequest: (req) => ({
            ...req,
            body: JSON.stringify({
              orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'BE' },
              // A small hot set of SKUs, so processes contend for the same stock rows.
              orderItemsList: [
                { sku: benchSku(1 + rand(50)), quantity: 1 },
                { sku: benchSku(1 + rand(skus)), quantity: 1, warehouseCode: 'US01' },
              ],
            }),
          }),
        },
      ],
    }),
  );
  const results = await Promise.all(runs);
  return {
    rps: results.reduce((s, r) => s + r.requests.average, 0),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    errors: results.reduce((s, r) => s + r.errors + r.non2xx, 0),
  };
}

const schema = `scale_${Date.now().toString(36)}`;
const store = await openStore(PG, { schema });
await migrateToLatest(store);
const { token } = await generate(store, { skus: SKUS, orders: 0 });
// Scarce stock on the hot SKUs: oversell would show as a negative row or a ledger mismatch.
await sql`update stocks set qty = 200 where product_id in (select id from products where sku <= ${benchSku(50)})`.execute(store.db);
await sql`insert into stock_ledger (product_id, warehouse_id, delta, qty_after, kind, order_id, refund_id, created_at) select product_id, warehouse_id, qty - 1000000, qty, 'adjustment', null, null, ${Date.now()} from stocks where product_id in (select id from products where sku <= ${benchSku(50)})`.execute(
  store.db,
);
const url = `${PG}${PG.includes('?') ? '&' : '?'}options=-c%20search_path%3D${schema}`;
const env = {
  DATABASE_URL: url,
  REDIS_URL: REDIS,
  TLS: 'off',
  LOG_LEVEL: 'warn',
  STOCKIST_ENV: 'sandbox',
  DATA_DIR: path.join(os.tmpdir(), 'stockist-scale'),
  ADMIN_API_KEY: 'scale-admin-key-0123456789',
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '1000000',
  REFUND_AUTO_DELAY_MS: '0',
};
const children: ChildProcess[] = [];
try {
  const a1 = await start('api', env);
  children.push(a1.child);
  log('1 API process…');
  const one = await orderLoad([a1.port], token, SKUS);
  const a2 = await start('api', env);
  children.push(a2.child);
  log('2 API processes…');
  const two = await orderLoad([a1.port, a2.port], token, SKUS);

  // Refund 300 of the orders through both APIs while two workers decide them.
  const w1 = await start('worker', env);
  const w2 = await start('worker', env);
  children.push(w1.child, w2.child);
  const orders = await store.db.selectFrom('orders').select('id').orderBy('id').limit(300).execute();
  await Promise.all(
    orders.map((o, i) =>
      fetch(`http://127.0.0.1:${[a1.port, a2.port][i % 2]}/openapi/v2/order/orders/${o.id}/refund`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: '{}',
      }),
    ),
  );
  for (let i = 0; i < 120; i++) {
    const pending = await store.db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'pending_review')
      .executeTakeFirstOrThrow();
    if (Number(pending.n) === 0) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const refunds = await store.db
    .selectFrom('refunds')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  const returnsPerRefund = await sql<{
    n: number;
  }>`select count(*) as n from (select refund_id from stock_ledger where refund_id is not null group by refund_id, product_id, warehouse_id having count(*) > 1) d`.execute(
    store.db,
  );
  const negative = await store.db.selectFrom('stocks').select('qty').where('qty', '<', 0).execute();
  const mismatches = await ledgerMismatches(store.db);
  const summary = {
    createOrder: { oneApi: one, twoApis: two, scaling: Math.round((two.rps / one.rps) * 100) / 100 },
    refunds: Object.fromEntries(refunds.map((r) => [r.status, Number(r.n)])),
    doubleDecidedReturns: Number(returnsPerRefund.rows[0].n),
    negativeStockRows: negative.length,
    ledgerMismatches: mismatches.length,
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  if (summary.negativeStockRows || summary.ledgerMismatches || summary.doubleDecidedReturns) process.exitCode = 1;
} finally {
  for (const c of children) c.kill('SIGTERM');
  await store.db.schema
    .dropSchema(schema)
    .cascade()
    .execute()
    .catch(() => undefined);
  await store.close();
}
