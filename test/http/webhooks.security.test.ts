import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { WebhookWorker } from '../../src/jobs/webhook.worker.ts';
import type { HostResolver, ResolvedAddress } from '../../src/domain/webhook-url.ts';
import { ORDER_CATALOGUE } from '../fixtures.ts';
import { ADMIN_KEY, tableDigests, useApp } from '../helpers.ts';
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
  const shipAndDeliver = async (ctx: { after(fn: () => unknown): void }, url: string, options: { timeoutMs?: number } = {}) => {
    const endpoint = await t.merchant(token, 'POST', '/openapi/v1/webhooks', { url, events: ['split_order.shipped'] });
    assert.equal(endpoint.status, 200, endpoint.raw);
    const endpointId: string = endpoint.body.data.id;
    // Each case's endpoint goes afterwards, so later cases' shipments are not sent to it.
    ctx.after(() => t.merchant(token, 'DELETE', `/openapi/v1/webhooks/${endpointId}`));
    const orderId = (await t.merchant(token, 'POST', '/openapi/v1/order/orders', { orderAddress: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 1 }] })).body
      .data;
    await t.admin('POST', `/admin/v1/split-orders/${await splitOf(orderId)}/ship`, { carrier: 'UPS', trackingCode: '1Z' });
    const worker = new WebhookWorker({ store: t.store, config: t.config, resolve: dns.resolve, ...options });
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
    assert.deepEqual([delivery.status, delivery.lastStatusCode], ['pending', 302]);
  });

  it('records a failed attempt with its status code and a capped snippet of the body', async (ctx) => {
    const receiver = await startReceiver((_r, _n, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('x'.repeat(2_000_000));
      return 'handled';
    });
    ctx.after(() => receiver.close());
    const { round, delivery } = await shipAndDeliver(ctx, receiver.url);
    assert.deepEqual(round, { succeeded: 0, failed: 1 });
    assert.equal(delivery.lastStatusCode, 500);
    assert.ok(delivery.lastError.startsWith('HTTP 500: xxx') && delivery.lastError.length <= 220, `capped (${delivery.lastError.length})`);
  });

  it('gives up on a receiver that does not answer within the timeout', async (ctx) => {
    const receiver = await startReceiver(() => 'hang');
    ctx.after(() => receiver.close());
    const { round, delivery } = await shipAndDeliver(ctx, receiver.url, { timeoutMs: 200 });
    assert.deepEqual(round, { succeeded: 0, failed: 1 });
    assert.equal(delivery.lastStatusCode, null);
    assert.match(delivery.lastError, /^network: timed out/);
  });
});
