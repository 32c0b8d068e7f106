import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HSTS } from '../../src/http/https-policy.ts';
import { ADMIN_KEY, DIALECTS, PG_SKIP, everyTableCount, loadCatalogue, newMerchant, useApp, type TestApp } from '../helpers.ts';
import { ADDRESS, ORDER_CATALOGUE, order } from '../fixtures.ts';

/**
 * SPEC §1 Text, canonical forms: assigned ISO 3166-1 alpha-2 country codes only; SKUs stored and
 * compared in Unicode NFC (so NFC and NFD spellings are one product everywhere), without `,` or
 * whitespace in new SKUs; bodies in UTF-8 only (another charset is 415/41500).
 */

const NFC = 'CAF\u00c9-1'; // CAFÉ-1, É precomposed
const NFD = 'CAFE\u0301-1'; // the same text, E + combining acute

async function refused(t: TestApp, call: () => Promise<{ status: number; body: any }>, status: number, code: number, field?: string) {
  const before = await everyTableCount(t.store);
  const r = await call();
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.code, code);
  if (field)
    assert.ok(
      r.body.errors?.some((e: { field: string }) => e.field === field),
      `${field} named in ${JSON.stringify(r.body)}`,
    );
  assert.deepEqual(await everyTableCount(t.store), before, 'a refused request wrote nothing');
  return r.body;
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`canonical input (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);
    let token = '';
    const setUp = async () => {
      if (token) return token;
      await loadCatalogue(t, ORDER_CATALOGUE);
      token = (await newMerchant(t, 'Canon')).token;
      return token;
    };

    it('accepts only assigned ISO 3166-1 alpha-2 country codes', async () => {
      const tok = await setUp();
      for (const code of ['ZZ', 'XK', 'AA', 'QM', 'UK']) {
        const body = await refused(
          t,
          () => t.admin('POST', '/admin/v1/warehouses', { warehouseCode: 'Z1', name: 'Z', countryCode: code }),
          400,
          40000,
          'countryCode',
        );
        assert.match(JSON.stringify(body.errors), /ISO 3166-1 alpha-2/);
      }
      await refused(
        t,
        () =>
          t.admin('POST', '/admin/v1/channels', {
            channelCode: 'Z',
            name: 'Z',
            channelType: 'Standard',
            warehouseCodes: ['G007'],
            countries: ['US', 'zz'],
            baseFee: 1,
            perKgFee: 1,
            deliveryDaysMin: 1,
            deliveryDaysMax: 2,
          }),
        400,
        40000,
        'countries[1]',
      );
      await refused(
        t,
        () => t.admin('POST', '/admin/v1/import', { warehouses: [{ warehouseCode: 'Z1', name: 'Z', countryCode: 'ZZ' }] }),
        400,
        40000,
        'warehouses[0].countryCode',
      );
      await refused(
        t,
        () => t.merchant(tok, 'POST', '/openapi/v1/order/orders', order([{ sku: 'A', quantity: 1 }], { orderAddress: { ...ADDRESS, country: 'zz' } })),
        400,
        40000,
        'orderAddress.country',
      );
      await refused(
        t,
        () => t.merchant(tok, 'POST', '/openapi/v2/order/orders/channel', { shipToCountry: 'ZZ', products: [{ sku: 'A', quantity: 1 }] }),
        400,
        40000,
        'shipToCountry',
      );
      const o = await t.merchant(tok, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 }]));
      await refused(
        t,
        () => t.merchant(tok, 'POST', `/openapi/v2/order/orders/${o.body.data}/refund`, { orderItems: [{ skuCode: 'C', countryCode: 'ZZ' }] }),
        400,
        40000,
        'orderItems[0].countryCode',
      );
      // Assigned codes in any case are accepted and stored upper-cased; "*" still means everywhere.
      const w = await t.admin('POST', '/admin/v1/warehouses', { warehouseCode: 'DE1', name: 'Berlin', countryCode: 'de' });
      assert.equal(w.status, 200, w.raw);
      assert.equal(w.body.data.countryCode, 'DE');
      const c = await t.admin('POST', '/admin/v1/channels', {
        channelCode: 'ANY',
        name: 'Any',
        channelType: 'Standard',
        warehouseCodes: ['DE1'],
        countries: ['*'],
        baseFee: 1,
        perKgFee: 1,
        deliveryDaysMin: 1,
        deliveryDaysMax: 2,
      });
      assert.equal(c.status, 200, c.raw);
    });

    it('stores and compares SKUs in Unicode NFC: NFC and NFD spellings are one product everywhere', async () => {
      const tok = await setUp();
      const created = await t.admin('POST', '/admin/v1/products', { sku: NFD, name: 'Café mug', price: 2, weightGrams: 100 });
      assert.equal(created.status, 200, created.raw);
      assert.equal(created.body.data.sku, NFC, 'stored in NFC');
      const again = await t.admin('POST', '/admin/v1/products', { sku: NFC, name: 'Café mug v2', price: 2, weightGrams: 100 });
      assert.equal(again.body.data.sku, NFC);
      const imported = await t.admin('POST', '/admin/v1/import', {
        products: [{ sku: NFD, name: 'Café mug v3', price: 3, weightGrams: 100 }],
        stocks: [{ sku: NFD, warehouseCode: 'G007', qty: 5 }],
      });
      assert.equal(imported.status, 200, imported.raw);
      const rows = await t.store.db.selectFrom('products').select(['sku', 'name']).where('name', 'like', 'Caf%').execute();
      assert.deepEqual(rows, [{ sku: NFC, name: 'Café mug v3' }], 'one product, updated in place');
      const adjusted = await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: NFC, warehouseCode: 'G007', delta: 1 }] });
      assert.equal(adjusted.body.data.items[0].qty, 6);
      const set = await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: NFD, warehouseCode: 'G007', qty: 6 }] });
      assert.equal(set.status, 200, set.raw);

      for (const skus of [NFD, NFC, `${NFD},${NFC}`]) {
        const s = await t.merchant(tok, 'GET', `/openapi/v1/product/stocks?skus=${encodeURIComponent(skus)}`);
        assert.deepEqual(s.body.data.list, [{ sku: NFC, warehouseStockList: [{ qty: 6, warehouseCode: 'G007', countryCode: 'CN' }] }], skus);
      }
      const quote = await t.merchant(tok, 'POST', '/openapi/v2/order/orders/channel', { shipToCountry: 'US', products: [{ sku: NFD, quantity: 1 }] });
      assert.equal(quote.status, 200, quote.raw);
      // Two lines, one spelling each: the same SKU, counted together against its stock.
      const placed = await t.merchant(
        tok,
        'POST',
        '/openapi/v1/order/orders',
        order([
          { sku: NFD, quantity: 2 },
          { sku: NFC, quantity: 1 },
        ]),
      );
      assert.equal(placed.status, 200, placed.raw);
      const record = (await t.merchant(tok, 'GET', `/openapi/v2/order/orders/${placed.body.data}`)).body.data;
      assert.deepEqual(
        record.orderItems.map((i: { skuCode: string }) => i.skuCode),
        [NFC, NFC],
      );
      const short = await t.merchant(
        tok,
        'POST',
        '/openapi/v1/order/orders',
        order([
          { sku: NFD, quantity: 2 },
          { sku: NFC, quantity: 2 },
        ]),
      );
      assert.equal(short.status, 422, 'only 3 left');
      const refund = await t.merchant(tok, 'POST', `/openapi/v2/order/orders/${placed.body.data}/refund`, { orderItems: [{ skuCode: NFD, quantity: 1 }] });
      // The SKU sits on two lines of one split order: by SKU alone that is ambiguous, not unknown.
      assert.equal(refund.status, 400, refund.raw);
      assert.match(refund.raw, /ambiguous|itemId/i);
      const byFlat = await t.merchant(tok, 'POST', `/openapi/v2/order/orders/${placed.body.data}/refund`, {
        itemId: record.orderItems[0].id,
        skuCode: NFD,
        quantity: 1,
      });
      assert.equal(byFlat.status, 200, byFlat.raw);
    });

    it('refuses new SKUs containing a comma or whitespace (the skus= list could not name them)', async () => {
      await setUp();
      for (const sku of ['A,B', 'A B', 'A\u00a0B', 'A\u3000B']) {
        const body = await refused(t, () => t.admin('POST', '/admin/v1/products', { sku, name: 'x', price: 1, weightGrams: 1 }), 400, 40000, 'sku');
        assert.match(body.errors[0].message, /without commas or whitespace/);
        await refused(
          t,
          () => t.admin('POST', '/admin/v1/import', { products: [{ sku, name: 'x', price: 1, weightGrams: 1 }] }),
          400,
          40000,
          'products[0].sku',
        );
      }
    });

    it('refuses a body in any charset but UTF-8 with 415/41500, before it is parsed', async () => {
      const tok = await setUp();
      const payload = JSON.stringify(order([{ sku: 'C', quantity: 1 }]));
      for (const type of [
        'application/json; charset=utf-16',
        'application/json; charset=UTF-16LE',
        'application/json;charset="iso-8859-1"',
        'application/json; charset=us-ascii',
      ]) {
        const body = await refused(
          t,
          async () => {
            const r = await t.app.inject({
              method: 'POST',
              url: '/openapi/v1/order/orders',
              payload,
              headers: { authorization: `Bearer ${tok}`, 'content-type': type },
            });
            return { status: r.statusCode, body: r.json() };
          },
          415,
          41500,
        );
        assert.match(body.message, /UTF-8/);
        const a = await t.app.inject({
          method: 'POST',
          url: '/admin/v1/merchants',
          payload: '{"name":"x"}',
          headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': type },
        });
        assert.equal(a.statusCode, 415, type);
      }
      const oauth = await t.app.inject({
        method: 'POST',
        url: '/openapi/oauth/token',
        payload: 'grant_type=client_credentials',
        headers: { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' },
      });
      assert.equal(oauth.statusCode, 415);
      assert.equal(oauth.json().error, 'invalid_request');
      for (const type of ['application/json; charset=UTF-8', 'application/json; charset=utf8', 'application/json;charset="utf-8"', 'application/json']) {
        const r = await t.app.inject({
          method: 'POST',
          url: '/openapi/v2/order/orders/channel',
          payload: { shipToCountry: 'US', products: [{ sku: 'C', quantity: 1 }] },
          headers: { authorization: `Bearer ${tok}`, 'content-type': type },
        });
        assert.equal(r.statusCode, 200, `${type}: ${r.body}`);
      }
    });
  });
}

describe('X-Forwarded-Proto is compared case-insensitively (production, TLS=off, TRUST_PROXY=1)', () => {
  const t = useApp('sqlite', { STOCKIST_ENV: 'production', TRUST_PROXY: '1' });

  it('accepts HTTPS in any case and still refuses http', async () => {
    const m = await newMerchant({
      ...t,
      admin: (method, url, payload) =>
        t.app
          .inject({ method, url, payload: payload as never, headers: { authorization: `Bearer ${ADMIN_KEY}`, 'x-forwarded-proto': 'https' } })
          .then((r) => ({ status: r.statusCode, headers: r.headers, body: r.json(), raw: r.body })),
    });
    for (const proto of ['HTTPS', 'Https', 'http, HTTPS']) {
      const r = await t.app.inject({
        method: 'GET',
        url: '/openapi/v1/product/stocks?skus=A',
        headers: { authorization: `Bearer ${m.token}`, 'x-forwarded-proto': proto },
      });
      assert.equal(r.statusCode, 200, `${proto}: ${r.body}`);
      assert.equal(r.headers['strict-transport-security'], HSTS);
    }
    for (const proto of ['HTTP', 'https, HTTP']) {
      const r = await t.app.inject({
        method: 'GET',
        url: '/openapi/v1/product/stocks?skus=A',
        headers: { authorization: `Bearer ${m.token}`, 'x-forwarded-proto': proto },
      });
      assert.equal(r.statusCode, 403, proto);
      assert.equal(r.json().code, 40301);
    }
  });
});
