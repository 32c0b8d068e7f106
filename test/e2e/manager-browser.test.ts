import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Secret, TOTP } from 'otpauth';
import { WebhookWorker } from '../../src/jobs/webhook.worker.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';

const SKIP = chromiumSkip('the business manager browser test');
const PASSWORD = 'browser test passphrase';

const code = (secret: string, at: number) => TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: at });

/** Waits (bounded) until `test` holds, checking every 100 ms. */
async function waitFor(what: string, test: () => boolean | Promise<boolean>, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  while (!(await test())) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${seconds} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('business manager in a real browser', { skip: SKIP }, () => {
  it('accepts an invitation, enables 2FA, creates an OAuth client that works with curl semantics, registers a webhook and sees a test event delivered, revokes the client', {
    timeout: 300_000,
  }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    await loadCatalogue(app, ORDER_CATALOGUE);
    const m = await newMerchant(app, 'Browser shop');
    const worker = new WebhookWorker({ store: app.store, config: { env: 'sandbox', stockWebhookIntervalMs: 200 } });
    worker.start(50);
    t.after(() => worker.stop());
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;

    // The merchant's receiver: records every delivery, answers 200.
    const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'dev@browser.example', role: 'admin' });
    assert.equal(invited.status, 200, invited.raw);
    const invitationPath = new URL(invited.body.data.invitationUrl).pathname;

    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    const look = async (name: string) => {
      await checkAccessibility(page);
      await screenshot(page, 'manager', name);
    };

    // Accept the invitation: set the password; signed in at once.
    await page.goto(`${origin}${invitationPath}`);
    await look('invitation');
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);
    assert.equal(await page.getAttribute('[data-environment]', 'data-environment'), 'sandbox');
    assert.match((await page.textContent('[data-notice]')) ?? '', /^Invitation accepted: your password is set and you are signed in to /);
    await look('get-started');
    // The ready curl with a fresh token, run as curl would.
    await Promise.all([page.waitForLoadState(), page.click('button[data-action="get-started-token"]')]);
    const curl = (await page.textContent('[data-curl]'))!;
    const [, bearer, curlUrl] = /Bearer (stk_test_[A-Za-z0-9]+)" "([^"]+)"/.exec(curl)!;
    assert.equal((await fetch(curlUrl, { headers: { authorization: `Bearer ${bearer}` } })).status, 200, curl);
    await look('get-started-token');

    // Two-factor: add the key to "the app" (otpauth here) and confirm with a code.
    await page.click('a[href="/manager/two-factor"]');
    await page.waitForURL(`${origin}/manager/two-factor`);
    await look('two-factor-enrol');
    const secret = (await page.textContent('[data-totp-secret]'))!;
    const enrolledAt = Date.now();
    await page.fill('#password', PASSWORD);
    await page.fill('#code', code(secret, enrolledAt));
    await Promise.all([page.waitForLoadState(), page.click('main button[type=submit]')]);
    assert.equal(await page.getAttribute('[data-two-factor]', 'data-two-factor'), 'on');
    await look('two-factor-on');

    // Sign out and in again: the password, then a code (the next time step's: the enrolment's was used).
    await Promise.all([page.waitForURL(`${origin}/manager/sign-in`), page.click('.who button[type=submit]')]);
    await look('sign-in');
    await page.fill('#email', 'dev@browser.example');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager/sign-in/code`), page.click('main button[type=submit]')]);
    await look('sign-in-code');
    await page.fill('#code', code(secret, enrolledAt + 30_000));
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);

    // An OAuth client: create, read the secret once, exchange it for a token like curl -u id:secret -d grant_type=….
    await page.click('nav a[href="/manager/credentials"]');
    await page.waitForURL(`${origin}/manager/credentials`);
    await look('credentials');
    await page.fill('#client-name', 'Shop backend');
    await Promise.all([page.waitForLoadState(), page.click('button[data-action="create-client"]')]);
    const clientId = (await page.textContent('[data-client-id]'))!;
    const clientSecret = (await page.textContent('[data-secret]'))!;
    await look('credentials-client-created');
    const grant = await fetch(`${origin}/openapi/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    assert.equal(grant.status, 200);
    const accessToken = ((await grant.json()) as { access_token: string }).access_token;
    const stock = await fetch(`${origin}/openapi/v1/product/stocks?skus=C`, { headers: { authorization: `Bearer ${accessToken}` } });
    assert.equal(stock.status, 200);
    // An order for the Orders pages.
    const placed = await fetch(`${origin}/openapi/v1/order/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(order([{ sku: 'C', quantity: 1 }])),
    });
    assert.equal(placed.status, 200);
    const orderId = ((await placed.json()) as { data: string }).data;

    // A webhook endpoint at the local receiver, a test event, and its delivery in the log.
    await page.click('nav a[href="/manager/webhooks"]');
    await page.waitForURL(`${origin}/manager/webhooks`);
    await page.fill('#webhook-url', hookUrl);
    await Promise.all([page.waitForLoadState(), page.click('button[data-action="create-webhook"]')]);
    assert.match((await page.textContent('[data-secret]'))!, /^whsec_/);
    await look('webhooks');
    await Promise.all([page.waitForNavigation(), page.click('[data-endpoint] a')]);
    const endpointUrl = page.url();
    // The test event's form answers 303 back to the endpoint page: wait for that page before reloading it.
    await Promise.all([page.waitForNavigation(), page.click('button[data-action="send-test"]')]);
    assert.equal(page.url(), endpointUrl, 'the test event answers 303 to the endpoint page');
    await waitFor('the test event at the receiver', () => received.some((r) => r.body.includes('"type":"webhook.test"')));
    const delivery = received.find((r) => r.body.includes('"type":"webhook.test"'))!;
    assert.match(String(delivery.headers['webhook-signature']), /^v1,/);
    await waitFor('the delivery logged as succeeded', async () => {
      await page.reload();
      return (await page.locator('[data-delivery][data-status="succeeded"]').count()) === 1;
    });
    assert.equal((await page.textContent('[data-delivery][data-status="succeeded"] [data-response-code]'))!.trim(), '200');
    await look('webhook-log');

    await page.click('nav a[href="/manager/orders"]');
    await page.waitForURL(`${origin}/manager/orders`);
    await look('orders');
    await Promise.all([page.waitForURL(`${origin}/manager/orders/${orderId}`), page.click(`a[href="/manager/orders/${orderId}"]`)]);
    await look('order');
    await page.click('nav a[href="/manager/team"]');
    await page.waitForURL(`${origin}/manager/team`);
    await look('team');
    await page.click('nav a[href="/manager/audit"]');
    await page.waitForURL(`${origin}/manager/audit`);
    await look('audit');

    // Revoke the client: its token stops working at once.
    await page.click('nav a[href="/manager/credentials"]');
    await page.waitForURL(`${origin}/manager/credentials`);
    const row = page.locator('tr[data-client]', { hasText: 'Shop backend' });
    await row.locator('summary[data-confirm-open="revoke-client"]').click();
    await Promise.all([page.waitForNavigation(), row.locator('button[data-action="revoke-client"]').click()]);
    const after = await fetch(`${origin}/openapi/v1/product/stocks?skus=C`, { headers: { authorization: `Bearer ${accessToken}` } });
    assert.equal(after.status, 401);

    assert.deepEqual(consoleErrors, []);
    // A used or unknown link: an error page (Chromium logs the 404 of the document itself).
    const response = await page.goto(`${origin}/manager/invitations/${'A'.repeat(43)}`);
    assert.equal(response?.status(), 404);
    await look('error');
    assert.deepEqual(foreign, [], 'no request leaves the server');
  });
});
