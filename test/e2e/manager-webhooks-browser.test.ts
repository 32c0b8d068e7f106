import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { HostResolver } from '../../src/domain/webhook-url.ts';
import type { WebhookRequest, WebhookSender } from '../../src/jobs/webhook-sender.ts';
import { WebhookWorker } from '../../src/jobs/webhook.worker.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the business manager webhook page browser test');
const PASSWORD = 'webhook page passphrase';

/** The receiver's name resolves to a public address, so the log keeps its answers (a loopback one's are never kept). */
const resolve: HostResolver = async (host) => {
  if (host === 'hooks.example.com') return [{ address: '93.184.216.34', family: 4 }];
  throw new Error(`getaddrinfo ENOTFOUND ${host}`);
};

/**
 * Issue 29, 15 in Chromium: a developer edits an endpoint's events, sends a test event of a chosen
 * type, and watches the delivery log update itself (htmx, every 5 s, no reload) until the delivery
 * shows its request body, the receiver's status, the start of its answer and the time taken; an
 * opened row stays open across refreshes. axe-core on each state; screenshots at 1280 and 390 px.
 */
describe('business manager webhook endpoint page in a real browser', { skip: SKIP }, () => {
  it('edits the events, sends a test event of a chosen type, and the log shows it without a reload', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite', {}, { resolveHost: resolve });
    await loadCatalogue(app, ORDER_CATALOGUE);
    const m = await newMerchant(app, 'Webhook page shop');
    const placed = await placeOrder(app, m.token, [{ sku: 'C', quantity: 1 }]);
    const hook = await app.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url: 'https://hooks.example.com/in', events: ['refund.failed'] });
    assert.equal(hook.status, 200, hook.raw);
    const hookId = hook.body.data.id as string;

    // The receiver (scripted: the name is not really on the internet) answers 202 with a short text.
    const received: WebhookRequest[] = [];
    const sender: WebhookSender = {
      async send(r) {
        received.push(r);
        return { status: 202, body: `accepted ${JSON.parse(r.body).type}` };
      },
      close() {},
    };
    const worker = new WebhookWorker({ store: app.store, config: { env: 'sandbox' }, resolve, sender });
    worker.start(100);
    t.after(() => worker.stop());
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;

    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'dev@hooks.example', role: 'developer' });
    assert.equal(invited.status, 200, invited.raw);
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await page.goto(`${origin}${new URL(invited.body.data.invitationUrl).pathname}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);
    const look = async (name: string) => {
      await checkAccessibility(page);
      await screenshot(page, 'manager-webhooks', name);
    };
    const submit = (selector: string) => Promise.all([page.waitForEvent('load'), page.click(selector)]);

    await page.goto(`${origin}/manager/webhooks/${hookId}`);
    await look('endpoint');

    // Edit: no event ticked is refused with its reason, nothing saved.
    await page.uncheck('input[name=events][value="refund.failed"]');
    await submit('button[data-action="save-webhook"]');
    assert.match((await page.textContent('[data-refused]'))!, /events/);
    assert.equal((await page.textContent('[data-endpoint-events]'))!.trim(), 'refund.failed', 'nothing was saved');
    await look('endpoint-refused');
    // Then events ticked, and saved.
    await page.check('input[name=events][value="split_order.shipped"]');
    await page.check('input[name=events][value="order.cancelled"]');
    await submit('button[data-action="save-webhook"]');
    assert.equal(new URL(page.url()).pathname, `/manager/webhooks/${hookId}`);
    assert.match((await page.textContent('[data-notice]'))!, /Endpoint saved/);
    assert.equal((await page.textContent('[data-endpoint-events]'))!.trim(), 'split_order.shipped, order.cancelled');
    const listed = (await app.merchant(m.token, 'GET', '/openapi/v1/webhooks')).body.data.list.find((e: { id: string }) => e.id === hookId);
    assert.deepEqual(listed.events, ['split_order.shipped', 'order.cancelled']);

    // Only what can be sent is offered: the merchant has an order, no refund yet.
    const offered = await page.locator('#test-type option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    assert.ok(offered.includes('split_order.shipped') && offered.includes('webhook.test'), offered.join(' '));
    assert.ok(!offered.includes('refund.succeeded') && !offered.includes('refund.failed'), 'no refund to build a refund event from');
    assert.match((await page.textContent('[data-test-unavailable]'))!, /Refund succeeded: no refund yet/);
    // A test event of the chosen type: the page after the 303 shows it waiting.
    await page.selectOption('#test-type', 'split_order.shipped');
    await submit('button[data-action="send-test"]');
    assert.match((await page.textContent('[data-notice]'))!, /A test event \(Split order shipped\) is on its way/);
    // From here on, no navigation: the log must update in place (htmx polling).
    await page.evaluate('window.__stillTheSamePage = true');
    const row = page.locator('[data-delivery][data-type="split_order.shipped"]');
    await row.and(page.locator('[data-status="succeeded"]')).waitFor({ timeout: 20_000 });
    assert.equal(await page.evaluate('window.__stillTheSamePage === true'), true, 'the log updated without a reload');
    assert.equal(received.length, 1);
    const sent = JSON.parse(received[0].body);
    assert.equal(sent.type, 'split_order.shipped');
    assert.equal(sent.test, true);
    assert.equal(sent.data.orderId, placed.id);

    // Open the row: the exact body sent, the status, the answer and the time.
    await row.locator('summary').click();
    assert.equal((await row.locator('[data-request-body]').textContent())!, received[0].body);
    assert.equal((await row.locator('[data-response-status]').textContent())!.trim(), '202');
    assert.equal((await row.locator('[data-response-body]').textContent())!, 'accepted split_order.shipped');
    assert.match((await row.locator('[data-response-time]').textContent())!, /^\d+ ms$/);
    await look('delivery-open');
    // The next refresh keeps the opened row open (and still no reload).
    const polled = page.waitForResponse((r) => r.url().endsWith(`/manager/webhooks/${hookId}/deliveries`), { timeout: 15_000 });
    await polled;
    await page.waitForTimeout(300);
    assert.equal(await row.locator('details[open]').count(), 1, 'an opened row stays open across refreshes');
    assert.equal(await page.evaluate('window.__stillTheSamePage === true'), true);

    // A second test, sent as another tab would (same session, its own form post): it appears in this open page by itself.
    const more = await page.request.post(`${origin}/manager/webhooks/${hookId}/test`, {
      form: { _csrf: (await page.getAttribute('input[name=_csrf]', 'value'))!, type: 'webhook.test', _formKey: 'another-tab-form-key-0000000' },
      headers: { origin },
      maxRedirects: 0,
    });
    assert.equal(more.status(), 303, await more.text());
    await page.locator('[data-delivery][data-type="webhook.test"][data-status="succeeded"]').waitFor({ timeout: 20_000 });
    assert.equal(await page.evaluate('window.__stillTheSamePage === true'), true, 'a delivery sent elsewhere appears without a reload');
    assert.equal(await page.locator('[data-log-count]').textContent(), '2 deliveries.');

    assert.deepEqual(foreign, [], 'everything the page needs comes from this server');
    // The refused edit's page came at 400 (as a refusal should); Chromium reports that load, nothing else.
    assert.deepEqual(consoleErrors, ['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });
});
