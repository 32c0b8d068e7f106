import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HSTS } from '../../src/http/https-policy.ts';
import type { InjectOptions } from 'fastify';
import { ADMIN_KEY, newMerchant, useApp, type TestApp } from '../helpers.ts';
import { basic } from './oauth-helpers.ts';

const STOCK_URL = '/openapi/v1/product/stocks?skus=SKU-A';

/** The operator calls of `t`, as a TLS-terminating proxy forwards them. */
function behindProxy(t: TestApp): TestApp {
  const call = async (authorization: string, method: InjectOptions['method'], url: string, payload?: unknown) => {
    const r = await t.app.inject({ method, url, payload: payload as InjectOptions['payload'], headers: { authorization, 'x-forwarded-proto': 'https' } });
    return { status: r.statusCode, headers: r.headers, body: r.json(), raw: r.body };
  };
  return {
    get app() {
      return t.app;
    },
    get store() {
      return t.store;
    },
    get config() {
      return t.config;
    },
    admin: (method, url, payload) => call(`Bearer ${ADMIN_KEY}`, method, url, payload),
    merchant: (token, method, url, payload) => call(`Bearer ${token}`, method, url, payload),
  };
}

describe('HTTPS behind a proxy in production (TLS=off, TRUST_PROXY=1)', () => {
  const app = useApp('sqlite', { STOCKIST_ENV: 'production', TRUST_PROXY: '1' });
  const t = behindProxy(app);

  it('serves requests the proxy received over https, with HSTS', async () => {
    const m = await newMerchant(t, 'Proxied Co');
    assert.match(m.token, /^stk_live_/);
    const r = await t.app.inject({ method: 'GET', url: STOCK_URL, headers: { authorization: `Bearer ${m.token}`, 'x-forwarded-proto': 'https' } });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['strict-transport-security'], HSTS);
    // The nearest proxy appends its entry last; that is the one that counts.
    const chained = await t.app.inject({ method: 'GET', url: STOCK_URL, headers: { authorization: `Bearer ${m.token}`, 'x-forwarded-proto': 'http, https' } });
    assert.equal(chained.statusCode, 200);
  });

  it('refuses plain HTTP with 403/40301 on every API, before looking at credentials', async () => {
    const m = await newMerchant(t, 'Plain Co');
    for (const proto of [undefined, 'http', 'https, http', 'ftp']) {
      for (const [method, url, authorization] of [
        ['GET', STOCK_URL, `Bearer ${m.token}`],
        ['GET', STOCK_URL, undefined],
        ['GET', '/admin/v1/merchants', `Bearer ${ADMIN_KEY}`],
        ['POST', '/openapi/oauth/token', basic(m.clientId, m.clientSecret)],
        ['GET', '/openapi/openapi/v1/product/stocks?skus=A', `Bearer ${m.token}`],
      ] as const) {
        const r = await t.app.inject({
          method,
          url,
          headers: { ...(authorization ? { authorization } : {}), ...(proto ? { 'x-forwarded-proto': proto } : {}) },
          ...(method === 'POST'
            ? {
                payload: 'grant_type=client_credentials',
                headers: {
                  'content-type': 'application/x-www-form-urlencoded',
                  ...(authorization ? { authorization } : {}),
                  ...(proto ? { 'x-forwarded-proto': proto } : {}),
                },
              }
            : {}),
        });
        assert.equal(r.statusCode, 403, `${proto} ${method} ${url}`);
        if (url.includes('oauth')) {
          // The token endpoint answers in RFC 6749 form, as it does for every error.
          assert.equal(r.json().error, 'invalid_request');
          assert.match(r.json().error_description, /HTTPS/);
        } else {
          assert.equal(r.json().code, 40301);
          assert.match(r.json().message, /HTTPS/);
        }
        assert.equal(r.headers['strict-transport-security'], undefined);
        assert.ok(r.headers['x-request-id']);
      }
    }
  });

  it('lets load-balancer health probes through over plain HTTP', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
  });

  it('refuses a sandbox token in production with a message that says so', async () => {
    const r = await t.app.inject({
      method: 'GET',
      url: STOCK_URL,
      headers: { authorization: `Bearer stk_test_${'a'.repeat(40)}`, 'x-forwarded-proto': 'https' },
    });
    assert.equal(r.statusCode, 401);
    assert.equal(r.json().code, 40100);
    assert.match(r.json().message, /sandbox token/);
  });
});

describe('HTTPS behind listed proxies in production (TLS=off, TRUST_PROXY=<addresses>)', () => {
  // The test's operator calls come from 127.0.0.1 (light-my-request's default peer).
  const t = useApp('sqlite', { STOCKIST_ENV: 'production', TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' });

  it('believes X-Forwarded-Proto only from a listed proxy, and only its last entry', async () => {
    const m = await newMerchant(behindProxy(t), 'Listed Proxy Co');
    const get = (remoteAddress: string, proto: string) =>
      t.app.inject({ method: 'GET', url: STOCK_URL, remoteAddress, headers: { authorization: `Bearer ${m.token}`, 'x-forwarded-proto': proto } });
    const viaProxy = await get('10.0.0.2', 'https');
    assert.equal(viaProxy.statusCode, 200);
    assert.equal(viaProxy.headers['strict-transport-security'], HSTS);
    // A client reaching the server directly cannot claim https.
    const direct = await get('203.0.113.7', 'https');
    assert.equal(direct.statusCode, 403);
    assert.equal(direct.json().code, 40301);
    assert.equal((await get('10.0.0.2', 'https, http')).statusCode, 403, 'the proxy said http');
  });
});

describe('HTTPS in the sandbox with TLS=off', () => {
  const t = useApp('sqlite', { TRUST_PROXY: '1' });

  it('does not enforce HTTPS outside production, but still sends HSTS on proxied https', async () => {
    const m = await newMerchant(t, 'Sandbox Co');
    const plain = await t.merchant(m.token, 'GET', STOCK_URL);
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['strict-transport-security'], undefined);
    const https = await t.app.inject({ method: 'GET', url: STOCK_URL, headers: { authorization: `Bearer ${m.token}`, 'x-forwarded-proto': 'https' } });
    assert.equal(https.headers['strict-transport-security'], HSTS);
  });
});

describe('X-Forwarded-Proto without TRUST_PROXY', () => {
  const t = useApp('sqlite');

  it('is ignored: a client cannot claim https', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-forwarded-proto': 'https' } });
    assert.equal(r.headers['strict-transport-security'], undefined);
  });
});

describe('HSTS with TLS on', () => {
  const t = useApp('sqlite', { TLS: 'on' });

  it('is sent on every response, errors included', async () => {
    for (const url of ['/healthz', '/openapi/v1/product/stocks?skus=A', '/nowhere']) {
      const r = await t.app.inject({ method: 'GET', url });
      assert.equal(r.headers['strict-transport-security'], HSTS, url);
    }
  });
});
