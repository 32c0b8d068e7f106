import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, stockQty, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { follow, signedIn, staff, type Browser, importOutcome } from './console-client.ts';
import { member } from './manager-helpers.ts';

/**
 * Issue 29, items 9 and 10 (channels): creating and editing products, warehouses and logistics
 * channels in the console; the import's CSV templates and its dry run; a channel's carriers and
 * tracking URL template, used by the ship form and the order pages' tracking links.
 */

type Audit = { action: string; actorKind: string; target: string; before: any; after: any };
const auditRows = async (t: TestApp) => (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list as Audit[];
const auditOf = async (t: TestApp, action: string, target: string) => (await auditRows(t)).filter((a) => a.action === action && a.target === target);

const product = async (t: TestApp, sku: string) => t.store.db.selectFrom('products').selectAll().where('sku', '=', sku).executeTakeFirst();

/** The text of the element carrying a unique attribute, tags stripped. */
function textOf(html: string, attribute: string, close = '</tr>'): string | null {
  const at = html.indexOf(attribute);
  if (at < 0) return null;
  const start = html.indexOf('>', at) + 1;
  return html
    .slice(start, html.indexOf(close, start))
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;|&quot;|&#34;/g, (m) => (m === '&#39;' ? "'" : '"'))
    .replace(/\s+/g, ' ')
    .trim();
}

const NEW_PRODUCT = {
  sku: 'NEW-1',
  name: 'Teapot',
  categoryId: '',
  price: '24.50',
  weightGrams: '900',
  imageUrl: 'https://img.example/teapot.jpg',
  optionsJson: '{"color": ["white", "black"]}',
};

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`console catalogue editing, import dry run, channel carriers (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);
    let owner: Browser;
    let ownerToken: string;
    let wh: Browser;
    let whToken: string;
    let support: Browser;
    let supportToken: string;

    // Made once, before any test: the catalogue, an owner, a warehouse and a support member.
    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      await staff(t, 'owner@example.com', 'owner');
      await staff(t, 'wh@example.com', 'warehouse');
      await staff(t, 'support@example.com', 'support');
      owner = await signedIn(t, 'owner@example.com');
      ownerToken = await owner.csrf();
      wh = await signedIn(t, 'wh@example.com');
      whToken = await wh.csrf();
      support = await signedIn(t, 'support@example.com');
      supportToken = await support.csrf();
    });

    it('the owner creates a product (303 → its page, audited), edits it, and sees it in the list; other roles may not, nothing written', async () => {
      const form = await owner.get('/console/new-product');
      assert.equal(form.statusCode, 200);
      for (const field of ['sku', 'name', 'categoryId', 'price', 'weightGrams', 'imageUrl', 'optionsJson'])
        assert.match(form.body, new RegExp(`name="${field}"`), field);
      const list = await owner.get('/console/products');
      assert.match(list.body, /href="\/console\/new-product"/);
      assert.ok(!(await wh.get('/console/products')).body.includes('/console/new-product'), 'no New product link for the warehouse');

      const before = await tableDigests(t.store);
      for (const [b, token] of [
        [wh, whToken],
        [support, supportToken],
      ] as const) {
        assert.equal((await b.get('/console/new-product')).statusCode, 403);
        assert.equal((await b.post('/console/new-product', { _csrf: token, ...NEW_PRODUCT })).statusCode, 403);
        assert.equal((await b.post('/console/products/A/edit', { _csrf: token, name: 'Hacked', price: '1', weightGrams: '1' })).statusCode, 403);
      }
      assert.deepEqual(await tableDigests(t.store), before, 'refused: nothing written');

      const created = await owner.post('/console/new-product', { _csrf: ownerToken, ...NEW_PRODUCT });
      assert.equal(created.headers.location, '/console/products/NEW-1');
      const page = await follow(owner, created);
      assert.match(page.body, /data-notice>Product NEW-1 created\./);
      assert.match(page.body, /NEW-1 · Teapot/);
      assert.match(page.body, /24\.50 USD · 900 g/);
      assert.match(textOf(page.body, 'data-field="options"', '</dd>')!, /\{"color":\["white","black"\]\}/);
      const row = await product(t, 'NEW-1');
      assert.equal(row?.price_cents, 2450);
      assert.deepEqual(JSON.parse(row!.options!), { color: ['white', 'black'] });
      const [audit] = await auditOf(t, 'product.save', 'product:NEW-1');
      assert.equal(audit.actorKind, 'staff');
      assert.equal(audit.before, null);
      assert.equal(audit.after.priceCents, 2450);

      const edit = await owner.get('/console/products/NEW-1/edit');
      assert.equal(edit.statusCode, 200);
      assert.match(edit.body, /name="price"[^>]*value="24\.50"/);
      assert.match(edit.body, /&quot;color&quot;|&#34;color&#34;/, 'the options as JSON in the textarea');
      assert.match(edit.body, /<input type="hidden" name="version" value="1">/, 'the form carries the version it was read at');
      const saved = await owner.post('/console/products/NEW-1/edit', {
        _csrf: ownerToken,
        version: '1',
        ...NEW_PRODUCT,
        sku: 'IGNORED',
        name: 'Teapot, large',
        categoryId: '',
        price: '26',
        optionsJson: '',
      });
      const after = await follow(owner, saved);
      assert.match(after.body, /data-notice>Product NEW-1 saved\./);
      assert.match(after.body, /NEW-1 · Teapot, large/);
      assert.equal((await product(t, 'NEW-1'))?.options, null);
      assert.equal(await product(t, 'IGNORED'), undefined, 'the SKU of an edited product is the one in its URL');
      const edits = await auditOf(t, 'product.save', 'product:NEW-1');
      assert.equal(edits.length, 2);
      const last = edits.find((a) => a.before !== null)!;
      assert.deepEqual([last.before.priceCents, last.after.priceCents, last.before.name, last.after.name], [2450, 2600, 'Teapot', 'Teapot, large']);

      const search = await owner.get('/console/products?q=teapot');
      assert.match(textOf(search.body, 'data-sku="NEW-1"')!, /^NEW-1 Teapot, large 26\.00 USD/);
      assert.equal((await owner.get('/console/products/NOPE/edit')).statusCode, 404);
    });

    it('a refused product form comes back with the reasons and what was typed (4xx); nothing written', async () => {
      const before = await tableDigests(t.store);
      // A's price as this test finds it (the import test applies a new one).
      const priceBefore = (await product(t, 'A'))?.price_cents;
      assert.ok(priceBefore !== undefined);
      for (const [fields, status, reason] of [
        [{ ...NEW_PRODUCT, sku: 'BAD-1', price: 'twelve' }, 400, /price/],
        [{ ...NEW_PRODUCT, sku: 'BAD-1', name: '' }, 400, /name/],
        [{ ...NEW_PRODUCT, sku: 'BAD-1', weightGrams: '-3' }, 400, /weightGrams/],
        [{ ...NEW_PRODUCT, sku: 'BAD-1', optionsJson: '{not json' }, 400, /optionsJson must be a JSON object/],
        [{ ...NEW_PRODUCT, sku: 'BAD-1', optionsJson: '[1, 2]' }, 400, /optionsJson must be a JSON object/],
        [{ ...NEW_PRODUCT, sku: 'BAD-1', categoryId: '999' }, 400, /categoryId unknown category/],
        [{ ...NEW_PRODUCT, sku: 'BAD 1' }, 400, /sku/],
        [{ ...NEW_PRODUCT, sku: 'A' }, 409, /product A exists already/],
      ] as const) {
        const r = await owner.post('/console/new-product', { _csrf: ownerToken, ...fields });
        assert.equal(r.statusCode, status, `${JSON.stringify(fields)}: ${r.body.slice(0, 200)}`);
        const error = textOf(r.body, 'id="form-error"', '</div>')!;
        assert.match(error, /^Not saved:/);
        assert.match(error, reason);
        assert.match(r.body, new RegExp(`name="sku"[^>]*value="${fields.sku}"`), 'what was typed comes back');
        if (status === 409) assert.match(r.body, /href="\/console\/products\/A\/edit"/);
      }
      const edit = await owner.post('/console/products/A/edit', { _csrf: ownerToken, name: 'Mug', price: '-1', weightGrams: '350' });
      assert.equal(edit.statusCode, 400);
      assert.match(edit.body, /name="price"[^>]*value="-1"[^>]*aria-invalid="true"|name="price"[^>]*aria-invalid/);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
      assert.equal((await product(t, 'A'))?.price_cents, priceBefore);
    });

    it('warehouses: list, create (audited), edit; a bad one or a code in use is refused with nothing written', async () => {
      const list = await owner.get('/console/warehouses');
      assert.equal(list.statusCode, 200);
      for (const code of ['G007', 'G006', 'US01', 'W9']) assert.ok(textOf(list.body, `data-warehouse="${code}"`), code);
      assert.match(textOf(list.body, 'data-warehouse="W9"')!, /W9 Closed DE · Germany disabled/i);

      const before = await tableDigests(t.store);
      for (const [fields, status, reason] of [
        [{ warehouseCode: 'NL1', name: 'Rotterdam', countryCode: 'XX' }, 400, /countryCode/],
        [{ warehouseCode: 'NL1', name: '', countryCode: 'NL' }, 400, /name/],
        [{ warehouseCode: 'US01', name: 'Again', countryCode: 'US' }, 409, /warehouse US01 exists already/],
      ] as const) {
        const r = await owner.post('/console/warehouses/new', { _csrf: ownerToken, ...fields });
        assert.equal(r.statusCode, status, r.body.slice(0, 300));
        assert.match(textOf(r.body, 'id="form-error"', '</div>')!, reason);
      }
      assert.equal((await wh.post('/console/warehouses/new', { _csrf: whToken, warehouseCode: 'NL1', name: 'Rotterdam', countryCode: 'NL' })).statusCode, 403);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');

      const created = await follow(
        owner,
        await owner.post('/console/warehouses/new', { _csrf: ownerToken, warehouseCode: 'NL1', name: 'Rotterdam', countryCode: 'nl', status: '1' }),
      );
      assert.match(created.body, /data-notice>Warehouse NL1 created\./);
      assert.match(textOf(created.body, 'data-warehouse="NL1"')!, /NL1 Rotterdam NL · Netherlands enabled/i);
      const edited = await follow(
        owner,
        await owner.post('/console/warehouses/NL1/edit', {
          _csrf: ownerToken,
          version: '1',
          name: 'Rotterdam port',
          countryCode: 'NL',
          countryName: '',
          status: '0',
        }),
      );
      assert.match(textOf(edited.body, 'data-warehouse="NL1"')!, /NL1 Rotterdam port NL · Netherlands disabled/i);
      const audits = await auditOf(t, 'warehouse.save', 'warehouse:NL1');
      assert.equal(audits.length, 2);
      assert.deepEqual(audits.map((a) => a.after.status).sort(), [0, 1]);
      assert.equal((await owner.get('/console/warehouses/NOPE/edit')).statusCode, 404);
    });

    it('channels: create with carriers and a tracking URL template (audited), edit; bad ones refused, nothing written; the operator API takes the same fields', async () => {
      const fields = {
        channelCode: 'NLX',
        name: 'Netherlands express',
        channelType: 'Express',
        warehouseCodes: ['G007', 'US01'],
        countries: 'NL, be',
        baseFee: '7.00',
        perKgFee: '2.5',
        deliveryDaysMin: '2',
        deliveryDaysMax: '4',
        carrierList: 'PostNL\n DHL \n\npostnl',
        trackingUrlTemplate: 'https://track.example/{trackingNo}?lang=en',
      };
      const before = await tableDigests(t.store);
      for (const [change, status, reason] of [
        [{ trackingUrlTemplate: 'https://track.example/' }, 400, /trackingUrlTemplate must contain \{trackingNo\}/],
        [{ trackingUrlTemplate: 'http://track.example/{trackingNo}' }, 400, /trackingUrlTemplate must be an absolute https:\/\/ URL/],
        [{ warehouseCodes: [] }, 400, /warehouseCodes/],
        [{ deliveryDaysMin: '5' }, 400, /deliveryDaysMax must not be less than deliveryDaysMin/],
        [{ channelType: 'Teleport' }, 400, /channelType must be one of/],
        [{ carrierList: Array.from({ length: 21 }, (_, i) => `C${i}`).join('\n') }, 400, /carrierList/],
        [{ channelCode: 'STD' }, 409, /channel STD exists already/],
      ] as const) {
        const r = await owner.post('/console/channels/new', { _csrf: ownerToken, ...fields, ...change });
        assert.equal(r.statusCode, status, `${JSON.stringify(change)}: ${r.body.slice(0, 300)}`);
        assert.match(textOf(r.body, 'id="form-error"', '</div>')!, reason);
      }
      assert.equal((await support.post('/console/channels/new', { _csrf: supportToken, ...fields })).statusCode, 403);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');

      const list = await follow(owner, await owner.post('/console/channels/new', { _csrf: ownerToken, ...fields }));
      assert.match(list.body, /data-notice>Channel NLX created\./);
      assert.match(
        textOf(list.body, 'data-channel="NLX"')!,
        /NLX Netherlands express Express G007, US01 NL, BE PostNL, DHL https:\/\/track\.example\/\{trackingNo\}\?lang=en/,
      );
      const api = (await t.admin('GET', '/admin/v1/channels')).body.data.list.find((c: any) => c.channelCode === 'NLX');
      assert.deepEqual([api.carriers, api.trackingUrlTemplate], [['PostNL', 'DHL'], 'https://track.example/{trackingNo}?lang=en']);
      const [audit] = await auditOf(t, 'channel.save', 'channel:NLX');
      assert.equal(audit.after.carriers, 'PostNL,DHL');

      const edit = await owner.get('/console/channels/NLX/edit');
      assert.match(edit.body, /<textarea id="carrierList"[^>]*>PostNL\nDHL<\/textarea>/);
      assert.match(edit.body, /value="G007" checked/);
      const edited = await follow(
        owner,
        await owner.post('/console/channels/NLX/edit', {
          _csrf: ownerToken,
          ...fields,
          version: '1',
          warehouseCodes: 'G006',
          carrierList: 'UPS',
          trackingUrlTemplate: '',
        }),
      );
      assert.match(textOf(edited.body, 'data-channel="NLX"')!, /NLX Netherlands express Express G006 NL, BE UPS —/);

      // The operator API: the same fields, the same rules; omitted, a channel keeps what it has.
      const bad = await t.admin('POST', '/admin/v1/channels', { ...ORDER_CATALOGUE.channels[0], trackingUrlTemplate: 'ftp://x/{trackingNo}' });
      assert.equal(bad.status, 400, bad.raw);
      assert.equal(bad.body.errors?.[0]?.field ?? bad.body.data?.errors?.[0]?.field ?? 'trackingUrlTemplate', 'trackingUrlTemplate');
      const set = await t.admin('POST', '/admin/v1/channels', {
        ...ORDER_CATALOGUE.channels[0],
        carriers: ['UPS', 'DHL'],
        trackingUrlTemplate: 'https://track.example/{trackingNo}',
      });
      assert.equal(set.status, 200, set.raw);
      assert.deepEqual(set.body.data.carriers, ['UPS', 'DHL']);
      const kept = await t.admin('POST', '/admin/v1/channels', { ...ORDER_CATALOGUE.channels[0], name: 'Standard shipping' });
      assert.deepEqual([kept.body.data.carriers, kept.body.data.trackingUrlTemplate], [['UPS', 'DHL'], 'https://track.example/{trackingNo}']);
    });

    it('shipping picks a carrier of the channel (a select, not the channel code); another is refused with nothing written; the console and manager order pages link the tracking number', async () => {
      // Channel STD with carriers and a tracking URL template (as the channels test above leaves it).
      const std = { ...ORDER_CATALOGUE.channels[0], carriers: ['UPS', 'DHL'], trackingUrlTemplate: 'https://track.example/{trackingNo}' };
      assert.equal((await t.admin('POST', '/admin/v1/channels', std)).status, 200);
      const shop = await newMerchant(t, 'Tracking shop');
      const o = await placeOrder(t, shop.token, [{ sku: 'C', quantity: 1 }], { channelCode: 'STD' });
      const split = o.splitOrders[0];
      assert.equal(split.channelCode, 'STD');
      const page = await wh.get(`/console/orders/${o.id}`);
      assert.match(page.body, new RegExp(`<select id="carrier-${split.id}" name="carrier" required>`));
      assert.match(page.body, /<option value="UPS">UPS<\/option>\s*<option value="DHL">DHL<\/option>/);
      assert.ok(!/name="carrier"[^>]*value="STD"/.test(page.body), 'the channel code is not prefilled as the carrier');

      const before = await tableDigests(t.store);
      const refused = await wh.post(`/console/splits/${split.id}/ship`, { _csrf: whToken, carrier: 'FedEx', trackingCode: 'TRK 1/2' });
      assert.equal(refused.statusCode, 400);
      assert.match(textOf(refused.body, `id="ship-error-${split.id}"`, '</p>')!, /carrier must be one of the carriers of channel STD: UPS, DHL/);
      assert.match(refused.body, /name="trackingCode" required maxlength="64" value="TRK 1\/2"/);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');

      const shipped = await wh.post(`/console/splits/${split.id}/ship`, { _csrf: whToken, carrier: 'dhl', trackingCode: 'TRK 1/2' });
      const after = await follow(wh, shipped);
      assert.match(
        after.body,
        /DHL tracking <a href="https:\/\/track\.example\/TRK%201%2F2" data-tracking rel="noopener noreferrer"><strong>TRK 1\/2<\/strong><\/a>/,
      );
      const [audit] = (await auditRows(t)).filter((a) => a.action === 'split_order.ship' && a.target === `split_order:${split.id}`);
      assert.equal(audit.after.carrier, 'DHL', 'saved as the channel spells it');

      const viewer = await member(t, shop.merchantId, 'viewer@tracking.example', 'viewer');
      const managerPage = await viewer.get(`/manager/orders/${o.id}`);
      assert.equal(managerPage.statusCode, 200);
      assert.match(managerPage.body, /<a href="https:\/\/track\.example\/TRK%201%2F2" data-tracking/);

      // A channel without carriers: a text field, empty, and no link without a template.
      const other = await placeOrder(t, shop.token, [{ sku: 'A', quantity: 1 }]);
      const s2 = other.splitOrders[0];
      assert.notEqual(s2.channelCode, 'STD');
      const p2 = await owner.get(`/console/orders/${other.id}`);
      assert.match(p2.body, new RegExp(`<input id="carrier-${s2.id}" name="carrier" required maxlength="64" value=""`));
      assert.match(p2.body, new RegExp(`href="/console/channels/${s2.channelCode}/edit">list them<`));
      await follow(owner, await owner.post(`/console/splits/${s2.id}/ship`, { _csrf: ownerToken, carrier: 'Own van', trackingCode: 'V1' }));
      const p3 = await owner.get(`/console/orders/${other.id}`);
      assert.match(p3.body, /Own van tracking <strong data-tracking>V1<\/strong>/);
    });

    it('import: CSV templates with the columns and one example row, after a UTF-8 byte order mark', async () => {
      const products = await wh.get('/console/import/template.csv?kind=products');
      assert.equal(products.statusCode, 200);
      assert.match(products.headers['content-type'] as string, /^text\/csv/);
      assert.match(products.headers['content-disposition'] as string, /stockist-products-template\.csv/);
      assert.equal(
        products.body,
        '\uFEFFsku,name,price,weightGrams,categoryId,imageUrl\r\nEXAMPLE-SKU-1,Example product,12.50,250,,https://img.example/example-sku-1.jpg\r\n',
      );
      const stocks = await wh.get('/console/import/template.csv?kind=stocks');
      assert.equal(stocks.body, '\uFEFFsku,warehouseCode,qty\r\nEXAMPLE-SKU-1,WH-EXAMPLE,100\r\n');
      assert.equal((await wh.get('/console/import/template.csv?kind=orders')).statusCode, 400);
      assert.equal((await support.get('/console/import/template.csv')).statusCode, 403);
    });

    it('import dry run: shows new products, changed fields and stock levels and every bad row, writes nothing; applying imports it (audited)', async () => {
      const before = await tableDigests(t.store);
      const withProblems = 'sku,name,price,weightGrams\nA,Mug,10.00,350\nDRY-1,Dry teapot,5,100\nDRY-2,Broken,abc,1\n';
      // Products are the owner's to import (catalog:write); the warehouse role imports stock levels only (console-import-roles.test.ts).
      const refusedPreview = await follow(owner, await owner.post('/console/import/preview', { _csrf: ownerToken, fileName: 'p.csv', fileText: withProblems }));
      assert.match(refusedPreview.body, /Nothing has been written yet\. 3 rows read\./);
      assert.match(textOf(refusedPreview.body, 'id="preview-problems"', '</ul>')!, /p\.csv line 4: price/);
      assert.ok(!refusedPreview.body.includes('data-action="apply-import"'), 'no apply button while a row is bad');
      assert.deepEqual(await tableDigests(t.store), before, 'a dry run writes nothing');

      const good = 'sku,name,price,weightGrams,imageUrl\nA,Mug,10.00,350,https://img/a.jpg\nB,Plate,4.50,500,\nDRY-1,Dry teapot,5,100,\n';
      const posted = await owner.post('/console/import/preview', { _csrf: ownerToken, fileName: 'p.csv', fileText: good });
      assert.match(String(posted.headers.location), /^\/console\/import\/preview\/[A-Za-z0-9]{24}$/);
      const preview = await follow(owner, posted);
      assert.match(textOf(preview.body, 'data-section="products"', '</div>')!, /1 new · 1 changed · 1 unchanged/);
      assert.match(textOf(preview.body, 'data-key="A"')!, /A changed price: 9\.32 → 10\.00/);
      assert.match(textOf(preview.body, 'data-key="DRY-1"')!, /DRY-1 new name: Dry teapot price: 5\.00 weightGrams: 100/);
      assert.equal(textOf(preview.body, 'data-key="B"'), null, 'an unchanged row is counted, not listed');
      assert.deepEqual(await tableDigests(t.store), before, 'still nothing written');
      // Someone else's preview is not found.
      assert.equal((await wh.get(String(posted.headers.location))).statusCode, 404);

      const stocks = await follow(
        wh,
        await wh.post('/console/import/preview', { _csrf: whToken, fileName: 's.csv', fileText: 'sku,warehouseCode,qty\nA,G007,12\nB,US01,3\n' }),
      );
      assert.match(textOf(stocks.body, 'data-key="A @ G007"')!, /qty: 10 → 12/);
      assert.match(textOf(stocks.body, 'data-key="B @ US01"')!, /new qty: 3/);
      assert.deepEqual(await tableDigests(t.store), before, 'still nothing written');

      assert.equal((await support.post(`${posted.headers.location}/apply`, { _csrf: supportToken })).statusCode, 403);
      const applied = await owner.post(`${posted.headers.location}/apply`, { _csrf: ownerToken });
      assert.match(String(applied.headers.location), /^\/console\/import\/[A-Za-z0-9]{24}$/);
      const outcome = await importOutcome(owner, String(applied.headers.location));
      assert.equal(outcome.state, 'done', outcome.body);
      assert.equal((await product(t, 'A'))?.price_cents, 1000);
      assert.equal((await product(t, 'DRY-1'))?.name, 'Dry teapot');
      assert.equal(await stockQty(t, 'A', 'G007'), 10, 'the stock preview was not applied');
      const imports = (await auditRows(t)).filter((a) => a.action === 'catalog.import' && a.actorKind === 'staff');
      assert.equal(imports.length, 1);
      assert.equal(imports[0].after.products, 3);
      // A preview is applied once.
      assert.equal((await owner.post(`${posted.headers.location}/apply`, { _csrf: ownerToken })).statusCode, 404);
    });

    it('import dry run of a JSON catalogue document: warehouses, channels (with carriers) and stock changes', async () => {
      const doc = {
        warehouses: [{ warehouseCode: 'DRY-WH', name: 'Dry', countryCode: 'FR' }],
        stocks: [{ sku: 'C', warehouseCode: 'G007', qty: 500 }],
        channels: [{ ...ORDER_CATALOGUE.channels[1], carriers: ['Chronopost'] }],
      };
      // C at G007 holds 999 (as the order of the shipping test above leaves it).
      assert.equal((await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'C', warehouseCode: 'G007', qty: 999 }] })).status, 200);
      const before = await tableDigests(t.store);
      const preview = await follow(
        owner,
        await owner.post('/console/import/preview', { _csrf: ownerToken, fileName: 'doc.json', fileText: JSON.stringify(doc) }),
      );
      assert.match(textOf(preview.body, 'data-key="DRY-WH"')!, /new name: Dry countryCode: FR countryName: France status: 1/);
      assert.match(textOf(preview.body, 'data-key="C @ G007"')!, /qty: 999 → 500/);
      assert.match(textOf(preview.body, 'data-key="EXP"')!, /EXP changed carriers: — → Chronopost/);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
    });
  });
}
