import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app.ts';
import { redisBuckets } from '../../src/http/rate-limit.ts';
import { ADMIN_KEY, freshStore, needRedis, newMerchant, testConfig, useApp, type TestApp } from '../helpers.ts';
import { basic, tokenRequest } from './oauth-helpers.ts';

const STOCK_URL = '/openapi/v1/product/stocks?skus=SKU-A';
const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** A clock the tests move by hand: no test depends on how fast the machine is. */
function fakeClock() {
  const clock = { ms: 1_700_000_000_000, now: () => clock.ms };
  return clock;
}

describe('per-merchant rate limit (in-process token bucket)', () => {
  const clock = fakeClock();
  const t = useApp('sqlite', { RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_BURST: '3' }, { now: clock.now });

  it('allows a burst, then answers 429/42900 with Retry-After and RateLimit headers', async () => {
    const m = await newMerchant(t, 'Burst Co');
    const remaining: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await t.merchant(m.token, 'GET', STOCK_URL);
      assert.equal(r.status, 200);
      assert.equal(r.headers['ratelimit-limit'], '3');
      remaining.push(r.headers['ratelimit-remaining']);
      assert.match(String(r.headers['ratelimit-reset']), /^\d+$/);
    }
    assert.deepEqual(remaining, ['2', '1', '0']);
    const limited = await t.merchant(m.token, 'GET', STOCK_URL);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 42900);
    assert.equal(limited.body.data, null);
    assert.match(limited.body.requestId, /\S/);
    assert.equal(limited.headers['retry-after'], '1', 'a token is back after 0.5 s: rounded up to 1 s');
    assert.equal(limited.headers['ratelimit-remaining'], '0');
    assert.equal(limited.headers['ratelimit-limit'], '3');
  });

  it('refills at the configured rate, not all at once', async () => {
    const m = await newMerchant(t, 'Refill Co');
    for (let i = 0; i < 3; i++) assert.equal((await t.merchant(m.token, 'GET', STOCK_URL)).status, 200);
    assert.equal((await t.merchant(m.token, 'GET', STOCK_URL)).status, 429);
    clock.ms += 499;
    assert.equal((await t.merchant(m.token, 'GET', STOCK_URL)).status, 429, 'not yet a whole token');
    clock.ms += 1;
    const one = await t.merchant(m.token, 'GET', STOCK_URL);
    assert.equal(one.status, 200, 'one token after 1/rate s');
    assert.equal(one.headers['ratelimit-remaining'], '0');
    assert.equal((await t.merchant(m.token, 'GET', STOCK_URL)).status, 429);
    clock.ms += 10_000;
    const full = await t.merchant(m.token, 'GET', STOCK_URL);
    assert.equal(full.headers['ratelimit-remaining'], '2', 'an idle bucket fills up to the burst, no further');
  });

  it('gives every merchant its own budget, and does not count refused credentials', async () => {
    const a = await newMerchant(t, 'Budget A');
    const b = await newMerchant(t, 'Budget B');
    for (let i = 0; i < 3; i++) await t.merchant(a.token, 'GET', STOCK_URL);
    assert.equal((await t.merchant(a.token, 'GET', STOCK_URL)).status, 429);
    assert.equal((await t.merchant(b.token, 'GET', STOCK_URL)).status, 200);
    // Unknown tokens are refused before the limiter: they neither pass nor drain anyone's bucket.
    for (let i = 0; i < 5; i++) assert.equal((await t.merchant('stk_test_nobody', 'GET', STOCK_URL)).status, 401);
    // The operator API has no merchant limit.
    for (let i = 0; i < 5; i++) assert.equal((await t.admin('GET', '/admin/v1/merchants')).status, 200);
  });
});

describe('one bucket per merchant and environment, whatever the number of tokens (SPEC §2.4)', () => {
  const clock = fakeClock();
  const t = useApp('sqlite', { RATE_LIMIT_PER_SECOND: '20', RATE_LIMIT_BURST: '40' }, { now: clock.now });

  it("shares the burst between all of a merchant's tokens: the 41st request of 40 spread over them is 429", async () => {
    const m = await newMerchant(t, 'Many Tokens Co');
    const second = await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/tokens`, {});
    const minted = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(m.clientId, m.clientSecret) });
    const tokens = [m.token, second.body.data.accessToken as string, minted.body.access_token as string];
    const remaining: unknown[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await t.merchant(tokens[i % tokens.length], 'GET', STOCK_URL);
      assert.equal(r.status, 200, `request ${i + 1}`);
      remaining.push(r.headers['ratelimit-remaining']);
    }
    assert.deepEqual(remaining.slice(-3), ['2', '1', '0'], 'one counter for all three tokens');
    for (const token of tokens) {
      const limited = await t.merchant(token, 'GET', STOCK_URL);
      assert.equal(limited.status, 429);
      assert.equal(limited.body.code, 42900);
      assert.equal(limited.headers['retry-after'], '1');
      assert.match(limited.body.message, /per merchant/);
    }
    // A token minted now buys nothing either.
    const fresh = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(m.clientId, m.clientSecret) });
    assert.equal((await t.merchant(fresh.body.access_token, 'GET', STOCK_URL)).status, 429);
    // Another merchant is unaffected.
    const other = await newMerchant(t, 'Bystander Budget Co');
    assert.equal((await t.merchant(other.token, 'GET', STOCK_URL)).status, 200);
    clock.ms += 50;
    assert.equal((await t.merchant(tokens[1], 'GET', STOCK_URL)).status, 200, 'the shared bucket refills at 20/s');
  });

  it('holds under concurrency: of 100 parallel requests over two tokens exactly the burst pass', async () => {
    const m = await newMerchant(t, 'Parallel Tokens Co');
    const second = await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/tokens`, {});
    const tokens = [m.token, second.body.data.accessToken as string];
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => t.merchant(tokens[i % 2], 'GET', STOCK_URL)));
    assert.equal(results.filter((r) => r.status === 200).length, 40);
    assert.equal(results.filter((r) => r.status === 429).length, 60);
  });
});

describe('failed token-endpoint attempts (per client and address)', () => {
  const clock = fakeClock();
  const t = useApp('sqlite', { OAUTH_FAILURE_LIMIT: '3' }, { now: clock.now });

  async function attempt(t: TestApp, clientId: string, secret: string, ip = '127.0.0.1') {
    const r = await t.app.inject({
      method: 'POST',
      url: '/openapi/oauth/token',
      remoteAddress: ip,
      payload: 'grant_type=client_credentials',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(clientId, secret) },
    });
    return { status: r.statusCode, headers: r.headers, body: r.json() };
  }

  it('locks a client out from an address after OAUTH_FAILURE_LIMIT failures, even with the right secret', async () => {
    const m = await newMerchant(t, 'Guessed Co');
    for (let i = 0; i < 3; i++) assert.equal((await attempt(t, m.clientId, `sks_guess_${i}`)).status, 401);
    const locked = await attempt(t, m.clientId, m.clientSecret);
    assert.equal(locked.status, 429);
    assert.equal(locked.body.error, 'rate_limited');
    assert.equal(locked.headers['retry-after'], '30');
    assert.equal(locked.headers['cache-control'], 'no-store');
    // Another address, or another client from this address, is unaffected.
    assert.equal((await attempt(t, m.clientId, m.clientSecret, '10.0.0.9')).status, 200);
    const other = await newMerchant(t, 'Bystander Co');
    assert.equal((await attempt(t, other.clientId, other.clientSecret)).status, 200);
    // One failure is forgiven every 30 s.
    clock.ms += 30_000;
    assert.equal((await attempt(t, m.clientId, m.clientSecret)).status, 200);
  });

  it('counts bad refresh tokens, not malformed requests or successes', async () => {
    const m = await newMerchant(t, 'Refresh Guess Co');
    const auth = { authorization: basic(m.clientId, m.clientSecret) };
    for (let i = 0; i < 5; i++) assert.equal((await tokenRequest(t, { grant_type: 'client_credentials' }, auth)).status, 200);
    for (let i = 0; i < 5; i++) assert.equal((await tokenRequest(t, { grant_type: 'password' }, auth)).body.error, 'unsupported_grant_type');
    for (let i = 0; i < 3; i++)
      assert.equal((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: `stkr_test_${i}` }, auth)).body.error, 'invalid_grant');
    assert.equal((await tokenRequest(t, { grant_type: 'client_credentials' }, auth)).status, 429);
  });
});

describe('shared rate-limit budget on Redis', () => {
  it('draws one budget per merchant across two app instances', async (t) => {
    if (!(await needRedis(t, REDIS_URL))) return;
    const db = await freshStore('sqlite');
    const clock = fakeClock();
    const config = testConfig({ REDIS_URL, RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '4' });
    const [one, two] = await Promise.all([1, 2].map(() => buildApp({ config, store: db.store, adminApiKey: ADMIN_KEY }, { logger: false, now: clock.now })));
    t.after(async () => {
      await one.close();
      await two.close();
      await db.drop();
    });
    const tokenRes = await one.inject({
      method: 'POST',
      url: '/admin/v1/merchants',
      payload: { name: 'Shared' },
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const issued = await one.inject({
      method: 'POST',
      url: `/admin/v1/merchants/${tokenRes.json().data.merchantId}/tokens`,
      payload: {},
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const token = issued.json().data.accessToken;
    const get = (app: typeof one) => app.inject({ method: 'GET', url: STOCK_URL, headers: { authorization: `Bearer ${token}` } });
    const seen: [number, unknown][] = [];
    for (const app of [one, two, one, two, one, two]) {
      const r = await get(app);
      seen.push([r.statusCode, r.headers['ratelimit-remaining']]);
    }
    assert.deepEqual(seen, [
      [200, '3'],
      [200, '2'],
      [200, '1'],
      [200, '0'],
      [429, '0'],
      [429, '0'],
    ]);
    clock.ms += 1000;
    assert.equal((await get(two)).statusCode, 200, 'the refill is shared too');
    assert.equal((await get(one)).statusCode, 429);
  });

  it('keeps merchant #1 of one deployment apart from merchant #1 of another sharing the Redis', async (t) => {
    if (!(await needRedis(t, REDIS_URL))) return;
    const clock = fakeClock();
    const config = testConfig({ REDIS_URL, RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '2' });
    const deployments = await Promise.all(
      [1, 2].map(async () => {
        const db = await freshStore('sqlite');
        const app = await buildApp({ config, store: db.store, adminApiKey: ADMIN_KEY }, { logger: false, now: clock.now });
        t.after(async () => {
          await app.close();
          await db.drop();
        });
        const created = await app.inject({
          method: 'POST',
          url: '/admin/v1/merchants',
          payload: { name: 'First' },
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        });
        const { merchantId } = created.json().data;
        const issued = await app.inject({
          method: 'POST',
          url: `/admin/v1/merchants/${merchantId}/tokens`,
          payload: {},
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        });
        return { app, merchantId, token: issued.json().data.accessToken as string };
      }),
    );
    assert.deepEqual(
      deployments.map((d) => d.merchantId),
      ['1', '1'],
      'the same merchant id in both databases',
    );
    const get = (d: (typeof deployments)[number]) => d.app.inject({ method: 'GET', url: STOCK_URL, headers: { authorization: `Bearer ${d.token}` } });
    const [one, two] = deployments;
    assert.deepEqual([(await get(one)).statusCode, (await get(one)).statusCode, (await get(one)).statusCode], [200, 200, 429]);
    assert.equal((await get(two)).statusCode, 200, 'the other deployment’s merchant 1 has its own bucket');
  });

  it('gives tokens back atomically on Redis too, never beyond the capacity', async (t) => {
    if (!(await needRedis(t, REDIS_URL))) return;
    const clock = fakeClock();
    const buckets = await redisBuckets(REDIS_URL, { now: clock.now });
    t.after(() => buckets.close());
    const key = `test:giveback:${Date.now()}:${Math.random()}`;
    const limits = { capacity: 3, refillMs: 3000 };
    for (let i = 0; i < 3; i++) assert.equal((await buckets.take(key, limits, 1)).allowed, true);
    assert.equal((await buckets.take(key, limits, 1)).allowed, false);
    assert.deepEqual(await buckets.take(key, limits, -1), { allowed: true, tokens: 1 });
    assert.equal((await buckets.take(key, limits, 1)).allowed, true);
    clock.ms += 2500;
    assert.deepEqual(await buckets.take(key, limits, -2), { allowed: true, tokens: 3 }, 'refilled 2.5, plus 2, capped at 3');
  });

  it('refuses to start when REDIS_URL cannot be reached', async (t) => {
    const db = await freshStore('sqlite');
    t.after(() => db.drop());
    const config = testConfig({ REDIS_URL: 'redis://127.0.0.1:1' });
    await assert.rejects(buildApp({ config, store: db.store, adminApiKey: ADMIN_KEY }, { logger: false }), /REDIS_URL/);
  });
});
