import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { Secret, TOTP } from 'otpauth';
import { seedDemo } from '../../src/demo/seed.ts';
import { demoSku } from '../../src/demo/demo-data.ts';
import { WebhookWorker } from '../../src/jobs/webhook.worker.ts';
import { createStaff } from '../../src/services/staff.service.ts';
import { CONSOLE_ROUTES } from '../../src/web/console/console-routes.ts';
import { MANAGER_ROUTES } from '../../src/web/manager/manager-routes.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp } from '../helpers.ts';
import { testEngine } from '../backup-engine.ts';
import { BackupService } from '../../src/services/backup-runs.service.ts';
import { placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the phone-width browser test');
const PASSWORD = 'phone width passphrase';
const PHONE = 390;

/**
 * GET routes that are not pages a person reads on a phone: assets, the PDF statement and the CSV
 * exports (downloads). Every other GET route of both route tables must be visited below.
 */
const NOT_PAGES = new Set([
  'console GET /assets/:file',
  'manager GET /assets/:file',
  'manager GET /balance/statement',
  // The delivery log's fragment, polled by htmx into the endpoint's page (looked at there, below).
  'manager GET /webhooks/:id/deliveries',
  'console GET /import/template.csv',
  // A backup archive's download.
  'console GET /backups/:name',
  // A claim's evidence file (an attachment; the claim page shows it as a thumbnail).
  'console GET /claims/files/:fileId',
  ...[
    '/orders.csv',
    '/refunds.csv',
    '/refunds/all.csv',
    '/claims.csv',
    '/products.csv',
    '/audit.csv',
    '/merchants/:id/transactions.csv',
    '/books/journal.csv',
  ].map((path) => `console GET ${path}`),
  ...['/orders.csv', '/audit.csv', '/balance/transactions.csv', '/claims.csv', '/claims/files/:fileId'].map((path) => `manager GET ${path}`),
]);

const code = (secret: string, at: number) => TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: at });

/**
 * SPEC §14: "No page is wider than a 390 px phone screen." Every page of the operator console and
 * of the business manager — each GET route of both route tables, and the pages that show a result
 * (a secret shown once, an invitation link) — on the demo data with orders, refunds, webhooks and
 * credentials, signed in as the console's owner and as the demo merchant's admin, must not scroll
 * sideways at 390 px (`document.documentElement.scrollWidth ≤ 390`). Screenshots at 1280 and 390
 * px go to test-output/phone-width/.
 */
describe('every page of both front ends fits a 390 px phone', { skip: SKIP }, () => {
  it('console (owner) and business manager (admin) on demo data: no page scrolls sideways', { timeout: 600_000 }, async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-phone-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    let backups: BackupService | null = null;
    const app = await buildTestApp(
      t,
      'sqlite',
      { DATA_DIR: dataDir, REFUND_REVIEW: 'manual' },
      {},
      { backups: (store, config) => (backups = new BackupService({ config, store, engine: testEngine(), log: { info() {}, warn() {}, error() {} } })) },
    );
    const demo = await seedDemo(app.store, app.config);
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'owner@stockist.test', role: 'owner', password: PASSWORD },
      Date.now(),
    );

    // Demo-like activity: orders (one with a long custom id), a refund waiting for review, a
    // webhook endpoint whose deliveries fail (a closed port) and are logged.
    const placed = [];
    for (let i = 1; i <= 3; i++)
      placed.push(
        await placeOrder(
          app,
          demo.token,
          [
            { sku: demoSku(i), quantity: 1 },
            { sku: demoSku(i + 1), quantity: 2 },
          ],
          { customOrderId: `SHOP-ORDER-2024-${'0'.repeat(20)}${i}` },
        ),
      );
    const refund = await app.merchant(demo.token, 'POST', `/openapi/v2/order/orders/${placed[0].id}/refund`, {
      skuCode: demoSku(1),
      quantity: 1,
      refundReason: 'Other',
    });
    assert.equal(refund.status, 200, refund.raw);
    const hook = await app.merchant(demo.token, 'POST', '/openapi/v1/webhooks', {
      url: 'http://127.0.0.1:9/a/rather/long/path/for/the/merchants/webhook/receiver/endpoint',
      events: ['split_order.shipped', 'split_order.delivered', 'refund.succeeded', 'refund.failed', 'order.cancelled'],
    });
    assert.equal(hook.status, 200, hook.raw);
    const worker = new WebhookWorker({ store: app.store, config: { env: 'sandbox', stockWebhookIntervalMs: 200 } });
    worker.start(50);
    t.after(() => worker.stop());
    const invited = await app.admin('POST', `/admin/v1/merchants/${demo.merchantId}/users`, { email: 'admin@demo-merchant.example', role: 'admin' });
    assert.equal(invited.status, 200, invited.raw);

    // A claim after shipment (SPEC §18) on a shipped split order of the second order.
    const claimed = placed[1].splitOrders[0].id as string;
    assert.equal((await app.admin('POST', `/admin/v1/split-orders/${claimed}/ship`, { carrier: 'UPS', trackingCode: '1ZPHONE' })).status, 200);
    const claim = await app.merchant(demo.token, 'POST', '/openapi/v1/claims', {
      orderId: claimed,
      reason: 'damaged',
      resolution: 'refund',
      items: [{ sku: placed[1].orderItems.find((i: { splitOrderId: string }) => String(i.splitOrderId) === String(claimed)).skuCode, quantity: 1 }],
      description: 'The box arrived crushed; the contents are scratched on one side.',
    });
    assert.equal(claim.status, 200, claim.raw);
    // A shipped split order with nothing claimed yet: the business manager's claim form.
    const claimable = placed[2].splitOrders[0].id as string;
    assert.equal((await app.admin('POST', `/admin/v1/split-orders/${claimable}/ship`, { carrier: 'UPS', trackingCode: '1ZFORM' })).status, 200);

    const warehouseCode: string = (await app.admin('GET', '/admin/v1/warehouses')).body.data.list[0].warehouseCode;
    const channelCode: string = (await app.admin('GET', '/admin/v1/channels')).body.data.list[0].channelCode;
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign } = await localOnlyPage(t, origin, { width: PHONE, height: 900 });

    const visited = new Set<string>();
    const tooWide: string[] = [];
    /** The page as it stands: screenshots, then its width on a phone (every failure is collected, then reported at once). */
    const look = async (route: string, name: string) => {
      visited.add(route);
      await screenshot(page, 'phone-width', name);
      await page.setViewportSize({ width: PHONE, height: 900 });
      const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      if (width > PHONE) tooWide.push(`${name} (${new URL(page.url()).pathname}): ${width} px, past the edge: ${(await overflowing()).join(', ')}`);
    };
    /** The outermost elements that reach past the screen's right edge (their parent does not), for the failure message. */
    const overflowing = () =>
      page.evaluate(`(() => {
        const past = (e) => !!e && e.getBoundingClientRect().right > ${PHONE} + 0.5;
        const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + [...e.classList].map((c) => '.' + c).join('');
        return [...document.body.querySelectorAll('*')].filter((e) => past(e) && !past(e.parentElement)).map((e) => name(e.parentElement) + ' > ' + name(e));
      })()`) as Promise<string[]>;
    const open = async (route: string, name: string, url: string) => {
      const response = await page.goto(`${origin}${url}`);
      assert.equal(response?.status(), 200, `${url} answers 200`);
      await look(route, name);
    };
    // The page the form leads to, loaded with its stylesheet (waitForLoadState() alone answers at once for the page already
    // loaded: without screenshots' delay the next page was measured before its CSS applied).
    const submit = (selector: string) => Promise.all([page.waitForEvent('load'), page.click(selector)]);

    // The operator console, signed in as its owner.
    await open('console GET /sign-in', 'console-sign-in', '/console/sign-in');
    await page.fill('#email', 'owner@stockist.test');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/console`), page.click('main button[type=submit]')]);
    await look('console GET ', 'console-dashboard');
    await open('console GET /refunds', 'console-refunds', '/console/refunds');
    await open('console GET /refunds/all', 'console-all-refunds', '/console/refunds/all');
    await open('console GET /claims', 'console-claims', '/console/claims');
    await open('console GET /claims/:claimNo', 'console-claim', `/console/claims/${claim.body.data.claimNo}`);
    await open('console GET /orders', 'console-orders', '/console/orders');
    await open('console GET /orders/:id', 'console-order', `/console/orders/${placed[0].id}`);
    await checkAccessibility(page);
    // The internal note (issue 29, 10): a long one, with its author and time.
    await page.fill('#note-text', `Customer called twice about this order; ${'a-rather-long-unbroken-reference-'.repeat(4)}\nSecond line.`);
    await submit('button[data-action="save-note"]');
    await look('console GET /orders/:id', 'console-order-note');
    await checkAccessibility(page);
    await open('console GET /splits/:id/cancel', 'console-split-cancel', `/console/splits/${placed[1].splitOrders[0].id}/cancel`);
    await checkAccessibility(page);
    await open('console GET /merchants', 'console-merchants', '/console/merchants');
    await page.fill('#name', 'A merchant with a rather long name for a phone screen');
    await submit('button[data-action=create-merchant]');
    await look('console GET /merchants', 'console-merchant-created');
    // The same name again: the duplicate-name warning and its confirm checkbox (answered at 409).
    await page.goto(`${origin}/console/merchants`);
    await page.fill('#name', 'a merchant with a rather long name for a phone screen ');
    await submit('button[data-action=create-merchant]');
    assert.equal(await page.locator('[data-warning="duplicate-name"]').count(), 1, 'the duplicate name warns');
    await look('console GET /merchants', 'console-merchant-duplicate-name');
    await open('console GET /merchants/:id', 'console-merchant', `/console/merchants/${demo.merchantId}`);
    await submit('button[data-action=issue-token]');
    await look('console GET /merchants/:id', 'console-token-issued');
    await open('console GET /merchants/:id/transactions', 'console-transactions', `/console/merchants/${demo.merchantId}/transactions`);
    await open('console GET /webhooks', 'console-webhooks', '/console/webhooks');
    await open('console GET /webhooks/:id', 'console-webhook', `/console/webhooks/${hook.body.data.id}`);
    await open('console GET /products', 'console-products', '/console/products');
    await open('console GET /products/:sku', 'console-product', `/console/products/${demoSku(2)}`);
    await open('console GET /import', 'console-import', '/console/import');
    await page.setInputFiles('#file', { name: 'stock.csv', mimeType: 'text/csv', buffer: Buffer.from(`sku,warehouseCode,qty\n${demoSku(5)},NOPE,3\n`) });
    await page.waitForFunction(() => (document.getElementById('fileName') as HTMLInputElement).value === 'stock.csv');
    await Promise.all([page.waitForURL(/\/console\/import\/[A-Za-z0-9]{24}$/), page.click('#import-form button[data-action="import"]')]);
    await page.waitForSelector('#import-job[data-state="refused"]', { timeout: 60_000 });
    await look('console GET /import/:jobId', 'console-import-refused');
    // The import's dry run (issue 29, 9): a stock file with a change and a bad row.
    await page.goto(`${origin}/console/import`);
    await page.setInputFiles('#file', {
      name: 'stock.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`sku,warehouseCode,qty\n${demoSku(5)},${warehouseCode},3\n${demoSku(6)},NOPE,3\n`),
    });
    await page.waitForFunction(() => (document.getElementById('fileName') as HTMLInputElement).value === 'stock.csv');
    await Promise.all([page.waitForURL(/\/console\/import\/preview\/[A-Za-z0-9]{24}$/), page.click('button[data-action="dry-run"]')]);
    await look('console GET /import/preview/:previewId', 'console-import-preview');
    await checkAccessibility(page);
    // Creating and editing products, warehouses and channels (issue 29, 9–10).
    await open('console GET /new-product', 'console-new-product', '/console/new-product');
    await open('console GET /products/:sku/edit', 'console-product-edit', `/console/products/${demoSku(2)}/edit`);
    await open('console GET /warehouses', 'console-warehouses', '/console/warehouses');
    await open('console GET /warehouses/new', 'console-warehouse-new', '/console/warehouses/new');
    await open('console GET /warehouses/:code/edit', 'console-warehouse-edit', `/console/warehouses/${warehouseCode}/edit`);
    await open('console GET /channels', 'console-channels', '/console/channels');
    await open('console GET /channels/new', 'console-channel-new', '/console/channels/new');
    await checkAccessibility(page);
    await open('console GET /channels/:code/edit', 'console-channel-edit', `/console/channels/${channelCode}/edit`);
    await open('console GET /staff', 'console-staff', '/console/staff');
    await submit('tr[data-staff="owner@stockist.test"] button[data-action="reset-password"]');
    await look('console GET /staff', 'console-staff-reset-link');
    const staffResetLink = new URL((await page.textContent('[data-reset-url]'))!.trim()).pathname;
    await open('console GET /audit', 'console-audit', '/console/audit');
    // The Backups page with an archive and its run listed.
    assert.equal(await backups!.run('console'), 'succeeded');
    await open('console GET /backups', 'console-backups', '/console/backups');
    await open('console GET /books', 'console-books', '/console/books');
    await open('console GET /account', 'console-account', '/console/account');
    // The staff password reset link's page (no session needed), then the sign-in page it leads to.
    await open('console GET /password-reset/:token', 'console-password-reset', staffResetLink);
    await checkAccessibility(page);

    // The business manager, as the demo merchant's admin: the invitation, then every page.
    await open('manager GET /sign-in', 'manager-sign-in', '/manager/sign-in');
    await open('manager GET /invitations/:token', 'manager-invitation', new URL(invited.body.data.invitationUrl).pathname);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);
    await look('manager GET ', 'manager-get-started');
    await submit('button[data-action="get-started-token"]');
    await look('manager GET ', 'manager-get-started-token');
    await open('manager GET /credentials', 'manager-credentials', '/manager/credentials');
    await page.fill('#client-name', 'Shop backend');
    await submit('button[data-action="create-client"]');
    await look('manager GET /credentials', 'manager-credentials-client');
    await page.fill('#token-name', 'Stock reader');
    await submit('button[data-action="create-token"]');
    await look('manager GET /credentials', 'manager-credentials-token');
    await open('manager GET /webhooks', 'manager-webhooks', '/manager/webhooks');
    await page.fill('#webhook-url', 'http://127.0.0.1:9/another/long/path/for/a/second/receiver');
    await submit('button[data-action="create-webhook"]');
    await look('manager GET /webhooks', 'manager-webhooks-secret');
    await open('manager GET /webhooks/:id', 'manager-webhook', `/manager/webhooks/${hook.body.data.id}`);
    await submit('button[data-action="send-test"]');
    await look('manager GET /webhooks/:id', 'manager-webhook-test');
    // A delivery's row opened: its request body (long JSON) and response wrap within the phone's width.
    await page.locator('[data-delivery] summary').first().click();
    await look('manager GET /webhooks/:id', 'manager-webhook-delivery-open');
    await checkAccessibility(page);
    await open('manager GET /orders', 'manager-orders', '/manager/orders');
    await open('manager GET /orders/:id', 'manager-order', `/manager/orders/${placed[0].id}`);
    await open('manager GET /claims', 'manager-claims', '/manager/claims');
    await open('manager GET /claims/:claimNo', 'manager-claim', `/manager/claims/${claim.body.data.claimNo}`);
    await open('manager GET /split-orders/:id/claim', 'manager-claim-form', `/manager/split-orders/${claimable}/claim`);
    await open('manager GET /usage', 'manager-usage', '/manager/usage');
    await open('manager GET /balance', 'manager-balance', '/manager/balance');
    await open('manager GET /team', 'manager-team', '/manager/team');
    await page.fill('#invite-email', 'developer-with-a-long-address@demo-merchant.example');
    await submit('button[data-action="invite"]');
    await look('manager GET /team', 'manager-team-invited');
    await open('manager GET /audit', 'manager-audit', '/manager/audit');
    await open('manager GET /account', 'manager-account', '/manager/account');
    await open('manager GET /two-factor', 'manager-two-factor', '/manager/two-factor');
    // Two-factor on (the current password and a code), sign out and in again: the code page.
    const secret = (await page.textContent('[data-totp-secret]'))!;
    const enrolledAt = Date.now();
    await page.fill('#password', PASSWORD);
    await page.fill('#code', code(secret, enrolledAt));
    await submit('main button[type=submit]');
    await look('manager GET /two-factor', 'manager-two-factor-on');
    await Promise.all([page.waitForURL(`${origin}/manager/sign-in`), page.click('.who button[type=submit]')]);
    await page.fill('#email', 'admin@demo-merchant.example');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager/sign-in/code`), page.click('main button[type=submit]')]);
    await look('manager GET /sign-in/code', 'manager-sign-in-code');
    // A password reset link (the operator's), opened signed out: its form page.
    const reset = await app.admin('POST', `/admin/v1/merchants/${demo.merchantId}/password-resets`, { email: 'admin@demo-merchant.example' });
    assert.equal(reset.status, 200, reset.raw);
    await open('manager GET /password-reset/:token', 'manager-password-reset', new URL(reset.body.data.resetUrl).pathname);

    // The client package's page (issue 44, 6: it was 398 px wide).
    await open('GET /sdk', 'sdk', '/sdk');

    const pages = [
      ...CONSOLE_ROUTES.filter((r) => r.method === 'GET').map((r) => `console GET ${r.path}`),
      ...MANAGER_ROUTES.filter((r) => r.method === 'GET').map((r) => `manager GET ${r.path}`),
    ].filter((r) => !NOT_PAGES.has(r));
    assert.deepEqual(
      pages.filter((r) => !visited.has(r)),
      [],
      'every page of both route tables is looked at',
    );
    assert.deepEqual(tooWide, [], `pages wider than a ${PHONE} px phone`);
    assert.deepEqual(foreign, [], 'no request leaves the server');
  });
});
