import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildApp } from '../../src/app.ts';
import { openStore } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { ADMIN_KEY, PG_SKIP, PG_URL, testConfig } from '../helpers.ts';
import { ADDRESS, ORDER_CATALOGUE } from '../fixtures.ts';

/**
 * A TCP relay in front of PostgreSQL that the test can take down (refusing new connections and
 * cutting the open ones, as a database restart or a network partition does) and bring back.
 */
function relay(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  let port = 0;
  const up = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server!.close(() => resolve());
    });
  return {
    up,
    down,
    get port() {
      return port;
    },
  };
}

/**
 * SPEC §1 (503/50300 "storage unavailable") and §10 (/readyz): while the database is unreachable
 * every request that needs it answers 503/50300 with Retry-After — never a 500, never a crash —
 * and the same process serves again once the database is back, without a restart.
 */
describe('database outage and recovery (PostgreSQL)', { skip: PG_SKIP }, () => {
  it('answers 503/50300 while the database is away and recovers without a restart', async (t) => {
    const target = new URL(PG_URL!);
    const r = relay({ host: target.hostname, port: Number(target.port || 5432) });
    await r.up();
    const schema = `t_outage_${randomBytes(4).toString('hex')}`;
    const appName = `stockist_outage_${randomBytes(4).toString('hex')}`;
    const url = new URL(PG_URL!);
    url.host = `127.0.0.1:${r.port}`;
    url.searchParams.set('application_name', appName);
    const store = await openStore(url.toString(), { schema, poolSize: 4, connectTimeoutMs: 1000 });
    await migrateToLatest(store);
    const app = await buildApp({ config: testConfig(), store, adminApiKey: ADMIN_KEY }, { logger: false });
    t.after(async () => {
      await app.close();
      await store.close().catch(() => undefined);
      await r.down().catch(() => undefined);
      const c = new pg.Client({ connectionString: PG_URL! });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    });
    const admin = (method: 'GET' | 'POST', path: string, payload?: unknown) =>
      app.inject({ method, url: path, payload: payload as never, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    assert.equal((await admin('POST', '/admin/v1/import', ORDER_CATALOGUE)).statusCode, 200);
    const m = (await admin('POST', '/admin/v1/merchants', { name: 'Outage' })).json().data;
    const token = (await admin('POST', `/admin/v1/merchants/${m.merchantId}/tokens`, {})).json().data.accessToken;
    const placeOrder = () =>
      app.inject({
        method: 'POST',
        url: '/openapi/v1/order/orders',
        headers: { authorization: `Bearer ${token}` },
        payload: { orderAddress: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 1 }] },
      });
    const first = await placeOrder();
    assert.equal(first.statusCode, 200, first.body);
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);

    // 1. The database goes away: open connections are cut, new ones are refused.
    await r.down();
    for (const res of [
      await app.inject({ method: 'GET', url: '/readyz' }),
      await placeOrder(),
      await admin('GET', '/admin/v1/orders'),
      await app.inject({ method: 'GET', url: '/openapi/v1/product/stocks?skus=C', headers: { authorization: `Bearer ${token}` } }),
    ]) {
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json().code, 50300);
    }
    assert.equal((await placeOrder()).headers['retry-after'], '1');
    const tokenEndpoint = await app.inject({
      method: 'POST',
      url: '/openapi/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: m.clientId, client_secret: m.clientSecret },
    });
    assert.equal(tokenEndpoint.statusCode, 503);
    assert.equal(tokenEndpoint.json().error, 'temporarily_unavailable');
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'the process itself is fine');

    // 2. It comes back: the same app serves again.
    await r.up();
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    assert.equal((await placeOrder()).statusCode, 200);

    // 3. The server terminates the pool's connections (pg_terminate_backend): no crash from the
    //    idle connections' errors, and the next requests open fresh connections.
    const c = new pg.Client({ connectionString: PG_URL! });
    await c.connect();
    const killed = await c.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [appName]);
    await c.end();
    assert.ok(killed.rowCount! > 0);
    for (let i = 0; i < 3; i++) {
      const res = await placeOrder();
      assert.ok(res.statusCode === 200 || (res.statusCode === 503 && res.json().code === 50300), res.body);
    }
    assert.equal((await placeOrder()).statusCode, 200);
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  });
});
