import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { WebhookWorker, type WebhookWorkerOptions } from '../../src/jobs/webhook.worker.ts';
import type { WebhookSender } from '../../src/jobs/webhook-sender.ts';
import { LOOPBACK_FAILURE, type HostResolver, type ResolvedAddress } from '../../src/domain/webhook-url.ts';
import { ORDER_CATALOGUE } from '../fixtures.ts';
import { ADMIN_KEY, DIALECTS, PG_SKIP, tableDigests, useApp } from '../helpers.ts';
import { fakeSender, startReceiver } from './webhook-receivers.ts';

/** DNS for the tests: names map to whatever the case needs, and can be re-pointed (rebinding). */
function fakeDns(initial: Record<string, string[]>) {
  const table = new Map(Object.entries(initial));
  const resolve: HostResolver = async (host) => {
    const addresses = table.get(host.toLowerCase());
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, point: (host: string, addresses: string[]) => table.set(host, addresses) };
}

const ADDRESS = { country: 'US', phone: '1', recipient: 'R', province: 'CA' };

describe('webhook SSRF rules in production (DNS injected)', () => {
  const dns = fakeDns({
    'hooks.example.com': ['93.184.216.34'],
    'internal.example.com': ['10.0.0.7'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
    'v6local.example.com': ['fd00::1'],
    'mapped.example.com': ['::ffff:169.254.169.254'],
    'v4compat.example.com': ['2606:4700::1111', '::a9fe:a9fe'],
    localhost: ['127.0.0.1', '::1'],
  });
  const t = useApp('sqlite', { STOCKIST_ENV: 'production', TRUST_PROXY: '1' }, { resolveHost: dns.resolve });
  // Production refuses plain HTTP: every call comes "through the TLS proxy".
  const call = async (token: string, method: InjectOptions['method'], url: string, payload?: unknown) => {
    const r = await t.app.inject({ method, url, payload: payload as object, headers: { authorization: `Bearer ${token}`, 'x-forwarded-proto': 'https' } });
    return { status: r.statusCode, body: r.json() };
  };
  let token: string;
  before(async () => {
    await call(ADMIN_KEY, 'POST', '/admin/v1/import', ORDER_CATALOGUE);
    const m = (await call(ADMIN_KEY, 'POST', '/admin/v1/merchants', { name: 'Prod' })).body.data;
    token = (await call(ADMIN_KEY, 'POST', `/admin/v1/merchants/${m.merchantId}/tokens`, {})).body.data.accessToken;
  });

  it('refuses plain http, loopback, private, link-local, metadata and unresolvable hosts at registration', async () => {
    const refused: [string, RegExp][] = [
      ['http://hooks.example.com/h', /https/],
      ['https://127.0.0.1/h', /loopback/],
      ['https://localhost/h', /loopback/],
      ['https://2130706433/h', /loopback/],
      ['https://[::1]/h', /loopback/],
      ['https://169.254.169.254/latest/meta-data/', /link-local/],
      ['https://metadata.google.internal/computeMetadata/v1/', /metadata/],
      ['https://[fe80::1]/h', /link-local/],
      ['https://internal.example.com/h', /private/],
      ['https://10.0.0.1/h', /private/],
      ['https://100.64.0.1/h', /private/],
      ['https://mixed.example.com/h', /loopback/],
      ['https://v6local.example.com/h', /private/],
      ['https://mapped.example.com/h', /link-local/],
      ['https://0.0.0.0/h', /reserved/],
      ['https://nowhere.example.com/h', /does not resolve/],
      // Hardening III: IPv6 that is not global unicast.
      ['https://[::7f00:1]/h', /reserved/],
      ['https://[fec0::1]/h', /private/],
      ['https://[2001::1]/h', /reserved/],
      ['https://[2002:a00:1::1]/h', /reserved/],
      ['https://[2001:db8::1]/h', /reserved/],
      ['https://[::ffff:7f00:1]/h', /loopback/],
      ['https://v4compat.example.com/h', /reserved/],
    ];
    const before = await tableDigests(t.store);
    for (const [url, why] of refused) {
      const r = await call(token, 'POST', '/openapi/v1/webhooks', { url, events: ['split_order.shipped'] });
      assert.equal(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.code, 40000, url);
      assert.equal(r.body.errors[0].field, 'url');
      assert.match(r.body.errors[0].message, why, url);
    }
    assert.deepEqual(await tableDigests(t.store), before, 'no refused registration wrote anything');
    const ok = await call(token, 'POST', '/openapi/v1/webhooks', { url: 'https://hooks.example.com/h', events: ['split_order.shipped'] });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  it('checks again at delivery and connects only to the address it checked (DNS rebinding)', async () => {
    const r = await call(token, 'POST', '/openapi/v1/webhooks', { url: 'https://rebind.example.com/h', events: ['split_order.shipped'] });
    assert.equal(r.status, 400, 'does not resolve yet');
    dns.point('rebind.example.com', ['93.184.216.34']);
    const endpoint = (await call(token, 'POST', '/openapi/v1/webhooks', { url: 'https://rebind.example.com/h', events: ['split_order.shipped'] })).body.data;
    const orderId = (await call(token, 'POST', '/openapi/v1/order/orders', { orderAddress: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 1 }] })).body.data;
    const order = (await call(token, 'GET', `/openapi/v2/order/orders/${orderId}`)).body.data;
    await call(ADMIN_KEY, 'POST', `/admin/v1/split-orders/${order.splitOrders[0].id}/ship`, { carrier: 'UPS', trackingCode: '1Z' });

    // The name now points at the metadata service: nothing is sent, the attempt fails and is retried.
    dns.point('rebind.example.com', ['169.254.169.254']);
    const sender = fakeSender();
    let now = Date.now();
    const worker = new WebhookWorker({ store: t.store, config: t.config, resolve: dns.resolve, sender, now: () => now });
    await worker.runOnce();
    assert.ok(!sender.sent.some((s) => s.url.hostname === 'rebind.example.com'), 'no request to a rebound name');
    const [failed] = (await call(token, 'GET', `/openapi/v1/webhooks/${endpoint.id}/deliveries`)).body.data.list;
    assert.equal(failed.status, 'pending');
    assert.equal(failed.lastStatusCode, null);
    assert.match(failed.lastError, /^refused: resolves to a link-local address/);

    // Back to a public address: the request is pinned to exactly that address.
    dns.point('rebind.example.com', ['93.184.216.35']);
    now += 10_000;
    await worker.runOnce();
    const sent = sender.sent.filter((s) => s.url.hostname === 'rebind.example.com');
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0].address, { address: '93.184.216.35', family: 4 });
    assert.equal(sent[0].timeoutMs, 5000);
  });
});

describe('webhook delivery over real HTTP (sandbox, loopback)', () => {
  const dns = fakeDns({ 'receiver.test': ['127.0.0.1'] });
  const t = useApp('sqlite', {}, { resolveHost: dns.resolve });
  let token: string;
  let splitOf: (orderId: string) => Promise<string>;
  before(async () => {
    await t.admin('POST', '/admin/v1/import', ORDER_CATALOGUE);
    const m = (await t.admin('POST', '/admin/v1/merchants', { name: 'Sandbox' })).body.data;
    token = (await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/tokens`, {})).body.data.accessToken;
    splitOf = async (orderId) => (await t.merchant(token, 'GET', `/openapi/v2/order/orders/${orderId}`)).body.data.splitOrders[0].id;
  });
  /** Registers `url`, ships a new order and runs one round of a real-HTTP worker; returns the round and the endpoint's delivery. */
  const shipAndDeliver = async (
    ctx: { after(fn: () => unknown): void },
    url: string,
    options: { timeoutMs?: number; sender?: WebhookSender; config?: WebhookWorkerOptions['config'] } = {},
  ) => {
    const endpoint = await t.merchant(token, 'POST', '/openapi/v1/webhooks', { url, events: ['split_order.shipped'] });
    assert.equal(endpoint.status, 200, endpoint.raw);
    const endpointId: string = endpoint.body.data.id;
    // Each case's endpoint goes afterwards, so later cases' shipments are not sent to it.
    ctx.after(() => t.merchant(token, 'DELETE', `/openapi/v1/webhooks/${endpointId}`));
    const orderId = (await t.merchant(token, 'POST', '/openapi/v1/order/orders', { orderAddress: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 1 }] })).body
      .data;
    await t.admin('POST', `/admin/v1/split-orders/${await splitOf(orderId)}/ship`, { carrier: 'UPS', trackingCode: '1Z' });
    const worker = new WebhookWorker({
      store: t.store,
      resolve: dns.resolve,
      timeoutMs: options.timeoutMs,
      sender: options.sender,
      config: options.config ?? t.config,
    });
    ctx.after(() => worker.stop());
    const round = await worker.runOnce();
    const delivery = (await t.merchant(token, 'GET', `/openapi/v1/webhooks/${endpointId}/deliveries`)).body.data.list[0];
    return { round, delivery };
  };

  it('connects to the resolved, checked address while the Host header names the URL’s host', async (ctx) => {
    const receiver = await startReceiver();
    ctx.after(() => receiver.close());
    // receiver.test exists only in the injected DNS: reaching the receiver proves the pinned lookup was used.
    const { round, delivery } = await shipAndDeliver(ctx, `http://receiver.test:${receiver.port}/in`);
    assert.deepEqual(round, { succeeded: 1, failed: 0 });
    assert.equal(receiver.received[0].headers.host, `receiver.test:${receiver.port}`);
    assert.equal(receiver.received[0].path, '/in');
    assert.equal(delivery.status, 'succeeded');
  });

  it('does not follow redirects: a 3xx is a failed attempt', async (ctx) => {
    const receiver = await startReceiver((r, _n, res) => {
      if (r.path === '/elsewhere') return 200;
      res.writeHead(302, { location: '/elsewhere' }).end();
      return 'handled';
    });
    ctx.after(() => receiver.close());
    const { round, delivery } = await shipAndDeliver(ctx, receiver.url);
    assert.deepEqual(round, { succeeded: 0, failed: 1 });
    assert.deepEqual(
      receiver.received.map((r) => r.path),
      ['/hooks'],
    );
    assert.deepEqual([delivery.status, delivery.lastStatusCode], ['pending', null], 'a loopback failure: no status');
  });

  it('keeps of a loopback receiver’s answer only success or failure, never its status or body (Hardening III; issue 44, 16)', async (ctx) => {
    const secret = 'SECRET-of-a-local-service';
    const receiver = await startReceiver((r, _n, res) => {
      const status = r.path === '/missing' ? 404 : r.path === '/ok' ? 201 : 500;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(`${secret} ${'x'.repeat(2_000_000)}`);
      return 'handled';
    });
    ctx.after(() => receiver.close());
    for (const [path, status, error] of [
      ['/boom', null, LOOPBACK_FAILURE],
      ['/missing', null, LOOPBACK_FAILURE],
      ['/ok', 200, null],
    ] as const) {
      const { delivery } = await shipAndDeliver(ctx, `http://127.0.0.1:${receiver.port}${path}`);
      assert.equal(delivery.lastStatusCode, status, path);
      assert.equal(delivery.lastError, error, path);
      assert.ok(delivery.lastAttemptAt, `${path}: the attempt's time is kept`);
    }
    const stored = await t.store.db.selectFrom('webhook_deliveries').select(['last_error', 'last_status_code']).execute();
    assert.ok(
      stored.every((r) => !r.last_error?.includes(secret) && !r.last_error?.includes('xxx')),
      'no body stored',
    );
  });

  it('records every failed attempt at a loopback receiver alike — refused, cut off, timed out, answered 5xx or 3xx — so the log maps no local port (issue 44, 16)', async (ctx) => {
    const cut = await startReceiver((_r, _n, res) => {
      res.socket?.destroy();
      return 'handled';
    });
    const silent = await startReceiver(() => 'hang');
    const failing = await startReceiver(() => 503);
    const moving = await startReceiver((_r, _n, res) => {
      res.writeHead(301, { location: '/elsewhere' }).end();
      return 'handled';
    });
    // Closed after the others listen, so none of them can be given its port.
    const closed = await startReceiver();
    await closed.close();
    ctx.after(() => Promise.all([cut, silent, failing, moving].map((r) => r.close())));
    const seen: string[] = [];
    for (const port of [closed.port, cut.port, silent.port, failing.port, moving.port]) {
      // (The round may also retry an earlier endpoint of this test: only failures, none succeeds.)
      const { round, delivery } = await shipAndDeliver(ctx, `http://127.0.0.1:${port}/in`, { timeoutMs: 200 });
      assert.equal(round.succeeded, 0, String(port));
      seen.push(JSON.stringify([delivery.status, delivery.lastStatusCode, delivery.lastError, delivery.responseBody ?? null]));
    }
    assert.deepEqual(new Set(seen), new Set([JSON.stringify(['pending', null, LOOPBACK_FAILURE, null])]), seen.join('\n'));
    // How long an attempt took would tell a refused port (at once) from a silent one (the timeout).
    const durations = await t.store.db.selectFrom('webhook_deliveries').select('last_duration_ms').where('last_error', '=', LOOPBACK_FAILURE).execute();
    assert.ok(durations.length >= 5 && durations.every((d) => d.last_duration_ms === null), JSON.stringify(durations));
  });

  it('records a public receiver’s failed attempt with its status code and a capped snippet of the body', async (ctx) => {
    dns.point('public.example.com', ['93.184.216.34']);
    const sender: WebhookSender = { send: async () => ({ status: 503, body: 'x'.repeat(4096) }), close() {} };
    const { round, delivery } = await shipAndDeliver(ctx, 'http://public.example.com/in', { sender });
    assert.deepEqual(round, { succeeded: 0, failed: 1 });
    assert.equal(delivery.lastStatusCode, 503);
    assert.ok(delivery.lastError.startsWith('HTTP 503: xxx') && delivery.lastError.length <= 220, `capped (${delivery.lastError.length})`);
  });

  it('refuses loopback targets, at registration and delivery, once the operator turns them off (SANDBOX_LOOPBACK_WEBHOOKS=off)', async (ctx) => {
    const receiver = await startReceiver();
    ctx.after(() => receiver.close());
    // Registered while allowed; then the setting goes off: the worker refuses to send.
    const { round, delivery } = await shipAndDeliver(ctx, receiver.url, { config: { ...t.config, sandboxLoopbackWebhooks: false } });
    assert.deepEqual(round, { succeeded: 0, failed: 1 });
    assert.equal(receiver.received.length, 0, 'nothing was sent');
    assert.equal(delivery.lastStatusCode, null);
    assert.match(delivery.lastError, /^refused: resolves to a loopback address \(127\.0\.0\.1\).*turned off on this server/);
  });

  it('gives up on a receiver that does not answer within the timeout', async (ctx) => {
    const receiver = await startReceiver(() => 'hang');
    ctx.after(() => receiver.close());
    const { round, delivery } = await shipAndDeliver(ctx, receiver.url, { timeoutMs: 200 });
    assert.deepEqual(round, { succeeded: 0, failed: 1 });
    assert.equal(delivery.lastStatusCode, null);
    assert.equal(delivery.lastError, LOOPBACK_FAILURE);
  });
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`sandbox with SANDBOX_LOOPBACK_WEBHOOKS=off (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const dns = fakeDns({ 'receiver.test': ['127.0.0.1'], 'hooks.example.com': ['93.184.216.34'] });
    const t = useApp(dialect, { SANDBOX_LOOPBACK_WEBHOOKS: 'off' }, { resolveHost: dns.resolve });
    let token: string;
    before(async () => {
      const m = (await t.admin('POST', '/admin/v1/merchants', { name: 'No loopback' })).body.data;
      token = (await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/tokens`, {})).body.data.accessToken;
    });

    it('refuses loopback receivers with 400 on url and writes nothing; public ones are still accepted', async () => {
      assert.equal(t.config.sandboxLoopbackWebhooks, false);
      const before = await tableDigests(t.store);
      for (const url of ['http://127.0.0.1:9/h', 'http://localhost.test:9/h', 'http://[::1]:9/h', 'http://receiver.test:9/h']) {
        dns.point('localhost.test', ['127.0.0.1']);
        const r = await t.merchant(token, 'POST', '/openapi/v1/webhooks', { url, events: ['split_order.shipped'] });
        assert.equal(r.status, 400, `${url}: ${r.raw}`);
        assert.equal(r.body.code, 40000);
        assert.equal(r.body.errors[0].field, 'url');
        assert.match(r.body.errors[0].message, /loopback address.*turned off on this server/, url);
      }
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
      const ok = await t.merchant(token, 'POST', '/openapi/v1/webhooks', { url: 'http://hooks.example.com/h', events: ['split_order.shipped'] });
      assert.equal(ok.status, 200, ok.raw);
    });
  });
}
