import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteOptions } from 'fastify';
import { DIALECTS, PG_SKIP, everyTableCount, useApp } from '../helpers.ts';

/**
 * Issue 13 item 4: every operator id — path parameters, query filters, body ids — is validated like
 * the merchant ones. An id is decimal digits from 1 to 2^53 − 1; anything else is 400/40000 naming
 * the parameter (it used to be a 500: `GET /admin/v1/orders?merchantId=0`), and a well-formed id
 * that names nothing is 404/40400. Every /admin/v1 route with an id is in the table below; the
 * test fails when a route with a path parameter is added without an entry.
 */
const BAD_IDS = ['0', '00', '-1', '1.5', '1e3', 'abc', '0x10', '9007199254740992', '9007199254740993', '99999999999999999999'];
const UNKNOWN_ID = '4503599627370495';

interface PathRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: string;
  param: string;
  body?: unknown;
  /** Other path parameters of the route, filled with a well-formed unknown id while `param` is tried. */
  others?: string[];
}

const PATH_ROUTES: PathRoute[] = [
  { method: 'PATCH', url: '/admin/v1/merchants/:id', param: 'id', body: { status: 'active' } },
  { method: 'POST', url: '/admin/v1/merchants/:id/tokens', param: 'id', body: {} },
  { method: 'DELETE', url: '/admin/v1/tokens/:tokenId', param: 'tokenId' },
  { method: 'GET', url: '/admin/v1/orders/:id', param: 'id' },
  { method: 'POST', url: '/admin/v1/split-orders/:id/ship', param: 'id', body: { carrier: 'UPS', trackingCode: '1Z' } },
  { method: 'POST', url: '/admin/v1/split-orders/:id/deliver', param: 'id' },
  { method: 'GET', url: '/admin/v1/merchants/:id/invitations', param: 'id' },
  { method: 'DELETE', url: '/admin/v1/merchants/:id/invitations/:invitationId', param: 'invitationId', others: ['id'] },
  { method: 'POST', url: '/admin/v1/merchants/:id/password-resets', param: 'id', body: { email: 'ids@example.com' } },
  { method: 'POST', url: '/admin/v1/split-orders/:id/cancel', param: 'id', body: { reason: 'ids' } },
  { method: 'POST', url: '/admin/v1/refunds/:refundNo/approve', param: 'refundNo', body: {} },
  { method: 'POST', url: '/admin/v1/refunds/:refundNo/reject', param: 'refundNo', body: {} },
  { method: 'PATCH', url: '/admin/v1/webhooks/:id', param: 'id', body: { status: 'disabled' } },
  { method: 'GET', url: '/admin/v1/webhooks/:id', param: 'id' },
  { method: 'POST', url: '/admin/v1/merchants/:id/users', param: 'id', body: { email: 'ids@example.com', role: 'viewer' } },
  { method: 'GET', url: '/admin/v1/merchants/:id/account', param: 'id' },
  { method: 'PATCH', url: '/admin/v1/merchants/:id/account', param: 'id', body: { environment: 'sandbox', billingMode: 'prepaid' } },
  { method: 'POST', url: '/admin/v1/merchants/:id/account/top-ups', param: 'id', body: { environment: 'sandbox', amount: 5, reference: 'ids' } },
  { method: 'POST', url: '/admin/v1/merchants/:id/account/adjustments', param: 'id', body: { environment: 'sandbox', amount: 5, reason: 'ids' } },
  { method: 'GET', url: '/admin/v1/merchants/:id/account/transactions', param: 'id' },
  // Claims after shipment (SPEC §18).
  { method: 'GET', url: '/admin/v1/claims/:claimNo', param: 'claimNo' },
  { method: 'GET', url: '/admin/v1/claims/files/:fileId', param: 'fileId' },
  { method: 'POST', url: '/admin/v1/claims/:claimNo/approve', param: 'claimNo', body: {} },
  { method: 'POST', url: '/admin/v1/claims/:claimNo/reject', param: 'claimNo', body: { reason: 'ids' } },
  { method: 'POST', url: '/admin/v1/claims/:claimNo/received', param: 'claimNo', body: { warehouseCode: 'G007' } },
  { method: 'POST', url: '/admin/v1/claims/:claimNo/resolution', param: 'claimNo', body: { resolution: 'refund' } },
];

/** Routes whose path parameter is a code, not an id (a SKU, a warehouse or channel code): their own rules (test/http/edit-versions-api.test.ts). */
const CODE_ROUTES = ['GET /admin/v1/products/:sku', 'GET /admin/v1/channels/:code', 'GET /admin/v1/warehouses/:code'];

/** Query parameters that carry ids: each a filter, so an unknown (well-formed) id is an empty page. */
const QUERY_IDS = [
  { url: '/admin/v1/orders', param: 'merchantId' },
  { url: '/admin/v1/webhooks', param: 'merchantId' },
];

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`operator ids (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const routes: RouteOptions[] = [];
    const t = useApp(dialect, {}, { onRoute: (r) => void routes.push(r) });

    it('has every /admin/v1 route with a path parameter in the table', () => {
      const withParams = routes
        .filter((r) => r.url?.startsWith('/admin/v1/') && r.url.includes(':') && [r.method].flat()[0] !== 'HEAD')
        .map((r) => `${[r.method].flat()[0]} ${r.url}`)
        .filter((route) => !CODE_ROUTES.includes(route))
        .sort();
      assert.deepEqual(withParams, PATH_ROUTES.map((r) => `${r.method} ${r.url}`).sort());
    });

    it('answers a malformed id in a path with 400 naming the parameter, and an unknown one with 404', async () => {
      const failures: string[] = [];
      const before = await everyTableCount(t.store);
      for (const route of PATH_ROUTES) {
        const url = (route.others ?? []).reduce((u, other) => u.replace(`:${other}`, UNKNOWN_ID), route.url);
        for (const id of BAD_IDS) {
          const r = await t.admin(route.method, url.replace(`:${route.param}`, encodeURIComponent(id)), route.body);
          if (r.status !== 400 || r.body.code !== 40000 || r.body.errors?.[0]?.field !== route.param)
            failures.push(`${route.method} ${route.url} ${id} → ${r.status} ${r.raw.slice(0, 200)}`);
        }
        const r = await t.admin(route.method, url.replace(`:${route.param}`, UNKNOWN_ID), route.body);
        if (r.status !== 404 || r.body.code !== 40400) failures.push(`${route.method} ${route.url} unknown → ${r.status} ${r.raw.slice(0, 200)}`);
      }
      assert.deepEqual(failures, []);
      assert.deepEqual(await everyTableCount(t.store), before);
    });

    it('answers a malformed id filter with 400 naming it (it was a 500), an unknown one with an empty page', async () => {
      const failures: string[] = [];
      for (const { url, param } of QUERY_IDS) {
        for (const id of BAD_IDS) {
          const r = await t.admin('GET', `${url}?${param}=${encodeURIComponent(id)}`);
          if (r.status !== 400 || r.body.code !== 40000 || r.body.errors?.[0]?.field !== param)
            failures.push(`${url}?${param}=${id} → ${r.status} ${r.raw.slice(0, 200)}`);
        }
        const r = await t.admin('GET', `${url}?${param}=${UNKNOWN_ID}`);
        if (r.status !== 200 || r.body.data.list.length !== 0) failures.push(`${url}?${param}=${UNKNOWN_ID} → ${r.status} ${r.raw.slice(0, 200)}`);
      }
      // The order id list takes the same rule per entry.
      for (const id of ['0', '9007199254740993', 'abc']) {
        const r = await t.admin('GET', `/admin/v1/orders?ids=1,${id}`);
        if (r.status !== 400 || r.body.errors?.[0]?.field !== 'ids') failures.push(`ids=1,${id} → ${r.status} ${r.raw.slice(0, 200)}`);
      }
      assert.deepEqual(failures, []);
    });

    it('refuses ids in operator bodies that are not ids', async () => {
      const before = await everyTableCount(t.store);
      const cases: [string, unknown, string][] = [
        ['/admin/v1/categories', { categoryId: 0, name: 'C', parentId: 0 }, 'categoryId'],
        ['/admin/v1/categories', { categoryId: '9007199254740993', name: 'C', parentId: 0 }, 'categoryId'],
        // biome-ignore lint/correctness/noPrecisionLoss: a JSON number past 2^53 is the input under test
        ['/admin/v1/categories', { categoryId: 5, name: 'C', parentId: 9007199254740993 }, 'parentId'],
        ['/admin/v1/products', { sku: 'P', name: 'P', price: 1, weightGrams: 1, categoryId: '0' }, 'categoryId'],
        ['/admin/v1/products', { sku: 'P', name: 'P', price: 1, weightGrams: 1, categoryId: 1.5 }, 'categoryId'],
      ];
      for (const [url, body, field] of cases) {
        const r = await t.admin('POST', url, body);
        assert.equal(r.status, 400, `${url} ${JSON.stringify(body)}: ${r.raw}`);
        assert.equal(r.body.errors[0].field, field);
      }
      assert.deepEqual(await everyTableCount(t.store), before);
    });
  });
}
