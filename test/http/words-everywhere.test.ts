import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebhookWorker } from '../../src/jobs/webhook.worker.ts';
import { BackupService } from '../../src/services/backup-runs.service.ts';
import { CONSOLE_ROUTES } from '../../src/web/console/console-routes.ts';
import { MANAGER_ROUTES } from '../../src/web/manager/manager-routes.ts';
import { testEngine } from '../backup-engine.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { DIALECTS, buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { browser, follow, importOutcome, signedIn, staff, type Browser } from './console-client.ts';
import { member } from './manager-helpers.ts';

/**
 * Issue 44, 7: "statuses in words ("Waiting to ship", not `waiting_to_ship`)". Every page of both
 * front ends — each GET page of both route tables — on demo-like data (orders in each status,
 * refunds in each state, claims in each state, webhook deliveries, usage, a backup) is read as a
 * person sees it: the text outside tags, `<script>`, `<style>`, `<code>`, `<pre>` and form fields.
 * No code with an underscore (`waiting_to_ship`, `wrong_item`, `top_up`) may be in it: a code a
 * developer needs stands in a `<code>`, beside its words.
 */

const DE = { orderAddress: { country: 'DE', phone: '1', recipient: 'Rita Roe', province: 'Berlin', city: 'Berlin' } };

/** GET routes that are downloads (and the CSV files, which keep the codes), assets, not pages a person reads. */
const NOT_PAGES = new Set([
  'console GET /assets/:file',
  'manager GET /assets/:file',
  'console GET /claims/files/:fileId',
  'manager GET /claims/files/:fileId',
  'console GET /backups/:name',
  'manager GET /balance/statement',
  'console GET /import/template.csv',
  // Needs a sign-in half done with two-factor; its page is one sentence and a code field.
  'manager GET /sign-in/code',
]);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", nbsp: ' ' };

/** The text a person reads on a page: no markup, scripts, styles, code, preformatted blocks or form values. */
export function visibleText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|code|pre|textarea|template)\b[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#?[a-z0-9]+);/gi, (all, name: string) => ENTITIES[name.toLowerCase()] ?? all)
    .replace(/\s+/g, ' ');
}

/** snake_case codes in a page's visible text, each with a little of what surrounds it. */
export const rawCodes = (html: string): string[] => {
  const text = visibleText(html);
  return [...text.matchAll(/\b[A-Za-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g)].map(
    (m) => `${m[0]} («${text.slice(Math.max(0, m.index - 40), m.index + m[0].length + 40).trim()}»)`,
  );
};

for (const dialect of DIALECTS) {
  describe(`every state and code in words on both front ends (issue 44, 7; ${dialect})`, () => {
    it('no page of the console or the business manager shows a snake_case code outside <code>', { timeout: 300_000 }, async (ctx: TestContext) => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-words-'));
      ctx.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      let backups: BackupService | null = null;
      const t = await buildTestApp(
        ctx,
        dialect,
        { DATA_DIR: dataDir, REFUND_REVIEW: 'manual' },
        {},
        { backups: (store, config) => (backups = new BackupService({ config, store, engine: testEngine(), log: { info() {}, warn() {}, error() {} } })) },
      );
      await loadCatalogue(t, ORDER_CATALOGUE);
      await t.admin('PUT', '/admin/v1/stocks', {
        items: [
          { sku: 'A', warehouseCode: 'G007', qty: 100 },
          { sku: 'B', warehouseCode: 'G006', qty: 100 },
        ],
      });
      await staff(t, 'owner@example.com', 'owner');
      const m = await newMerchant(t, 'Words Shop');
      const shop = m.token;
      const ok = (r: { status: number; raw: string }, what: string) => assert.equal(r.status, 200, `${what}: ${r.raw}`);
      ok(await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/account/top-ups`, { environment: 'sandbox', amount: 500, reference: 'WIRE-1' }), 'top-up');

      // A webhook endpoint on a closed port: its deliveries are tried and fail, and are logged.
      const hook = await t.merchant(shop, 'POST', '/openapi/v1/webhooks', {
        url: 'http://127.0.0.1:9/hooks',
        events: ['split_order.shipped', 'split_order.delivered', 'refund.succeeded', 'refund.failed', 'order.cancelled', 'claim.approved'],
      });
      ok(hook, 'webhook');

      // Orders in each status: waiting to ship, partly shipped, shipped and delivered, cancelled.
      const waiting = await placeOrder(t, shop, [{ sku: 'A', quantity: 2 }], DE);
      const partly = await placeOrder(
        t,
        shop,
        [
          { sku: 'A', quantity: 1 },
          { sku: 'B', quantity: 1 },
        ],
        DE,
      );
      ok(await t.admin('POST', `/admin/v1/split-orders/${partly.splitOrders[0].id}/ship`, { carrier: 'UPS', trackingCode: '1ZPARTLY' }), 'ship one split');
      const shipped = await placeOrder(t, shop, [{ sku: 'A', quantity: 8 }], DE);
      const shippedSplit = shipped.splitOrders[0].id as string;
      ok(await t.admin('POST', `/admin/v1/split-orders/${shippedSplit}/ship`, { carrier: 'UPS', trackingCode: '1ZSHIPPED' }), 'ship');
      ok(await t.admin('POST', `/admin/v1/split-orders/${shippedSplit}/deliver`), 'deliver');
      const cancelled = await placeOrder(t, shop, [{ sku: 'B', quantity: 1 }], DE);
      ok(await t.admin('POST', `/admin/v1/split-orders/${cancelled.splitOrders[0].id}/cancel`, { reason: 'out of paper boxes' }), 'cancel');

      // Refunds in each state: waiting for review, refunded, refused.
      const refund = async () => {
        const r = await t.merchant(shop, 'POST', `/openapi/v2/order/orders/${waiting.id}/refund`, { skuCode: 'A', quantity: 1, refundReason: 'Other' });
        ok(r, 'refund');
        return r.body.data as string;
      };
      const approved = await refund();
      ok(await t.admin('POST', `/admin/v1/refunds/${approved}/approve`, {}), 'approve refund');
      const rejected = await refund();
      ok(await t.admin('POST', `/admin/v1/refunds/${rejected}/reject`, { reason: 'the customer kept it' }), 'reject refund');
      const reviewing = await t.merchant(shop, 'POST', `/openapi/v2/order/orders/${partly.id}/refund`, { skuCode: 'B', quantity: 1, refundReason: 'Other' });
      ok(reviewing, 'refund waiting for review');

      // Claims in each state, with reasons whose codes have underscores.
      const claim = async (reason: string, resolution = 'refund') => {
        const r = await t.merchant(shop, 'POST', '/openapi/v1/claims', {
          orderId: shippedSplit,
          reason,
          resolution,
          items: [{ sku: 'A', quantity: 1 }],
          description: 'Seen on arrival.',
        });
        ok(r, `claim ${reason}`);
        return r.body.data.claimNo as string;
      };
      const claims = {
        open: await claim('wrong_item'),
        credited: await claim('missing_parts'),
        awaitingReturn: await claim('damaged'),
        rejected: await claim('not_received'),
        cancelled: await claim('quality'),
        reshipped: await claim('wrong_item', 'reship'),
      };
      ok(await t.admin('POST', `/admin/v1/claims/${claims.credited}/approve`, {}), 'credit');
      ok(await t.admin('POST', `/admin/v1/claims/${claims.awaitingReturn}/approve`, { returnRequired: true }), 'require return');
      ok(await t.admin('POST', `/admin/v1/claims/${claims.rejected}/reject`, { reason: 'tracking shows it delivered' }), 'reject claim');
      ok(await t.merchant(shop, 'POST', `/openapi/v1/claims/${claims.cancelled}/cancel`), 'withdraw');
      ok(await t.admin('POST', `/admin/v1/claims/${claims.reshipped}/approve`, {}), 'reship');

      // Usage: successes, a 404 and a refused body.
      await t.merchant(shop, 'GET', '/openapi/v1/product/stocks?skus=A');
      await t.merchant(shop, 'GET', '/openapi/v2/order/orders/987654321');
      await t.merchant(shop, 'POST', '/openapi/v1/order/orders', { orderItemsList: [] });

      // The deliveries tried against the closed port, until one has failed an attempt.
      const worker = new WebhookWorker({ store: t.store, config: { env: 'sandbox', stockWebhookIntervalMs: 200 } });
      worker.start(20);
      ctx.after(() => worker.stop());
      for (let i = 0; i < 500; i++) {
        const log = await t.merchant(shop, 'GET', `/openapi/v1/webhooks/${hook.body.data.id}/deliveries`);
        if ((log.body.data.list as { attempts: number }[]).some((d) => d.attempts > 0)) break;
        await sleep(20);
      }
      await worker.stop();
      assert.equal(await backups!.run('console'), 'succeeded');

      const owner = await signedIn(t, 'owner@example.com');
      const admin = await member(t, m.merchantId, 'admin@words.example', 'admin');
      const pages: { route: string; url: string; as: Browser }[] = [];
      const visit = (route: string, url: string, as: Browser) => pages.push({ route, url, as });

      // The console, as its owner.
      const signedOut = browser(t);
      visit('console GET /sign-in', '/console/sign-in', signedOut);
      visit('console GET ', '/console', owner);
      for (const p of ['/account', '/refunds', '/refunds/all', '/claims', '/orders', '/merchants', '/webhooks', '/products', '/import', '/new-product'])
        visit(`console GET ${p}`, `/console${p}`, owner);
      for (const p of ['/warehouses', '/warehouses/new', '/channels', '/channels/new', '/staff', '/backups', '/books', '/audit'])
        visit(`console GET ${p}`, `/console${p}`, owner);
      for (const o of [waiting, partly, shipped, cancelled]) visit('console GET /orders/:id', `/console/orders/${o.id}`, owner);
      visit('console GET /splits/:id/cancel', `/console/splits/${waiting.splitOrders[0].id}/cancel`, owner);
      for (const c of Object.values(claims)) visit('console GET /claims/:claimNo', `/console/claims/${c}`, owner);
      for (const status of ['pending_review', 'refund_successfully', 'refund_failed'])
        visit('console GET /refunds/all', `/console/refunds/all?status=${status}`, owner);
      visit('console GET /merchants/:id', `/console/merchants/${m.merchantId}`, owner);
      visit('console GET /merchants/:id/transactions', `/console/merchants/${m.merchantId}/transactions`, owner);
      visit('console GET /webhooks/:id', `/console/webhooks/${hook.body.data.id}`, owner);
      visit('console GET /products/:sku', '/console/products/A', owner);
      visit('console GET /products/:sku/edit', '/console/products/A/edit', owner);
      visit('console GET /warehouses/:code/edit', '/console/warehouses/G007/edit', owner);
      visit('console GET /channels/:code/edit', '/console/channels/STD/edit', owner);
      // An import refused (an unknown warehouse) and a dry run.
      const stockFile = { fileName: 'stock.csv', fileText: 'sku,warehouseCode,qty\nA,NOPE,3\n' };
      const job = await owner.post('/console/import', { _csrf: await owner.csrf('/console/import'), ...stockFile });
      assert.equal(job.statusCode, 303, job.body);
      visit('console GET /import/:jobId', String(job.headers.location), owner);
      assert.equal((await importOutcome(owner, String(job.headers.location))).state, 'refused');
      const preview = await owner.post('/console/import/preview', {
        _csrf: await owner.csrf('/console/import'),
        fileName: 'stock.csv',
        fileText: 'sku,warehouseCode,qty\nA,G007,3\nB,NOPE,1\n',
      });
      assert.equal(preview.statusCode, 303, preview.body);
      visit('console GET /import/preview/:previewId', String(preview.headers.location), owner);
      const resetAction = /action="(\/console\/staff\/[^"]+\/reset-password)"/.exec((await owner.get('/console/staff')).body)![1];
      const reset = await owner.post(resetAction, { _csrf: await owner.csrf('/console/staff') });
      const resetLink = /data-reset-url[^>]*>\s*([^<\s]+)/.exec((await follow(owner, reset)).body)?.[1];
      assert.ok(resetLink, 'the staff reset link is shown');
      visit('console GET /password-reset/:token', new URL(resetLink).pathname, browser(t));
      // The business manager, as the merchant's admin.
      visit('manager GET /sign-in', '/manager/sign-in', browser(t));
      for (const p of ['', '/credentials', '/webhooks', '/orders', '/claims', '/team', '/audit', '/usage', '/balance', '/account', '/two-factor'])
        visit(`manager GET ${p}`, `/manager${p}`, admin);
      for (const o of [waiting, partly, shipped, cancelled]) visit('manager GET /orders/:id', `/manager/orders/${o.id}`, admin);
      for (const c of Object.values(claims)) visit('manager GET /claims/:claimNo', `/manager/claims/${c}`, admin);
      visit('manager GET /webhooks/:id', `/manager/webhooks/${hook.body.data.id}`, admin);
      visit('manager GET /webhooks/:id/deliveries', `/manager/webhooks/${hook.body.data.id}/deliveries`, admin);
      visit('manager GET /split-orders/:id/claim', `/manager/split-orders/${shippedSplit}/claim`, admin);
      const invitation = await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'dev@words.example', role: 'developer' });
      ok(invitation, 'invitation');
      visit('manager GET /invitations/:token', new URL(invitation.body.data.invitationUrl).pathname, browser(t));
      const managerReset = await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/password-resets`, { email: 'admin@words.example' });
      ok(managerReset, 'password reset');
      visit('manager GET /password-reset/:token', new URL(managerReset.body.data.resetUrl).pathname, browser(t));

      const found: string[] = [];
      for (const { route, url, as } of pages) {
        const r = await as.get(url);
        assert.equal(r.statusCode, 200, `${url}: ${r.body.slice(0, 300)}`);
        for (const code of rawCodes(r.body)) found.push(`${route}: ${code.split(' ')[0]}`);
      }
      const every = [
        ...CONSOLE_ROUTES.filter((r) => r.method === 'GET').map((r) => `console GET ${r.path}`),
        ...MANAGER_ROUTES.filter((r) => r.method === 'GET').map((r) => `manager GET ${r.path}`),
      ].filter((r) => !NOT_PAGES.has(r) && !r.endsWith('.csv'));
      const seen = new Set(pages.map((p) => p.route));
      assert.deepEqual(
        every.filter((r) => !seen.has(r)),
        [],
        'every page of both route tables is read',
      );
      assert.deepEqual([...new Set(found)], [], 'codes shown to people instead of words');
    });
  });
}

describe('visibleText and rawCodes (the sweep above reads pages with them)', () => {
  it('finds a code in text, not in attributes, <code>, <pre>, scripts or form values', () => {
    assert.deepEqual(
      rawCodes(
        '<p data-status="waiting_to_ship" title="x_y">Waiting to ship <code>waiting_to_ship</code></p><pre>top_up</pre><script>a_b</script><textarea>c_d</textarea>',
      ),
      [],
    );
    assert.deepEqual(
      rawCodes('<td>wrong_item</td>').map((c) => c.split(' ')[0]),
      ['wrong_item'],
    );
    assert.equal(visibleText('<b>Tom &amp; Jerry</b>').trim(), 'Tom & Jerry');
  });
});
