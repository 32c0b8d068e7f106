import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { requireMerchant } from '../../src/http/auth.ts';
import { MERCHANT_PREFIX, MERCHANT_ROUTES, merchantRouteFor, routeShape, type MerchantRoute } from '../../src/http/merchant-routes.ts';
import { SCOPES, type Scope } from '../../src/schemas/admin.ts';
import { freshStore, newMerchant, tableDigests, testConfig, useApp } from '../helpers.ts';

/** A concrete URL for a table path: every parameter becomes an id that exists nowhere. */
const concrete = (path: string) => MERCHANT_PREFIX + path.replace(/:[^/]+/g, '987654321');

/**
 * The scope of every merchant route, written out by hand from SPEC §2.1, §3, §13, §15 and §18
 * (Hardening III, 11) — not read from MERCHANT_ROUTES, whose scopes the app enforces: a route given
 * the wrong scope there (a webhook write behind another scope, say) fails here, where before only
 * the OpenAPI snapshot noticed.
 */
const EXPECTED_SCOPES: Record<string, Scope> = {
  'POST /v1/order/orders': 'orders:write',
  'POST /v2/order/orders': 'orders:write',
  'GET /v2/order/orders': 'orders:read',
  'GET /v2/order/orders/:id': 'orders:read',
  'POST /v2/order/orders/:id/refund': 'refunds:write',
  'GET /v2/order/orders/refund/:id': 'orders:read',
  'POST /v2/order/orders/channel': 'orders:read',
  'POST /v2/order/orders/automaticSplit/channel': 'orders:read',
  'GET /v1/product/stocks': 'stock:read',
  'GET /v1/product/stocks/changes': 'stock:read',
  'GET /v1/product/category': 'catalog:read',
  'GET /v1/product/countryAndWarehouse': 'catalog:read',
  'GET /v1/product/products': 'catalog:read',
  'POST /v1/webhooks': 'orders:read',
  'GET /v1/webhooks': 'orders:read',
  'PUT /v1/webhooks/:id': 'orders:read',
  'DELETE /v1/webhooks/:id': 'orders:read',
  'POST /v1/webhooks/:id/rotate-secret': 'orders:read',
  'GET /v1/webhooks/:id/deliveries': 'orders:read',
  'POST /v1/webhooks/:id/deliveries/:deliveryId/retry': 'orders:read',
  'GET /v1/account': 'account:read',
  'GET /v1/account/transactions': 'account:read',
  'POST /v1/claims': 'claims:write',
  'POST /v1/claims/files': 'claims:write',
  'GET /v1/claims/files/:fileId': 'claims:read',
  'GET /v1/claims': 'claims:read',
  'GET /v1/claims/:claimNo': 'claims:read',
  'POST /v1/claims/:claimNo/cancel': 'claims:write',
  'POST /v1/claims/:claimNo/return': 'claims:write',
};

describe('scopes, per the SPEC §3 table written out above (Hardening III, 11)', () => {
  const registered: string[] = [];
  const t = useApp(
    'sqlite',
    { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' },
    {
      onRoute: (r) => registered.push(...[r.method].flat().map((m) => `${m} ${routeShape(r.url ?? '')}`)),
    },
  );

  it('the route table names the same routes as the expectations', () => {
    assert.deepEqual(MERCHANT_ROUTES.map((r) => `${r.method} ${r.path}`).sort(), Object.keys(EXPECTED_SCOPES).sort());
  });

  for (const [key, scope] of Object.entries(EXPECTED_SCOPES)) {
    const [method, path] = key.split(' ') as [MerchantRoute['method'], string];
    it(`${key} needs ${scope}`, async () => {
      // A route in the table that the app does not serve fails here: it must not shrink the coverage quietly.
      const served = registered.includes(`${method} ${routeShape(MERCHANT_PREFIX + path)}`);
      assert.ok(served, `${key} is expected but the app does not serve it`);
      const body = method === 'GET' || method === 'DELETE' ? undefined : {};
      // Every other scope together is not enough, and a refused write changes nothing.
      const without = await newMerchant(t, `Without ${scope}`, { scopes: SCOPES.filter((s) => s !== scope) });
      const before = await tableDigests(t.store);
      const refused = await t.merchant(without.token, method, concrete(path), body);
      assert.equal(refused.status, 403, `${key} without ${scope}: ${refused.raw}`);
      assert.equal(refused.body.code, 40300);
      assert.match(refused.body.message, new RegExp(scope));
      if (method !== 'GET') assert.deepEqual(await tableDigests(t.store), before, 'refused: nothing written');
      const only = await newMerchant(t, `Only ${scope}`, { scopes: [scope] });
      const allowed = await t.merchant(only.token, method, concrete(path), body);
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
