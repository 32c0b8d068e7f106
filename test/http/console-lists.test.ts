import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { createClient, revokeClient } from '../../src/services/credentials.service.ts';
import { merchantCredentials } from '../../src/services/merchant-credentials.service.ts';
import { refundListCsv } from '../../src/services/refund-search.service.ts';
import { signedIn, staff, type Browser } from './console-client.ts';
import { member } from './manager-helpers.ts';
import { DIALECTS, loadCatalogue, newMerchant, tableDigests, useApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';

/**
 * Issue 29, items 7, 12 and 16, the gaps left: the console lists every refund (any status, filtered
 * by status, merchant and day requested; "n–m of N"; keyset pages) and downloads the list as CSV
 * with the same filters; every console page that showed a bare merchant id names the merchant and
 * links its page; the merchant page pages through all of the merchant's tokens and clients.
 */

type Row = Record<string, string>;

const FORMULA_NAME = '=HYPERLINK("http://evil.example/","x")';
const CLI = { kind: 'cli', id: 'test', requestId: null } as const;
/** The shop's refunds: more than one page of the list (50). */
const SHOP_REFUNDS = 53;

function csvRows(r: Awaited<ReturnType<Browser['get']>>): Row[] {
  assert.equal(r.statusCode, 200, r.body.slice(0, 300));
  assert.equal(r.headers['content-type'], 'text/csv; charset=utf-8');
  const day = new Date().toISOString().slice(0, 10);
  assert.equal(r.headers['content-disposition'], `attachment; filename="refunds-${day}.csv"`);
  assert.match(r.body, /\r\n$/);
  assert.ok(r.body.startsWith('\uFEFF'), 'a UTF-8 byte order mark first');
  return parse(r.body, { columns: true, bom: true }) as Row[];
}

const countsOf = (html: string, which = '') => new RegExp(`<span data-counts${which ? `="${which}"` : ''}>([^<]*)</span>`).exec(html)?.[1];
const rowIds = (html: string, attribute: string) => [...html.matchAll(new RegExp(`<tr data-${attribute}="(\\d+)"`, 'g'))].map((m) => m[1]);
const nextHref = (html: string, which?: string) =>
  (which ? new RegExp(`<a rel="next" data-next="${which}" href="([^"]+)"`) : /<a rel="next" href="([^"]+)"/).exec(html)?.[1].replaceAll('&amp;', '&');
const escaped = (text: string) => text.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** Every page of a list, following its Next links from `url`: the rows of each page and its counts. */
async function walk(b: Browser, url: string, attribute: string, which?: string) {
  const pages: { ids: string[]; counts: string | undefined }[] = [];
  let next: string | undefined = url;
  while (next) {
    const r = await b.get(next);
    assert.equal(r.statusCode, 200, r.body.slice(0, 300));
    pages.push({ ids: rowIds(r.body, attribute), counts: countsOf(r.body, which) });
    next = nextHref(r.body, which);
    assert.ok(pages.length < 20, 'the walk ends');
  }
  return pages;
}

for (const dialect of DIALECTS) {
  describe(`console lists: all refunds, merchants by name, credentials paged (${dialect})`, () => {
    const t = useApp(dialect, { REFUND_REVIEW: 'manual' });
    let owner: Browser;
    let support: Browser;
    let warehouse: Browser;
    let shop: Awaited<ReturnType<typeof newMerchant>>;
    let other: Awaited<ReturnType<typeof newMerchant>>;
    let shopOrder: string;
    const shopRefunds: string[] = [];
    let otherRefund: string;
    let today: string;

    // Made once, before any test, and only read by them, so any one runs alone: two merchants (one
    // named like a formula), 53 refunds of one and 1 of the other, some decided; staff of each role.
    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      shop = await newMerchant(t, FORMULA_NAME);
      other = await newMerchant(t, 'Other <Shop>');
      shopOrder = (await placeOrder(t, shop.token, [{ sku: 'C', quantity: SHOP_REFUNDS }])).id;
      for (let i = 0; i < SHOP_REFUNDS; i++) {
        const r = await t.merchant(shop.token, 'POST', `/openapi/v2/order/orders/${shopOrder}/refund`, { skuCode: 'C', quantity: 1, refundReason: 'Other' });
        assert.equal(r.status, 200, r.raw);
        shopRefunds.unshift(String(r.body.data));
      }
      const otherOrder = (await placeOrder(t, other.token, [{ sku: 'C', quantity: 2 }])).id;
      const r = await t.merchant(other.token, 'POST', `/openapi/v2/order/orders/${otherOrder}/refund`, { skuCode: 'C', quantity: 1, refundReason: 'Other' });
      assert.equal(r.status, 200, r.raw);
      otherRefund = String(r.body.data);
      for (const no of shopRefunds.slice(0, 2)) assert.equal((await t.admin('POST', `/admin/v1/refunds/${no}/approve`, {})).status, 200);
      assert.equal((await t.admin('POST', `/admin/v1/refunds/${shopRefunds[2]}/reject`, { reason: 'opened box' })).status, 200);
      const created = await t.store.db.selectFrom('refunds').select('created_at').where('id', '=', Number(otherRefund)).executeTakeFirstOrThrow();
      today = new Date(Number(created.created_at)).toISOString().slice(0, 10);
      await staff(t, 'lists-owner@example.com', 'owner');
      await staff(t, 'lists-support@example.com', 'support');
      await staff(t, 'lists-warehouse@example.com', 'warehouse');
      owner = await signedIn(t, 'lists-owner@example.com');
      support = await signedIn(t, 'lists-support@example.com');
      warehouse = await signedIn(t, 'lists-warehouse@example.com');
    });

    it('all refunds: every status, newest first, merchants by name linking their page, "1–50 of 54", Next reaches every refund once', async () => {
      const first = await support.get('/console/refunds/all');
      assert.equal(first.statusCode, 200);
      assert.equal(countsOf(first.body), '1–50 of 54');
      assert.ok(first.body.includes(`<a href="/console/merchants/${other.merchantId}" data-merchant="${other.merchantId}">Other &lt;Shop&gt;</a>`));
      assert.ok(first.body.includes(`data-merchant="${shop.merchantId}">${escaped(FORMULA_NAME)}</a>`));
      assert.match(first.body, /href="\/console\/refunds\/all"[^>]*>All refunds<\/a>/, 'in the navigation');
      const pages = await walk(support, '/console/refunds/all', 'refund');
      assert.deepEqual(
        pages.map((p) => p.counts),
        ['1–50 of 54', '51–54 of 54'],
      );
      const seen = pages.flatMap((p) => p.ids);
      assert.deepEqual(seen, [otherRefund, ...shopRefunds], 'newest first, each refund once');
      const decided = await support.get(`/console/refunds/all?merchant=${shop.merchantId}&status=refund_successfully`);
      assert.deepEqual(rowIds(decided.body, 'refund'), shopRefunds.slice(0, 2));
      assert.match(decided.body, /<td data-status="refund_successfully">Refunded<\/td>/);
      assert.match(decided.body, /\(by the operator\)/);
      assert.ok(decided.body.includes(`Refunds of <a href="/console/merchants/${shop.merchantId}">${escaped(FORMULA_NAME)}</a> only.`));
    });

    it('all refunds: the filters narrow by status, merchant and day requested; the CSV link carries them', async () => {
      const ids = async (query: string) => rowIds((await support.get(`/console/refunds/all?${query}`)).body, 'refund');
      assert.deepEqual(await ids('status=refund_failed'), [shopRefunds[2]]);
      assert.deepEqual(await ids(`merchant=${other.merchantId}`), [otherRefund]);
      assert.equal((await ids(`merchant=${shop.merchantId}&status=pending_review`)).length, SHOP_REFUNDS - 3);
      const tomorrow = new Date(Date.parse(today) + 86_400_000).toISOString().slice(0, 10);
      const yesterday = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
      assert.deepEqual(await ids(`from=${tomorrow}`), []);
      assert.deepEqual(await ids(`to=${yesterday}`), []);
      assert.equal((await ids(`from=${today}&to=${today}&merchant=${other.merchantId}`)).length, 1);
      const empty = await support.get(`/console/refunds/all?from=${tomorrow}`);
      assert.match(empty.body, /<p data-empty>No refunds match\.<\/p>/);
      const page = await support.get(`/console/refunds/all?status=pending_review&merchant=${shop.merchantId}&from=${today}`);
      assert.equal(countsOf(page.body), `1–50 of ${SHOP_REFUNDS - 3}`);
      assert.ok(page.body.includes(`href="/console/refunds/all.csv?status=pending_review&amp;merchant=${shop.merchantId}&amp;from=${today}&amp;to="`));
    });

    it('all refunds: a malformed filter is a 400 page naming it (the CSV too, before any byte), and nothing is written', async () => {
      const before = await tableDigests(t.store);
      assert.equal((await support.get('/console/refunds/all?after=nonsense')).statusCode, 400);
      for (const query of ['status=lost', 'merchant=abc', 'from=2026-13-45', `from=${today}&to=2000-01-01`]) {
        const r = await support.get(`/console/refunds/all?${query}`);
        assert.equal(r.statusCode, 400, query);
        const csv = await support.get(`/console/refunds/all.csv?${query}`);
        assert.equal(csv.statusCode, 400, query);
        assert.match(csv.headers['content-type'] as string, /^text\/html/);
      }
      assert.deepEqual(await tableDigests(t.store), before);
    });

    it('all refunds CSV: every matching refund (not one page), the filters applied, formula cells defused, parses with csv-parse', async () => {
      const all = csvRows(await owner.get('/console/refunds/all.csv'));
      assert.deepEqual(
        all.map((r) => r.refund_no),
        [otherRefund, ...shopRefunds],
      );
      assert.equal(all[0].merchant, 'Other <Shop>');
      assert.equal(all[1].merchant, `'${FORMULA_NAME}`, 'a cell starting with = gets a leading quote');
      assert.equal(all[1].merchant_id, shop.merchantId);
      assert.equal(all[1].order_id, shopOrder);
      assert.equal(all[1].items, 'C x 1');
      assert.match(all[1].amount, /^\d+\.\d{2}$/);
      const failed = csvRows(await support.get(`/console/refunds/all.csv?status=refund_failed&merchant=${shop.merchantId}&from=${today}&to=${today}`));
      assert.deepEqual(
        failed.map((r) => [r.refund_no, r.status]),
        [[shopRefunds[2], 'refund_failed']],
      );
      const pending = csvRows(await support.get(`/console/refunds/all.csv?status=pending_review&merchant=${shop.merchantId}`));
      assert.equal(pending.length, SHOP_REFUNDS - 3);
      assert.ok(pending.every((r) => r.status === 'pending_review' && r.merchant_id === shop.merchantId));
    });

    it('all refunds CSV: read in keyset batches, a batch of 1 or 7 gives the same file as one batch', async () => {
      const rows = async (batch?: number) => {
        const out = [];
        for await (const row of refundListCsv(t.store.db, { refundSlaHours: 24 }, {}, 0, batch).rows) out.push(row);
        return out;
      };
      const whole = await rows();
      assert.equal(whole.length, SHOP_REFUNDS + 1);
      assert.deepEqual(await rows(1), whole);
      assert.deepEqual(await rows(7), whole);
    });

    it('all refunds: support and owner, not the warehouse (page and file)', async () => {
      assert.equal((await owner.get('/console/refunds/all')).statusCode, 200);
      assert.equal((await warehouse.get('/console/refunds/all')).statusCode, 403);
      assert.equal((await warehouse.get('/console/refunds/all.csv')).statusCode, 403);
      assert.doesNotMatch((await warehouse.get('/console')).body, /href="\/console\/refunds\/all"/);
    });

    it('merchants by name: the order, split cancellation, webhook, dashboard, audit and list pages name the merchant and link its page', async () => {
      const link = (m: { merchantId: string }, name: string) =>
        `<a href="/console/merchants/${m.merchantId}" data-merchant="${m.merchantId}">${escaped(name)}</a>`;
      const order = await support.get(`/console/orders/${shopOrder}`);
      assert.ok(order.body.includes(`<dt>Merchant</dt><dd>${link(shop, FORMULA_NAME)}</dd>`), 'order page');
      const split = await t.store.db.selectFrom('split_orders').select('id').where('order_id', '=', Number(shopOrder)).executeTakeFirstOrThrow();
      const cancel = await owner.get(`/console/splits/${split.id}/cancel`);
      assert.ok(cancel.body.includes(`(merchant ${link(shop, FORMULA_NAME)})`), 'split cancellation page');
      const orders = await support.get(`/console/orders?merchant=${other.merchantId}`);
      assert.ok(orders.body.includes(`<td>${link(other, 'Other <Shop>')}</td>`), 'order search');
      const queue = await support.get('/console/refunds');
      assert.ok(queue.body.includes(link(shop, FORMULA_NAME)), 'refund review');

      // A webhook endpoint that fails: the webhook page and the dashboard's failing endpoints.
      const hook = await t.merchant(other.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/stockist', events: ['order.cancelled'] });
      assert.equal(hook.status, 200, hook.raw);
      const endpointId = String(hook.body.data.id);
      await t.store.db
        .updateTable('webhook_endpoints')
        .set({ status: 'disabled', disabled_reason: 'failing for 3 days' })
        .where('id', '=', Number(endpointId))
        .execute();
      const webhook = await support.get(`/console/webhooks/${endpointId}`);
      assert.ok(webhook.body.includes(`<dt>Merchant</dt><dd>${link(other, 'Other <Shop>')}</dd>`), 'webhook page');
      assert.ok((await support.get('/console/webhooks')).body.includes(`<td>${link(other, 'Other <Shop>')}</td>`), 'webhook list');
      const dashboard = await support.get('/console');
      assert.ok(dashboard.body.includes(`<td>${link(other, 'Other <Shop>')}</td>`), 'dashboard');

      // The audit log: a `merchant:<id>` target and a business manager user's merchant.
      const disabled = await t.admin('PATCH', `/admin/v1/merchants/${other.merchantId}`, { status: 'disabled' });
      assert.equal(disabled.status, 200, disabled.raw);
      assert.equal((await t.admin('PATCH', `/admin/v1/merchants/${other.merchantId}`, { status: 'active' })).status, 200);
      const audit = await owner.get(`/console/audit?target=merchant:${other.merchantId}`);
      assert.ok(
        audit.body.includes(`<td role="cell" data-label="Target" class="wrap" data-target>merchant ${link(other, 'Other <Shop>')}</td>`),
        'audit target',
      );
      assert.doesNotMatch(audit.body, new RegExp(`>merchant:${other.merchantId}<`));
      // A `merchantId` field of a change (a split order shipped) and a business manager user who acted.
      const toShip = await placeOrder(t, other.token, [{ sku: 'C', quantity: 1 }]);
      const otherSplit = await t.store.db.selectFrom('split_orders').select('id').where('order_id', '=', Number(toShip.id)).executeTakeFirstOrThrow();
      const ship = await t.admin('POST', `/admin/v1/split-orders/${otherSplit.id}/ship`, { carrier: 'UPS', trackingCode: '1Z999' });
      assert.equal(ship.status, 200, ship.raw);
      const shipped = await owner.get('/console/audit?action=split_order.ship');
      assert.ok(shipped.body.includes(`<li data-field="merchantId"><span class="field">merchant id</span>: ${link(other, 'Other <Shop>')}</li>`), shipped.body);
      const user = await member(t, other.merchantId, 'lister@example.com', 'admin');
      assert.equal((await user.get('/manager')).statusCode, 200);
      const byUser = await owner.get('/console/audit');
      assert.ok(
        byUser.body.includes(`lister@example.com <small>(user of ${link(other, 'Other <Shop>')})</small>`),
        'a manager user is named with their merchant',
      );
    });

    it('merchant page: every token reachable, newest first, 50 a page with "n–m of N"; the other merchant\'s are not there', async () => {
      const issued: string[] = [shop.tokenId];
      for (let i = 0; i < 55; i++) {
        const r = await t.admin('POST', `/admin/v1/merchants/${shop.merchantId}/tokens`, { scopes: ['orders:read'] });
        assert.equal(r.status, 200, r.raw);
        issued.push(String(r.body.data.tokenId));
      }
      const shopTokens = (await t.store.db.selectFrom('api_tokens').select('id').where('merchant_id', '=', Number(shop.merchantId)).execute()).map((r) =>
        String(r.id),
      );
      assert.ok(shopTokens.length >= 56);
      const pages = await walk(support, `/console/merchants/${shop.merchantId}`, 'token', 'tokens');
      const seen = pages.flatMap((p) => p.ids);
      assert.deepEqual(
        seen,
        [...shopTokens].sort((a, b) => Number(b) - Number(a)),
        'every token once, newest first',
      );
      assert.deepEqual(
        pages.map((p) => p.counts),
        [`1–50 of ${shopTokens.length}`, `51–${shopTokens.length} of ${shopTokens.length}`],
      );
      for (const id of issued) assert.ok(seen.includes(id));
      const second = await support.get(`/console/merchants/${shop.merchantId}?tokensBefore=${seen[49]}`);
      assert.match(second.body, /<a href="\/console\/merchants\/\d+\?clientsAfter=#tokens">Newest tokens<\/a>/);
      assert.ok(!rowIds(second.body, 'token').includes(other.tokenId));
      assert.equal((await support.get(`/console/merchants/${shop.merchantId}?tokensBefore=x1`)).statusCode, 400);
      assert.equal((await warehouse.get(`/console/merchants/${shop.merchantId}?tokensBefore=${seen[49]}`)).statusCode, 403);
    });

    it('merchant page: every OAuth client reachable (revoked ones too), oldest first, with "n–m of N"', async () => {
      // 60 clients, each revoked after it is made (a merchant holds at most 20 live ones).
      for (let i = 0; i < 60; i++) {
        const c = await createClient(forMerchant(t.store.db, Number(other.merchantId)), CLI, `client ${i}`, Date.now());
        await revokeClient(forMerchant(t.store.db, Number(other.merchantId)), CLI, c.client.id, Date.now());
      }
      const clients = (
        await t.store.db.selectFrom('oauth_clients').select('id').where('merchant_id', '=', Number(other.merchantId)).orderBy('id').execute()
      ).map((r) => String(r.id));
      assert.equal(clients.length, 61);
      const pages = await walk(owner, `/console/merchants/${other.merchantId}`, 'client', 'clients');
      assert.deepEqual(
        pages.flatMap((p) => p.ids),
        clients,
      );
      assert.deepEqual(
        pages.map((p) => p.counts),
        ['1–50 of 61', '51–61 of 61'],
      );
      // The service's own page size: a page of 7 walks to the same list.
      const walked: string[] = [];
      let after: string | null = '';
      while (after !== null) {
        const page = await merchantCredentials(forMerchant(t.store.db, Number(other.merchantId)), Date.now(), { clientsAfter: after }, 7);
        walked.push(...page.clients.map((c) => c.id));
        after = page.clientsPage.next;
      }
      assert.deepEqual(walked, clients);
    });
  });
}
