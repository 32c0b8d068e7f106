import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HostResolver } from '../../src/domain/webhook-url.ts';
import type { WebhookRequest, WebhookSender } from '../../src/jobs/webhook-sender.ts';
import { WebhookWorker } from '../../src/jobs/webhook.worker.ts';
import { checkWebhookBody } from '../contract.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { DIALECTS, loadCatalogue, newMerchant, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { follow, member } from './manager-helpers.ts';

/**
 * Issue 29, 15: an endpoint's page in the business manager — the edit form (the API's PUT: one
 * schema, one service), test events of a chosen type with that type's real body, and the delivery
 * log with each delivery's request body, response status, first 2 KB of the response and time,
 * refreshed by its own fragment. Roles and tenancy; refused input writes nothing.
 *
 * Each test makes its own merchant and endpoint (`endpointOn`), so no test sees another's edits;
 * a test that runs the webhook worker first sends what other tests left pending (`drained`): the
 * worker sends every pending delivery of its database, and the receiver the test reads would count
 * them.
 */

/** Names the tests resolve: a public address (the log keeps its answers) and loopback. */
const resolve: HostResolver = async (host) => {
  if (host === 'hooks.example.com') return [{ address: '93.184.216.34', family: 4 }];
  if (host === '127.0.0.1') return [{ address: '127.0.0.1', family: 4 }];
  throw new Error(`getaddrinfo ENOTFOUND ${host}`);
};

/** A receiver that answers 202 with a long body (more than the 2 KB the log keeps), recording what it got. */
function answeringSender(answer = `accepted ${'é'.repeat(1500)}`) {
  const sent: WebhookRequest[] = [];
  const sender: WebhookSender = {
    async send(r) {
      sent.push(r);
      await new Promise((done) => setTimeout(done, 15));
      return { status: 202, body: answer };
    },
    close() {},
  };
  return { sent, sender, answer };
}

const auditRows = async (t: TestApp) =>
  (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list as { action: string; target: string; after: Record<string, unknown> | null }[];

const htmlText = (html: string) =>
  html
    .replace(/&#(\d+);/g, (_m, code) => String.fromCharCode(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The section of one delivery in the log (its row and its expandable detail). */
const deliverySection = (html: string, type: string) => {
  const m = new RegExp(`<tbody data-delivery="(\\d+)" data-status="(\\w+)" data-type="${type.replace('.', '\\.')}">([\\s\\S]*?)</tbody>`).exec(html);
  assert.ok(m, `a ${type} delivery in the log`);
  return { id: m[1], status: m[2], html: m[3] };
};

for (const dialect of DIALECTS) {
  describe(`business manager webhook endpoint page (${dialect})`, () => {
    const env = { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' };
    const shared = useApp(dialect, env, { resolveHost: resolve });
    before(() => loadCatalogue(shared, ORDER_CATALOGUE));

    /** The shared app once the deliveries other tests left pending are sent (to a receiver nobody reads). */
    const drained = async () => {
      const worker = new WebhookWorker({ store: shared.store, config: shared.config, resolve, sender: answeringSender('ok').sender });
      for (let round = 0; round < 50; round++) {
        const r = await worker.runOnce();
        if (r.succeeded + r.failed === 0) break;
      }
      await worker.stop();
      return shared;
    };

    /** A merchant of the test's own on `t`, its developer and one endpoint (for `refund.failed`). */
    const endpointOn = async (t: TestApp) => {
      const shop = await newMerchant(t, 'Hook page shop');
      const dev = await member(t, shop.merchantId, 'hook-dev@example.com', 'developer');
      const created = await t.merchant(shop.token, 'POST', '/openapi/v1/webhooks', { url: 'https://hooks.example.com/in', events: ['refund.failed'] });
      assert.equal(created.status, 200, created.raw);
      const hookId: string = created.body.data.id;
      const token = await dev.csrf(`/manager/webhooks/${hookId}`);
      /** The version the endpoint's edit form carries now (docs/web.md, "Edit conflicts"). */
      const formVersion = async () => /name="version" value="(\d+)"/.exec((await dev.get(`/manager/webhooks/${hookId}`)).body)![1];
      return { t, shop, dev, hookId, token, formVersion };
    };

    it('edits URL, events and the stock.changed SKU list through the API’s PUT rules: 303, shown, audited', async () => {
      const { t, shop, dev, hookId, token, formVersion } = await endpointOn(shared);
      const page = await dev.get(`/manager/webhooks/${hookId}`);
      assert.match(page.body, /<input type="checkbox" name="events" value="refund\.failed" checked>/);
      const saved = await dev.post(`/manager/webhooks/${hookId}`, {
        _csrf: token,
        version: await formVersion(),
        url: 'https://hooks.example.com/v2',
        events: ['stock.changed', 'split_order.shipped'],
        skuList: 'C\r\nD, C\n',
      });
      assert.equal(saved.statusCode, 303, saved.body.slice(0, 400));
      assert.equal(saved.headers.location, `/manager/webhooks/${hookId}`);
      const shown = await follow(dev, saved);
      assert.match(shown.body, /data-notice>Endpoint saved/);
      assert.match(shown.body, /data-endpoint-url>https:\/\/hooks\.example\.com\/v2</);
      assert.match(shown.body, /data-endpoint-events><code>split_order\.shipped, stock\.changed<\/code></);
      assert.match(shown.body, /data-endpoint-skus>2 SKUs: C, D</);
      assert.match(shown.body, /<textarea id="edit-skus" name="skuList"[^>]*>C\nD<\/textarea>/);
      // The API sees exactly what the form saved.
      const listed = (await t.merchant(shop.token, 'GET', '/openapi/v1/webhooks')).body.data.list.find((e: { id: string }) => e.id === hookId);
      assert.deepEqual(
        { url: listed.url, events: listed.events, skus: listed.skus },
        {
          url: 'https://hooks.example.com/v2',
          events: ['split_order.shipped', 'stock.changed'],
          skus: ['C', 'D'],
        },
      );
      const audit = (await auditRows(t)).find((r) => r.action === 'webhook.update' && r.target === `webhook:${hookId}`);
      assert.ok(audit, 'the edit is audited');
      assert.equal(audit.after?.events, 'split_order.shipped stock.changed');
      // An empty SKU list: every SKU again.
      await follow(
        dev,
        await dev.post(`/manager/webhooks/${hookId}`, {
          _csrf: token,
          version: await formVersion(),
          url: 'https://hooks.example.com/v2',
          events: ['stock.changed', 'split_order.shipped'],
          skuList: '',
        }),
      );
      const again = (await t.merchant(shop.token, 'GET', '/openapi/v1/webhooks')).body.data.list.find((e: { id: string }) => e.id === hookId);
      assert.equal(again.skus, null);
      // stock.changed off again (the tests below count the deliveries the worker sends: only test events).
      await follow(
        dev,
        await dev.post(`/manager/webhooks/${hookId}`, {
          _csrf: token,
          version: await formVersion(),
          url: 'https://hooks.example.com/v2',
          events: ['split_order.shipped'],
        }),
      );
      const last = (await t.merchant(shop.token, 'GET', '/openapi/v1/webhooks')).body.data.list.find((e: { id: string }) => e.id === hookId);
      assert.deepEqual(last.events, ['split_order.shipped']);
    });

    it('refuses bad input with its reasons on the form, what was typed kept, nothing written', async () => {
      const { t, dev, hookId, token, formVersion } = await endpointOn(shared);
      const cases: [Record<string, string | string[]>, number, RegExp][] = [
        [{ url: 'https://hooks.example.com/x' }, 400, /events/],
        [{ url: 'ftp://hooks.example.com/x', events: 'refund.failed' }, 400, /url/],
        [{ url: 'https://nowhere.example.com/x', events: 'refund.failed' }, 400, /does not resolve/],
        [{ url: 'https://hooks.example.com/x', events: 'refund.failed', skuList: 'C' }, 400, /skus: applies to stock\.changed only/],
        [{ url: 'https://hooks.example.com/x', events: 'no.such.event' }, 400, /events/],
        [{ url: 'https://hooks.example.com/x', events: 'stock.changed', skuList: 'x'.repeat(65) }, 400, /skus/],
      ];
      for (const [fields, status, reason] of cases) {
        const before = await tableDigests(t.store);
        const r = await dev.post(`/manager/webhooks/${hookId}`, { _csrf: token, version: await formVersion(), ...fields });
        assert.equal(r.statusCode, status, `${JSON.stringify(fields)}: ${r.body.slice(0, 300)}`);
        const refusal = /<div class="error" role="alert" id="edit-error" data-refused>([\s\S]*?)<\/div>/.exec(r.body);
        assert.ok(refusal, `${JSON.stringify(fields)}: the form again, with the refusal`);
        assert.match(htmlText(refusal[1]), reason);
        assert.ok(r.body.includes(`value="${fields.url}"`), 'the typed URL is kept');
        assert.deepEqual(await tableDigests(t.store), before, `${JSON.stringify(fields)}: nothing written`);
      }
    });

    it('a viewer sees the page and the log but no forms, and cannot post; another merchant’s endpoint is a 404', async () => {
      const { t, shop, hookId } = await endpointOn(shared);
      const viewer = await member(t, shop.merchantId, 'hook-viewer@example.com', 'viewer');
      const page = await viewer.get(`/manager/webhooks/${hookId}`);
      assert.equal(page.statusCode, 200);
      assert.doesNotMatch(page.body, /data-form="edit-webhook"|data-action="send-test"/);
      assert.equal((await viewer.get(`/manager/webhooks/${hookId}/deliveries`)).statusCode, 200);
      const viewerToken = await viewer.csrf(`/manager/webhooks/${hookId}`);
      const other = await newMerchant(t, 'Other hook shop');
      const stranger = await member(t, other.merchantId, 'hook-stranger@example.com', 'admin');
      const strangerToken = await stranger.csrf('/manager/webhooks');
      const before = await tableDigests(t.store);
      const refused = await viewer.post(`/manager/webhooks/${hookId}`, { _csrf: viewerToken, url: 'https://hooks.example.com/z', events: 'refund.failed' });
      assert.equal(refused.statusCode, 403);
      assert.equal((await viewer.post(`/manager/webhooks/${hookId}/test`, { _csrf: viewerToken, type: 'webhook.test' })).statusCode, 403);
      assert.deepEqual(await tableDigests(t.store), before);

      for (const r of [
        await stranger.get(`/manager/webhooks/${hookId}`),
        await stranger.get(`/manager/webhooks/${hookId}/deliveries`),
        await stranger.post(`/manager/webhooks/${hookId}`, { _csrf: strangerToken, url: 'https://hooks.example.com/stolen', events: 'refund.failed' }),
        await stranger.post(`/manager/webhooks/${hookId}/test`, { _csrf: strangerToken, type: 'webhook.test' }),
      ]) {
        assert.equal(r.statusCode, 404, r.body.slice(0, 200));
        assert.ok(!r.body.includes('hooks.example.com/in'), 'nothing of the endpoint shows');
      }
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
    });

    it('sends a test event of the chosen type with that type’s real body, and the log shows request, status, first 2 KB and time', async () => {
      const { t, shop, dev, hookId, token } = await endpointOn(await drained());
      const order = await placeOrder(t, shop.token, [{ sku: 'C', quantity: 1 }]);
      // No refund yet: a refund test has nothing to be built from, and says so; nothing is written.
      const before = await tableDigests(t.store);
      const refused = await dev.post(`/manager/webhooks/${hookId}/test`, { _csrf: token, type: 'refund.succeeded' });
      assert.equal(refused.statusCode, 409);
      assert.match(htmlText(refused.body), /data-test-refused>Not sent: a refund.succeeded test event is built from your latest refund, and there is none yet/);
      assert.match(refused.body, /<h1>Webhook \d+<\/h1>/, 'the endpoint’s page with its forms, not a bare error page');
      assert.match(refused.body, /data-action="send-test"/);
      assert.deepEqual(await tableDigests(t.store), before);

      const sent = await follow(dev, await dev.post(`/manager/webhooks/${hookId}/test`, { _csrf: token, type: 'split_order.shipped' }));
      assert.match(sent.body, /data-notice>A test event \(Split order shipped\) is on its way/);
      const pending = deliverySection(sent.body, 'split_order.shipped');
      assert.equal(pending.status, 'pending');
      assert.match(pending.html, /data-test>test</);
      assert.match(pending.html, /Not sent yet/);

      const { sent: received, sender, answer } = answeringSender();
      const worker = new WebhookWorker({ store: t.store, config: t.config, resolve, sender });
      assert.equal((await worker.runOnce()).succeeded, 1);
      await worker.stop();
      assert.deepEqual(
        received.map((r) => JSON.parse(r.body).type),
        ['split_order.shipped'],
      );
      const body = JSON.parse(received[0].body);
      assert.equal(body.type, 'split_order.shipped');
      assert.equal(body.test, true);
      assert.equal(body.data.orderId, order.id);
      assert.equal(body.data.splitOrderId, order.splitOrders[0].id);
      assert.equal(body.data.order.orderId ?? body.data.order.id, order.id);
      assert.equal(checkWebhookBody(received[0].body), null, 'the documented body of split_order.shipped');

      // The log (the fragment the page polls, and the page itself) shows what was sent and what came back.
      for (const url of [`/manager/webhooks/${hookId}/deliveries`, `/manager/webhooks/${hookId}`]) {
        const log = await dev.get(url);
        assert.equal(log.statusCode, 200);
        const d = deliverySection(log.body, 'split_order.shipped');
        assert.equal(d.status, 'succeeded');
        const request = /<pre data-request-body[^>]*>([\s\S]*?)<\/pre>/.exec(d.html);
        assert.ok(request);
        assert.equal(htmlText(request[1]), received[0].body, 'the exact JSON sent');
        assert.match(d.html, /data-response-status>202</);
        const time = /data-response-time>(\d+) ms</.exec(d.html);
        assert.ok(time && Number(time[1]) >= 10, `the time taken: ${time?.[1]}`);
        const response = /<pre data-response-body[^>]*>([\s\S]*?)<\/pre>/.exec(d.html);
        assert.ok(response);
        const kept = htmlText(response[1]);
        assert.ok(answer.startsWith(kept), 'the start of the answer');
        assert.equal(Buffer.byteLength(kept), 2047, 'the first 2 KB (a 2-byte character cut in two is dropped)');
      }
      const fragment = await dev.get(`/manager/webhooks/${hookId}/deliveries`);
      assert.doesNotMatch(fragment.body, /<html|<main/, 'the fragment is the log alone');
      assert.match(fragment.body, /^<section id="delivery-log"[^>]* hx-get="\/manager\/webhooks\/\d+\/deliveries" hx-trigger="every 5s"/);
      const audit = (await auditRows(t)).find((r) => r.action === 'webhook.send_test' && r.target === `webhook:${hookId}`);
      assert.equal(audit?.after?.type, 'split_order.shipped');
    });

    it('builds stock.changed, order.cancelled and balance.low tests from the merchant’s own records, each its documented body', async () => {
      const { t, shop, dev, hookId, token } = await endpointOn(await drained());
      await placeOrder(t, shop.token, [{ sku: 'C', quantity: 1 }]); // the order the order.cancelled test is built from
      await t.admin('POST', `/admin/v1/merchants/${shop.merchantId}/account/top-ups`, { environment: 'sandbox', amount: '50.00', reference: 'HOOK-TEST-1' });
      const { sent: received, sender } = answeringSender('ok');
      for (const type of ['stock.changed', 'order.cancelled', 'balance.low', 'webhook.test']) {
        await follow(dev, await dev.post(`/manager/webhooks/${hookId}/test`, { _csrf: token, type }));
      }
      const worker = new WebhookWorker({ store: t.store, config: t.config, resolve, sender });
      // Test events share one lane: they go out one after another, in the order they were sent.
      for (let round = 0; round < 10 && received.length < 4; round++) await worker.runOnce();
      await worker.stop();
      assert.deepEqual(
        received.map((r) => JSON.parse(r.body).type),
        ['stock.changed', 'order.cancelled', 'balance.low', 'webhook.test'],
      );
      const byType = new Map(received.map((r) => [JSON.parse(r.body).type as string, r.body]));
      for (const type of ['stock.changed', 'order.cancelled', 'balance.low']) {
        const text = byType.get(type);
        assert.ok(text, `${type} sent`);
        assert.equal(checkWebhookBody(text), null, `${type}: its documented body`);
        assert.equal(JSON.parse(text).test, true);
      }
      assert.ok(JSON.parse(byType.get('stock.changed')!).data.changes.length >= 1);
      assert.equal(JSON.parse(byType.get('balance.low')!).data.account.environment, 'sandbox');
      assert.equal(JSON.parse(byType.get('webhook.test')!).test, undefined, 'the ping stays as it was');
      // Tests never go into the endpoint's real lanes.
      const lanes = await t.store.db.selectFrom('webhook_deliveries').select('order_id').where('endpoint_id', '=', Number(hookId)).execute();
      assert.ok(
        lanes.every((l) => l.order_id === -2),
        JSON.stringify(lanes),
      );
    });

    it('keeps no response body from a loopback receiver (only the status class), but the time taken', async () => {
      const { t, shop, dev, token } = await endpointOn(await drained());
      const loop = await t.merchant(shop.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/local', events: ['refund.failed'] });
      const loopId = loop.body.data.id;
      await follow(dev, await dev.post(`/manager/webhooks/${loopId}/test`, { _csrf: token, type: 'webhook.test' }));
      const { sender } = answeringSender('secret internal answer');
      const worker = new WebhookWorker({ store: t.store, config: t.config, resolve, sender });
      await worker.runOnce();
      await worker.stop();
      const log = await dev.get(`/manager/webhooks/${loopId}/deliveries`);
      const d = deliverySection(log.body, 'webhook.test');
      assert.equal(d.status, 'succeeded');
      assert.match(d.html, /data-response-status>200</);
      assert.match(d.html, /data-response-time>\d+ ms</);
      assert.match(d.html, /data-response-body-none>Not kept/);
      assert.ok(!log.body.includes('secret internal answer'));
      const row = await t.store.db
        .selectFrom('webhook_deliveries')
        .select(['last_response_body', 'last_duration_ms'])
        .where('endpoint_id', '=', Number(loopId))
        .executeTakeFirstOrThrow();
      assert.equal(row.last_response_body, null);
      assert.ok(row.last_duration_ms !== null);
    });

    it('offers only the test events the merchant has data for, and says what the others wait for', async () => {
      const t = shared;
      const fresh = await newMerchant(t, 'Fresh hook shop');
      const freshDev = await member(t, fresh.merchantId, 'fresh-hook-dev@example.com', 'developer');
      const created = await t.merchant(fresh.token, 'POST', '/openapi/v1/webhooks', { url: 'https://hooks.example.com/fresh', events: ['refund.failed'] });
      const id = created.body.data.id as string;
      const offered = async () => {
        const body = (await freshDev.get(`/manager/webhooks/${id}`)).body;
        const select = /<select id="test-type" name="type">([\s\S]*?)<\/select>/.exec(body)![1];
        return { types: [...select.matchAll(/<option value="([^"]+)">/g)].map((m) => m[1]), body };
      };
      const empty = await offered();
      // The stock feed is the catalogue's (loaded by the suite); of its own, the merchant has nothing yet.
      assert.deepEqual(empty.types, ['webhook.test', 'stock.changed'], 'no order, refund or transaction to build an event from');
      assert.match(
        htmlText(empty.body),
        /data-test-unavailable>Not offered until you have a record to build it from: Refund succeeded: no refund yet; Refund failed: no refund yet; Split order shipped: no split order yet;/,
      );
      await placeOrder(t, fresh.token, [{ sku: 'C', quantity: 1 }]);
      const ordered = await offered();
      assert.deepEqual(ordered.types, ['webhook.test', 'split_order.shipped', 'split_order.delivered', 'order.cancelled', 'stock.changed', 'balance.low']);
      assert.match(
        htmlText(ordered.body),
        /Refund succeeded: no refund yet; Refund failed: no refund yet; Claim approved: no claim yet; Claim rejected: no claim yet; Claim credited: no claim yet; Claim reshipped: no claim yet\./,
      );
      // Every type offered is sent (303), none ends on a refusal.
      const csrf = await freshDev.csrf(`/manager/webhooks/${id}`);
      for (const type of ordered.types) {
        const sent = await freshDev.post(`/manager/webhooks/${id}/test`, { _csrf: csrf, type });
        assert.equal(sent.statusCode, 303, `${type}: ${sent.body.slice(0, 300)}`);
      }
    });
  });
}
