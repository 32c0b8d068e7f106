import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { requireMerchant } from '../../src/http/auth.ts';
import { MERCHANT_PREFIX, MERCHANT_ROUTES, merchantRouteFor, routeShape } from '../../src/http/merchant-routes.ts';
import { SCOPES } from '../../src/schemas/admin.ts';
import { freshStore, newMerchant, testConfig, useApp } from '../helpers.ts';

/** A concrete URL for a table path: every parameter becomes an id that exists nowhere. */
const concrete = (path: string) => MERCHANT_PREFIX + path.replace(/:[^/]+/g, '987654321');

describe('scopes, per the SPEC §3 table (src/http/merchant-routes.ts)', () => {
  const registered: string[] = [];
  const t = useApp(
    'sqlite',
    { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' },
    {
      onRoute: (r) => registered.push(...[r.method].flat().map((m) => `${m} ${routeShape(r.url ?? '')}`)),
    },
  );

  for (const route of MERCHANT_ROUTES) {
    it(`${route.method} ${route.path} needs ${route.scope}`, async () => {
      // A route in the table that the app does not serve fails here: it must not shrink the coverage quietly.
      const served = registered.includes(`${route.method} ${routeShape(MERCHANT_PREFIX + route.path)}`);
      assert.ok(served, `${route.method} ${route.path} is in MERCHANT_ROUTES but the app does not serve it`);
      const without = await newMerchant(t, `Without ${route.scope}`, { scopes: SCOPES.filter((s) => s !== route.scope) });
      const refused = await t.merchant(without.token, route.method, concrete(route.path), route.method === 'GET' || route.method === 'DELETE' ? undefined : {});
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 40300);
      assert.match(refused.body.message, new RegExp(route.scope));
      const only = await newMerchant(t, `Only ${route.scope}`, { scopes: [route.scope] });
      const allowed = await t.merchant(only.token, route.method, concrete(route.path), route.method === 'GET' || route.method === 'DELETE' ? undefined : {});
      assert.ok(![401, 403].includes(allowed.status), `the scope alone is enough (got ${allowed.status} ${allowed.raw})`);
    });
  }

  it('lists each route once and only known scopes', () => {
    const keys = MERCHANT_ROUTES.map((r) => `${r.method} ${r.path}`);
    assert.equal(new Set(keys).size, keys.length);
    for (const r of MERCHANT_ROUTES) assert.ok((SCOPES as readonly string[]).includes(r.scope), r.path);
    assert.equal(merchantRouteFor('GET', '/openapi/v2/order/orders/:orderId')?.scope, 'orders:read', 'parameter names do not matter');
    assert.equal(merchantRouteFor('HEAD', '/openapi/v1/product/stocks')?.scope, 'stock:read');
    assert.equal(merchantRouteFor('GET', '/openapi/v1/unknown'), undefined);
  });
});

describe('merchant routes outside the scope table', () => {
  async function register(path: string, config: Record<string, unknown> = {}) {
    const db = await freshStore('sqlite');
    const app = Fastify({ logger: false });
    try {
      await app.register(
        async (merchant) => {
          requireMerchant(merchant, testConfig(), db.store);
          merchant.get(path, { config }, async () => ({}));
        },
        { prefix: MERCHANT_PREFIX },
      );
      await app.ready();
    } finally {
      await app.close();
      await db.drop();
    }
  }

  it('cannot be registered', async () => {
    await assert.rejects(register('/v1/secret-stuff'), /not in MERCHANT_ROUTES/);
    await assert.rejects(register('/v1/product/stocks/:sku'), /not in MERCHANT_ROUTES/);
  });

  it('cannot claim a scope other than the table’s', async () => {
    await assert.rejects(register('/v1/product/stocks', { scope: 'catalog:read' }), /differs from the table/);
    await register('/v1/product/stocks', { scope: 'stock:read' });
    await register('/v2/order/orders/:orderId');
  });
});
