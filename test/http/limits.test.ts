import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { buildTestApp, newMerchant, useApp, type TestApp } from '../helpers.ts';
import { exceedsDepth } from '../../src/http/limits.ts';

/** Issue 9 abuse limits: sizes, depth, slow clients, connections, list bounds, overload shedding. */

/** Listens on a free port and returns it (the app is closed by the test helper). */
async function listen(t: TestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return (t.app.server.address() as net.AddressInfo).port;
}

/** Writes `chunks` on a raw socket and collects everything until the server closes it. */
function rawExchange(port: number, chunks: string[], pauseMs = 0): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ text, closed: true }));
    socket.on('connect', async () => {
      for (const c of chunks) {
        if (socket.destroyed) break;
        socket.write(c);
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      }
    });
    socket.setTimeout(20_000, () => reject(new Error(`no close; got ${text}`)));
  });
}

const envelopeOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

/**
 * Polls `check` until it returns a value other than undefined/false and returns that value; fails
 * (instead of hanging) when it has not within `limitMs`, which is generous: a loaded CI machine is
 * slow, and only a broken rule takes that long.
 */
async function waitFor<T>(what: string, check: () => Promise<T | false | undefined>, limitMs = 60_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value !== false && value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`gave up after ${limitMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}

describe('JSON depth, encoding and prototype keys', () => {
  const t = useApp('sqlite', { MAX_JSON_DEPTH: '8' });
  const nested = (n: number) => `${'{"a":'.repeat(n - 1)}[1]${'}'.repeat(n - 1)}`;

  it('counts depth outside strings only', () => {
    assert.equal(exceedsDepth('{"a":"[[[[[[[[[[[["}', 2), false);
    assert.equal(exceedsDepth('{"a":"\\"[[[[","b":[[1]]}', 3), false);
    assert.equal(exceedsDepth('{"b":[[[1]]]}', 3), true);
  });

  it('refuses nesting deeper than MAX_JSON_DEPTH with 400/40001 and accepts it at the limit', async () => {
    const deep = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/merchants',
      headers: { authorization: 'Bearer test-admin-key-0123456789', 'content-type': 'application/json' },
      payload: nested(9),
    });
    assert.equal(deep.statusCode, 400);
    assert.equal(deep.json().code, 40001);
    assert.match(deep.json().message, /nesting deeper than 8/);
    const atLimit = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/merchants',
      headers: { authorization: 'Bearer test-admin-key-0123456789', 'content-type': 'application/json' },
      payload: nested(8),
    });
    assert.notEqual(atLimit.json().code, 40001);
    // A million brackets are refused after reading nine of them.
    const huge = await t.app.inject({
      method: 'POST',
      url: '/admin/v1/merchants',
      headers: { authorization: 'Bearer test-admin-key-0123456789', 'content-type': 'application/json' },
      payload: '['.repeat(500_000),
    });
    assert.equal(huge.json().code, 40001);
  });

  it('refuses __proto__, constructor.prototype and invalid UTF-8 with 40001', async () => {
    for (const payload of [
      '{"name":"x","__proto__":{"admin":true}}',
      '{"name":"x","constructor":{"prototype":{"admin":true}}}',
      Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    ]) {
      const r = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/merchants',
        headers: { authorization: 'Bearer test-admin-key-0123456789', 'content-type': 'application/json' },
        payload,
      });
      assert.equal(r.statusCode, 400, r.body);
      assert.equal(r.json().code, 40001);
    }
  });

  it('answers the OAuth token endpoint in its own shape', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/openapi/oauth/token', headers: { 'content-type': 'application/json' }, payload: nested(20) });
    assert.equal(r.statusCode, 400);
    assert.equal(r.json().error, 'invalid_request');
  });
});

describe('list bounds', () => {
  const t = useApp('sqlite');
  it('refuses more than 100 ids and more than 30 distinct SKUs with 400/40000', async () => {
    const m = await newMerchant(t);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => 1000 + i).join(',');
    assert.equal((await t.merchant(m.token, 'GET', `/openapi/v2/order/orders?ids=${ids(100)}`)).status, 200);
    const many = await t.merchant(m.token, 'GET', `/openapi/v2/order/orders?ids=${ids(101)}`);
    assert.equal(many.status, 400);
    assert.equal(many.body.code, 40000);
    assert.equal((await t.admin('GET', `/admin/v1/orders?ids=${ids(101)}`)).status, 400);
    const skus = (n: number) => Array.from({ length: n }, (_, i) => `S${i}`).join(',');
    assert.equal((await t.merchant(m.token, 'GET', `/openapi/v1/product/stocks?skus=${skus(30)},S0,,S1`)).status, 200);
    const tooMany = await t.merchant(m.token, 'GET', `/openapi/v1/product/stocks?skus=${skus(31)}`);
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.errors[0].field, 'skus');
  });
});

describe('request size and slow clients (real sockets)', () => {
  it('answers headers over MAX_HEADER_BYTES with 431 and bodies over BODY_LIMIT_BYTES with 413, both enveloped', async (ctx) => {
    const t = await buildTestApp(ctx, 'sqlite', { MAX_HEADER_BYTES: '2048', BODY_LIMIT_BYTES: '1024' });
    const port = await listen(t);
    const big = await rawExchange(port, [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(4096)}\r\n\r\n`]);
    assert.match(big.text, /^HTTP\/1.1 431/);
    assert.equal(envelopeOf(big.text).code, 43100);
    const r = await fetch(`http://127.0.0.1:${port}/admin/v1/merchants`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-admin-key-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(2000) }),
    });
    assert.equal(r.status, 413);
    assert.equal(((await r.json()) as { code: number }).code, 41300);
  });

  it('cuts off a body that trickles in slower than REQUEST_TIMEOUT_MS with 408 and closes the connection', async (ctx) => {
    const t = await buildTestApp(ctx, 'sqlite', { REQUEST_TIMEOUT_MS: '300' });
    const port = await listen(t);
    // Headers promise 100 bytes; one arrives, then the client stalls (slow loris).
    const slow = await rawExchange(port, [
      'POST /admin/v1/merchants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-admin-key-0123456789\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
    ]);
    assert.ok(slow.closed);
    assert.match(slow.text, /^HTTP\/1.1 408/);
    assert.equal(envelopeOf(slow.text).code, 40800);
    // Headers that never finish are cut off the same way.
    const slowHead = await rawExchange(port, ['GET /healthz HTTP/1.1\r\n', 'Host: x\r\n']);
    assert.ok(slowHead.closed);
    assert.match(slowHead.text, /^HTTP\/1.1 408/);
  });

  it('closes connections beyond MAX_CONNECTIONS at once and serves again when one is freed', async (ctx) => {
    const t = await buildTestApp(ctx, 'sqlite', { MAX_CONNECTIONS: '2' });
    const port = await listen(t);
    const open = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect(port, '127.0.0.1', () => resolve(s));
            s.on('error', () => undefined);
          }),
      ),
    );
    const connections = () => new Promise<number>((r) => t.app.server.getConnections((_, n) => r(n)));
    await waitFor('the server to count both connections', async () => (await connections()) === 2);
    const third = await rawExchange(port, ['GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n']);
    assert.ok(third.closed);
    assert.equal(third.text, '', 'the connection over the limit is closed without an answer');
    open[0].destroy();
    await waitFor('the server to drop the closed connection', async () => (await connections()) === 1);
    const again = await rawExchange(port, ['GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
    assert.match(again.text, /^HTTP\/1.1 200/);
    open[1].destroy();
  });
});

describe('overload shedding', () => {
  it('answers 503/50300 with Retry-After before any work while the heap is over OVERLOAD_MAX_HEAP_BYTES; health and metrics still answer', async (ctx) => {
    const t = await buildTestApp(ctx, 'sqlite', { OVERLOAD_MAX_HEAP_BYTES: '1024', OVERLOAD_SAMPLE_MS: '10', OVERLOAD_RETRY_AFTER_SECONDS: '7' });
    await waitFor('the heap check to shed', async () => (await t.admin('GET', '/admin/v1/merchants')).status === 503);
    const r = await t.admin('POST', '/admin/v1/merchants', { name: 'Refused' });
    assert.equal(r.status, 503);
    assert.equal(r.body.code, 50300);
    assert.equal(r.headers['retry-after'], '7');
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    const token = await t.app.inject({ method: 'POST', url: '/openapi/oauth/token', payload: { grant_type: 'client_credentials' } });
    assert.equal(token.statusCode, 503);
    assert.equal(token.json().error, 'temporarily_unavailable');
    assert.equal(token.headers['retry-after'], '7');
    // Shed before the handler ran: nothing was written.
    assert.equal((await t.store.db.selectFrom('merchants').selectAll().execute()).length, 0);
  });

  it('sheds while the event loop lags over OVERLOAD_MAX_EVENT_LOOP_DELAY_MS and recovers when it catches up', async (ctx) => {
    const t = await buildTestApp(ctx, 'sqlite', { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '50', OVERLOAD_SAMPLE_MS: '40', OVERLOAD_RETRY_AFTER_SECONDS: '3' });
    await waitFor('the app to serve before any lag', async () => (await t.admin('GET', '/admin/v1/merchants')).status === 200);
    const shed = await waitFor('a lagging event loop to shed', async () => {
      const until = Date.now() + 400;
      while (Date.now() < until); // a blocked event loop: what a request backlog looks like from inside
      // The overdue sampling timer runs before this one, so the request meets the fresh sample.
      await new Promise((r) => setTimeout(r, 1));
      const r = await t.admin('GET', '/admin/v1/merchants');
      return r.status === 503 ? r : undefined;
    });
    assert.equal(shed.body.code, 50300);
    assert.equal(shed.headers['retry-after'], '3');
    const recovered = await waitFor('the app to serve again once the loop caught up', async () => {
      const r = await t.admin('GET', '/admin/v1/merchants');
      return r.status === 503 ? undefined : r;
    });
    assert.equal(recovered.status, 200, recovered.raw);
    assert.deepEqual(recovered.body.data, { list: [] });
  });

  it('is off when both thresholds are 0', async (ctx) => {
    const t = await buildTestApp(ctx, 'sqlite', { OVERLOAD_MAX_HEAP_BYTES: '0', OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0', OVERLOAD_SAMPLE_MS: '10' });
    // The same lag that sheds in the test above, several sampling periods over.
    for (let i = 0; i < 3; i++) {
      const until = Date.now() + 400;
      while (Date.now() < until);
      await new Promise((r) => setTimeout(r, 20));
      assert.equal((await t.admin('GET', '/admin/v1/merchants')).status, 200);
    }
  });
});
