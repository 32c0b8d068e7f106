import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { DIALECTS, PG_SKIP, everyTableCount, loadCatalogue, newMerchant, useApp, type TestApp } from '../helpers.ts';
import { ADDRESS, ORDER_CATALOGUE, order, placeOrder } from '../fixtures.ts';
import { form } from './oauth-helpers.ts';

/**
 * SPEC §1 Text: NUL, other control characters and lone surrogates in any string a client sends —
 * body fields (known or ignored), property names, query and path parameters, the headers the
 * server reads, the token endpoint's form and JSON fields — are 400/40000 naming the field (the
 * token endpoint: RFC 6749 `invalid_request` naming it), identically on SQLite and PostgreSQL,
 * and nothing is written. Before the rule, PostgreSQL answered 500 for a NUL and SQLite stored it.
 */
const BAD = { nul: 'a\u0000b', control: 'a\u001bb', surrogate: 'a\ud800b' } as const;
type Kind = keyof typeof BAD;
/** A lone surrogate cannot be put in a URL (percent-encoding is of UTF-8 bytes): URL inputs get the other two. */
const URL_KINDS: Kind[] = ['nul', 'control'];

interface Fixture {
  token: string;
  orderId: string;
  itemId: string;
  splitId: string;
  refundNo: string;
  merchantId: string;
  webhookId: string;
  clientId: string;
  clientSecret: string;
}

interface Case {
  name: string;
  /** The field the answer must name. */
  field: string;
  /** Where the value goes: a JSON body (the default), a URL, or a header. */
  via?: 'body' | 'url' | 'header';
  oauth?: boolean;
  /** Which bad values apply (default: all three; URL inputs: URL_KINDS). */
  kinds?: Kind[];
  send(t: TestApp, f: Fixture, value: string): Promise<{ status: number; body: any }>;
}

const q = encodeURIComponent;
const merchant =
  (method: InjectOptions['method'], url: (f: Fixture, v: string) => string, body?: (f: Fixture, v: string) => unknown) => (t: TestApp, f: Fixture, v: string) =>
    t.merchant(f.token, method, url(f, v), body?.(f, v));
const admin =
  (method: InjectOptions['method'], url: (f: Fixture, v: string) => string, body?: (f: Fixture, v: string) => unknown) => (t: TestApp, f: Fixture, v: string) =>
    t.admin(method, url(f, v), body?.(f, v));
const line = (extra: Record<string, unknown> = {}) => ({ sku: 'A', quantity: 1, ...extra });
const createOrder = (body: (v: string) => unknown) =>
  merchant(
    'POST',
    () => '/openapi/v1/order/orders',
    (_f, v) => body(v),
  );
const quote = (path: string, body: (v: string) => unknown) =>
  merchant(
    'POST',
    () => `/openapi/v2/order/orders/${path}`,
    (_f, v) => body(v),
  );
const refund = (body: (f: Fixture, v: string) => unknown) => merchant('POST', (f) => `/openapi/v2/order/orders/${f.orderId}/refund`, body);

async function inject(t: TestApp, options: InjectOptions) {
  const r = await t.app.inject(options);
  return { status: r.statusCode, body: r.json() };
}
const token =
  (params: (f: Fixture, v: string) => Record<string, string>, json = false) =>
  (t: TestApp, f: Fixture, v: string) =>
    inject(t, {
      method: 'POST',
      url: '/openapi/oauth/token',
      payload: json ? params(f, v) : form(params(f, v)),
      headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
    });
const credentials = (f: Fixture) => ({ grant_type: 'client_credentials', client_id: f.clientId, client_secret: f.clientSecret });

const WAREHOUSE = { warehouseCode: 'T1', name: 'Test', countryCode: 'CN' };
const PRODUCT = { sku: 'T-1', name: 'Thing', price: 1, weightGrams: 1 };
const CHANNEL = {
  channelCode: 'T',
  name: 'T',
  channelType: 'Standard',
  warehouseCodes: ['G007'],
  countries: ['*'],
  baseFee: 1,
  perKgFee: 1,
  deliveryDaysMin: 1,
  deliveryDaysMax: 2,
};

const CASES: Case[] = [
  // Orders: every text field of the body, known or ignored, and a property name.
  ...['remark', 'customOrderId', 'salePlatform', 'channelCode', 'channelType'].map(
    (k): Case => ({ name: `order ${k}`, field: k, send: createOrder((v) => order([line()], { [k]: v })) }),
  ),
  ...['sku', 'channelCode', 'warehouseCode', 'channelType'].map(
    (k): Case => ({
      name: `order line ${k}`,
      field: `orderItemsList[0].${k}`,
      send: createOrder((v) => order([line({ [k]: v })])),
    }),
  ),
  ...['country', 'phone', 'recipient', 'province', 'street1', 'street2', 'city', 'zip', 'ioss', 'vat'].map(
    (k): Case => ({
      name: `order address ${k}`,
      field: `orderAddress.${k}`,
      send: createOrder((v) => order([line()], { orderAddress: { ...ADDRESS, [k]: v } })),
    }),
  ),
  {
    name: 'order orderAddresses',
    field: 'orderAddresses.recipient',
    send: createOrder((v) => ({ orderAddresses: { ...ADDRESS, recipient: v }, orderItemsList: [line()] })),
  },
  { name: 'an ignored order field', field: 'chinnelCode', send: createOrder((v) => order([line()], { chinnelCode: v })) },
  { name: 'a property name', field: 'orderItemsList[0]', send: createOrder((v) => order([line({ [v]: 1 })])) },
  // Quotes.
  ...['channel', 'automaticSplit/channel'].flatMap((path): Case[] => [
    { name: `quote ${path} sku`, field: 'products[0].sku', send: quote(path, (v) => ({ shipToCountry: 'US', products: [{ sku: v, quantity: 1 }] })) },
    {
      name: `quote ${path} warehouseCode`,
      field: 'products[0].warehouseCode',
      send: quote(path, (v) => ({ shipToCountry: 'US', products: [{ sku: 'A', quantity: 1, warehouseCode: v }] })),
    },
    { name: `quote ${path} shipToCountry`, field: 'shipToCountry', send: quote(path, (v) => ({ shipToCountry: v, products: [{ sku: 'A', quantity: 1 }] })) },
  ]),
  // Refunds.
  { name: 'refund remark', field: 'remark', send: refund((f, v) => ({ remark: v, orderItems: [{ itemId: f.itemId, quantity: 1 }] })) },
  { name: 'refund refundReason', field: 'refundReason', send: refund((f, v) => ({ refundReason: v, orderItems: [{ itemId: f.itemId, quantity: 1 }] })) },
  { name: 'refund item skuCode', field: 'orderItems[0].skuCode', send: refund((_f, v) => ({ orderItems: [{ skuCode: v, quantity: 1 }] })) },
  { name: 'refund item countryCode', field: 'orderItems[0].countryCode', send: refund((f, v) => ({ orderItems: [{ itemId: f.itemId, countryCode: v }] })) },
  { name: 'refund flat skuCode', field: 'skuCode', send: refund((_f, v) => ({ skuCode: v, quantity: 1 })) },
  // Webhooks.
  {
    name: 'webhook url',
    field: 'url',
    send: merchant(
      'POST',
      () => '/openapi/v1/webhooks',
      (_f, v) => ({ url: `https://example.com/${v}`, events: ['refund.failed'] }),
    ),
  },
  {
    name: 'webhook event',
    field: 'events[0]',
    send: merchant(
      'POST',
      () => '/openapi/v1/webhooks',
      (_f, v) => ({ url: 'https://example.com/h', events: [v] }),
    ),
  },
  // Query strings and path parameters.
  { name: 'stocks skus', field: 'skus', via: 'url', send: merchant('GET', (_f, v) => `/openapi/v1/product/stocks?skus=${q(v)}`) },
  {
    name: 'stocks warehouseCode',
    field: 'warehouseCode',
    via: 'url',
    send: merchant('GET', (_f, v) => `/openapi/v1/product/stocks?skus=A&warehouseCode=${q(v)}`),
  },
  {
    name: 'stocks dateStartTime',
    field: 'dateStartTime',
    via: 'url',
    send: merchant('GET', (_f, v) => `/openapi/v1/product/stocks?pageNumber=1&dateStartTime=${q(v)}`),
  },
  {
    name: 'change feed warehouseCode',
    field: 'warehouseCode',
    via: 'url',
    send: merchant('GET', (_f, v) => `/openapi/v1/product/stocks/changes?warehouseCode=${q(v)}`),
  },
  { name: 'change feed cursor', field: 'cursor', via: 'url', send: merchant('GET', (_f, v) => `/openapi/v1/product/stocks/changes?cursor=${q(v)}`) },
  { name: 'order query ids', field: 'ids', via: 'url', send: merchant('GET', (_f, v) => `/openapi/v2/order/orders?ids=${q(v)}`) },
  {
    name: 'order query createStartTime',
    field: 'createStartTime',
    via: 'url',
    send: merchant('GET', (_f, v) => `/openapi/v2/order/orders?createStartTime=${q(v)}`),
  },
  {
    name: 'products updateStartTime',
    field: 'updateStartTime',
    via: 'url',
    send: merchant('GET', (_f, v) => `/openapi/v1/product/products?updateStartTime=${q(v)}`),
  },
  { name: 'an unknown query parameter', field: 'note', via: 'url', send: merchant('GET', (_f, v) => `/openapi/v1/product/stocks?skus=A&note=${q(v)}`) },
  { name: 'order id in the path', field: 'id', via: 'url', send: merchant('GET', (_f, v) => `/openapi/v2/order/orders/${q(v)}`) },
  { name: 'refund list path', field: 'id', via: 'url', send: merchant('GET', (_f, v) => `/openapi/v2/order/orders/refund/${q(v)}`) },
  {
    name: 'refund path',
    field: 'id',
    via: 'url',
    send: merchant(
      'POST',
      (_f, v) => `/openapi/v2/order/orders/${q(v)}/refund`,
      () => ({}),
    ),
  },
  { name: 'webhook path', field: 'id', via: 'url', send: merchant('DELETE', (_f, v) => `/openapi/v1/webhooks/${q(v)}`) },
  // Headers the server reads.
  {
    name: 'Idempotency-Key',
    field: 'idempotency-key',
    via: 'header',
    send: (t, f, v) =>
      inject(t, {
        method: 'POST',
        url: '/openapi/v1/order/orders',
        payload: order([line()]),
        headers: { authorization: `Bearer ${f.token}`, 'idempotency-key': v },
      }),
  },
  {
    name: 'merchant Authorization',
    field: 'authorization',
    via: 'header',
    send: (t, f, v) => inject(t, { method: 'GET', url: '/openapi/v1/product/stocks?skus=A', headers: { authorization: `Bearer ${f.token}${v}` } }),
  },
  {
    name: 'admin Authorization',
    field: 'authorization',
    via: 'header',
    send: (t, _f, v) => inject(t, { method: 'GET', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${v}` } }),
  },
  // The token endpoint: form and JSON fields, and what HTTP Basic carries.
  // A form body is percent-encoded UTF-8, like a URL: no lone surrogate can be sent in one.
  ...(['client_id', 'client_secret', 'grant_type', 'scope'] as const).map(
    (k): Case => ({
      name: `token form ${k}`,
      field: k,
      oauth: true,
      kinds: URL_KINDS,
      send: token((f, v) => ({ ...credentials(f), [k]: v })),
    }),
  ),
  {
    name: 'token form refresh_token',
    field: 'refresh_token',
    oauth: true,
    kinds: URL_KINDS,
    send: token((f, v) => ({ ...credentials(f), grant_type: 'refresh_token', refresh_token: v })),
  },
  ...(['client_id', 'client_secret', 'grant_type', 'scope'] as const).map(
    (k): Case => ({ name: `token JSON ${k}`, field: k, oauth: true, send: token((f, v) => ({ ...credentials(f), [k]: v }), true) }),
  ),
  {
    name: 'token HTTP Basic client id',
    field: 'authorization',
    oauth: true,
    // Basic credentials are UTF-8 bytes in base64, which no lone surrogate survives.
    kinds: URL_KINDS,
    send: (t, f, v) =>
      inject(t, {
        method: 'POST',
        url: '/openapi/oauth/token',
        payload: 'grant_type=client_credentials',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${v}:${f.clientSecret}`).toString('base64')}` },
      }),
  },
  // Every operator text field.
  ...['warehouseCode', 'name', 'countryCode', 'countryName'].map(
    (k): Case => ({
      name: `warehouse ${k}`,
      field: k,
      send: admin(
        'POST',
        () => '/admin/v1/warehouses',
        (_f, v) => ({ ...WAREHOUSE, [k]: v }),
      ),
    }),
  ),
  ...['name', 'imgUrl'].map(
    (k): Case => ({
      name: `category ${k}`,
      field: k,
      send: admin(
        'POST',
        () => '/admin/v1/categories',
        (_f, v) => ({ categoryId: 900, parentId: 0, name: 'C', [k]: v }),
      ),
    }),
  ),
  ...['sku', 'name', 'imageUrl', 'price'].map(
    (k): Case => ({
      name: `product ${k}`,
      field: k,
      send: admin(
        'POST',
        () => '/admin/v1/products',
        (_f, v) => ({ ...PRODUCT, [k]: v }),
      ),
    }),
  ),
  {
    name: 'product options value',
    field: 'options.colour',
    send: admin(
      'POST',
      () => '/admin/v1/products',
      (_f, v) => ({ ...PRODUCT, options: { colour: v } }),
    ),
  },
  {
    name: 'product options name',
    field: 'options',
    send: admin(
      'POST',
      () => '/admin/v1/products',
      (_f, v) => ({ ...PRODUCT, options: { [v]: 'red' } }),
    ),
  },
  ...['sku', 'warehouseCode'].map(
    (k): Case => ({
      name: `stock set ${k}`,
      field: `items[0].${k}`,
      send: admin(
        'PUT',
        () => '/admin/v1/stocks',
        (_f, v) => ({ items: [{ sku: 'A', warehouseCode: 'G007', qty: 1, [k]: v }] }),
      ),
    }),
  ),
  ...['sku', 'warehouseCode'].map(
    (k): Case => ({
      name: `stock adjust ${k}`,
      field: `items[0].${k}`,
      send: admin(
        'POST',
        () => '/admin/v1/stocks/adjust',
        (_f, v) => ({ items: [{ sku: 'A', warehouseCode: 'G007', delta: 1, [k]: v }] }),
      ),
    }),
  ),
  ...['channelCode', 'name', 'channelType'].map(
    (k): Case => ({
      name: `channel ${k}`,
      field: k,
      send: admin(
        'POST',
        () => '/admin/v1/channels',
        (_f, v) => ({ ...CHANNEL, [k]: v }),
      ),
    }),
  ),
  {
    name: 'channel warehouseCodes',
    field: 'warehouseCodes[0]',
    send: admin(
      'POST',
      () => '/admin/v1/channels',
      (_f, v) => ({ ...CHANNEL, warehouseCodes: [v] }),
    ),
  },
  {
    name: 'channel countries',
    field: 'countries[0]',
    send: admin(
      'POST',
      () => '/admin/v1/channels',
      (_f, v) => ({ ...CHANNEL, countries: [v] }),
    ),
  },
  {
    name: 'import warehouse',
    field: 'warehouses[0].name',
    send: admin(
      'POST',
      () => '/admin/v1/import',
      (_f, v) => ({ warehouses: [{ ...WAREHOUSE, name: v }] }),
    ),
  },
  {
    name: 'import category',
    field: 'categories[0].name',
    send: admin(
      'POST',
      () => '/admin/v1/import',
      (_f, v) => ({ categories: [{ categoryId: 901, parentId: 0, name: v }] }),
    ),
  },
  {
    name: 'import product',
    field: 'products[0].sku',
    send: admin(
      'POST',
      () => '/admin/v1/import',
      (_f, v) => ({ products: [{ ...PRODUCT, sku: v }] }),
    ),
  },
  {
    name: 'import stock',
    field: 'stocks[0].warehouseCode',
    send: admin(
      'POST',
      () => '/admin/v1/import',
      (_f, v) => ({ stocks: [{ sku: 'A', warehouseCode: v, qty: 1 }] }),
    ),
  },
  {
    name: 'import channel',
    field: 'channels[0].name',
    send: admin(
      'POST',
      () => '/admin/v1/import',
      (_f, v) => ({ channels: [{ ...CHANNEL, name: v }] }),
    ),
  },
  {
    name: 'merchant name',
    field: 'name',
    send: admin(
      'POST',
      () => '/admin/v1/merchants',
      (_f, v) => ({ name: v }),
    ),
  },
  {
    name: 'merchant status',
    field: 'status',
    send: admin(
      'PATCH',
      (f) => `/admin/v1/merchants/${f.merchantId}`,
      (_f, v) => ({ status: v }),
    ),
  },
  {
    name: 'token scopes',
    field: 'scopes[0]',
    send: admin(
      'POST',
      (f) => `/admin/v1/merchants/${f.merchantId}/tokens`,
      (_f, v) => ({ scopes: [v] }),
    ),
  },
  {
    name: 'ship carrier',
    field: 'carrier',
    send: admin(
      'POST',
      (f) => `/admin/v1/split-orders/${f.splitId}/ship`,
      (_f, v) => ({ carrier: v, trackingCode: 'T1' }),
    ),
  },
  {
    name: 'ship trackingCode',
    field: 'trackingCode',
    send: admin(
      'POST',
      (f) => `/admin/v1/split-orders/${f.splitId}/ship`,
      (_f, v) => ({ carrier: 'UPS', trackingCode: v }),
    ),
  },
  {
    name: 'refund reject reason',
    field: 'reason',
    send: admin(
      'POST',
      (f) => `/admin/v1/refunds/${f.refundNo}/reject`,
      (_f, v) => ({ reason: v }),
    ),
  },
  {
    name: 'webhook disable reason',
    field: 'reason',
    send: admin(
      'PATCH',
      (f) => `/admin/v1/webhooks/${f.webhookId}`,
      (_f, v) => ({ status: 'disabled', reason: v }),
    ),
  },
  { name: 'admin orders merchantId', field: 'merchantId', via: 'url', send: admin('GET', (_f, v) => `/admin/v1/orders?merchantId=${q(v)}`) },
  { name: 'admin orders ids', field: 'ids', via: 'url', send: admin('GET', (_f, v) => `/admin/v1/orders?ids=${q(v)}`) },
  { name: 'admin order path', field: 'id', via: 'url', send: admin('GET', (_f, v) => `/admin/v1/orders/${q(v)}`) },
  { name: 'admin refunds status', field: 'status', via: 'url', send: admin('GET', (_f, v) => `/admin/v1/refunds?status=${q(v)}`) },
  { name: 'admin webhooks status', field: 'status', via: 'url', send: admin('GET', (_f, v) => `/admin/v1/webhooks?status=${q(v)}`) },
  { name: 'admin token path', field: 'tokenId', via: 'url', send: admin('DELETE', (_f, v) => `/admin/v1/tokens/${q(v)}`) },
];

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`SPEC §1 Text: bad characters in every string input (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);
    let fixture: Fixture | null = null;
    const setUp = async (): Promise<Fixture> => {
      if (fixture) return fixture;
      await loadCatalogue(t, ORDER_CATALOGUE);
      const m = await newMerchant(t, 'Texty');
      const o = await placeOrder(t, m.token, [line({ quantity: 2 })]);
      const r = await t.merchant(m.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, { orderItems: [{ itemId: o.orderItems[0].id, quantity: 1 }] });
      const w = await t.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url: 'https://example.com/hook', events: ['refund.failed'] });
      fixture = {
        token: m.token,
        orderId: o.id,
        itemId: o.orderItems[0].id,
        splitId: o.splitOrders[0].id,
        refundNo: String(r.body.data),
        merchantId: m.merchantId,
        webhookId: String(w.body.data?.id),
        clientId: m.clientId,
        clientSecret: m.clientSecret,
      };
      return fixture;
    };

    it(`refuses NUL, control characters and lone surrogates in ${CASES.length} inputs with 400 naming the field, writing nothing`, async () => {
      const f = await setUp();
      const failures: string[] = [];
      for (const c of CASES) {
        const before = await everyTableCount(t.store);
        for (const kind of c.kinds ?? (c.via === 'url' ? URL_KINDS : (Object.keys(BAD) as Kind[]))) {
          const r = await c.send(t, f, BAD[kind]);
          const label = `${c.name} × ${kind}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`;
          if (c.oauth) {
            if (r.status !== 400 || r.body.error !== 'invalid_request' || !String(r.body.error_description).includes(c.field)) failures.push(label);
          } else if (r.status !== 400 || r.body.code !== 40000 || !r.body.errors?.some((e: { field: string }) => e.field === c.field)) {
            failures.push(label);
          }
        }
        const after = await everyTableCount(t.store);
        if (JSON.stringify(after) !== JSON.stringify(before)) failures.push(`${c.name}: wrote rows`);
      }
      assert.deepEqual(failures, []);
    });

    it('names the offending character and its position', async () => {
      const f = await setUp();
      const r = await t.merchant(f.token, 'POST', '/openapi/v1/order/orders', order([line()], { customOrderId: 'ab\u0000' }));
      assert.deepEqual(r.body.errors, [{ field: 'customOrderId', message: 'must not contain control characters (U+0000 at position 2)' }]);
      const s = await t.merchant(f.token, 'POST', '/openapi/v1/order/orders', order([line()], { salePlatform: '\udc00x' }));
      assert.deepEqual(s.body.errors, [{ field: 'salePlatform', message: 'is not valid Unicode (a lone surrogate U+DC00 at position 0)' }]);
      // DEL and the C1 controls are control characters too.
      for (const c of ['\u007f', '\u0085', '\u009f']) {
        const d = await t.merchant(f.token, 'POST', '/openapi/v1/order/orders', order([line()], { customOrderId: `x${c}` }));
        assert.equal(d.status, 400, JSON.stringify(c));
      }
    });

    it('allows tab and newline in remark only, and well-formed text anywhere', async () => {
      const f = await setUp();
      const ok = await t.merchant(
        f.token,
        'POST',
        '/openapi/v1/order/orders',
        order([line()], { remark: 'leave at door\n\tcall first\r\n', customOrderId: 'text-ok-1', salePlatform: 'Shöp 🧺' }),
      );
      assert.equal(ok.status, 200, ok.raw);
      const stored = await t.merchant(f.token, 'GET', `/openapi/v2/order/orders/${ok.body.data}`);
      assert.equal(stored.body.data.remark, 'leave at door\n\tcall first', 'trimmed, inner tab and newline kept');
      assert.equal(stored.body.data.salePlatform, 'Shöp 🧺');
      const refundOk = await t.merchant(f.token, 'POST', `/openapi/v2/order/orders/${ok.body.data}/refund`, {
        remark: 'two\nlines',
        orderItems: [{ itemId: stored.body.data.orderItems[0].id }],
      });
      assert.equal(refundOk.status, 200, refundOk.raw);
      for (const field of ['customOrderId', 'salePlatform', 'channelCode']) {
        const r = await t.merchant(f.token, 'POST', '/openapi/v1/order/orders', order([line()], { [field]: 'a\tb' }));
        assert.equal(r.status, 400, `${field} with a tab`);
        assert.equal(r.body.errors[0].field, field);
      }
    });
  });
}
