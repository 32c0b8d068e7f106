// Webhook delivery throughput to a loopback receiver (real HTTP, signing, claims, outcome writes):
// `node --import tsx scripts/bench-webhooks.ts [sqlite|postgres] [deliveries]`. Not a test: numbers
// depend on the machine. PostgreSQL needs TEST_DATABASE_URL.
import http from 'node:http';
import { WebhookWorker } from '../src/jobs/webhook.worker.ts';
import { newWebhookSecret } from '../src/domain/webhook-signature.ts';
import type { Dialect } from '../src/store/db.ts';
import { forMerchant } from '../src/store/scope-mint.ts';
import { insertEndpoint, insertEvent } from '../src/store/webhooks.repository.ts';
import { freshStore } from '../test/helpers.ts';

const dialect = (process.argv[2] ?? 'sqlite') as Dialect;
const total = Number(process.argv[3] ?? 5000);
let received = 0;
const server = http.createServer((req, res) =>
  req.resume().on('end', () => {
    received++;
    res.end('ok');
  }),
);
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;

const db = await freshStore(dialect);
const now = Date.now();
const { id: merchantId } = await db.store.db
  .insertInto('merchants')
  .values({ name: 'Bench', status: 'active', client_id: 'bench', client_secret_hash: 'x', created_at: now, updated_at: now })
  .returning('id')
  .executeTakeFirstOrThrow();
const endpointId = await db.store.db.transaction().execute((trx) =>
  insertEndpoint(forMerchant(trx, merchantId), {
    url,
    events: '["split_order.shipped"]',
    secret: newWebhookSecret(),
    previous_secret: null,
    previous_secret_until: null,
    status: 'active',
    disabled_reason: null,
    disabled_at: null,
    failing_since: null,
    created_at: now,
    updated_at: now,
  }),
);
// One event per order, so per-order ordering does not serialise them (the usual case).
const payload = JSON.stringify({ type: 'split_order.shipped', timestamp: new Date(now).toISOString(), data: { orderId: '1', pad: 'x'.repeat(1500) } });
await db.store.db.transaction().execute(async (trx) => {
  for (let i = 0; i < total; i++)
    await insertEvent(forMerchant(trx, merchantId), { type: 'split_order.shipped', orderId: 1_000_000 + i, payload }, [endpointId], now, now + 86_400_000);
});

const worker = new WebhookWorker({ store: db.store, config: { env: 'sandbox' }, batchSize: 200, concurrency: 32 });
const started = process.hrtime.bigint();
let done = 0;
while (done < total) {
  const r = await worker.runOnce();
  if (r.succeeded + r.failed === 0) break;
  done += r.succeeded;
}
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
console.log(
  `${dialect}: ${done} deliveries in ${seconds.toFixed(2)} s = ${(done / seconds).toFixed(0)} deliveries/s (receiver saw ${received}; 1.5 KB bodies, batch 200, 32 in flight)`,
);
await worker.stop();
server.close();
await db.drop();
