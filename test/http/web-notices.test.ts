import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';
import { DIALECTS, PG_SKIP, buildTestApp, loadCatalogue, newMerchant, type TestApp } from '../helpers.ts';
import { follow, signedIn, staff, type Browser } from './console-client.ts';
import { browser, invite, member, PASSWORD } from './manager-helpers.ts';

/** The one-time notice of a page (shared/partials/flash.eta), or null. */
const noticeOf = (html: string) => /<p class="notice" data-notice>([^<]*)<\/p>/.exec(html)?.[1].replace(/&#39;/g, "'") ?? null;
/** A fact of a page's `<dl class="facts">` by its data-field. */
const fieldOf = (html: string, field: string) => new RegExp(`data-field="${field}">([^<]*)<`).exec(html)?.[1] ?? null;

async function build(c: { after(fn: () => Promise<void>): void }, dialect: 'sqlite' | 'postgres') {
  const t: TestApp = await buildTestApp(c, dialect);
  await loadCatalogue(t, ORDER_CATALOGUE);
  await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'A', warehouseCode: 'G007', qty: 100 }] });
  await staff(t, 'owner@example.com', 'owner');
  const m = await newMerchant(t, 'Notice Shop');
  return { t, m, owner: await signedIn(t, 'owner@example.com') };
}

/** Posts a form of `page` (its CSRF token added) and returns the page the 303 leads to. */
async function sent(b: Browser, page: string, action: string, fields: Record<string, string>) {
  return follow(b, await b.post(action, { _csrf: await b.csrf(page), ...fields }));
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`a notice after every write, statuses in words (issue 44, 7; ${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('the money forms (top-up, adjustment, terms) say what they did on the page they lead to, once', async (c) => {
      const { m, owner } = await build(c, dialect);
      const url = `/console/merchants/${m.merchantId}`;
      const topUp = await sent(owner, url, `${url}/account/top-ups`, { environment: 'sandbox', amount: '1234.50', reference: 'BANK-1' });
      assert.equal(noticeOf(topUp.body), 'Top-up of 1234.50 USD posted to the sandbox account. Balance now 1234.50 USD.');
      assert.equal(noticeOf((await owner.get(url)).body), null, 'shown once');
      const again = await sent(owner, url, `${url}/account/top-ups`, { environment: 'sandbox', amount: '1234.50', reference: 'bank-1' });
      assert.match(noticeOf(again.body)!, /^That top-up's reference is recorded already: nothing posted\. The sandbox balance stays 1234\.50 USD\.$/);
      const page = (await owner.get(url)).body;
      const formKey = /name="formKey" value="([A-Za-z0-9_-]+-sandbox)"/.exec(page)![1];
      const adjusted = await sent(owner, url, `${url}/account/adjustments`, { environment: 'sandbox', amount: '-4.50', reason: 'wire fee', formKey });
      assert.equal(noticeOf(adjusted.body), 'Adjustment of -4.50 USD posted to the sandbox account. Balance now 1230.00 USD.');
      const terms = await sent(owner, url, `${url}/account`, {
        version: '1',
        environment: 'sandbox',
        billingMode: 'prepaid',
        creditLimit: '25',
        lowBalanceThreshold: '10',
      });
      assert.equal(noticeOf(terms.body), 'Billing terms of the sandbox account saved: prepaid, credit limit 25.00 USD, low-balance notice 10.00 USD.');
      // A refused form says why and no notice of success.
      const bad = await owner.post(`${url}/account/top-ups`, { _csrf: await owner.csrf(url), environment: 'sandbox', amount: 'lots', reference: 'BANK-2' });
      assert.equal(bad.statusCode, 400);
      assert.equal(noticeOf(bad.body), null);
    });

    it('ship, deliver and cancel a split, disable a merchant, revoke a token: each says so; a cancelled order reads in words on both front ends', async (c) => {
      const { t, m, owner } = await build(c, dialect);
      const placeOne = async () => {
        const placed = await t.merchant(m.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'A', quantity: 1 }]));
        assert.equal(placed.status, 200, placed.raw);
        return (await t.merchant(m.token, 'GET', `/openapi/v2/order/orders/${placed.body.data}`)).body.data as {
          id: string;
          splitOrders: { id: string }[];
        };
      };
      const shipped = await placeOne();
      const split = shipped.splitOrders[0].id;
      const orderUrl = `/console/orders/${shipped.id}`;
      const before = (await owner.get(orderUrl)).body;
      assert.equal(fieldOf(before, 'status'), 'Processing');
      assert.equal(fieldOf(before, 'fulfillment'), 'Waiting to ship');
      assert.match(before, /data-split-status>Waiting to ship</);
      assert.doesNotMatch(before.replace(/data-[a-z-]+="[^"]*"/g, ''), /waiting_to_ship/, 'no status code in the page text');
      const afterShip = await sent(owner, orderUrl, `/console/splits/${split}/ship`, { carrier: 'UPS', trackingCode: '1Z999' });
      assert.equal(noticeOf(afterShip.body), `Split order ${split} shipped (tracking 1Z999).`);
      assert.equal(fieldOf(afterShip.body, 'fulfillment'), 'Shipped');
      const afterDeliver = await sent(owner, orderUrl, `/console/splits/${split}/deliver`, {});
      assert.equal(noticeOf(afterDeliver.body), `Split order ${split} marked delivered.`);

      const cancelled = await placeOne();
      const cancelSplit = cancelled.splitOrders[0].id;
      const afterCancel = await sent(owner, `/console/splits/${cancelSplit}/cancel`, `/console/splits/${cancelSplit}/cancel`, { reason: 'warehouse flooded' });
      assert.equal(noticeOf(afterCancel.body), `Split order ${cancelSplit} cancelled; its lines are back in stock.`);
      assert.equal(fieldOf(afterCancel.body, 'status'), 'Cancelled');
      assert.equal(fieldOf(afterCancel.body, 'fulfillment'), 'None: cancelled', 'a cancelled order no longer waits to ship');
      assert.match(afterCancel.body, /data-split-status>Cancelled</);
      const list = (await owner.get('/console/orders')).body;
      assert.match(list, /<td>Cancelled[^<]*<\/td><td>None: cancelled<\/td>/);
      assert.match(list, /<option value="cancel">Cancelled<\/option>/, 'the status filter in words, sending the code');
      assert.doesNotMatch(list.replace(/(data-[a-z-]+|value)="[^"]*"/g, ''), /waiting_to_ship|fully_shipped/);

      // The merchant's view of the same orders.
      const admin = await member(t, m.merchantId, 'admin@notice.example', 'admin');
      const managerOrder = (await admin.get(`/manager/orders/${cancelled.id}`)).body;
      assert.equal(fieldOf(managerOrder, 'status'), 'Cancelled');
      assert.equal(fieldOf(managerOrder, 'fulfillment'), 'None: cancelled');
      const managerList = (await admin.get('/manager/orders')).body;
      assert.match(managerList, /<td>Cancelled[^<]*<\/td><td>None: cancelled<\/td>/);
      assert.doesNotMatch(managerList.replace(/(data-[a-z-]+|value)="[^"]*"/g, ''), /waiting_to_ship|fully_shipped/);
      // The CSV keeps the codes: it is read by machines.
      const csv = (await admin.get('/manager/orders.csv')).body;
      assert.match(csv, /,cancel,/);

      const merchantUrl = `/console/merchants/${m.merchantId}`;
      const revoked = await sent(owner, merchantUrl, `${merchantUrl}/tokens/${m.tokenId}/revoke`, {});
      assert.equal(noticeOf(revoked.body), `Token ${m.tokenId} revoked.`);
      const disabled = await sent(owner, merchantUrl, `${merchantUrl}/disable`, {});
      assert.equal(noticeOf(disabled.body), 'Merchant disabled: its tokens are refused until it is enabled again.');
      const enabled = await sent(owner, merchantUrl, `${merchantUrl}/enable`, {});
      assert.equal(noticeOf(enabled.body), 'Merchant enabled.');
    });

    it('the business manager says what its row buttons did (revoke a token, change a role, delete an endpoint)', async (c) => {
      const { t, m } = await build(c, dialect);
      const admin = await member(t, m.merchantId, 'admin@notice.example', 'admin');
      await member(t, m.merchantId, 'dev@notice.example', 'developer');
      const created = await admin.post('/manager/credentials/tokens', {
        _csrf: await admin.csrf('/manager/credentials'),
        name: 'reader',
        scopes: 'stock:read',
        expiresInDays: '30',
      });
      assert.equal(created.statusCode, 303, created.body);
      const credentials = (await admin.get('/manager/credentials')).body;
      const tokenId = /action="\/manager\/credentials\/tokens\/(\d+)\/revoke"/.exec(credentials)![1];
      const revoked = await sent(admin, '/manager/credentials', `/manager/credentials/tokens/${tokenId}/revoke`, {});
      assert.equal(noticeOf(revoked.body), 'Token revoked.');
      const team = (await admin.get('/manager/team')).body;
      const devId = /action="\/manager\/team\/(\d+)\/role"/.exec(team.slice(team.indexOf('dev@notice.example')))![1];
      const role = await sent(admin, '/manager/team', `/manager/team/${devId}/role`, { role: 'viewer' });
      assert.equal(noticeOf(role.body), 'Role changed to viewer.');
      const hook = await t.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['order.cancelled'] });
      assert.equal(hook.status, 200, hook.raw);
      const deleted = await sent(admin, `/manager/webhooks/${hook.body.data.id}`, `/manager/webhooks/${hook.body.data.id}/delete`, {});
      assert.equal(noticeOf(deleted.body), 'Endpoint deleted.');
    });

    it('a new secret shown once says first what made it: a client created, its secret rotated, a token created', async (c) => {
      const { t, m } = await build(c, dialect);
      const admin = await member(t, m.merchantId, 'keys@notice.example', 'admin');
      /** What the shown-once section says the form did. */
      const doneOf = (html: string) => /<span data-done>([^<]*)<\/span>: copy the secret now/.exec(html)?.[1] ?? null;
      const client = await sent(admin, '/manager/credentials', '/manager/credentials/clients', { name: 'Shop backend' });
      assert.equal(doneOf(client.body), 'Client Shop backend created');
      assert.match(client.body, /data-secret>[^<]+</);
      // Its row in the list (the merchant has a client of its own before it).
      const clientId = /<tr data-client="(\d+)"><td>Shop backend</.exec(client.body)![1];
      const rotated = await sent(admin, '/manager/credentials', `/manager/credentials/clients/${clientId}/rotate`, { graceHours: '2' });
      assert.equal(doneOf(rotated.body), 'Secret of client Shop backend rotated');
      const atOnce = await sent(admin, '/manager/credentials', `/manager/credentials/clients/${clientId}/rotate`, { graceHours: '0' });
      assert.equal(doneOf(atOnce.body), 'Secret of client Shop backend rotated', 'without grace too');
      const token = await sent(admin, '/manager/credentials', '/manager/credentials/tokens', { name: 'reader', scopes: 'stock:read', expiresInDays: '30' });
      assert.equal(doneOf(token.body), 'Token reader created');
      assert.equal(doneOf((await admin.get('/manager/credentials')).body), null, 'shown once');
    });

    it('an accepted invitation says so on the page it leads to, once', async (c) => {
      const { t, m } = await build(c, dialect);
      const newcomer = browser(t);
      const accepted = await follow(
        newcomer,
        await newcomer.post(await invite(t, m.merchantId, 'new@notice.example', 'developer'), { password: PASSWORD, confirm: PASSWORD }),
      );
      assert.equal(accepted.statusCode, 200);
      assert.equal(noticeOf(accepted.body), 'Invitation accepted: your password is set and you are signed in to Notice Shop as new@notice.example.');
      assert.equal(noticeOf((await newcomer.get('/manager')).body), null, 'shown once');
      // A refused password sets nothing and says nothing of the kind.
      const refused = await browser(t).post(await invite(t, m.merchantId, 'other@notice.example', 'viewer'), { password: PASSWORD, confirm: 'something else' });
      assert.equal(refused.statusCode, 400);
      assert.equal(noticeOf(refused.body), null);
    });

    it('a name over its limit is refused with the limit named, not cut by the form (no maxlength), nothing written', async (c) => {
      const { t, m, owner } = await build(c, dialect);
      const merchants = (await t.store.db.selectFrom('merchants').select('id').execute()).length;
      const page = (await owner.get('/console/merchants')).body;
      assert.match(page, /<input id="name" name="name" required>/, 'the browser does not cut a long name silently');
      assert.match(page, /at most 128 characters/);
      const long = await owner.post('/console/merchants', { _csrf: await owner.csrf('/console/merchants'), name: 'N'.repeat(129) });
      assert.equal(long.statusCode, 400);
      assert.match(long.body, /128 characters/);
      assert.equal((await t.store.db.selectFrom('merchants').select('id').execute()).length, merchants, 'nothing written');
      const fits = await owner.post('/console/merchants', { _csrf: await owner.csrf('/console/merchants'), name: 'N'.repeat(128) });
      assert.equal(fits.statusCode, 303, fits.body);
      const warehouse = await owner.post('/console/warehouses/new', {
        _csrf: await owner.csrf('/console/warehouses/new'),
        warehouseCode: 'W9',
        name: 'W'.repeat(129),
        countryCode: 'DE',
      });
      assert.equal(warehouse.statusCode, 400);
      assert.match(warehouse.body, /name must NOT have more than 128 characters/);
      assert.match(warehouse.body, /<input id="name" name="name" required value="W{129}"/, 'what was typed comes back whole');
      const admin = await member(t, m.merchantId, 'admin@notice.example', 'admin');
      assert.match((await admin.get('/manager/credentials')).body, /<input id="token-name" name="name" required value="">/);
      const token = await admin.post('/manager/credentials/tokens', {
        _csrf: await admin.csrf('/manager/credentials'),
        name: 'T'.repeat(81),
        scopes: 'stock:read',
        expiresInDays: '30',
      });
      assert.equal(token.statusCode, 400, token.body.slice(0, 200));
      assert.match(token.body, /80 characters/);
    });
  });
}
