import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { ADMIN_KEY, DIALECTS, PG_SKIP, SMALL_CATALOGUE, buildTestApp, loadCatalogue, newMerchant, tableDigests, type TestApp } from '../helpers.ts';

/**
 * Optimistic concurrency on the operator API (docs/api.md, "ETag and If-Match"): a GET answers the
 * resource's ETag, a write with a matching If-Match applies and answers the new one, a write with
 * another is 412/41200 in the envelope and writes nothing, and a write without If-Match applies as
 * before.
 */
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`operator API: ETag and If-Match (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect);
      await loadCatalogue(t);
      return t;
    };
    /** An operator call with extra headers (If-Match). */
    const call = async (t: TestApp, method: InjectOptions['method'], url: string, payload?: unknown, headers: Record<string, string> = {}) => {
      const r = await t.app.inject({
        method,
        url,
        payload: payload as InjectOptions['payload'],
        headers: { authorization: `Bearer ${ADMIN_KEY}`, ...headers },
      });
      return { status: r.statusCode, etag: r.headers.etag as string | undefined, body: r.json() };
    };
    /** A refused write: 412/41200 in the standard envelope, and not one table changed. */
    const refused412 = async (t: TestApp, write: () => Promise<{ status: number; body: any; etag?: string }>) => {
      const before = await tableDigests(t.store);
      const r = await write();
      assert.equal(r.status, 412, JSON.stringify(r.body));
      assert.equal(r.body.code, 41200);
      assert.equal(r.body.data, null);
      assert.match(r.body.message, /nothing was written/);
      assert.equal(typeof r.body.requestId, 'string');
      assert.equal(r.etag, undefined);
      assert.deepEqual(await tableDigests(t.store), before, 'a stale write wrote nothing');
    };

    it('a product: GET gives the ETag, a matching If-Match saves (new ETag), a stale one is 412 and writes nothing', async (ctx) => {
      const t = await build(ctx);
      const read = await call(t, 'GET', '/admin/v1/products/SKU-A');
      assert.equal(read.status, 200);
      assert.equal(read.body.data.name, 'Mug');
      assert.match(read.etag ?? '', /^"\d+"$/);
      const product = { sku: 'SKU-A', name: 'Mug, renamed', categoryId: 11, price: '9.32', weightGrams: 350 };
      const saved = await call(t, 'POST', '/admin/v1/products', product, { 'if-match': read.etag! });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      assert.equal(saved.body.data.name, 'Mug, renamed');
      assert.notEqual(saved.etag, read.etag);
      assert.equal((await call(t, 'GET', '/admin/v1/products/SKU-A')).etag, saved.etag);
      // The second tab: made against the first version, it would put the old name back with its price.
      await refused412(t, () => call(t, 'POST', '/admin/v1/products', { ...product, name: 'Mug', price: '11.00' }, { 'if-match': read.etag! }));
      assert.equal((await call(t, 'GET', '/admin/v1/products/SKU-A')).body.data.name, 'Mug, renamed');
      // A list of tags matches any of them; `*` matches whatever exists; a weak tag never matches.
      assert.equal((await call(t, 'POST', '/admin/v1/products', product, { 'if-match': `"999", ${saved.etag}` })).status, 200);
      assert.equal((await call(t, 'POST', '/admin/v1/products', product, { 'if-match': '*' })).status, 200);
      const now = (await call(t, 'GET', '/admin/v1/products/SKU-A')).etag!;
      await refused412(t, () => call(t, 'POST', '/admin/v1/products', product, { 'if-match': `W/${now}` }));
      // If-Match on a product that does not exist: nothing to match, nothing created.
      await refused412(t, () => call(t, 'POST', '/admin/v1/products', { ...product, sku: 'SKU-NEW' }, { 'if-match': '*' }));
      // Without If-Match the upsert applies as it always did.
      assert.equal((await call(t, 'POST', '/admin/v1/products', { ...product, name: 'Mug 3' })).status, 200);
      assert.equal((await call(t, 'GET', '/admin/v1/products/SKU-NOPE')).status, 404);
    });

    it('If-Match that is not an entity tag list is a 400 naming the header, nothing written', async (ctx) => {
      const t = await build(ctx);
      const before = await tableDigests(t.store);
      const r = await call(t, 'POST', '/admin/v1/products', { sku: 'SKU-A', name: 'X', price: 1, weightGrams: 1 }, { 'if-match': '3' });
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 40000);
      assert.deepEqual(
        r.body.errors.map((e: { field: string }) => e.field),
        ['if-match'],
      );
      assert.deepEqual(await tableDigests(t.store), before);
    });

    it('an import bumps the versions of what it rewrites, so a tag read before it is stale', async (ctx) => {
      const t = await build(ctx);
      const read = await call(t, 'GET', '/admin/v1/products/SKU-B');
      await loadCatalogue(t, { products: SMALL_CATALOGUE.products });
      assert.notEqual((await call(t, 'GET', '/admin/v1/products/SKU-B')).etag, read.etag);
      await refused412(t, () =>
        call(t, 'POST', '/admin/v1/products', { sku: 'SKU-B', name: 'Plate 2', price: 4.5, weightGrams: 500 }, { 'if-match': read.etag! }),
      );
    });

    it('a channel and a warehouse: GET one with its ETag; match → 200, mismatch → 412', async (ctx) => {
      const t = await build(ctx);
      const channel = await call(t, 'GET', '/admin/v1/channels/STD');
      assert.equal(channel.status, 200);
      const body = { ...SMALL_CATALOGUE.channels[0], name: 'Standard, slower', deliveryDaysMax: 12 };
      const saved = await call(t, 'POST', '/admin/v1/channels', body, { 'if-match': channel.etag! });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      assert.equal(saved.body.data.name, 'Standard, slower');
      assert.equal(saved.etag, (await call(t, 'GET', '/admin/v1/channels/STD')).etag);
      await refused412(t, () => call(t, 'POST', '/admin/v1/channels', { ...body, name: 'Old tab' }, { 'if-match': channel.etag! }));
      assert.equal((await call(t, 'GET', '/admin/v1/channels/NOPE')).status, 404);

      const warehouse = await call(t, 'GET', '/admin/v1/warehouses/G007');
      assert.equal(warehouse.status, 200);
      const w = { warehouseCode: 'G007', name: 'Shenzhen 2', countryCode: 'CN' };
      assert.equal((await call(t, 'POST', '/admin/v1/warehouses', w, { 'if-match': warehouse.etag! })).status, 200);
      await refused412(t, () => call(t, 'POST', '/admin/v1/warehouses', { ...w, name: 'Old tab' }, { 'if-match': warehouse.etag! }));
    });

    it('billing terms: the ETag is the terms version (a balance move keeps it); a stale PATCH is 412', async (ctx) => {
      const t = await build(ctx);
      const { merchantId } = await newMerchant(t);
      const url = `/admin/v1/merchants/${merchantId}/account?environment=sandbox`;
      const read = await call(t, 'GET', url);
      assert.equal(read.status, 200);
      assert.equal(read.etag, '"1"', 'an account not opened yet is at the version its opening gives it');
      // Money moving opens the account and changes its balance, not its terms: the tag still matches.
      const topUp = { environment: 'sandbox', amount: '50.00', reference: 'BANK-1' };
      assert.equal((await call(t, 'POST', `/admin/v1/merchants/${merchantId}/account/top-ups`, topUp)).status, 200);
      assert.equal((await call(t, 'GET', url)).etag, read.etag);
      const patch = { environment: 'sandbox', billingMode: 'prepaid', creditLimit: '10.00' };
      const saved = await call(t, 'PATCH', `/admin/v1/merchants/${merchantId}/account`, patch, { 'if-match': read.etag! });
      assert.equal(saved.status, 200, JSON.stringify(saved.body));
      assert.equal(saved.etag, '"2"');
      await refused412(t, () =>
        call(t, 'PATCH', `/admin/v1/merchants/${merchantId}/account`, { environment: 'sandbox', creditLimit: '99.00' }, { 'if-match': read.etag! }),
      );
      assert.equal((await call(t, 'GET', url)).body.data.creditLimit, 10);
      assert.equal((await call(t, 'PATCH', `/admin/v1/merchants/${merchantId}/account`, { environment: 'sandbox', creditLimit: '20.00' })).status, 200);
    });

    it('a webhook endpoint: GET one with its ETag; the status PATCH takes If-Match', async (ctx) => {
      const t = await build(ctx);
      const m = await newMerchant(t);
      const created = await t.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['refund.failed'] });
      assert.equal(created.status, 200, created.raw);
      const id = created.body.data.id;
      const read = await call(t, 'GET', `/admin/v1/webhooks/${id}`);
      assert.equal(read.status, 200);
      assert.equal(read.body.data.merchantId, m.merchantId);
      const off = await call(t, 'PATCH', `/admin/v1/webhooks/${id}`, { status: 'disabled', reason: 'abuse report' }, { 'if-match': read.etag! });
      assert.equal(off.status, 200, JSON.stringify(off.body));
      assert.equal(off.body.data.status, 'disabled');
      await refused412(t, () => call(t, 'PATCH', `/admin/v1/webhooks/${id}`, { status: 'active' }, { 'if-match': read.etag! }));
      // The merchant's own edit (PUT /v1/webhooks/{id}) moves the version too.
      const before = (await call(t, 'GET', `/admin/v1/webhooks/${id}`)).etag;
      assert.equal(
        (await t.merchant(m.token, 'PUT', `/openapi/v1/webhooks/${id}`, { url: 'http://127.0.0.1:9/other', events: ['refund.failed'] })).status,
        200,
      );
      assert.notEqual((await call(t, 'GET', `/admin/v1/webhooks/${id}`)).etag, before);
      assert.equal((await call(t, 'GET', '/admin/v1/webhooks/999999')).status, 404);
    });
  });
}
