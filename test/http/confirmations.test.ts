import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, loadCatalogue, newMerchant, useApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { signedIn, staff, type Browser } from './console-client.ts';
import { enrol, invite, member } from './manager-helpers.ts';

/**
 * Every destructive action of both front ends asks first (SPEC §14; docs/web.md, "Destructive
 * actions ask first"): on the page as rendered, its button sits inside a closed `<details
 * class="confirm">` whose summary opens it — a confirmation rendered already open (`<details
 * class="confirm" open>`), or a button outside one, fails here. One table over the pages, on the
 * HTML the server sends (the browser shows a closed `<details>`'s content only once it is opened).
 */

/** Where each `data-action="<action>"` button of `html` sits: fails unless inside a closed confirmation. */
function assertAsksFirst(html: string, action: string, where: string) {
  const buttons = [...html.matchAll(new RegExp(`<button[^>]*data-action="${action}"`, 'g'))];
  assert.ok(buttons.length > 0, `${where}: a ${action} button on the page`);
  for (const b of buttons) {
    const before = html.slice(0, b.index);
    const opened = before.lastIndexOf('<details');
    assert.ok(opened > before.lastIndexOf('</details>'), `${where}: ${action} is inside a <details>`);
    const tag = before.slice(opened, before.indexOf('>', opened) + 1);
    assert.equal(tag, '<details class="confirm">', `${where}: ${action}'s confirmation is closed until opened`);
    assert.match(
      before.slice(opened),
      /^<details class="confirm">\s*<summary data-confirm-open="[a-z-]+">[^<]+…/,
      `${where}: ${action} is opened by its summary`,
    );
  }
}

for (const dialect of DIALECTS) {
  describe(`destructive actions ask first: their buttons are hidden until the confirmation is opened (${dialect})`, () => {
    const t = useApp(dialect, { REFUND_REVIEW: 'manual' }, { resolveHost: async () => [{ address: '93.184.216.34', family: 4 }] });

    it('on every page of both front ends that has one', async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      const shop = await newMerchant(t, 'Confirm table shop');
      const o = await placeOrder(t, shop.token, [{ sku: 'C', quantity: 2 }]);
      const refund = await t.merchant(shop.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, { skuCode: 'C', quantity: 1, refundReason: 'Other' });
      assert.equal(refund.status, 200, refund.raw);
      const hook = await t.merchant(shop.token, 'POST', '/openapi/v1/webhooks', { url: 'https://hooks.example.com/confirm', events: ['refund.failed'] });
      assert.equal(hook.status, 200, hook.raw);
      const hookId = hook.body.data.id as string;

      // Business manager: an admin, a member with two-factor on (its reset), an invitation waiting, a client and a token.
      const admin = await member(t, shop.merchantId, 'confirm-admin@example.com', 'admin');
      const enrolled = await member(t, shop.merchantId, 'confirm-2fa@example.com', 'developer');
      await enrol(enrolled, Date.now());
      await invite(t, shop.merchantId, 'confirm-waiting@example.com', 'viewer');
      const creds = await admin.get('/manager/credentials');
      const csrf = /name="_csrf" value="([A-Za-z0-9]+)"/.exec(creds.body)![1];
      assert.equal((await admin.post('/manager/credentials/clients', { _csrf: csrf, name: 'Backend' })).statusCode, 303);
      assert.equal((await admin.post('/manager/credentials/tokens', { _csrf: csrf, name: 'CI', scopes: 'orders:read' })).statusCode, 303);

      // Claims (SPEC §18): two on a shipped split order, one open, one awaiting its return.
      await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'A', warehouseCode: 'G007', qty: 100 }] });
      const shipped = await placeOrder(t, shop.token, [{ sku: 'A', quantity: 2 }], {
        orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'P' },
      });
      const split = shipped.splitOrders[0].id as string;
      assert.equal((await t.admin('POST', `/admin/v1/split-orders/${split}/ship`, { carrier: 'UPS', trackingCode: 'C1' })).status, 200);
      const claims: string[] = [];
      for (let i = 0; i < 2; i++) {
        const c = await t.merchant(shop.token, 'POST', '/openapi/v1/claims', {
          orderId: split,
          reason: 'damaged',
          resolution: 'refund',
          items: [{ sku: 'A', quantity: 1 }],
        });
        assert.equal(c.status, 200, c.raw);
        claims.push(c.body.data.claimNo);
      }
      assert.equal((await t.admin('POST', `/admin/v1/claims/${claims[1]}/approve`, { returnRequired: true })).status, 200);

      // Console: an owner, another staff account to disable.
      await staff(t, 'confirm-owner@example.com', 'owner');
      await staff(t, 'confirm-other@example.com', 'support');
      const owner: Browser = await signedIn(t, 'confirm-owner@example.com');

      const table: { who: Browser; page: string; actions: string[] }[] = [
        { who: owner, page: `/console/merchants/${shop.merchantId}`, actions: ['disable', 'revoke', 'reset-two-factor', 'remove-user', 'cancel-invitation'] },
        { who: owner, page: '/console/staff', actions: ['disable'] },
        { who: owner, page: '/console/refunds', actions: ['approve', 'reject'] },
        { who: owner, page: `/console/claims/${claims[0]}`, actions: ['approve', 'require-return', 'reject'] },
        { who: owner, page: `/console/claims/${claims[1]}`, actions: ['received', 'resolution-reship'] },
        { who: owner, page: `/console/webhooks/${hookId}`, actions: ['disable'] },
        { who: owner, page: '/console/backups', actions: ['backup-now'] },
        { who: admin, page: '/manager/credentials', actions: ['rotate-client', 'revoke-client', 'revoke-token'] },
        { who: admin, page: `/manager/webhooks/${hookId}`, actions: ['rotate-secret', 'delete-webhook'] },
        { who: admin, page: '/manager/team', actions: ['reset-two-factor', 'remove', 'revoke-invitation'] },
        { who: admin, page: `/manager/claims/${claims[0]}`, actions: ['cancel-claim'] },
      ];
      for (const { who, page, actions } of table) {
        const r = await who.get(page);
        assert.equal(r.statusCode, 200, `${page}: ${r.body.slice(0, 200)}`);
        for (const action of actions) assertAsksFirst(r.body, action, page);
      }

      // Cancelling a split order asks on a page of its own: the order page only links to it (GET), no form posts from there.
      const order = (await owner.get(`/console/orders/${o.id}`)).body;
      assert.match(order, /<a href="\/console\/splits\/\d+\/cancel" data-action="cancel-split">/);
      assert.doesNotMatch(order, /<form[^>]*action="\/console\/splits\/\d+\/cancel"/);
    });

    it('the check itself: a confirmation rendered open, or a button outside one, is caught', () => {
      const closed =
        '<details class="confirm">\n  <summary data-confirm-open="rotate-secret">Rotate…</summary><form><button type="submit" data-action="rotate-secret">Rotate</button></form></details>';
      assertAsksFirst(closed, 'rotate-secret', 'closed');
      assert.throws(
        () => assertAsksFirst(closed.replace('<details class="confirm">', '<details class="confirm" open>'), 'rotate-secret', 'open'),
        /closed until opened/,
      );
      assert.throws(() => assertAsksFirst(`${closed}<button data-action="rotate-secret">`, 'rotate-secret', 'outside'), /inside a <details>/);
    });
  });
}
