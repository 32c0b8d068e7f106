import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { ADMIN_KEY, DIALECTS, freshStore, needRedis, newMerchant, tableDigests, testConfig, useApp } from '../helpers.ts';
import { basic } from './oauth-helpers.ts';

/**
 * SPEC §2.4: failed token-endpoint attempts are counted before the secret is checked, so
 * concurrent guesses cannot pass OAUTH_FAILURE_LIMIT — in one process or across instances sharing
 * Redis — and the address is the one the nearest trusted proxy saw, never one the client chose.
 */
const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const LIMIT = 10;
const CONCURRENT = 200;

/** A clock the tests move by hand: no bucket refills while a test runs, however slow the machine. */
function fakeClock() {
  const clock = { ms: 1_700_000_000_000, now: () => clock.ms };
  return clock;
}

async function attempt(app: FastifyInstance, clientId: string, secret: string, network: { remoteAddress?: string; forwardedFor?: string } = {}) {
  const r = await app.inject({
    method: 'POST',
    url: '/openapi/oauth/token',
    remoteAddress: network.remoteAddress ?? '127.0.0.1',
    payload: 'grant_type=client_credentials',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: basic(clientId, secret),
      ...(network.forwardedFor ? { 'x-forwarded-for': network.forwardedFor } : {}),
    },
  });
  return { status: r.statusCode, headers: r.headers, body: r.json() as Record<string, string> };
}

function tally(statuses: number[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
}

function assertRateLimited(r: Awaited<ReturnType<typeof attempt>>) {
  assert.equal(r.status, 429);
  assert.equal(r.body.error, 'rate_limited');
  assert.equal(typeof r.body.error_description, 'string');
  assert.match(String(r.headers['retry-after']), /^[1-9]\d*$/);
  assert.equal(r.headers['cache-control'], 'no-store');
}

for (const dialect of DIALECTS) {
  describe(`concurrent wrong client secrets (${dialect})`, () => {
    const clock = fakeClock();
    const t = useApp(dialect, { OAUTH_FAILURE_LIMIT: String(LIMIT) }, { now: clock.now });

    it(`checks exactly OAUTH_FAILURE_LIMIT of ${CONCURRENT} concurrent guesses; the others are 429 and write nothing`, async () => {
      const m = await newMerchant(t, `Guessed ${dialect}`);
      const before = await tableDigests(t.store);
      const results = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => attempt(t.app, m.clientId, `sks_wrong_${i}`)));
      assert.deepEqual(tally(results.map((r) => r.status)), { 401: LIMIT, 429: CONCURRENT - LIMIT });
      for (const r of results.filter((r) => r.status === 429)) assertRateLimited(r);
      assert.deepEqual(await tableDigests(t.store), before);
      // Locked out, even with the right secret; another client from the same address is not.
      assertRateLimited(await attempt(t.app, m.clientId, m.clientSecret));
      const other = await newMerchant(t, `Bystander ${dialect}`);
      assert.equal((await attempt(t.app, other.clientId, other.clientSecret)).status, 200);
    });

    it('does not count successes: concurrent right secrets all succeed, then the failure budget is whole', async () => {
      const m = await newMerchant(t, `Busy ${dialect}`);
      // As many concurrent successes as the failure limit: each holds a token only while it is checked.
      const ok = await Promise.all(Array.from({ length: LIMIT }, () => attempt(t.app, m.clientId, m.clientSecret)));
      assert.deepEqual(tally(ok.map((r) => r.status)), { 200: LIMIT });
      const wrong = [];
      for (let i = 0; i < LIMIT + 1; i++) wrong.push((await attempt(t.app, m.clientId, `sks_wrong_${i}`)).status);
      assert.deepEqual(tally(wrong), { 401: LIMIT, 429: 1 });
    });
  });
}

describe('concurrent wrong client secrets across two instances sharing Redis', () => {
  it(`checks exactly OAUTH_FAILURE_LIMIT of ${CONCURRENT} guesses spread over both`, async (t) => {
    if (!(await needRedis(t, REDIS_URL))) return;
    const db = await freshStore('sqlite');
    const clock = fakeClock();
    const config = testConfig({ REDIS_URL, OAUTH_FAILURE_LIMIT: String(LIMIT) });
    const apps = await Promise.all([1, 2].map(() => buildApp({ config, store: db.store, adminApiKey: ADMIN_KEY }, { logger: false, now: clock.now })));
    t.after(async () => {
      for (const app of apps) await app.close();
      await db.drop();
    });
    const created = await apps[0].inject({
      method: 'POST',
      url: '/admin/v1/merchants',
      payload: { name: 'Shared guess' },
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const { clientId, clientSecret } = created.json().data as { clientId: string; clientSecret: string };
    const results = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => attempt(apps[i % 2], clientId, `sks_wrong_${i}`)));
    const seen = tally(results.map((r) => r.status));
    // A Redis call that times out (a starved test machine) is refused with 503, never let through
    // uncounted: then fewer may be checked, never more.
    if (seen[503]) assert.ok((seen[401] ?? 0) <= LIMIT && (seen[401] ?? 0) + (seen[429] ?? 0) + seen[503] === CONCURRENT, JSON.stringify(seen));
    else assert.deepEqual(seen, { 401: LIMIT, 429: CONCURRENT - LIMIT });
    for (const app of apps) assertRateLimited(await attempt(app, clientId, clientSecret));
  });
});

describe('a token-endpoint attempt Redis cannot count', () => {
  it('is refused with 503 temporarily_unavailable, never checked uncounted; bearer tokens keep working', async (t) => {
    if (!(await needRedis(t, REDIS_URL))) return;
    // A relay in front of Redis that the test takes down, as a network partition would.
    const target = new URL(REDIS_URL);
    const sockets = new Set<net.Socket>();
    const relay = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const db = await freshStore('sqlite');
    const config = testConfig({
      REDIS_URL: `redis://127.0.0.1:${(relay.address() as net.AddressInfo).port}`,
      RATE_LIMIT_PER_SECOND: '20',
      RATE_LIMIT_BURST: '40',
    });
    const app = await buildApp({ config, store: db.store, adminApiKey: ADMIN_KEY }, { logger: false });
    t.after(async () => {
      await app.close();
      await db.drop();
    });
    const created = await app.inject({
      method: 'POST',
      url: '/admin/v1/merchants',
      payload: { name: 'Partitioned' },
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const { merchantId, clientId, clientSecret } = created.json().data;
    const issued = await app.inject({
      method: 'POST',
      url: `/admin/v1/merchants/${merchantId}/tokens`,
      payload: {},
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    assert.equal((await attempt(app, clientId, 'sks_wrong')).status, 401, 'counted while Redis is there');
    await new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      relay.close(() => resolve());
    });
    for (const secret of ['sks_wrong_again', clientSecret]) {
      const r = await attempt(app, clientId, secret);
      assert.equal(r.status, 503);
      assert.equal(r.body.error, 'temporarily_unavailable');
      assert.equal(r.headers['retry-after'], '1');
    }
    const read = await app.inject({
      method: 'GET',
      url: '/openapi/v1/product/stocks?skus=SKU-A',
      headers: { authorization: `Bearer ${issued.json().data.accessToken}` },
    });
    assert.equal(read.statusCode, 200, 'the merchant limit lets requests through while Redis is away');
  });
});

describe('the failure limit keys on the address the nearest trusted proxy saw', () => {
  const PROXY = '10.0.0.2';
  const CLIENT = '203.0.113.7';

  describe('TRUST_PROXY=1 (one hop: the last X-Forwarded-For entry)', () => {
    const t = useApp('sqlite', { TRUST_PROXY: '1', OAUTH_FAILURE_LIMIT: String(LIMIT) }, { now: fakeClock().now });

    it('does not let a client escape the limit by rotating X-Forwarded-For', async () => {
      const m = await newMerchant(t, 'Rotating Co');
      const statuses = [];
      // The client writes whatever it likes; the proxy appends the address it saw.
      for (let i = 0; i < 4 * LIMIT; i++) {
        statuses.push((await attempt(t.app, m.clientId, `sks_wrong_${i}`, { remoteAddress: PROXY, forwardedFor: `198.51.100.${i}, ${CLIENT}` })).status);
      }
      assert.deepEqual(tally(statuses), { 401: LIMIT, 429: 3 * LIMIT });
      assertRateLimited(await attempt(t.app, m.clientId, m.clientSecret, { remoteAddress: PROXY, forwardedFor: CLIENT }));
      // Another client behind the same proxy is another address.
      assert.equal((await attempt(t.app, m.clientId, m.clientSecret, { remoteAddress: PROXY, forwardedFor: '198.51.100.1, 203.0.113.8' })).status, 200);
    });
  });

  describe('TRUST_PROXY=2 (two hops)', () => {
    const t = useApp('sqlite', { TRUST_PROXY: '2', OAUTH_FAILURE_LIMIT: String(LIMIT) }, { now: fakeClock().now });

    it('keys on the entry the outer proxy appended', async () => {
      const m = await newMerchant(t, 'Two Hops Co');
      const statuses = [];
      for (let i = 0; i < 2 * LIMIT; i++) {
        statuses.push(
          (await attempt(t.app, m.clientId, `sks_wrong_${i}`, { remoteAddress: PROXY, forwardedFor: `198.51.100.${i}, ${CLIENT}, 10.1.0.1` })).status,
        );
      }
      assert.deepEqual(tally(statuses), { 401: LIMIT, 429: LIMIT });
      assert.equal((await attempt(t.app, m.clientId, m.clientSecret, { remoteAddress: PROXY, forwardedFor: `${CLIENT}, 10.1.0.2` })).status, 429);
      assert.equal((await attempt(t.app, m.clientId, m.clientSecret, { remoteAddress: PROXY, forwardedFor: '203.0.113.8, 10.1.0.1' })).status, 200);
    });
  });

  describe('TRUST_PROXY as a list of proxy addresses', () => {
    const t = useApp('sqlite', { TRUST_PROXY: '10.0.0.0/8, 192.0.2.10', OAUTH_FAILURE_LIMIT: String(LIMIT) }, { now: fakeClock().now });

    it('skips the listed proxies from the right and keys on the first address that is not one', async () => {
      const m = await newMerchant(t, 'Listed Co');
      const statuses = [];
      for (let i = 0; i < 2 * LIMIT; i++) {
        statuses.push(
          (await attempt(t.app, m.clientId, `sks_wrong_${i}`, { remoteAddress: PROXY, forwardedFor: `198.51.100.${i}, ${CLIENT}, 192.0.2.10` })).status,
        );
      }
      assert.deepEqual(tally(statuses), { 401: LIMIT, 429: LIMIT });
      assert.equal((await attempt(t.app, m.clientId, m.clientSecret, { remoteAddress: PROXY, forwardedFor: CLIENT })).status, 429);
    });

    it('ignores X-Forwarded-For from a peer that is not a listed proxy', async () => {
      const m = await newMerchant(t, 'Direct Co');
      const statuses = [];
      for (let i = 0; i < 2 * LIMIT; i++) {
        statuses.push((await attempt(t.app, m.clientId, `sks_wrong_${i}`, { remoteAddress: '198.51.100.50', forwardedFor: `198.51.100.${i}` })).status);
      }
      assert.deepEqual(tally(statuses), { 401: LIMIT, 429: LIMIT });
    });
  });
});

/** SPEC §2.4: successful token grants per client are bounded too (OAUTH_GRANT_BURST, OAUTH_GRANTS_PER_MINUTE). */
describe('successful token grants per client', () => {
  const clock = fakeClock();
  const t = useApp('sqlite', { OAUTH_GRANT_BURST: '3', OAUTH_GRANTS_PER_MINUTE: '6', OAUTH_FAILURE_LIMIT: String(LIMIT) }, { now: clock.now });

  it('are refused past the burst with an RFC 6749-shaped 429 that writes nothing, until the bucket refills', async () => {
    const m = await newMerchant(t, 'Minting Co');
    const first = await attempt(t.app, m.clientId, m.clientSecret);
    assert.equal(first.status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await attempt(t.app, m.clientId, m.clientSecret)).status, 200);
    const before = await tableDigests(t.store);
    const refused = await attempt(t.app, m.clientId, m.clientSecret);
    assertRateLimited(refused);
    assert.equal(refused.headers['retry-after'], '10', 'six a minute: one every 10 s');
    assert.match(refused.body.error_description, /tokens issued to this client/);
    assert.equal(refused.body.code, undefined, 'not the envelope');
    // A refresh is a grant too; refused, it does not consume the refresh token.
    const refresh = await t.app.inject({
      method: 'POST',
      url: '/openapi/oauth/token',
      payload: `grant_type=refresh_token&refresh_token=${encodeURIComponent(first.body.refresh_token)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(m.clientId, m.clientSecret) },
    });
    assert.equal(refresh.statusCode, 429);
    assert.equal(refresh.json().error, 'rate_limited');
    // More refusals than the failure limit: they are not failures, so they do not lock the client out.
    for (let i = 0; i < LIMIT + 5; i++) assert.equal((await attempt(t.app, m.clientId, m.clientSecret)).status, 429);
    assert.deepEqual(await tableDigests(t.store), before);
    // Another client is unaffected.
    const other = await newMerchant(t, 'Quiet Co');
    assert.equal((await attempt(t.app, other.clientId, other.clientSecret)).status, 200);
    clock.ms += 10_000;
    const again = await t.app.inject({
      method: 'POST',
      url: '/openapi/oauth/token',
      payload: `grant_type=refresh_token&refresh_token=${encodeURIComponent(first.body.refresh_token)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(m.clientId, m.clientSecret) },
    });
    assert.equal(again.statusCode, 200, 'the refused refresh token still works');
    assert.equal((await attempt(t.app, m.clientId, m.clientSecret)).status, 429, 'one grant per 10 s');
  });

  it('hold under concurrency: of 50 parallel grants exactly the burst succeed', async () => {
    const m = await newMerchant(t, 'Parallel Minting Co');
    const results = await Promise.all(Array.from({ length: 50 }, () => attempt(t.app, m.clientId, m.clientSecret)));
    assert.deepEqual(tally(results.map((r) => r.status)), { 200: 3, 429: 47 });
  });

  it('cannot be drained by someone without the secret', async () => {
    const m = await newMerchant(t, 'Targeted Co');
    for (let i = 0; i < 5; i++) assert.equal((await attempt(t.app, m.clientId, `sks_wrong_${i}`, { remoteAddress: `198.51.100.${i}` })).status, 401);
    assert.equal((await attempt(t.app, m.clientId, m.clientSecret)).status, 200);
  });
});
