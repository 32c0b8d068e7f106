import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CONSOLE_ROUTES } from '../../src/web/console/console-routes.ts';
import { MANAGER_ROUTES } from '../../src/web/manager/manager-routes.ts';
import { DIALECTS, loadCatalogue, newMerchant, tableDigests, useApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { browser, signedIn, staff, type Browser } from './console-client.ts';
import { member } from './manager-helpers.ts';

/**
 * No form of either front end ends on a bare error page: a form refused for what it carried or for
 * the state it met (400, 404, 409, 422, 429) answers, at that status, the page the form is on — its
 * Referer, else the nearest page above the form's address — with the reason in the page's status
 * region; nothing is written. Every POST route of both route tables is sent by a user who may send
 * it, with an empty form and ids that do not exist, and each answer is checked; then one real
 * refusal of each kind of form with the Referer a browser sends.
 */

const csrfOf = (body: string) => /name="_csrf" value="([A-Za-z0-9]+)"/.exec(body)![1];
const MISSING = '987654321';

/** A refusal shown in place: a page of the front end (layout, navigation, its heading) with the reason in its status region. */
function assertInPlace(r: Awaited<ReturnType<Browser['get']>>, what: string, reason?: RegExp) {
  assert.match(String(r.headers['content-type']), /^text\/html/, what);
  assert.doesNotMatch(
    r.body,
    /data-error-page|<h1>Error \d{3}<\/h1>/,
    `${what}: not the bare error page (${r.statusCode}: ${r.body.slice(r.body.indexOf('<main'), r.body.indexOf('<main') + 300)})`,
  );
  assert.match(r.body, /<main id="main"[^>]*>[\s\S]*<h1>/, `${what}: a page of the front end`);
  // The form's own handler shows its refusal by the form (class="error"); any other refusal is in the status region.
  const notice = /<p class="error" data-notice>([^<]*)<\/p>/.exec(r.body);
  if (!notice) {
    assert.match(r.body, /<main id="main"[^>]*>[\s\S]*class="error"/, `${what}: the reason shown on the page`);
    if (reason) assert.match(r.body, reason, what);
    return;
  }
  assert.match(notice[1], /^Not done: /, what);
  if (reason) assert.match(notice[1], reason, what);
}

/**
 * Not swept: sessions ending, signing in (its own page, test/http/console.test.ts), and "back up
 * now", which an empty form starts (a backup running on would write while the next forms are checked),
 * and the business manager's evidence upload (a script's raw file, answered as JSON for the script:
 * test/http/manager-claims.test.ts).
 */
const NOT_SWEPT = new Set(['/sign-out', '/account/sign-out-everywhere', '/sign-in', '/sign-in/code', '/backups', '/claims/files']);

for (const dialect of DIALECTS) {
  describe(`web forms refused in place, never a bare error page (${dialect})`, () => {
    // The receivers' name resolves to a public address (the webhook URL rule), without DNS.
    const t = useApp(dialect, { REFUND_REVIEW: 'manual' }, { resolveHost: async () => [{ address: '93.184.216.34', family: 4 }] });

    async function sweep(b: Browser, prefix: '/console' | '/manager', routes: readonly { method: string; path: string; permission: string }[], token: string) {
      const answered: string[] = [];
      for (const r of routes) {
        if (r.method !== 'POST' || NOT_SWEPT.has(r.path)) continue;
        if (r.permission === 'public' || r.permission === 'pending') continue;
        const url = `${prefix}${r.path}`.replace(/:[^/]+/g, MISSING);
        const before = await tableDigests(t.store);
        const res = await b.post(url, { _csrf: token });
        if (res.statusCode === 303) {
          // A form an empty body is enough for (a Get started token, new recovery codes …): its page shows what it made, once.
          await b.get(String(res.headers.location));
          continue;
        }
        assert.ok([400, 404, 409, 422].includes(res.statusCode), `${r.method} ${r.path}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        assertInPlace(res, `${r.method} ${r.path}`);
        const after = await tableDigests(t.store);
        assert.deepEqual(
          Object.keys(after).filter((k) => after[k] !== before[k]),
          [],
          `${r.path}: refused, nothing written`,
        );
        answered.push(`${res.statusCode} ${r.path}`);
      }
      return answered;
    }

    it('console: every form, sent empty about ids that do not exist, is refused on a page with its forms', async () => {
      await staff(t, 'sweep-owner@example.com', 'owner');
      const owner = await signedIn(t, 'sweep-owner@example.com');
      const answered = await sweep(owner, '/console', CONSOLE_ROUTES, await owner.csrf());
      assert.ok(answered.length >= 30, answered.join('\n'));
    });

    it('business manager: every form, sent empty about ids that do not exist, is refused on a page with its forms', async () => {
      const m = await newMerchant(t, 'Sweep shop');
      const admin = await member(t, m.merchantId, 'sweep-admin@example.com', 'admin');
      const answered = await sweep(admin, '/manager', MANAGER_ROUTES, await admin.csrf('/manager/two-factor'));
      assert.ok(answered.length >= 15, answered.join('\n'));
    });

    it('one refusal of each kind of form, sent from its page (Referer), answers that page with the reason; nothing written', async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      const shop = await newMerchant(t, 'Kinds shop');
      const o = await placeOrder(t, shop.token, [{ sku: 'C', quantity: 2 }]);
      const refund = await t.merchant(shop.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, { skuCode: 'C', quantity: 1, refundReason: 'Other' });
      await staff(t, 'kinds-owner@example.com', 'owner');
      const owner = await signedIn(t, 'kinds-owner@example.com');
      const admin = await member(t, shop.merchantId, 'kinds-admin@example.com', 'admin');
      const hook = await t.merchant(shop.token, 'POST', '/openapi/v1/webhooks', { url: 'https://hooks.example.com/kinds', events: ['refund.failed'] });
      const hookId = hook.body.data.id as string;
      assert.equal((await t.admin('POST', `/admin/v1/refunds/${refund.body.data}/approve`, {})).status, 200);

      const cases: { who: Browser; page: string; action: string; fields: Record<string, string>; status: number; reason: RegExp; shows: RegExp }[] = [
        // A button on a row whose state changed meanwhile (409): the refund was decided elsewhere.
        {
          who: owner,
          page: '/console/refunds',
          action: `/console/refunds/${refund.body.data}/approve`,
          fields: {},
          status: 409,
          reason: /already decided/,
          shows: /<h1>Refund review<\/h1>/,
        },
        // A field the service refuses (400): a token with no scope ticked.
        {
          who: owner,
          page: `/console/merchants/${shop.merchantId}`,
          action: `/console/merchants/${shop.merchantId}/tokens`,
          fields: {},
          status: 400,
          reason: /tick at least one scope/,
          shows: /<h1>Merchant Kinds shop/,
        },
        // A field the schema refuses (400): a role that does not exist.
        {
          who: owner,
          page: '/console/staff',
          action: '/console/staff/1/role',
          fields: { role: 'emperor' },
          status: 400,
          reason: /not filled in as expected/,
          shows: /<h1>Staff<\/h1>/,
        },
        // A business rule (409): stock below zero.
        {
          who: owner,
          page: '/console/products/C',
          action: '/console/products/C/adjust',
          fields: { warehouseCode: 'G007', delta: '-100000', reason: 'count' },
          status: 409,
          reason: /./,
          shows: /<h1>[^<]*C/,
        },
        // Something gone (404): a delivery that does not exist, from the endpoint's page.
        {
          who: owner,
          page: `/console/webhooks/${hookId}`,
          action: `/console/webhooks/${hookId}/deliveries/${MISSING}/retry`,
          fields: {},
          status: 404,
          reason: /not found/,
          shows: /<h1>Webhook/,
        },
        {
          who: admin,
          page: `/manager/webhooks/${hookId}`,
          action: `/manager/webhooks/${hookId}/deliveries/${MISSING}/retry`,
          fields: {},
          status: 404,
          reason: /not found/,
          shows: /<h1>Webhook/,
        },
        {
          who: admin,
          page: '/manager/credentials',
          action: `/manager/credentials/tokens/${MISSING}/revoke`,
          fields: {},
          status: 404,
          reason: /not found/,
          shows: /<h1>API credentials<\/h1>/,
        },
        // A typed field refused (400): an invitation to an address that is not one.
        {
          who: admin,
          page: '/manager/team',
          action: '/manager/team/invitations',
          fields: { email: 'not an address', role: 'viewer' },
          status: 400,
          reason: /email/,
          shows: /<h1>Team<\/h1>/,
        },
        // A register form refused (400): an endpoint URL that is not https.
        {
          who: admin,
          page: '/manager/webhooks',
          action: '/manager/webhooks',
          fields: { url: 'ftp://example.com/x', events: 'refund.failed' },
          status: 400,
          reason: /url/i,
          shows: /<h1>Webhooks<\/h1>/,
        },
      ];
      for (const c of cases) {
        const page = await c.who.get(c.page);
        assert.equal(page.statusCode, 200, `${c.page}: ${page.body.slice(0, 200)}`);
        const before = await tableDigests(t.store);
        const r = await c.who.post(c.action, { _csrf: csrfOf(page.body), ...c.fields }, { referer: `http://localhost:80${c.page}` });
        assert.equal(r.statusCode, c.status, `${c.action}: ${r.body.slice(0, 300)}`);
        assertInPlace(r, c.action, c.reason);
        assert.match(r.body, c.shows, `${c.action}: the form's own page`);
        assert.deepEqual(await tableDigests(t.store), before, `${c.action}: nothing written`);
      }
    });

    it('htmx posts keep their error answer (web.js shows it in the page), and a signed-out post is not shown a page', async () => {
      await staff(t, 'htmx-owner@example.com', 'owner');
      const owner = await signedIn(t, 'htmx-owner@example.com');
      const token = await owner.csrf();
      const htmx = await owner.post(`/console/merchants/${MISSING}/disable`, { _csrf: token }, { 'hx-request': 'true' });
      assert.equal(htmx.statusCode, 404);
      assert.match(htmx.body, /data-error-page/);
      const nobody = await browser(t).post(`/console/merchants/${MISSING}/disable`, { _csrf: token });
      assert.equal(nobody.statusCode, 401);
    });
  });
}
