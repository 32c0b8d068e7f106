import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { HostResolver } from '../../src/domain/webhook-url.ts';
import { DIALECTS, PG_SKIP, buildTestApp, loadCatalogue, newMerchant, tableDigests, type TestApp } from '../helpers.ts';
import { follow, signedIn, staff, type Browser } from './console-client.ts';
import { member } from './manager-helpers.ts';

/**
 * Two tabs must not silently undo each other's saves (docs/web.md, "Edit conflicts"): every edit
 * form carries the version it was read at; a save made against a version that is no longer the
 * stored one writes nothing and answers 409 with both versions, field by field, a button that
 * sends the same fields again against the stored version, and a way back that discards them.
 */

const resolve: HostResolver = async (host) => {
  if (host === 'hooks.example.com') return [{ address: '93.184.216.34', family: 4 }];
  throw new Error(`getaddrinfo ENOTFOUND ${host}`);
};

const htmlText = (html: string) =>
  html
    .replace(/&#(\d+);/g, (_m, code) => String.fromCharCode(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** A form's fields as a browser would send them: its hidden inputs, inputs with a value, ticked checkboxes, selected options, textareas. */
function formFields(html: string, formMarker: string): Record<string, string | string[]> {
  const start = html.indexOf(formMarker);
  assert.ok(start >= 0, `the page has ${formMarker}`);
  const form = html.slice(html.lastIndexOf('<form', start), html.indexOf('</form>', start));
  const fields: Record<string, string | string[]> = {};
  const add = (name: string, value: string) => {
    const had = fields[name];
    fields[name] = had === undefined ? value : [had, value].flat();
  };
  for (const m of form.matchAll(/<input([^>]*)>/g)) {
    const attrs = m[1];
    const name = /name="([^"]+)"/.exec(attrs)?.[1];
    if (!name) continue;
    if (/type="checkbox"/.test(attrs) && !/ checked/.test(attrs)) continue;
    add(name, htmlText(/value="([^"]*)"/.exec(attrs)?.[1] ?? ''));
  }
  for (const m of form.matchAll(/<textarea[^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/textarea>/g)) add(m[1], htmlText(m[2]));
  for (const m of form.matchAll(/<select[^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
    const chosen = /<option value="([^"]*)"[^>]*selected/.exec(m[2]) ?? /<option(?: value="([^"]*)")?[^>]*selected[^>]*>([^<]*)/.exec(m[2]);
    add(m[1], htmlText(chosen?.[1] ?? chosen?.[2] ?? ''));
  }
  return fields;
}

/** The conflict page's rows: field label → [you sent, stored now]. */
const conflictRows = (html: string) =>
  Object.fromEntries(
    [
      ...html.matchAll(
        /<tr data-field="[^"]*"><th scope="row">([^<]*)<\/th><td class="value" data-yours>([^<]*)<\/td><td class="value" data-stored>([^<]*)<\/td><\/tr>/g,
      ),
    ].map((m) => [htmlText(m[1]), [htmlText(m[2]), htmlText(m[3])]]),
  );

/** Saves `fields` from a tab that is behind: 409, the conflict page, and not one table changed. */
async function refusedAsStale(t: TestApp, b: Browser, url: string, fields: Record<string, string | string[]>) {
  const before = await tableDigests(t.store);
  const r = await b.post(url, fields);
  assert.equal(r.statusCode, 409, r.body.slice(0, 500));
  assert.match(r.body, /<h1>Not saved: .* changed meanwhile<\/h1>/);
  assert.match(r.body, /data-action="reapply"/);
  assert.match(r.body, /data-action="discard"/);
  assert.deepEqual(await tableDigests(t.store), before, 'the stale save wrote nothing');
  return r.body;
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`edit forms refuse a stale save (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    const console_ = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect);
      await loadCatalogue(t);
      await staff(t, 'owner@example.com', 'owner');
      return { t, owner: await signedIn(t, 'owner@example.com') };
    };
    const product = async (t: TestApp, sku: string) => t.store.db.selectFrom('products').selectAll().where('sku', '=', sku).executeTakeFirstOrThrow();

    it('product: tab B, opened before tab A renamed it, changes the price: 409 with both versions, nothing written; "save mine" applies it', async (ctx) => {
      const { t, owner } = await console_(ctx);
      const url = '/console/products/SKU-A/edit';
      const tabB = formFields((await owner.get(url)).body, 'id="product-form"');
      const tabA = formFields((await owner.get(url)).body, 'id="product-form"');
      assert.equal(tabA.version, '1');
      await follow(owner, await owner.post(url, { ...tabA, name: 'Mug, renamed' }));
      assert.equal((await product(t, 'SKU-A')).name, 'Mug, renamed');

      const page = await refusedAsStale(t, owner, url, { ...tabB, price: '15.00' });
      assert.deepEqual(conflictRows(page), { Name: ['Mug', 'Mug, renamed'], 'Price (USD)': ['15.00', '9.32'] });
      assert.equal((await product(t, 'SKU-A')).name, 'Mug, renamed', 'the rename is not undone');
      assert.equal((await product(t, 'SKU-A')).price_cents, 932);
      assert.match(page, /<a href="\/console\/products\/SKU-A\/edit" data-action="discard">/);

      // "Save mine over the stored version": the same fields, made against version 2.
      const again = formFields(page, 'data-action="reapply"');
      assert.equal(again.version, '2');
      assert.equal(again.price, '15.00');
      await follow(owner, await owner.post(url, again));
      const saved = await product(t, 'SKU-A');
      assert.deepEqual([saved.name, saved.price_cents, saved.version], ['Mug', 1500, 3]);
    });

    it('product: a save after an operator API upsert or an import is stale too; a form without its version is refused (400), nothing written', async (ctx) => {
      const { t, owner } = await console_(ctx);
      const url = '/console/products/SKU-B/edit';
      const tab = formFields((await owner.get(url)).body, 'id="product-form"');
      assert.equal((await t.admin('POST', '/admin/v1/products', { sku: 'SKU-B', name: 'Plate', categoryId: 11, price: 5, weightGrams: 500 })).status, 200);
      const page = await refusedAsStale(t, owner, url, { ...tab, weightGrams: '520' });
      assert.deepEqual(conflictRows(page), { 'Price (USD)': ['4.50', '5.00'], 'Weight (grams)': ['520', '500'] });

      const before = await tableDigests(t.store);
      const { version: _dropped, ...withoutVersion } = formFields((await owner.get(url)).body, 'id="product-form"');
      const r = await owner.post(url, { ...withoutVersion, name: 'Plate 2' });
      assert.equal(r.statusCode, 400);
      assert.match(r.body, /Not saved: version is missing from the form: reload the page/);
      assert.deepEqual(await tableDigests(t.store), before);
      for (const bad of ['0', 'x', '1.5', '-1', '9'.repeat(16)]) {
        const refused = await owner.post(url, { ...withoutVersion, version: bad });
        assert.equal(refused.statusCode, 400, bad);
      }
      assert.deepEqual(await tableDigests(t.store), before);
    });

    it('channel and warehouse edit forms: stale → 409 with the fields that differ, nothing written', async (ctx) => {
      const { t, owner } = await console_(ctx);
      const url = '/console/channels/STD/edit';
      const tabB = formFields((await owner.get(url)).body, 'id="channel-form"');
      const tabA = formFields((await owner.get(url)).body, 'id="channel-form"');
      await follow(owner, await owner.post(url, { ...tabA, warehouseCodes: ['G007', 'US01'], deliveryDaysMax: '12' }));
      const page = await refusedAsStale(t, owner, url, { ...tabB, name: 'Standard (slow)', baseFee: '2' });
      assert.deepEqual(conflictRows(page), {
        Name: ['Standard (slow)', 'Standard Shipping'],
        Warehouses: ['G007, G006, US01', 'G007, US01'],
        'Delivery days, at most': ['10', '12'],
      });
      await follow(owner, await owner.post(url, formFields(page, 'data-action="reapply"')));
      const channel = (await t.admin('GET', '/admin/v1/channels/STD')).body.data;
      assert.deepEqual([channel.name, channel.warehouseCodes.length, channel.deliveryDaysMax], ['Standard (slow)', 3, 10]);

      const wUrl = '/console/warehouses/G007/edit';
      const old = formFields((await owner.get(wUrl)).body, 'id="warehouse-form"');
      await follow(owner, await owner.post(wUrl, { ...old, name: 'Shenzhen North' }));
      const wPage = await refusedAsStale(t, owner, wUrl, { ...old, status: '0' });
      assert.deepEqual(conflictRows(wPage), { Name: ['Shenzhen', 'Shenzhen North'], Status: ['disabled', 'enabled'] });
    });

    it('billing terms: the second tab’s terms are refused (409, both versions) while money moving in between is not a conflict', async (ctx) => {
      const { t, owner } = await console_(ctx);
      const m = await newMerchant(t);
      const url = `/console/merchants/${m.merchantId}`;
      const termsOf = (html: string) => formFields(html, 'data-action="save-terms"') as Record<string, string>;
      const pageHtml = (await owner.get(url)).body;
      // Both environments' forms are on the page; the sandbox one is the first.
      const tabB = termsOf(pageHtml);
      const tabA = termsOf((await owner.get(url)).body);
      assert.deepEqual([tabA.environment, tabA.version], ['sandbox', '1']);
      // A top-up moves the balance, not the terms: the form is still current.
      const topUp = { environment: 'sandbox', amount: '50.00', reference: 'BANK-7' };
      assert.equal((await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/account/top-ups`, topUp)).status, 200);
      assert.equal((await owner.post(`${url}/account`, { ...tabA, billingMode: 'prepaid', creditLimit: '20.00' })).statusCode, 303);

      const page = await refusedAsStale(t, owner, `${url}/account`, { ...tabB, lowBalanceThreshold: '5.00' });
      assert.deepEqual(conflictRows(page), {
        'Billing mode': ['on account (no limit)', 'prepaid (orders need available funds)'],
        'Credit limit': ['0.00', '20.00'],
        'Low-balance threshold': ['5.00', '(empty)'],
      });
      const account = async () => (await t.admin('GET', `/admin/v1/merchants/${m.merchantId}/account?environment=sandbox`)).body.data;
      assert.deepEqual([(await account()).billingMode, (await account()).creditLimit], ['prepaid', 20]);
      const again = formFields(page, 'data-action="reapply"');
      assert.deepEqual([again.environment, again.version], ['sandbox', '2']);
      assert.equal((await owner.post(`${url}/account`, again)).statusCode, 303);
      assert.deepEqual([(await account()).billingMode, (await account()).lowBalanceThreshold], ['on_account', 5]);

      // The page first: it takes the notice the last save left (a one-time flash), a write of its own.
      const { version: _v, ...noVersion } = termsOf((await owner.get(url)).body);
      const before = await tableDigests(t.store);
      assert.equal((await owner.post(`${url}/account`, noVersion)).statusCode, 400);
      assert.deepEqual(await tableDigests(t.store), before);
    });

    it('business manager webhook settings: a stale save is 409 with both versions, nothing written; "save mine" applies it', async (ctx) => {
      const t = await buildTestApp(ctx, dialect, {}, { resolveHost: resolve });
      const shop = await newMerchant(t, 'Hook shop');
      const dev = await member(t, shop.merchantId, 'dev@example.com', 'developer');
      const created = await t.merchant(shop.token, 'POST', '/openapi/v1/webhooks', { url: 'https://hooks.example.com/in', events: ['refund.failed'] });
      assert.equal(created.status, 200, created.raw);
      const url = `/manager/webhooks/${created.body.data.id}`;
      const tabB = formFields((await dev.get(url)).body, 'data-form="edit-webhook"');
      const tabA = formFields((await dev.get(url)).body, 'data-form="edit-webhook"');
      await follow(dev, await dev.post(url, { ...tabA, url: 'https://hooks.example.com/v2' }));

      const page = await refusedAsStale(t, dev, url, { ...tabB, events: ['refund.failed', 'split_order.shipped'] });
      assert.deepEqual(conflictRows(page), {
        URL: ['https://hooks.example.com/in', 'https://hooks.example.com/v2'],
        Events: ['refund.failed, split_order.shipped', 'refund.failed'],
      });
      const again = formFields(page, 'data-action="reapply"');
      await follow(dev, await dev.post(url, again));
      const listed = (await t.merchant(shop.token, 'GET', '/openapi/v1/webhooks')).body.data.list[0];
      assert.deepEqual([listed.url, listed.events], ['https://hooks.example.com/in', ['refund.failed', 'split_order.shipped']]);
      // The merchant API's PUT moves the version too: the form read before it is stale.
      const tab = formFields((await dev.get(url)).body, 'data-form="edit-webhook"');
      assert.equal(
        (
          await t.merchant(shop.token, 'PUT', `/openapi/v1/webhooks/${created.body.data.id}`, {
            url: 'https://hooks.example.com/in',
            events: ['refund.failed'],
          })
        ).status,
        200,
      );
      await refusedAsStale(t, dev, url, tab);
    });
  });
}
