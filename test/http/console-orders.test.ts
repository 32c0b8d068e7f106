import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { hashSecret } from '../../src/domain/secrets.ts';
import { browser, follow, signedIn, staff, type Browser } from './console-client.ts';
import { buildTestApp, DIALECTS, loadCatalogue, newMerchant, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

/**
 * SPEC §14, the console's orders, merchants and webhooks pages, driven as a browser would:
 * search, ship and deliver, credentials shown once, role limits, bad input refused with nothing
 * written, and the audit row of every change.
 */

const auditRows = async (t: TestApp) =>
  (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list as { action: string; actorKind: string; actorId: string; target: string; after: any }[];

/** The order ids a results page lists, in order. */
const listedOrders = (html: string) => [...html.matchAll(/<tr data-order="(\d+)">/g)].map((m) => m[1]);
const today = () => new Date().toISOString().slice(0, 10);
const dayOffset = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const htmlText = (html: string) => html.replace(/&#(\d+);/g, (_m, code) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');

for (const dialect of DIALECTS) {
  describe(`console orders, merchants and webhooks (${dialect})`, () => {
    /**
     * What every test here starts from, on an app and a database of its own (closed when the test
     * ends), so any one test runs alone: the order catalogue, two merchants, and staff of each
     * role, signed in.
     */
    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect);
      await loadCatalogue(t, ORDER_CATALOGUE);
      const shop = await newMerchant(t, 'Shop One');
      const other = await newMerchant(t, 'Shop Two');
      await staff(t, 'owner@example.com', 'owner');
      await staff(t, 'support@example.com', 'support');
      const warehouseStaffId = (await staff(t, 'warehouse@example.com', 'warehouse')).id;
      const owner = await signedIn(t, 'owner@example.com');
      const support = await signedIn(t, 'support@example.com');
      const warehouse = await signedIn(t, 'warehouse@example.com');
      const tokens = new Map<Browser, string>();
      const post = async (b: Browser, url: string, fields: Record<string, string> = {}, headers?: Record<string, string>) => {
        if (!tokens.has(b)) tokens.set(b, await b.csrf());
        return b.post(url, { _csrf: tokens.get(b)!, ...fields }, headers);
      };
      return { t, shop, other, owner, support, warehouse, warehouseStaffId, post };
    };

    it('finds an order by its id, a split id and its custom id; filters by merchant, status and dates', async (ctx) => {
      const { t, shop, other, support } = await build(ctx);
      const mine = await placeOrder(t, shop.token, [{ sku: 'C', quantity: 1 }], { customOrderId: 'SHOP-1001' });
      const theirs = await placeOrder(t, other.token, [{ sku: 'C', quantity: 2 }]);
      const search = async (query: Record<string, string>) => {
        const r = await support.get(`/console/orders?${new URLSearchParams(query)}`);
        assert.equal(r.statusCode, 200, r.body);
        return listedOrders(r.body);
      };
      assert.deepEqual(await search({ q: mine.id }), [mine.id]);
      assert.deepEqual(await search({ q: mine.splitOrders[0].id }), [mine.id], 'a split id finds its order');
      assert.deepEqual(await search({ q: 'SHOP-1001' }), [mine.id], 'a custom id finds its order');
      assert.deepEqual(await search({ q: 'SHOP-1001', merchant: other.merchantId }), [], 'the merchant filter applies to the id search too');
      assert.deepEqual(await search({ q: 'no-such-order' }), []);
      const theirsOnly = await search({ merchant: other.merchantId });
      assert.deepEqual(theirsOnly, [theirs.id]);
      assert.ok((await search({ status: 'processing' })).includes(mine.id));
      assert.deepEqual(await search({ status: 'completed' }), []);
      assert.ok((await search({ from: today(), to: today() })).includes(mine.id), 'both ends of the date range are included');
      assert.deepEqual(await search({ from: dayOffset(1) }), []);
      assert.deepEqual(await search({ to: dayOffset(-1) }), []);
      // Blank fields, as a submitted search form sends them, are no filter.
      assert.ok((await search({ q: '', merchant: '', status: '', from: '', to: '' })).includes(theirs.id));
    });

    it('pages newest first by keyset: the Next link continues after the last row, with the filters kept', async (ctx) => {
      const { t, other, support } = await build(ctx);
      // An earlier order of this merchant: the last row of the second page.
      await placeOrder(t, other.token, [{ sku: 'C', quantity: 2 }]);
      const placed: string[] = [];
      for (let i = 0; i < 27; i++) placed.push((await placeOrder(t, other.token, [{ sku: 'C', quantity: 1 }])).id);
      const first = await support.get(`/console/orders?merchant=${other.merchantId}`);
      const firstIds = listedOrders(first.body);
      assert.equal(firstIds.length, 25);
      assert.deepEqual(firstIds, [...placed].reverse().slice(0, 25));
      const next = /<a rel="next" href="([^"]+)"/.exec(first.body);
      assert.ok(next, 'a Next link while more rows follow');
      const href = htmlText(next[1]);
      assert.match(href, new RegExp(`merchant=${other.merchantId}`));
      const second = await support.get(href);
      const rest = listedOrders(second.body);
      assert.equal(rest.length, 28 - 25, 'the remaining two of these plus the earlier order');
      assert.deepEqual(rest.slice(0, 2), [placed[1], placed[0]]);
      assert.ok(!/rel="next"/.test(second.body), 'no Next link on the last page');
    });

    it('refuses a malformed search with a 400 page naming the field', async (ctx) => {
      const { support } = await build(ctx);
      for (const [query, field] of [
        ['status=shipped', 'status'],
        ['from=2026-02-30', 'from'],
        ['to=yesterday', 'to'],
        [`from=${dayOffset(1)}&to=${today()}`, 'to'],
        ['merchant=abc', 'merchant'],
        ['after=123', 'after'],
        [`q=${'x'.repeat(129)}`, 'q'],
      ]) {
        const r = await support.get(`/console/orders?${query}`);
        assert.equal(r.statusCode, 400, `${query}: ${r.body.slice(0, 300)}`);
        assert.match(r.body, new RegExp(field));
        assert.match(r.headers['content-type'] as string, /text\/html/);
      }
      assert.equal((await support.get('/console/orders/987654321')).statusCode, 404);
    });

    it('shows an order with its splits, items, freight, refunds and webhook deliveries; the warehouse ships and delivers it, audited', async (ctx) => {
      const { t, shop, support, warehouse, warehouseStaffId, post } = await build(ctx);
      const hook = await t.merchant(shop.token, 'POST', '/openapi/v1/webhooks', {
        url: 'http://127.0.0.1:9/hook',
        events: ['split_order.shipped', 'split_order.delivered'],
      });
      assert.equal(hook.status, 200, hook.raw);
      const o = await placeOrder(t, shop.token, [
        { sku: 'C', quantity: 3 },
        { sku: 'B', quantity: 1 },
      ]);
      const refund = await t.merchant(shop.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, { skuCode: 'B', quantity: 1, refundReason: 'Other' });
      assert.equal(refund.status, 200, refund.raw);
      const cSplit = o.splitOrders.find((s: any) => o.orderItems.some((i: any) => i.skuCode === 'C' && i.splitOrderId === s.id));

      const page = await support.get(`/console/orders/${o.id}`);
      assert.equal(page.statusCode, 200);
      for (const s of o.splitOrders) assert.match(page.body, new RegExp(`id="split-${s.id}"`));
      assert.match(page.body, /<td>C<\/td><td>Bowl<\/td><td class="num">3<\/td>/);
      assert.match(page.body, new RegExp(`Freight</dt><dd data-num>${o.freightAmount.toFixed(2)} USD`));
      // Each split says where it ships from (the warehouse and its country) and where to: the order's ship-to country (issue 29, 10).
      for (const s of o.splitOrders)
        assert.match(page.body, new RegExp(`Ships from warehouse ${s.warehouseCode} \\(${s.countryCode}\\) to ${o.shippingAddress.country} by `));
      assert.match(page.body, new RegExp(`data-refund="${refund.body.data}"`));
      assert.ok(!page.body.includes('data-action="ship"'), 'support reads the order but has no ship button');
      const before = await tableDigests(t.store);
      const refused = await post(support, `/console/splits/${cSplit.id}/ship`, { carrier: 'UPS', trackingCode: '1Z999' });
      assert.equal(refused.statusCode, 403);
      assert.deepEqual(await tableDigests(t.store), before, 'support may not ship: nothing written');

      const wPage = await warehouse.get(`/console/orders/${o.id}`);
      assert.match(wPage.body, new RegExp(`action="/console/splits/${cSplit.id}/ship"`));
      // Bad input: blank tracking number, one over the length limit, an unknown split — 4xx, nothing written.
      for (const [url, fields, status] of [
        [`/console/splits/${cSplit.id}/ship`, { carrier: 'UPS', trackingCode: '   ' }, 400],
        [`/console/splits/${cSplit.id}/ship`, { carrier: 'UPS', trackingCode: 'x'.repeat(65) }, 400],
        [`/console/splits/${cSplit.id}/ship`, { carrier: 'UPS' }, 400],
        ['/console/splits/987654321/ship', { carrier: 'UPS', trackingCode: '1Z' }, 404],
        [`/console/splits/${cSplit.id}/deliver`, {}, 409],
      ] as const) {
        const r = await post(warehouse, url, fields);
        assert.equal(r.statusCode, status, `${url} ${JSON.stringify(fields)}: ${r.body.slice(0, 300)}`);
        assert.match(r.headers['content-type'] as string, /text\/html/);
      }
      assert.deepEqual(await tableDigests(t.store), before, 'refused: nothing written');

      const shipped = await post(warehouse, `/console/splits/${cSplit.id}/ship`, { carrier: 'UPS', trackingCode: '1Z999AA10123456784' });
      assert.equal(shipped.statusCode, 303);
      assert.equal(shipped.headers.location, `/console/orders/${o.id}`);
      const after = (await t.merchant(shop.token, 'GET', `/openapi/v2/order/orders/${o.id}`)).body.data;
      const split = after.splitOrders.find((s: any) => s.id === cSplit.id);
      assert.equal(split.status, 'shipped');
      assert.equal(split.trackingCode, '1Z999AA10123456784');
      assert.equal(split.carrier, 'UPS');
      const shownShipped = await warehouse.get(`/console/orders/${o.id}`);
      assert.match(shownShipped.body, /data-tracking>1Z999AA10123456784</);
      assert.match(
        shownShipped.body,
        /<td><code>split_order.shipped<\/code><\/td><td>http:\/\/127.0.0.1:9\/hook<\/td><td>Pending<\/td>/,
        'the delivery of the shipped event',
      );
      const supportView = await support.get(`/console/orders/${o.id}`);
      assert.match(
        supportView.body,
        new RegExp(`<td><code>split_order.shipped</code></td><td><a href="/console/webhooks/${hook.body.data.id}">`),
        'support (webhooks:manage) gets a link to the endpoint',
      );
      assert.equal((await post(warehouse, `/console/splits/${cSplit.id}/ship`, { carrier: 'UPS', trackingCode: '1Z' })).statusCode, 409, 'shipped once only');

      // htmx: the same POST, answered by the order's page (the redirect followed), swapped in place.
      const delivered = await post(warehouse, `/console/splits/${cSplit.id}/deliver`, {}, { 'hx-request': 'true' });
      assert.equal(delivered.statusCode, 303);
      const final = (await t.merchant(shop.token, 'GET', `/openapi/v2/order/orders/${o.id}`)).body.data;
      assert.equal(final.splitOrders.find((s: any) => s.id === cSplit.id).status, 'completed');

      const audit = await auditRows(t);
      const ship = audit.find((a) => a.action === 'split_order.ship' && a.target === `split_order:${cSplit.id}`);
      const deliver = audit.find((a) => a.action === 'split_order.deliver' && a.target === `split_order:${cSplit.id}`);
      assert.ok(ship, JSON.stringify(audit.slice(0, 5)));
      assert.ok(deliver);
      assert.equal(ship.actorKind, 'staff');
      assert.equal(deliver.actorKind, 'staff');
      assert.equal(ship.actorId, String(warehouseStaffId), 'as the warehouse member who shipped');
      assert.equal(deliver.actorId, String(warehouseStaffId));
      assert.equal(audit.filter((a) => a.action === 'split_order.ship').length, 1, 'the refused attempts wrote no audit row');
    });

    it('creates a merchant and shows its client secret once; issues a token shown once; revokes it; all audited', async (ctx) => {
      const { t, shop, owner, post } = await build(ctx);
      const created = await follow(owner, await post(owner, '/console/merchants', { name: '  Console Shop  ' }));
      assert.equal(created.statusCode, 200, created.body);
      const secret = /<code data-secret>(sks_[A-Za-z0-9_-]+)<\/code>/.exec(created.body)?.[1];
      assert.ok(secret, 'the client secret is on the page that created it');
      const merchantId = /Merchant id<\/dt><dd>(\d+)</.exec(created.body)?.[1];
      assert.ok(merchantId);
      const row = await t.store.db.selectFrom('merchants').selectAll().where('id', '=', Number(merchantId)).executeTakeFirstOrThrow();
      assert.equal(row.name, 'Console Shop', 'the name is trimmed');
      assert.equal(row.client_secret_hash, hashSecret(secret));
      assert.equal(created.headers['cache-control'], 'no-store');

      const detail = await owner.get(`/console/merchants/${merchantId}`);
      assert.equal(detail.statusCode, 200);
      assert.ok(detail.body.includes(row.client_id), 'the client id is shown');
      assert.ok(!detail.body.includes(secret), 'the secret is never shown again (not even on a reload of the page that showed it)');
      assert.ok(!(await owner.get('/console/merchants')).body.includes(secret));

      const issued = await follow(owner, await post(owner, `/console/merchants/${merchantId}/tokens`, { scopes: 'orders:read', expiresInDays: '30' }));
      assert.equal(issued.statusCode, 200, issued.body);
      const token = /<code data-secret>([^<]+)<\/code>/.exec(issued.body)?.[1];
      assert.ok(token);
      const tokenId = /Token id<\/dt><dd>(\d+)</.exec(issued.body)?.[1];
      assert.ok(tokenId);
      // The token works, with the scope ticked only.
      assert.equal((await t.merchant(token, 'GET', '/openapi/v2/order/orders')).status, 200);
      assert.equal((await t.merchant(token, 'GET', '/openapi/v1/product/products')).status, 403);
      const listed = await owner.get(`/console/merchants/${merchantId}`);
      assert.match(listed.body, new RegExp(`data-token="${tokenId}"`));
      assert.ok(!listed.body.includes(token), 'the token is not shown again');

      const revoked = await post(owner, `/console/merchants/${merchantId}/tokens/${tokenId}/revoke`);
      assert.equal(revoked.statusCode, 303);
      assert.equal((await t.merchant(token, 'GET', '/openapi/v2/order/orders')).status, 401);
      assert.match((await owner.get(`/console/merchants/${merchantId}`)).body, new RegExp(`data-token="${tokenId}">.*data-state="revoked"`, 's'));
      // Another merchant's token is not revocable under this merchant's address.
      const before = await tableDigests(t.store);
      assert.equal((await post(owner, `/console/merchants/${merchantId}/tokens/${shop.tokenId}/revoke`)).statusCode, 404);
      assert.deepEqual(await tableDigests(t.store), before);

      assert.equal((await post(owner, `/console/merchants/${merchantId}/disable`)).statusCode, 303);
      assert.equal(
        (await t.store.db.selectFrom('merchants').select('status').where('id', '=', Number(merchantId)).executeTakeFirstOrThrow()).status,
        'disabled',
      );
      assert.equal((await post(owner, `/console/merchants/${merchantId}/enable`)).statusCode, 303);
      assert.equal((await t.store.db.selectFrom('merchants').select('status').where('id', '=', Number(merchantId)).executeTakeFirstOrThrow()).status, 'active');

      const audit = await auditRows(t);
      for (const action of ['merchant.create', 'token.issue', 'token.revoke', 'merchant.disable', 'merchant.enable'])
        assert.ok(
          audit.some((a) => a.action === action && a.actorKind === 'staff'),
          `${action} audited as the staff member`,
        );
      assert.ok(!JSON.stringify(audit).includes(secret) && !JSON.stringify(audit).includes(token), 'no secret in the audit log');
    });

    it('refuses bad merchant and token forms with a 400 page, nothing written', async (ctx) => {
      const { t, shop, owner, post } = await build(ctx);
      const before = await tableDigests(t.store);
      for (const [url, fields] of [
        ['/console/merchants', { name: '   ' }],
        ['/console/merchants', { name: 'x'.repeat(129) }],
        [`/console/merchants/${shop.merchantId}/tokens`, { scopes: 'everything' }],
        [`/console/merchants/${shop.merchantId}/tokens`, { scopes: 'orders:read', expiresInDays: '0' }],
        [`/console/merchants/${shop.merchantId}/tokens`, { scopes: 'orders:read', expiresInDays: 'soon' }],
        [`/console/merchants/${shop.merchantId}/tokens`, { expiresInDays: '7' }],
      ] as const) {
        const r = await post(owner, url, fields);
        assert.equal(r.statusCode, 400, `${url} ${JSON.stringify(fields)}`);
      }
      assert.equal((await post(owner, '/console/merchants/987654321/tokens', { scopes: 'orders:read' })).statusCode, 404);
      assert.deepEqual(await tableDigests(t.store), before);
    });

    it('support reads merchants but sees no create, disable or token button, and those POSTs are refused 403 with nothing written', async (ctx) => {
      const { t, shop, support, warehouse, post } = await build(ctx);
      const list = await support.get('/console/merchants');
      assert.equal(list.statusCode, 200);
      assert.match(list.body, new RegExp(`data-merchant="${shop.merchantId}"`));
      assert.ok(!list.body.includes('data-action="create-merchant"'));
      const detail = await support.get(`/console/merchants/${shop.merchantId}`);
      assert.equal(detail.statusCode, 200);
      assert.match(detail.body, new RegExp(`data-token="${shop.tokenId}"`));
      for (const button of ['issue-token', 'revoke', 'disable', 'enable']) assert.ok(!detail.body.includes(`data-action="${button}"`), button);
      const before = await tableDigests(t.store);
      for (const url of [
        '/console/merchants',
        `/console/merchants/${shop.merchantId}/tokens`,
        `/console/merchants/${shop.merchantId}/disable`,
        `/console/merchants/${shop.merchantId}/tokens/${shop.tokenId}/revoke`,
      ]) {
        const r = await post(support, url, { name: 'Sneaky' });
        assert.equal(r.statusCode, 403, url);
      }
      assert.deepEqual(await tableDigests(t.store), before);
      // The warehouse may not even read them.
      assert.equal((await warehouse.get('/console/merchants')).statusCode, 403);
      assert.ok(!(await warehouse.get('/console')).body.includes('href="/console/merchants"'), 'no Merchants link for the warehouse');
    });

    it('lists webhook endpoints, shows the delivery log, retries a delivery, disables and enables the endpoint, audited', async (ctx) => {
      const { t, shop, other, support, warehouse, post } = await build(ctx);
      // The shop's endpoint with a delivery in its log: the event of a split the warehouse shipped.
      const hook = await t.merchant(shop.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['split_order.shipped'] });
      assert.equal(hook.status, 200, hook.raw);
      const o = await placeOrder(t, shop.token, [{ sku: 'C', quantity: 1 }]);
      assert.equal((await post(warehouse, `/console/splits/${o.splitOrders[0].id}/ship`, { carrier: 'UPS', trackingCode: '1Z999' })).statusCode, 303);
      const list = await support.get(`/console/webhooks?merchant=${shop.merchantId}`);
      assert.equal(list.statusCode, 200);
      const endpointId = /<tr data-webhook="(\d+)">/.exec(list.body)?.[1];
      assert.ok(endpointId, list.body);
      assert.deepEqual((await support.get(`/console/webhooks?merchant=${other.merchantId}`)).body.match(/data-webhook=/g), null);
      const log = await support.get(`/console/webhooks/${endpointId}`);
      assert.equal(log.statusCode, 200);
      const deliveryId = /<tr data-delivery="(\d+)">/.exec(log.body)?.[1];
      assert.ok(deliveryId);
      assert.match((await support.get(`/console/webhooks/${endpointId}?status=succeeded`)).body, /0 deliveries/);

      // Make it look failed, as the worker leaves a delivery that gave up.
      await t.store.db
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', attempts: 7, next_attempt_at: null })
        .where('id', '=', Number(deliveryId))
        .execute();
      const retried = await post(support, `/console/webhooks/${endpointId}/deliveries/${deliveryId}/retry`);
      assert.equal(retried.statusCode, 303);
      const row = await t.store.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', Number(deliveryId)).executeTakeFirstOrThrow();
      assert.equal(row.status, 'pending');

      const before = await tableDigests(t.store);
      assert.equal((await post(support, `/console/webhooks/${endpointId}/deliveries/987654321/retry`)).statusCode, 404);
      assert.equal((await post(support, `/console/webhooks/${endpointId}/disable`, { reason: 'x'.repeat(501) })).statusCode, 400);
      assert.equal((await post(warehouse, `/console/webhooks/${endpointId}/disable`, {})).statusCode, 403);
      assert.deepEqual(await tableDigests(t.store), before, 'refused: nothing written');

      assert.equal((await post(support, `/console/webhooks/${endpointId}/disable`, { reason: 'receiver down' })).statusCode, 303);
      assert.match((await support.get(`/console/webhooks/${endpointId}`)).body, /data-field="webhook-status">Disabled: receiver down/);
      assert.equal((await post(support, `/console/webhooks/${endpointId}/deliveries/${deliveryId}/retry`)).statusCode, 409, 'no retry while disabled');
      assert.equal((await post(support, `/console/webhooks/${endpointId}/enable`)).statusCode, 303);
      assert.match((await support.get(`/console/webhooks/${endpointId}`)).body, /data-field="webhook-status">Active</);

      const audit = await auditRows(t);
      for (const action of ['webhook.retry', 'webhook.disable', 'webhook.enable'])
        assert.equal(audit.filter((a) => a.action === action && a.actorKind === 'staff').length, 1, `${action} audited once`);
    });

    it('answers malformed webhook and merchant addresses with 4xx pages', async (ctx) => {
      const { support } = await build(ctx);
      for (const [url, status] of [
        ['/console/webhooks?merchant=abc', 400],
        ['/console/webhooks?status=broken', 400],
        ['/console/webhooks?page=0', 400],
        ['/console/webhooks/987654321', 404],
        ['/console/webhooks/1?status=lost', 400],
        ['/console/merchants/987654321', 404],
        ['/console/merchants/0x10', 400],
        ['/console/orders/abc', 400],
      ] as const) {
        const r = await support.get(url);
        assert.equal(r.statusCode, status, url);
        assert.match(r.headers['content-type'] as string, /text\/html/, url);
      }
    });

    it('never lets an anonymous visitor in', async (ctx) => {
      const { t } = await build(ctx);
      for (const url of ['/console/orders', '/console/merchants', '/console/webhooks']) assert.equal((await browser(t).get(url)).statusCode, 303);
    });
  });

  describe(`console merchant rate-limit use (${dialect})`, () => {
    const clock = { now: Date.now() };
    const t = useApp(dialect, { RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_BURST: '50', RATE_LIMIT_BODY_BYTES_PER_SECOND: '1024' }, { now: () => clock.now });

    it('shows what the merchant’s request and body buckets hold now, read without taking from them', async () => {
      const m = await newMerchant(t, 'Busy');
      await staff(t, 'rates@example.com', 'support');
      const b = await signedIn(t, 'rates@example.com');
      const shown = async () => {
        const page = await b.get(`/console/merchants/${m.merchantId}`);
        assert.equal(page.statusCode, 200);
        return /data-field="requests-available">(\d+) of (\d+)</.exec(page.body)?.slice(1);
      };
      assert.deepEqual(await shown(), ['50', '50']);
      for (let i = 0; i < 3; i++) assert.equal((await t.merchant(m.token, 'GET', '/openapi/v2/order/orders')).status, 200);
      assert.deepEqual(await shown(), ['47', '50']);
      assert.deepEqual(await shown(), ['47', '50'], 'looking takes nothing');
      clock.now += 1000;
      assert.deepEqual(await shown(), ['49', '50'], 'refilled at 2 a second');
      assert.match((await b.get(`/console/merchants/${m.merchantId}`)).body, /data-field="body-available">\d+ of \d+</);
    });
  });
}
