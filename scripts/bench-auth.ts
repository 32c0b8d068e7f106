// Auth path throughput over real HTTP (TLS off, SQLite), 16 concurrent clients, 3 s each:
// `node --import tsx scripts/bench-auth.ts`. Not a test: numbers depend on the machine.
import { buildApp } from '../src/app.ts';
import { ADMIN_KEY, freshStore, testConfig } from '../test/helpers.ts';
const db = await freshStore('sqlite');
const app = await buildApp(
  { config: testConfig({ RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000' }), store: db.store, adminApiKey: ADMIN_KEY },
  { logger: false },
);
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
const m = await (
  await fetch(`${base}/admin/v1/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: '{"name":"Bench"}',
  })
).json();
const basic = `Basic ${Buffer.from(`${m.data.clientId}:${m.data.clientSecret}`).toString('base64')}`;
async function run(name: string, req: () => Promise<Response>) {
  let n = 0,
    bad = 0;
  const end = Date.now() + 3000;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (Date.now() < end) {
        const r = await req();
        await r.arrayBuffer();
        if (r.ok) n++;
        else bad++;
      }
    }),
  );
  console.log(`${name}: ${(n / 3).toFixed(0)} req/s (${bad} non-2xx)`);
}
const tok = await (
  await fetch(`${base}/openapi/oauth/token`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  })
).json();
await run('POST /openapi/oauth/token client_credentials', () =>
  fetch(`${base}/openapi/oauth/token`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  }),
);
await run('GET /openapi/v1/product/stocks (auth + rate limit)', () =>
  fetch(`${base}/openapi/v1/product/stocks?skus=A`, { headers: { authorization: `Bearer ${tok.access_token}` } }),
);
await run('GET /healthz (no auth)', () => fetch(`${base}/healthz`));
await app.close();
await db.drop();
