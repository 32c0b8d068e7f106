import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { idRoutes, MERCHANT_PREFIX, routeShape } from '../../src/http/merchant-routes.ts';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, useApp, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

type Owner = Awaited<ReturnType<typeof newMerchant>>;

/** An order placed by `owner` (the catalogue import is idempotent, so every fixture may call it). */
async function ownedOrder(t: TestApp, owner: Owner): Promise<string> {
  await loadCatalogue(t, ORDER_CATALOGUE);
  return (await placeOrder(t, owner.token, [{ sku: 'C', quantity: 1 }])).id;
}

/** A webhook endpoint registered by `owner` (sandbox: a loopback URL needs no DNS). */
async function ownedWebhook(t: TestApp, owner: Owner): Promise<string> {
  const r = await t.merchant(owner.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['split_order.shipped'] });
  if (r.status !== 200) throw new Error(`webhook create failed: ${r.raw}`);
  return r.body.data.id;
}

/** An endpoint of `owner` with one delivery in its log (an order of theirs shipped). */
async function ownedDelivery(t: TestApp, owner: Owner): Promise<{ id: string; deliveryId: string }> {
  const id = await ownedWebhook(t, owner);
  const orderId = await ownedOrder(t, owner);
  const order = (await t.merchant(owner.token, 'GET', `/openapi/v2/order/orders/${orderId}`)).body.data;
  await t.admin('POST', `/admin/v1/split-orders/${order.splitOrders[0].id}/ship`, { carrier: 'UPS', trackingCode: '1Z' });
  const log = await t.merchant(owner.token, 'GET', `/openapi/v1/webhooks/${id}/deliveries`);
  return { id, deliveryId: log.body.data.list[0].id };
}

/** An open claim of `owner` on the shipped split order of one of its orders. */
async function ownedClaim(t: TestApp, owner: Owner): Promise<string> {
  const orderId = await ownedOrder(t, owner);
  const order = (await t.merchant(owner.token, 'GET', `/openapi/v2/order/orders/${orderId}`)).body.data;
  const splitId = order.splitOrders[0].id;
  await t.admin('POST', `/admin/v1/split-orders/${splitId}/ship`, { carrier: 'UPS', trackingCode: '1Z' });
  const r = await t.merchant(owner.token, 'POST', '/openapi/v1/claims', {
    orderId: splitId,
    reason: 'damaged',
    resolution: 'refund',
    items: [{ sku: 'C', quantity: 1 }],
  });
  if (r.status !== 200) throw new Error(`claim open failed: ${r.raw}`);
  return r.body.data.claimNo;
}

interface TenancyCase {
  /**
   * Creates, as `owner`, the resource(s) the route's ids name and returns the path parameters (by
   * name) plus, for routes with a body, a body that is valid apart from whose the id is.
   */
  fixture: (t: TestApp, owner: Owner) => Promise<{ params: Record<string, string>; body?: unknown }>;
}

/**
 * SPEC §2.3: every merchant route that takes an id, and how to own one. Another merchant's id must
 * answer exactly like an id that does not exist. The first test below fails when a merchant route
 * with a path parameter exists that is not listed here, so a new route cannot skip this check; a
 * case whose route the app does not serve fails too, so a removed route cannot shrink it quietly.
 */
export const TENANCY_CASES: Record<string, TenancyCase> = {
  'GET /v2/order/orders/:id': { fixture: async (t, owner) => ({ params: { id: await ownedOrder(t, owner) } }) },
  'POST /v2/order/orders/:id/refund': { fixture: async (t, owner) => ({ params: { id: await ownedOrder(t, owner) }, body: { refundReason: 'Other' } }) },
  'GET /v2/order/orders/refund/:id': { fixture: async (t, owner) => ({ params: { id: await ownedOrder(t, owner) } }) },
  'PUT /v1/webhooks/:id': {
    fixture: async (t, owner) => ({
      params: { id: await ownedWebhook(t, owner) },
      body: { url: 'http://127.0.0.1:9/hook', events: ['stock.changed'], skus: ['C'] },
    }),
  },
  'DELETE /v1/webhooks/:id': { fixture: async (t, owner) => ({ params: { id: await ownedWebhook(t, owner) } }) },
  'POST /v1/webhooks/:id/rotate-secret': { fixture: async (t, owner) => ({ params: { id: await ownedWebhook(t, owner) } }) },
  'GET /v1/webhooks/:id/deliveries': { fixture: async (t, owner) => ({ params: { id: await ownedWebhook(t, owner) } }) },
  'POST /v1/webhooks/:id/deliveries/:deliveryId/retry': { fixture: async (t, owner) => ({ params: await ownedDelivery(t, owner) }) },
  'GET /v1/claims/files/:fileId': {
    fixture: async (t, owner) => {
      const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64)]);
      const r = await t.app.inject({
        method: 'POST',
        url: '/openapi/v1/claims/files',
        payload: png,
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'image/png' },
      });
      if (r.statusCode !== 200) throw new Error(`upload failed: ${r.body}`);
      return { params: { fileId: r.json().data.fileId } };
    },
  },
  'GET /v1/claims/:claimNo': { fixture: async (t, owner) => ({ params: { claimNo: await ownedClaim(t, owner) } }) },
  'POST /v1/claims/:claimNo/cancel': { fixture: async (t, owner) => ({ params: { claimNo: await ownedClaim(t, owner) } }) },
  'POST /v1/claims/:claimNo/return': {
    fixture: async (t, owner) => ({ params: { claimNo: await ownedClaim(t, owner) }, body: { carrier: 'DHL', trackingCode: 'JD1' } }),
  },
};

const caseKey = (method: string, path: string) => `${method} ${routeShape(path)}`;
const CASES_BY_SHAPE = new Map(Object.entries(TENANCY_CASES).map(([key, c]) => [caseKey(key.split(' ')[0], key.split(' ')[1]), { key, ...c }]));

/** Headers that legitimately differ between two otherwise identical answers. */
const VOLATILE = new Set(['date', 'ratelimit-remaining', 'ratelimit-reset', 'content-length']);
const MISSING_ID = '987654321987';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`tenancy: another merchant’s id answers like a missing one (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const registered: { method: string; url: string }[] = [];
    // Claim evidence is written under DATA_DIR/files: a directory of this suite's own.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-tenancy-'));
    after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const t = useApp(
      dialect,
      { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000', DATA_DIR: dataDir },
      {
        onRoute: (r) => registered.push(...[r.method].flat().map((method) => ({ method, url: r.url ?? '' }))),
      },
    );

    it('lists every merchant route that takes an id', () => {
      const withIds = registered.filter((r) => r.url.startsWith(`${MERCHANT_PREFIX}/`) && r.url.includes(':') && r.method !== 'HEAD');
      assert.equal(withIds.length, idRoutes().length, `the app serves every id route of MERCHANT_ROUTES and no other: ${withIds.map((r) => r.url)}`);
      for (const r of withIds) {
        const listed = CASES_BY_SHAPE.has(caseKey(r.method, r.url.slice(MERCHANT_PREFIX.length)));
        assert.ok(listed, `${r.method} ${r.url} takes an id: add it to TENANCY_CASES in test/http/tenancy.test.ts`);
      }
      for (const r of idRoutes()) {
        assert.ok(CASES_BY_SHAPE.has(caseKey(r.method, r.path)), `${r.method} ${r.path} (MERCHANT_ROUTES) is missing from TENANCY_CASES`);
      }
    });

    for (const [key, tenancyCase] of Object.entries(TENANCY_CASES)) {
      const [method, path] = key.split(' ') as ['GET' | 'POST' | 'PUT' | 'DELETE', string];
      it(key, async () => {
        const built = registered.find((r) => r.method === method && routeShape(r.url) === routeShape(MERCHANT_PREFIX + path));
        assert.ok(built, `${key} is in TENANCY_CASES but the app does not serve it`);
        const owner = await newMerchant(t, 'Tenant A');
        const stranger = await newMerchant(t, 'Tenant B');
        const { params, body } = await tenancyCase.fixture(t, owner);
        const url = (ids: Record<string, string>) => built.url.replace(/:([^/]+)/g, (_, name: string) => ids[name] ?? MISSING_ID);
        const missingIds = Object.fromEntries(Object.keys(params).map((name) => [name, MISSING_ID]));
        const ask = (ids: Record<string, string>) =>
          t.app.inject({
            method,
            url: url(ids),
            payload: body as never,
            headers: { authorization: `Bearer ${stranger.token}`, 'x-request-id': 'tenancy-check' },
          });
        const theirs = await ask(params);
        const missing = await ask(missingIds);
        assert.equal(missing.statusCode, 404);
        assert.equal(missing.json().code, 40400);
        assert.equal(theirs.statusCode, missing.statusCode);
        let theirBody = theirs.body;
        for (const [name, id] of Object.entries(params)) theirBody = theirBody.split(id).join(missingIds[name]);
        assert.equal(theirBody, missing.body);
        const headers = (h: Record<string, unknown>) => Object.fromEntries(Object.entries(h).filter(([k]) => !VOLATILE.has(k)));
        assert.deepEqual(headers(theirs.headers), headers(missing.headers));
        // …and the owner does see it.
        const own = await t.app.inject({ method, url: url(params), payload: body as never, headers: { authorization: `Bearer ${owner.token}` } });
        assert.notEqual(own.statusCode, 404, `the owner gets ${key} (${own.body})`);
      });
    }
  });
}
