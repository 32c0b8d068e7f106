import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { member } from './manager-helpers.ts';
import { follow, signedIn, staff, type Browser } from './console-client.ts';
import { DIALECTS, loadCatalogue, newMerchant, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

/**
 * Issue 29, 10 (part): the operator's internal note on an order. Owner and support write it on the
 * console's order page (303 → the order), it is stored and audited, shown with its author and
 * time; the warehouse reads it; the merchant never sees it (business manager, merchant API, its
 * own audit page). Refused input writes nothing.
 */

const auditRows = async (t: TestApp) =>
  (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list as {
    action: string;
    actorId: string;
    target: string;
    before: Record<string, unknown> | null;
    after: Record<string, unknown> | null;
    merchantId?: string | null;
  }[];

const text = (html: string) =>
  html
    .replace(/&#(\d+);/g, (_m, code) => String.fromCharCode(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

const NOTE = 'Customer called: "leave at the back door".\nSecond line & more.';

for (const dialect of DIALECTS) {
  describe(`console: internal note on an order (${dialect})`, () => {
    const t = useApp(dialect, { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' });
    let support: Browser;
    let warehouse: Browser;
    let owner: Browser;
    let orderId: string;
    let shop: Awaited<ReturnType<typeof newMerchant>>;
    const tokens = new Map<Browser, string>();
    const post = async (b: Browser, url: string, fields: Record<string, string>) => {
      if (!tokens.has(b)) tokens.set(b, await b.csrf());
      return b.post(url, { _csrf: tokens.get(b)!, ...fields });
    };

    /** The note the tests below read on the shared order: saved by support, so each runs alone. */
    const supportNoted = async () => assert.equal((await post(support, `/console/orders/${orderId}/note`, { note: NOTE })).statusCode, 303);

    // Made once, before any test: staff, a merchant and an order.
    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      shop = await newMerchant(t, 'Note shop');
      orderId = (await placeOrder(t, shop.token, [{ sku: 'C', quantity: 1 }])).id;
      await staff(t, 'note-owner@example.com', 'owner');
      await staff(t, 'note-support@example.com', 'support');
      await staff(t, 'note-warehouse@example.com', 'warehouse');
      owner = await signedIn(t, 'note-owner@example.com');
      support = await signedIn(t, 'note-support@example.com');
      warehouse = await signedIn(t, 'note-warehouse@example.com');
    });

    it('support adds a note: 303 to the order, shown with author and time, audited without the merchant', async () => {
      // An order of its own: the shared order may carry the note another test left.
      const orderId = (await placeOrder(t, shop.token, [{ sku: 'C', quantity: 1 }])).id;
      const empty = await support.get(`/console/orders/${orderId}`);
      assert.match(empty.body, /data-note-none>No note\./);
      assert.match(empty.body, /data-form="order-note"/);
      const saved = await post(support, `/console/orders/${orderId}/note`, { note: `  ${NOTE.replace('\n', '\r\n')}  ` });
      assert.equal(saved.statusCode, 303, saved.body.slice(0, 300));
      assert.equal(saved.headers.location, `/console/orders/${orderId}#note`);
      const page = await follow(support, saved);
      assert.match(page.body, /data-notice>Note saved\./);
      const shown = /<p class="order-note" data-note-text>([\s\S]*?)<\/p>/.exec(page.body);
      assert.ok(shown);
      assert.equal(text(shown[1]), NOTE, 'stored trimmed, with its line break');
      assert.match(page.body, /data-note-meta>By note-support@example\.com, <time datetime="/);
      const audit = (await auditRows(t)).find((r) => r.action === 'order.note' && r.target === `order:${orderId}`);
      assert.ok(audit, 'audited');
      assert.equal(audit.before, null);
      assert.equal(audit.after?.note, NOTE);
      assert.ok(audit.merchantId === null || audit.merchantId === undefined, 'not a row the merchant’s admins see');
    });

    it('the owner edits it (the author becomes the owner); an empty note removes it', async () => {
      await supportNoted();
      const edited = await follow(owner, await post(owner, `/console/orders/${orderId}/note`, { note: 'Refund agreed by phone.' }));
      assert.match(edited.body, /data-note-text>Refund agreed by phone\.</);
      assert.match(edited.body, /data-note-meta>By note-owner@example\.com, <time/);
      const audit = (await auditRows(t)).find((r) => r.action === 'order.note' && r.after?.note === 'Refund agreed by phone.');
      assert.equal(audit?.before?.note, NOTE);
      const removed = await follow(owner, await post(owner, `/console/orders/${orderId}/note`, { note: '   ' }));
      assert.match(removed.body, /data-notice>Note removed\./);
      assert.match(removed.body, /data-note-none>No note\./);
      const notes = await t.store.db.selectFrom('order_notes').select('order_id').execute();
      assert.ok(!notes.some((n) => String(n.order_id) === orderId), 'the row is gone');
      await follow(owner, await post(owner, `/console/orders/${orderId}/note`, { note: NOTE }));
    });

    it('the warehouse reads the note but cannot write it; bad input is refused with nothing written', async () => {
      await supportNoted();
      const page = await warehouse.get(`/console/orders/${orderId}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /data-note-text>Customer called/);
      assert.doesNotMatch(page.body, /data-form="order-note"/);
      let before = await tableDigests(t.store);
      const refused = await post(warehouse, `/console/orders/${orderId}/note`, { note: 'Box was damaged' });
      assert.equal(refused.statusCode, 403);
      assert.deepEqual(await tableDigests(t.store), before);

      before = await tableDigests(t.store);
      const long = 'x'.repeat(2001);
      const tooLong = await post(support, `/console/orders/${orderId}/note`, { note: long });
      assert.equal(tooLong.statusCode, 400);
      assert.match(tooLong.body, /id="note-error">Not saved: note: is 2001 characters long; at most 2000/);
      assert.ok(tooLong.body.includes(`>${long}</textarea>`), 'what was typed is kept');
      const missing = await post(support, '/console/orders/987654321987/note', { note: 'who?' });
      assert.equal(missing.statusCode, 404);
      const noField = await post(support, `/console/orders/${orderId}/note`, {});
      assert.equal(noField.statusCode, 400);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
    });

    it('the merchant never sees it: not in the business manager, not in the merchant API, not in its audit page', async () => {
      await supportNoted();
      const admin = await member(t, shop.merchantId, 'note-merchant@example.com', 'admin');
      const pages = [await admin.get(`/manager/orders/${orderId}`), await admin.get('/manager/orders'), await admin.get('/manager/audit')];
      for (const p of pages) assert.equal(p.statusCode, 200);
      for (const p of pages) assert.ok(!text(p.body).includes('Customer called'), `${p.statusCode}: no note`);
      assert.equal(pages[0].statusCode, 200);
      const api = await t.merchant(shop.token, 'GET', `/openapi/v2/order/orders/${orderId}`);
      assert.equal(api.status, 200);
      assert.ok(!api.raw.includes('Customer called') && !/note/i.test(Object.keys(api.body.data).join(' ')), 'not in the merchant API');
    });
  });
}
