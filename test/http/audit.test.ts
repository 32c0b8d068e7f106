import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { ADMIN_KEY, DIALECTS, PG_SKIP, buildTestApp, loadCatalogue, newMerchant, tableDigests, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

/**
 * Issue 16: every operator write through the operator API leaves one audit row — the admin key's
 * fingerprint as the actor, the action, the target, what it was and what it became, and the
 * request id — written with the change; a refused write leaves none; no secret is ever recorded.
 */

interface AuditRow {
  id: string;
  actorKind: string;
  actorId: string;
  action: string;
  target: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  requestId: string | null;
  createdAt: string;
}

let requestSeq = 0;

/** An operator call carrying a request id of its own, so its audit row can be told apart. */
async function adminCall(t: TestApp, method: InjectOptions['method'], url: string, payload?: unknown) {
  const requestId = `audit-test-${++requestSeq}`;
  const r = await t.app.inject({
    method,
    url,
    payload: payload as InjectOptions['payload'],
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'x-request-id': requestId },
  });
  return { status: r.statusCode, body: r.body === '' ? null : JSON.parse(r.body), raw: r.body, requestId };
}

const newest = async (t: TestApp, n = 1): Promise<AuditRow[]> => (await t.admin('GET', `/admin/v1/audit?limit=${n}`)).body.data.list;

/** The write succeeded and the newest audit row is its own, saying exactly this. */
async function expectAudited(
  t: TestApp,
  call: { status: number; raw: string; requestId: string },
  expected: Pick<AuditRow, 'action' | 'target' | 'before' | 'after'>,
) {
  assert.equal(call.status, 200, call.raw);
  const [row] = await newest(t);
  assert.equal(row.actorKind, 'admin_key');
  assert.match(row.actorId, /^key_[0-9a-f]{12}$/);
  assert.equal(row.requestId, call.requestId);
  assert.deepEqual({ action: row.action, target: row.target, before: row.before, after: row.after }, expected);
}

for (const dialect of DIALECTS) {
  describe(`operator writes are audited (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    /** Each test on an app and a database of its own (closed when the test ends), so any one runs alone. */
    const build = (ctx: TestContext) => buildTestApp(ctx, dialect);

    it('records each kind of write with the admin key, its request id, target, before and after', async (ctx) => {
      const t = await build(ctx);
      await expectAudited(t, await adminCall(t, 'POST', '/admin/v1/import', ORDER_CATALOGUE), {
        action: 'catalog.import',
        target: 'catalog:import',
        before: null,
        after: { source: 'document', warehouses: 4, categories: 0, products: 4, stocks: 5, channels: 3 },
      });

      await expectAudited(t, await adminCall(t, 'POST', '/admin/v1/warehouses', { warehouseCode: 'G007', name: 'Shenzhen North', countryCode: 'CN' }), {
        action: 'warehouse.save',
        target: 'warehouse:G007',
        before: { name: 'Shenzhen', countryCode: 'CN', countryName: 'China', status: 1 },
        after: { name: 'Shenzhen North', countryCode: 'CN', countryName: 'China', status: 1 },
      });
      await expectAudited(t, await adminCall(t, 'POST', '/admin/v1/warehouses', { warehouseCode: 'NEW1', name: 'New', countryCode: 'de', status: 0 }), {
        action: 'warehouse.save',
        target: 'warehouse:NEW1',
        before: null,
        after: { name: 'New', countryCode: 'DE', countryName: 'Germany', status: 0 },
      });
      await expectAudited(t, await adminCall(t, 'POST', '/admin/v1/categories', { categoryId: 50, name: 'Garden', parentId: 0 }), {
        action: 'category.save',
        target: 'category:50',
        before: null,
        after: { name: 'Garden', parentId: 0, imgUrl: null },
      });
      await expectAudited(t, await adminCall(t, 'POST', '/admin/v1/products', { sku: 'A', name: 'Mug', categoryId: 50, price: '10.00', weightGrams: 350 }), {
        action: 'product.save',
        target: 'product:A',
        before: { name: 'Mug', categoryId: null, priceCents: 932, weightGrams: 350, imageUrl: 'https://img/a.jpg' },
        after: { name: 'Mug', categoryId: 50, priceCents: 1000, weightGrams: 350, imageUrl: null },
      });
      const channel = { ...ORDER_CATALOGUE.channels[1], warehouseCodes: ['G007', 'US01'], baseFee: '8.50' };
      const common = { name: 'Express', channelType: 'Express', countries: '*', perKgFeeCents: 950, deliveryDaysMin: 3, deliveryDaysMax: 5 };
      await expectAudited(t, await adminCall(t, 'POST', '/admin/v1/channels', channel), {
        action: 'channel.save',
        target: 'channel:EXP',
        before: { ...common, warehouseCodes: 'G007', baseFeeCents: 800 },
        after: { ...common, warehouseCodes: 'G007,US01', baseFeeCents: 850 },
      });

      await expectAudited(
        t,
        await adminCall(t, 'PUT', '/admin/v1/stocks', {
          items: [
            { sku: 'A', warehouseCode: 'G007', qty: 20 },
            { sku: 'B', warehouseCode: 'US01', qty: 3 },
          ],
        }),
        {
          action: 'stock.set',
          target: 'stock',
          before: { rows: 2, omitted: 0, 'A@G007': 10, 'B@US01': 0 },
          after: { rows: 2, omitted: 0, 'A@G007': 20, 'B@US01': 3 },
        },
      );
      await expectAudited(t, await adminCall(t, 'POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'C', warehouseCode: 'G007', delta: -5 }] }), {
        action: 'stock.adjust',
        target: 'stock',
        before: { rows: 1, omitted: 0, 'C@G007': 1000 },
        after: { rows: 1, omitted: 0, 'C@G007': 995 },
      });

      const created = await adminCall(t, 'POST', '/admin/v1/merchants', { name: 'Audited shop' });
      const merchantId = created.body.data.merchantId;
      await expectAudited(t, created, {
        action: 'merchant.create',
        target: `merchant:${merchantId}`,
        before: null,
        after: { name: 'Audited shop', status: 'active', clientId: created.body.data.clientId },
      });
      const issued = await adminCall(t, 'POST', `/admin/v1/merchants/${merchantId}/tokens`, { scopes: ['stock:read', 'orders:write'], expiresInSeconds: 3600 });
      await expectAudited(t, issued, {
        action: 'token.issue',
        target: `token:${issued.body.data.tokenId}`,
        before: null,
        after: { merchantId: Number(merchantId), scopes: 'stock:read orders:write', expiresAt: issued.body.data.expiresAt },
      });
      const revoked = await adminCall(t, 'DELETE', `/admin/v1/tokens/${issued.body.data.tokenId}`);
      await expectAudited(t, revoked, {
        action: 'token.revoke',
        target: `token:${issued.body.data.tokenId}`,
        before: { merchantId: Number(merchantId), revokedAt: null },
        after: { merchantId: Number(merchantId), revokedAt: revoked.body.data.revokedAt },
      });
      const [lastId] = (await newest(t)).map((r) => r.id);
      assert.equal((await adminCall(t, 'DELETE', `/admin/v1/tokens/${issued.body.data.tokenId}`)).status, 200, 'revoking again is still 200');
      assert.equal((await newest(t))[0].id, lastId, '… but changes nothing, so it is not audited again');
      await expectAudited(t, await adminCall(t, 'PATCH', `/admin/v1/merchants/${merchantId}`, { status: 'disabled' }), {
        action: 'merchant.disable',
        target: `merchant:${merchantId}`,
        before: { name: 'Audited shop', status: 'active' },
        after: { name: 'Audited shop', status: 'disabled' },
      });
      await expectAudited(t, await adminCall(t, 'PATCH', `/admin/v1/merchants/${merchantId}`, { status: 'active' }), {
        action: 'merchant.enable',
        target: `merchant:${merchantId}`,
        before: { name: 'Audited shop', status: 'disabled' },
        after: { name: 'Audited shop', status: 'active' },
      });

      const shop = await newMerchant(t, 'Shipping shop');
      const o = await placeOrder(t, shop.token, [{ sku: 'C', quantity: 1 }]);
      const split = (await t.merchant(shop.token, 'GET', `/openapi/v2/order/orders/${o.id}`)).body.data.splitOrders[0];
      const order = { orderId: Number(o.id), merchantId: Number(shop.merchantId) };
      await expectAudited(t, await adminCall(t, 'POST', `/admin/v1/split-orders/${split.id}/ship`, { carrier: 'UPS', trackingCode: '1Z999' }), {
        action: 'split_order.ship',
        target: `split_order:${split.id}`,
        before: { ...order, status: 'waiting_to_ship' },
        after: { ...order, status: 'shipped', carrier: 'UPS', trackingCode: '1Z999' },
      });
      await expectAudited(t, await adminCall(t, 'POST', `/admin/v1/split-orders/${split.id}/deliver`), {
        action: 'split_order.deliver',
        target: `split_order:${split.id}`,
        before: { ...order, status: 'shipped' },
        after: { ...order, status: 'completed' },
      });

      const endpoint = (await t.merchant(shop.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['order.cancelled'] })).body
        .data;
      await expectAudited(t, await adminCall(t, 'PATCH', `/admin/v1/webhooks/${endpoint.id}`, { status: 'disabled', reason: 'abuse report' }), {
        action: 'webhook.disable',
        target: `webhook:${endpoint.id}`,
        before: { merchantId: Number(shop.merchantId), status: 'active', reason: null },
        after: { merchantId: Number(shop.merchantId), status: 'disabled', reason: 'abuse report' },
      });
      await expectAudited(t, await adminCall(t, 'PATCH', `/admin/v1/webhooks/${endpoint.id}`, { status: 'active' }), {
        action: 'webhook.enable',
        target: `webhook:${endpoint.id}`,
        before: { merchantId: Number(shop.merchantId), status: 'disabled', reason: 'abuse report' },
        after: { merchantId: Number(shop.merchantId), status: 'active', reason: null },
      });
    });

    it('summarises a large stock request in one bounded row', async (ctx) => {
      const t = await build(ctx);
      const products = Array.from({ length: 30 }, (_, i) => ({ sku: `BULK-${String(i).padStart(2, '0')}`, name: `Bulk ${i}`, price: 1, weightGrams: 1 }));
      assert.equal(
        (await t.admin('POST', '/admin/v1/import', { warehouses: [{ warehouseCode: 'BLK', name: 'Bulk', countryCode: 'US' }], products })).status,
        200,
      );
      const [before] = await newest(t);
      const call = await adminCall(t, 'PUT', '/admin/v1/stocks', { items: products.map((p, i) => ({ sku: p.sku, warehouseCode: 'BLK', qty: i })) });
      assert.equal(call.status, 200, call.raw);
      const rows = await newest(t, 2);
      assert.equal(rows[1].id, before.id, 'one row for the whole request');
      const row = rows[0];
      assert.equal(row.requestId, call.requestId);
      assert.equal(row.after!.rows, 30);
      assert.equal(row.after!.omitted, 10);
      assert.equal(Object.keys(row.after!).length, 22, 'twenty entries, and the two counts');
      assert.equal(row.before!['BULK-05@BLK'], 0);
      assert.equal(row.after!['BULK-05@BLK'], 5);
      assert.equal(row.after!['BULK-25@BLK'], undefined, 'past the bound: counted, not listed');
    });

    it('leaves no audit row, and nothing else, for a refused write', async (ctx) => {
      const t = await build(ctx);
      await loadCatalogue(t, ORDER_CATALOGUE);
      const shop = await newMerchant(t, 'Refusals');
      const o = await placeOrder(t, shop.token, [{ sku: 'C', quantity: 1 }]);
      const split = (await t.merchant(shop.token, 'GET', `/openapi/v2/order/orders/${o.id}`)).body.data.splitOrders[0];
      const refused: [InjectOptions['method'], string, unknown, number][] = [
        ['POST', '/admin/v1/warehouses', { warehouseCode: 'X', name: 'X', countryCode: 'ZZZ' }, 400],
        ['POST', '/admin/v1/categories', { categoryId: 60, name: 'Orphan', parentId: 999 }, 400],
        ['POST', '/admin/v1/products', { sku: 'NEW-P', name: 'P', categoryId: 999, price: 1, weightGrams: 1 }, 400],
        ['POST', '/admin/v1/channels', { ...ORDER_CATALOGUE.channels[0], warehouseCodes: ['NOPE'] }, 400],
        [
          'PUT',
          '/admin/v1/stocks',
          {
            items: [
              { sku: 'A', warehouseCode: 'G007', qty: 1 },
              { sku: 'NOPE', warehouseCode: 'G007', qty: 1 },
            ],
          },
          400,
        ],
        [
          'POST',
          '/admin/v1/stocks/adjust',
          {
            items: [
              { sku: 'A', warehouseCode: 'G007', delta: 1 },
              { sku: 'B', warehouseCode: 'G006', delta: -1000 },
            ],
          },
          409,
        ],
        [
          'POST',
          '/admin/v1/import',
          { products: [{ sku: 'OK-1', name: 'Fine', price: 1, weightGrams: 1 }], stocks: [{ sku: 'NOPE', warehouseCode: 'G007', qty: 1 }] },
          400,
        ],
        ['POST', '/admin/v1/merchants', { name: '' }, 400],
        ['PATCH', '/admin/v1/merchants/999999', { status: 'disabled' }, 404],
        ['POST', '/admin/v1/merchants/999999/tokens', {}, 404],
        ['DELETE', '/admin/v1/tokens/999999', undefined, 404],
        ['POST', `/admin/v1/split-orders/${split.id}/deliver`, undefined, 409],
        ['POST', '/admin/v1/split-orders/999999/ship', { carrier: 'UPS', trackingCode: '1Z' }, 404],
        ['PATCH', '/admin/v1/webhooks/999999', { status: 'disabled' }, 404],
      ];
      const before = await tableDigests(t.store);
      for (const [method, url, payload, status] of refused) {
        const r = await adminCall(t, method, url, payload);
        assert.equal(r.status, status, `${method} ${url} → ${r.raw}`);
      }
      assert.deepEqual(await tableDigests(t.store), before, 'no audit row and no other change');
    });

    it('never records a secret: client secrets, bearer tokens, their hashes, the admin key', async (ctx) => {
      const t = await build(ctx);
      const m = await newMerchant(t, 'Secretive');
      const grant = await t.app.inject({
        method: 'POST',
        url: '/openapi/oauth/token',
        payload: { grant_type: 'client_credentials', client_id: m.clientId, client_secret: m.clientSecret },
      });
      assert.equal(grant.statusCode, 200, grant.body);
      const { access_token, refresh_token } = JSON.parse(grant.body);
      const hashes = (await t.store.db.selectFrom('api_tokens').select('token_hash').execute()).map((r) => r.token_hash);
      const { client_secret_hash } = await t.store.db
        .selectFrom('merchants')
        .select('client_secret_hash')
        .where('client_id', '=', m.clientId)
        .executeTakeFirstOrThrow();
      const everything = (await sql<Record<string, unknown>>`select * from audit_log`.execute(t.store.db)).rows.map((r) => JSON.stringify(r)).join('\n');
      assert.match(everything, new RegExp(`merchant:${m.merchantId}`), 'the merchant and its token were audited');
      assert.match(everything, new RegExp(`token:${m.tokenId}`));
      for (const secret of [m.clientSecret, m.token, access_token, refresh_token, client_secret_hash, ...hashes, ADMIN_KEY]) {
        assert.ok(!everything.includes(secret), `no audit row holds ${secret.slice(0, 12)}…`);
      }
    });
  });
}
