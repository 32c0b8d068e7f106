import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { buildApp } from '../../src/app.ts';
import { RefundWorker } from '../../src/jobs/refund.worker.ts';
import { WebhookWorker, type WebhookWorkerOptions } from '../../src/jobs/webhook.worker.ts';
import { openStore } from '../../src/store/db.ts';
import { claimDueDeliveries } from '../../src/store/webhooks.repository.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { ADMIN_KEY, DIALECTS, PG_SKIP, freshStore, loadCatalogue, newMerchant, testConfig, useApp, type TestApp } from '../helpers.ts';
import { checkWebhookBody } from '../contract.ts';
import { fakeSender, startReceiver } from './webhook-receivers.ts';
import { LOOPBACK_FAILURE } from '../../src/domain/webhook-url.ts';

const ALL_EVENTS = ['refund.succeeded', 'refund.failed', 'split_order.shipped', 'split_order.delivered', 'order.cancelled'];
const HOUR = 3600 * 1000;

const refundWorker = (t: Pick<TestApp, 'store'>) => new RefundWorker({ store: t.store, config: { refundReview: 'auto', refundAutoDelayMs: 0 } });

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`webhooks (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);
    let shop: string;
    const deliveryWorker = (options: Partial<WebhookWorkerOptions> = {}) =>
      new WebhookWorker({ store: t.store, config: { env: 'sandbox' }, random: () => 1, ...options });
    /** A fresh merchant with one endpoint (isolates each test's deliveries). */
    const merchantWithEndpoint = async (url: string, events = ALL_EVENTS) => {
      const m = await newMerchant(t, 'Hooked');
      const r = await t.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url, events });
      assert.equal(r.status, 200, r.raw);
      return { token: m.token, merchantId: m.merchantId, endpoint: r.body.data as { id: string; secret: string; url: string } };
    };
    const deliveries = async (token: string, endpointId: string) => (await t.merchant(token, 'GET', `/openapi/v1/webhooks/${endpointId}/deliveries`)).body.data;
    const ship = (splitId: string) => t.admin('POST', `/admin/v1/split-orders/${splitId}/ship`, { carrier: 'UPS', trackingCode: `1Z${splitId}` });
    const deliver = (splitId: string) => t.admin('POST', `/admin/v1/split-orders/${splitId}/deliver`);

    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      await t.admin('PUT', '/admin/v1/stocks', {
        items: [
          { sku: 'C', warehouseCode: 'G007', qty: 100000 },
          { sku: 'B', warehouseCode: 'G006', qty: 100000 },
        ],
      });
      shop = (await newMerchant(t, 'Shop')).token;
    });

    it('registers an endpoint, shows its secret once, lists without secrets and deletes it', async () => {
      const r = await t.merchant(shop, 'POST', '/openapi/v1/webhooks', {
        url: 'http://127.0.0.1:9/a',
        events: ['order.cancelled', 'refund.succeeded', 'refund.succeeded'],
      });
      assert.equal(r.status, 200, r.raw);
      const created = r.body.data;
      assert.match(created.id, /^\d{13}$/);
      assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.deepEqual(created.events, ['refund.succeeded', 'order.cancelled'], 'canonical order, each once');
      assert.equal(created.status, 'active');
      const list = await t.merchant(shop, 'GET', '/openapi/v1/webhooks');
      assert.equal(list.status, 200);
      const listed = list.body.data.list.find((e: any) => e.id === created.id);
      const { secret: _secret, ...shown } = created;
      assert.deepEqual(listed, shown, 'the same record, without the secret');
      assert.ok(!list.raw.includes('whsec_'), 'the list never shows secrets');
      const del = await t.merchant(shop, 'DELETE', `/openapi/v1/webhooks/${created.id}`);
      assert.equal(del.status, 200);
      assert.deepEqual(del.body.data, { id: created.id, deleted: true });
      assert.equal((await t.merchant(shop, 'DELETE', `/openapi/v1/webhooks/${created.id}`)).status, 404);
      assert.ok(!(await t.merchant(shop, 'GET', '/openapi/v1/webhooks')).body.data.list.some((e: any) => e.id === created.id));
    });

    it('refuses bad registrations with field errors and writes nothing', async () => {
      const cases: [unknown, string][] = [
        [{ url: 'http://127.0.0.1:9/a', events: [] }, 'events'],
        [{ url: 'http://127.0.0.1:9/a', events: ['order.shipped'] }, 'events[0]'],
        [{ url: 'http://127.0.0.1:9/a' }, 'events'],
        [{ url: 'ftp://127.0.0.1/a', events: ['refund.failed'] }, 'url'],
        [{ url: 'not a url', events: ['refund.failed'] }, 'url'],
        [{ url: 'http://user:pw@127.0.0.1/a', events: ['refund.failed'] }, 'url'],
        [{ url: 'http://10.1.2.3/a', events: ['refund.failed'] }, 'url'],
        [{ url: `https://example.com/${'x'.repeat(2100)}`, events: ['refund.failed'] }, 'url'],
      ];
      const before = await t.store.db
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      for (const [body, field] of cases) {
        const r = await t.merchant(shop, 'POST', '/openapi/v1/webhooks', body);
        assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 80)} → ${r.raw}`);
        assert.equal(r.body.code, 40000);
        assert.equal(r.body.errors[0].field, field, r.raw);
      }
      const after = await t.store.db
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow();
      assert.equal(Number(after.n), Number(before.n));
    });

    it('caps endpoints per merchant at 16 (409/40903)', async () => {
      const m = await newMerchant(t, 'Many');
      for (let i = 0; i < 16; i++)
        assert.equal((await t.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url: `http://127.0.0.1:9/${i}`, events: ['refund.failed'] })).status, 200);
      const r = await t.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/17', events: ['refund.failed'] });
      assert.equal(r.status, 409);
      assert.equal(r.body.code, 40903);
    });

    it('signs deliveries so the standardwebhooks library verifies them; refund and order events carry the records the query endpoints return', async (ctx) => {
      const receiver = await startReceiver();
      ctx.after(() => receiver.close());
      const m = await merchantWithEndpoint(receiver.url);
      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 2 }]);
      assert.equal((await t.merchant(m.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, {})).status, 200);
      await refundWorker(t).runOnce();
      // Committed with the decision: two pending deliveries, nothing sent yet.
      const log = await deliveries(m.token, m.endpoint.id);
      assert.deepEqual(
        log.list.map((d: any) => [d.type, d.status, d.attempts]),
        [
          ['order.cancelled', 'pending', 0],
          ['refund.succeeded', 'pending', 0],
        ],
      );
      assert.equal(receiver.received.length, 0);

      const worker = deliveryWorker();
      ctx.after(() => worker.stop());
      // One per round: order.cancelled waits for refund.succeeded (same order and endpoint).
      assert.deepEqual(await worker.runOnce(), { succeeded: 1, failed: 0 });
      assert.deepEqual(await worker.runOnce(), { succeeded: 1, failed: 0 });
      assert.equal(receiver.received.length, 2);
      const wh = new Webhook(m.endpoint.secret);
      const [first, second] = receiver.received.map((r) => ({ ...r, payload: wh.verify(r.body, r.headers) as any }));
      assert.equal(first.path, '/hooks');
      assert.equal(first.headers['content-type'], 'application/json');
      assert.match(first.headers['webhook-id'], /^msg_\d+$/);
      assert.notEqual(first.headers['webhook-id'], second.headers['webhook-id']);
      assert.equal(first.payload.type, 'refund.succeeded');
      assert.match(first.payload.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const refunds = (await t.merchant(m.token, 'GET', `/openapi/v2/order/orders/refund/${o.id}`)).body.data.list;
      assert.deepEqual(first.payload.data, { orderId: o.id, refundNo: refunds[0].refundNo, refund: refunds[0] });
      assert.equal(second.payload.type, 'order.cancelled');
      const order = (await t.merchant(m.token, 'GET', `/openapi/v2/order/orders/${o.id}`)).body.data;
      assert.equal(order.status, 'cancel');
      assert.deepEqual(second.payload.data, { orderId: o.id, order });
      for (const r of receiver.received) assert.equal(checkWebhookBody(r.body), null);
      // A tampered body or another secret fails verification.
      assert.throws(() => wh.verify(first.body.replace('refund.succeeded', 'refund.failed'), first.headers));
      assert.throws(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(first.body, first.headers));
      const done = await deliveries(m.token, m.endpoint.id);
      assert.deepEqual(
        done.list.map((d: any) => [d.status, d.attempts, d.lastStatusCode, d.nextAttemptAt]),
        [
          ['succeeded', 1, 200, null],
          ['succeeded', 1, 200, null],
        ],
      );
      assert.equal(done.list[1].webhookId, first.headers['webhook-id']);
    });

    it('sends refund.failed only to endpoints that subscribed to it', async () => {
      const sender = fakeSender();
      const m = await merchantWithEndpoint('http://127.0.0.1:9/failed', ['refund.failed']);
      const other = await t.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/succeeded', events: ['refund.succeeded'] });
      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      const refundNo = (await t.merchant(m.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, {})).body.data;
      assert.equal((await t.admin('POST', `/admin/v1/refunds/${refundNo}/reject`, { reason: 'no' })).status, 200);
      await deliveryWorker({ sender }).runOnce();
      const mine = sender.sent.filter((s) => s.orderId === o.id);
      assert.deepEqual(
        mine.map((s) => [s.type, s.url.pathname]),
        [['refund.failed', '/failed']],
      );
      assert.equal(JSON.parse(mine[0].body).data.refund.failureReason, 'no');
      assert.equal((await deliveries(m.token, other.body.data.id)).total, 0);
      assert.deepEqual(sender.problems, [], 'bodies match the documented webhooks');
    });

    it('retries a delivery the receiver answered 500, first within 10 s, with the same webhook-id', async (ctx) => {
      const receiver = await startReceiver((_r, n) => (n === 0 ? 500 : 200));
      ctx.after(() => receiver.close());
      const m = await merchantWithEndpoint(receiver.url, ['split_order.shipped']);
      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      assert.equal((await ship(o.splitOrders[0].id)).status, 200);
      const t0 = Date.now();
      let now = t0;
      const worker = deliveryWorker({ now: () => now, random: Math.random });
      ctx.after(() => worker.stop());
      assert.deepEqual(await worker.runOnce(), { succeeded: 0, failed: 1 });
      const failed = (await deliveries(m.token, m.endpoint.id)).list[0];
      assert.deepEqual([failed.status, failed.attempts, failed.lastStatusCode], ['pending', 1, null]);
      // A loopback receiver (sandbox): only that it failed, never its status or answer (Hardening III; issue 44, 16).
      assert.equal(failed.lastError, LOOPBACK_FAILURE);
      assert.doesNotMatch(failed.lastError, /receiver says no/);
      const stored = await t.store.db.selectFrom('webhook_deliveries').select(['last_error']).where('endpoint_id', '=', Number(m.endpoint.id)).execute();
      assert.ok(
        stored.every((r) => !r.last_error?.includes('receiver says no')),
        'not stored either',
      );
      const retryAt = Date.parse(failed.nextAttemptAt);
      assert.ok(retryAt >= Math.floor(t0 / 1000) * 1000 + 4000 && retryAt <= t0 + 10_000, `first retry within 10 s (${failed.nextAttemptAt})`);
      now = t0 + 4000;
      assert.deepEqual(await worker.runOnce(), { succeeded: 0, failed: 0 }, 'not due yet');
      now = t0 + 10_000;
      assert.deepEqual(await worker.runOnce(), { succeeded: 1, failed: 0 });
      assert.equal(receiver.received.length, 2);
      assert.equal(receiver.received[0].headers['webhook-id'], receiver.received[1].headers['webhook-id']);
      assert.equal(receiver.received[0].body, receiver.received[1].body, 'the same body');
      assert.equal(Number(receiver.received[1].headers['webhook-timestamp']), Math.floor((t0 + 10_000) / 1000), 'each attempt signed at its own time');
      for (const r of receiver.received) new Webhook(m.endpoint.secret).verify(r.body, r.headers);
      const ok = (await deliveries(m.token, m.endpoint.id)).list[0];
      assert.deepEqual([ok.status, ok.attempts, ok.lastStatusCode, ok.lastError], ['succeeded', 2, 200, null]);
      assert.equal((await t.merchant(m.token, 'GET', '/openapi/v1/webhooks')).body.data.list[0].failingSince, null, 'a success clears the failure clock');
    });

    it('delivers in commit order per order and endpoint: a later event waits while an earlier one retries; other orders and endpoints do not', async () => {
      let failFirst = true;
      let failOrder = '';
      const sender = fakeSender((r) => {
        const body = JSON.parse(r.body);
        // Only o1's first shipment fails: the lanes send concurrently, so "the first /one shipped" could be o2's.
        if (failFirst && body.type === 'split_order.shipped' && r.url.pathname === '/one' && body.data.orderId === failOrder) {
          failFirst = false;
          return 503;
        }
        return 200;
      });
      const m = await merchantWithEndpoint('http://127.0.0.1:9/one', ['split_order.shipped', 'split_order.delivered']);
      await t.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/two', events: ['split_order.delivered'] });
      const o1 = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      failOrder = o1.id;
      const o2 = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      await ship(o1.splitOrders[0].id);
      await deliver(o1.splitOrders[0].id);
      await ship(o2.splitOrders[0].id);
      const t0 = Date.now();
      let now = t0;
      const worker = deliveryWorker({ sender, now: () => now });
      const seen = () => sender.sent.map((s) => `${s.url.pathname} ${s.orderId === o1.id ? 'o1' : 'o2'} ${s.type}`);

      await worker.runOnce();
      assert.deepEqual(seen().sort(), ['/one o1 split_order.shipped', '/one o2 split_order.shipped', '/two o1 split_order.delivered'].sort());
      now = t0 + 1000;
      assert.deepEqual(await worker.runOnce(), { succeeded: 0, failed: 0 }, 'o1 delivered waits behind o1 shipped on /one');
      now = t0 + 10_000;
      await worker.runOnce();
      await worker.runOnce();
      const one = seen().filter((s) => s.startsWith('/one o1'));
      assert.deepEqual(one, ['/one o1 split_order.shipped', '/one o1 split_order.shipped', '/one o1 split_order.delivered']);
      // The events carry the order as it was when each was committed.
      const bodies = sender.sent.filter((s) => s.orderId === o1.id && s.url.pathname === '/one').map((s) => JSON.parse(s.body));
      assert.deepEqual(bodies[0].data.splitOrderId, o1.splitOrders[0].id);
      assert.equal(bodies[0].data.order.splitOrders[0].status, 'shipped');
      assert.equal(bodies[0].data.order.fulfillmentStatus, 'fully_shipped');
      const current = (await t.merchant(m.token, 'GET', `/openapi/v2/order/orders/${o1.id}`)).body.data;
      assert.deepEqual(bodies[2].data, { orderId: o1.id, splitOrderId: o1.splitOrders[0].id, order: current });
      assert.equal(current.status, 'completed');
      assert.deepEqual(sender.problems, [], 'bodies match the documented webhooks');
    });

    it('loses nothing when the process dies after the refund commits and before delivery', async (ctx) => {
      const receiver = await startReceiver();
      ctx.after(() => receiver.close());
      // "Process 1": its own app on its own database; decides a refund, never runs the delivery worker, dies.
      const db = await freshStore(dialect);
      ctx.after(() => db.drop());
      const config = testConfig();
      const app1 = await buildApp({ config, store: db.store, adminApiKey: ADMIN_KEY }, { logger: false });
      const call = async (app: typeof app1, method: 'GET' | 'POST' | 'PUT', url: string, token: string, payload?: unknown) => {
        const r = await app.inject({ method, url, payload: payload as object, headers: { authorization: `Bearer ${token}` } });
        return r.json();
      };
      await call(app1, 'POST', '/admin/v1/import', ADMIN_KEY, ORDER_CATALOGUE);
      const merchantId = (await call(app1, 'POST', '/admin/v1/merchants', ADMIN_KEY, { name: 'Crashy' })).data.merchantId;
      const token = (await call(app1, 'POST', `/admin/v1/merchants/${merchantId}/tokens`, ADMIN_KEY, {})).data.accessToken;
      const endpoint = (await call(app1, 'POST', '/openapi/v1/webhooks', token, { url: receiver.url, events: ['refund.succeeded'] })).data;
      const orderId = (
        await call(app1, 'POST', '/openapi/v1/order/orders', token, {
          orderAddress: { country: 'US', phone: '1', recipient: 'R', province: 'CA' },
          orderItemsList: [{ sku: 'C', quantity: 1 }],
        })
      ).data;
      await call(app1, 'POST', `/openapi/v2/order/orders/${orderId}/refund`, token, {});
      assert.equal(await refundWorker(db).runOnce(), 1);
      await app1.close();

      // "Process 2": a new connection, app and worker on the same database.
      const store2 = await openStore(db.url, db.schema ? { schema: db.schema } : {});
      const app2 = await buildApp({ config, store: store2, adminApiKey: ADMIN_KEY }, { logger: false });
      ctx.after(async () => {
        await app2.close();
        await store2.close();
      });
      assert.equal(receiver.received.length, 0);
      const worker = new WebhookWorker({ store: store2, config });
      ctx.after(() => worker.stop());
      assert.deepEqual(await worker.runOnce(), { succeeded: 1, failed: 0 });
      const payload = new Webhook(endpoint.secret).verify(receiver.received[0].body, receiver.received[0].headers) as any;
      assert.equal(payload.type, 'refund.succeeded');
      assert.equal(payload.data.orderId, orderId);
      assert.equal((await call(app2, 'GET', `/openapi/v1/webhooks/${endpoint.id}/deliveries`, token)).data.list[0].status, 'succeeded');
    });

    it('a worker that dies holding a claim leaves the delivery to another once the claim lapses, with the same webhook-id', async () => {
      const sender = fakeSender();
      const m = await merchantWithEndpoint('http://127.0.0.1:9/lapse', ['split_order.shipped']);
      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      await ship(o.splitOrders[0].id);
      const t0 = Date.now() + 1000;
      const claimed = await t.store.db.transaction().execute((trx) => claimDueDeliveries(trx, t.store.dialect, 'dead-worker', t0, t0 + 30_000, 1000));
      const [mine] = (await deliveries(m.token, m.endpoint.id)).list;
      assert.ok(claimed.includes(Number(mine.id)));
      let now = t0 + 1000;
      const worker = deliveryWorker({ sender, now: () => now });
      await worker.runOnce();
      assert.ok(!sender.sent.some((s) => s.orderId === o.id), 'still claimed');
      now = t0 + 31_000;
      await worker.runOnce();
      const sent = sender.sent.filter((s) => s.orderId === o.id);
      assert.equal(sent.length, 1);
      assert.equal(sent[0].headers['webhook-id'], mine.webhookId);
    });

    it('rotates the secret: both signatures for 24 h, then only the new one', async (ctx) => {
      const receiver = await startReceiver();
      ctx.after(() => receiver.close());
      const m = await merchantWithEndpoint(receiver.url, ['split_order.shipped']);
      const rotated = await t.merchant(m.token, 'POST', `/openapi/v1/webhooks/${m.endpoint.id}/rotate-secret`);
      assert.equal(rotated.status, 200, rotated.raw);
      const { secret, previousSecretExpiresAt } = rotated.body.data;
      assert.match(secret, /^whsec_/);
      assert.notEqual(secret, m.endpoint.secret);
      assert.ok(!(await t.merchant(m.token, 'GET', '/openapi/v1/webhooks')).raw.includes('whsec_'));

      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      await ship(o.splitOrders[0].id);
      const worker = deliveryWorker();
      ctx.after(() => worker.stop());
      await worker.runOnce();
      const during = receiver.received[0];
      assert.equal(during.headers['webhook-signature'].split(' ').length, 2);
      new Webhook(secret).verify(during.body, during.headers);
      new Webhook(m.endpoint.secret).verify(during.body, during.headers);

      // After the grace period (the worker's clock past previousSecretExpiresAt): only the new secret signs.
      const o2 = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      await ship(o2.splitOrders[0].id);
      const later = Date.parse(previousSecretExpiresAt) + 1000;
      const worker2 = deliveryWorker({ now: () => later });
      ctx.after(() => worker2.stop());
      await worker2.runOnce();
      const after = receiver.received[1];
      const ts = new Date(Number(after.headers['webhook-timestamp']) * 1000);
      assert.equal(after.headers['webhook-signature'], new Webhook(secret).sign(after.headers['webhook-id'], ts, after.body));
      assert.notEqual(after.headers['webhook-signature'], new Webhook(m.endpoint.secret).sign(after.headers['webhook-id'], ts, after.body));
      assert.equal((await t.merchant(m.token, 'POST', '/openapi/v1/webhooks/987654321987/rotate-secret')).status, 404);
    });

    it('lists deliveries by page and status, and retries one on request with the same webhook-id', async () => {
      const sender = fakeSender();
      const m = await merchantWithEndpoint('http://127.0.0.1:9/log', ['split_order.shipped', 'split_order.delivered']);
      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      await ship(o.splitOrders[0].id);
      await deliver(o.splitOrders[0].id);
      const worker = deliveryWorker({ sender });
      await worker.runOnce();
      await worker.runOnce();
      const page = (await t.merchant(m.token, 'GET', `/openapi/v1/webhooks/${m.endpoint.id}/deliveries?pageSize=1&pageNumber=2&status=succeeded`)).body.data;
      assert.equal(page.total, 2);
      assert.equal(page.list.length, 1);
      assert.equal(page.list[0].type, 'split_order.shipped', 'newest first: page 2 holds the older');
      assert.deepEqual(
        Object.keys(page.list[0]).sort(),
        [
          'attempts',
          'createdAt',
          'cursorFrom',
          'cursorTo',
          'deliveredAt',
          'eventId',
          'id',
          'lastAttemptAt',
          'lastError',
          'lastStatusCode',
          'nextAttemptAt',
          'orderId',
          'status',
          'type',
          'webhookId',
        ].sort(),
      );
      assert.deepEqual([page.list[0].cursorFrom, page.list[0].cursorTo], [null, null], 'only stock.changed deliveries cover a feed range');
      assert.equal((await t.merchant(m.token, 'GET', `/openapi/v1/webhooks/${m.endpoint.id}/deliveries?pageSize=251`)).status, 400);
      assert.equal((await t.merchant(m.token, 'GET', `/openapi/v1/webhooks/${m.endpoint.id}/deliveries?status=lost`)).status, 400);

      const retry = await t.merchant(m.token, 'POST', `/openapi/v1/webhooks/${m.endpoint.id}/deliveries/${page.list[0].id}/retry`);
      assert.equal(retry.status, 200, retry.raw);
      assert.equal(retry.body.data.status, 'pending');
      assert.ok(retry.body.data.nextAttemptAt);
      await worker.runOnce();
      const resent = sender.sent.filter((s) => s.orderId === o.id);
      assert.equal(resent.length, 3);
      assert.equal(resent[2].headers['webhook-id'], resent[0].headers['webhook-id']);
      const again = (await t.merchant(m.token, 'GET', `/openapi/v1/webhooks/${m.endpoint.id}/deliveries?status=succeeded`)).body.data.list;
      assert.equal(again.find((d: any) => d.id === page.list[0].id).attempts, 2);
      assert.equal((await t.merchant(m.token, 'POST', `/openapi/v1/webhooks/${m.endpoint.id}/deliveries/987654321987/retry`)).status, 404);
      assert.equal((await t.merchant(m.token, 'GET', '/openapi/v1/webhooks/987654321987/deliveries')).status, 404);
    });

    it('honours Idempotency-Key on every POST: a repeated registration, rotation or retry runs once (SPEC §4.4)', async () => {
      const m = await newMerchant(t, 'Keyed');
      const post = async (url: string, key: string, payload?: object) => {
        const r = await t.app.inject({ method: 'POST', url, payload, headers: { authorization: `Bearer ${m.token}`, 'idempotency-key': key } });
        return { status: r.statusCode, body: r.json(), replayed: r.headers['idempotent-replayed'] };
      };
      const body = { url: 'http://127.0.0.1:9/keyed', events: ['split_order.shipped'] };
      const first = await post('/openapi/v1/webhooks', 'hook-1', body);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const again = await post('/openapi/v1/webhooks', 'hook-1', body);
      assert.equal(again.replayed, 'true');
      assert.deepEqual(again.body, first.body, 'the same endpoint and secret');
      assert.equal((await post('/openapi/v1/webhooks', 'hook-1', { ...body, url: 'http://127.0.0.1:9/other' })).body.code, 40900);
      const endpoints = await t.store.db
        .selectFrom('webhook_endpoints')
        .select(['id', 'secret', 'previous_secret'])
        .where('merchant_id', '=', Number(m.merchantId))
        .execute();
      assert.equal(endpoints.length, 1, 'one endpoint for one key');
      const id = first.body.data.id;

      const rotated = await post(`/openapi/v1/webhooks/${id}/rotate-secret`, 'rot-1');
      assert.equal(rotated.status, 200);
      const rotatedAgain = await post(`/openapi/v1/webhooks/${id}/rotate-secret`, 'rot-1');
      assert.equal(rotatedAgain.replayed, 'true');
      assert.deepEqual(rotatedAgain.body, rotated.body);
      const row = await t.store.db.selectFrom('webhook_endpoints').select(['secret', 'previous_secret']).where('id', '=', Number(id)).executeTakeFirstOrThrow();
      assert.deepEqual(row, { secret: rotated.body.data.secret, previous_secret: first.body.data.secret }, 'rotated once: the original is the previous secret');

      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      await ship(o.splitOrders[0].id);
      await deliveryWorker({ sender: fakeSender() }).runOnce();
      const [delivery] = (await deliveries(m.token, id)).list;
      const retried = await post(`/openapi/v1/webhooks/${id}/deliveries/${delivery.id}/retry`, 'retry-1');
      assert.equal(retried.status, 200, JSON.stringify(retried.body));
      const retriedAgain = await post(`/openapi/v1/webhooks/${id}/deliveries/${delivery.id}/retry`, 'retry-1');
      assert.equal(retriedAgain.replayed, 'true');
      assert.deepEqual(retriedAgain.body, retried.body);
    });

    it('disables an endpoint after 24 h of failures and shows it; the operator lists, disables and re-enables endpoints', async () => {
      const sender = fakeSender(() => 503);
      const m = await merchantWithEndpoint('http://127.0.0.1:9/down', ['split_order.shipped']);
      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      await ship(o.splitOrders[0].id);
      const [created] = (await deliveries(m.token, m.endpoint.id)).list;
      const t0 = Date.parse(created.createdAt) + 999;
      let now = t0;
      const worker = deliveryWorker({ sender, now: () => now });
      const times: number[] = [];
      for (let i = 0; i < 40; i++) {
        const r = await worker.runOnce();
        if (r.failed) times.push(now);
        const [d] = (await deliveries(m.token, m.endpoint.id)).list;
        if (d.status !== 'pending') break;
        // Shown at second precision: the next second is the first moment it is surely due.
        now = Date.parse(d.nextAttemptAt) + 999;
      }
      const [d] = (await deliveries(m.token, m.endpoint.id)).list;
      assert.equal(d.status, 'failed');
      assert.equal(d.nextAttemptAt, null);
      assert.equal(d.attempts, times.length);
      const gaps = times.slice(1).map((x, i) => x - times[i]);
      assert.ok(gaps[0] <= 10_000, 'first retry within 10 s');
      assert.ok(
        gaps.slice(0, 5).every((g, i) => i === 0 || g > gaps[i - 1]),
        `backoff grows: ${gaps}`,
      );
      assert.ok(Math.abs(times.at(-1)! - times[0] - 24 * HOUR) <= 2000, `the last retry lands on the 24 h mark (${times.at(-1)! - times[0]} ms)`);
      const shown = (await t.merchant(m.token, 'GET', '/openapi/v1/webhooks')).body.data.list[0];
      assert.equal(shown.status, 'disabled');
      assert.match(shown.disabledReason, /24 h/);
      assert.ok(shown.disabledAt && shown.failingSince);

      const admin = await t.admin('GET', `/admin/v1/webhooks?merchantId=${m.merchantId}&status=disabled`);
      assert.equal(admin.status, 200);
      assert.equal(admin.body.data.total, 1);
      assert.equal(admin.body.data.list[0].id, m.endpoint.id);
      assert.equal(admin.body.data.list[0].merchantId, m.merchantId);
      assert.deepEqual(admin.body.data.list[0].deliveries, { pending: 0, succeeded: 0, failed: 1 });
      assert.ok(!admin.raw.includes('whsec_'));
      // A disabled endpoint refuses a manual retry: nothing would be sent.
      const refused = await t.merchant(m.token, 'POST', `/openapi/v1/webhooks/${m.endpoint.id}/deliveries/${d.id}/retry`);
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, 40903);

      const enabled = await t.admin('PATCH', `/admin/v1/webhooks/${m.endpoint.id}`, { status: 'active' });
      assert.equal(enabled.status, 200, enabled.raw);
      assert.deepEqual([enabled.body.data.status, enabled.body.data.disabledReason, enabled.body.data.failingSince], ['active', null, null]);
      const disabled = await t.admin('PATCH', `/admin/v1/webhooks/${m.endpoint.id}`, { status: 'disabled', reason: 'abuse' });
      assert.deepEqual([disabled.body.data.status, disabled.body.data.disabledReason], ['disabled', 'abuse']);
      // Events while disabled are not queued for it; nothing is sent to it.
      const o2 = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      await ship(o2.splitOrders[0].id);
      assert.equal((await deliveries(m.token, m.endpoint.id)).total, 1);
      assert.equal((await t.admin('PATCH', '/admin/v1/webhooks/987654321987', { status: 'active' })).status, 404);
      assert.equal((await t.admin('PATCH', `/admin/v1/webhooks/${m.endpoint.id}`, { status: 'paused' })).status, 400);
    });

    it('stops delivering to a deleted endpoint', async () => {
      const sender = fakeSender();
      const m = await merchantWithEndpoint('http://127.0.0.1:9/gone', ['split_order.shipped']);
      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      await ship(o.splitOrders[0].id);
      // A live endpoint with an event of its own: the round that skips the deleted one delivers this.
      const live = await merchantWithEndpoint('http://127.0.0.1:9/live', ['split_order.shipped']);
      const l = await placeOrder(t, live.token, [{ sku: 'C', quantity: 1 }]);
      await ship(l.splitOrders[0].id);
      assert.equal((await t.merchant(m.token, 'DELETE', `/openapi/v1/webhooks/${m.endpoint.id}`)).status, 200);
      await deliveryWorker({ sender, batchSize: 1000 }).runOnce();
      assert.ok(!sender.sent.some((s) => s.orderId === o.id));
      assert.deepEqual(
        sender.sent.filter((s) => s.orderId === l.id).map((s) => s.url.pathname),
        ['/live'],
      );
      const left = await t.store.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', Number(m.endpoint.id)).execute();
      assert.deepEqual(left, [], 'the deleted endpoint’s deliveries are gone');
    });

    it('answers 404 for another merchant’s webhook and delivery ids', async () => {
      const m = await merchantWithEndpoint('http://127.0.0.1:9/mine', ['split_order.shipped']);
      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      await ship(o.splitOrders[0].id);
      const [d] = (await deliveries(m.token, m.endpoint.id)).list;
      const stranger = (await newMerchant(t, 'Stranger')).token;
      for (const [method, url] of [
        ['DELETE', `/openapi/v1/webhooks/${m.endpoint.id}`],
        ['POST', `/openapi/v1/webhooks/${m.endpoint.id}/rotate-secret`],
        ['GET', `/openapi/v1/webhooks/${m.endpoint.id}/deliveries`],
        ['POST', `/openapi/v1/webhooks/${m.endpoint.id}/deliveries/${d.id}/retry`],
      ] as const) {
        const r = await t.merchant(stranger, method, url);
        assert.equal(r.status, 404, `${method} ${url}`);
        assert.equal(r.body.code, 40400);
      }
      assert.ok(!(await t.merchant(stranger, 'GET', '/openapi/v1/webhooks')).raw.includes(m.endpoint.id));
      assert.equal((await t.merchant(m.token, 'GET', `/openapi/v1/webhooks/${m.endpoint.id}/deliveries`)).status, 200, 'still there for its owner');
    });
  });
}
