import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { CHART_DAYS } from '../../src/services/dashboard.service.ts';
import { CATALOG_PAGE_SIZE } from '../../src/services/stock-history.service.ts';
import { buildTestApp, DIALECTS, PG_SKIP, loadCatalogue, newMerchant, stockQty, tableDigests, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { PASSWORD, browser, follow, signedIn, staff, importOutcome } from './console-client.ts';
import { enableStaff, setStaffRole } from '../../src/services/staff.service.ts';

/**
 * Issue 16, the console's catalogue, stock, import, staff and audit pages and the completed
 * dashboard, driven as a browser drives them (form posts with the session cookie and its token).
 */

type Audit = { id: string; action: string; actorKind: string; actorId: string; target: string; before: any; after: any };
const auditRows = async (t: TestApp) => (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list as Audit[];

/** The text of an element found by a unique attribute (enough for asserting what a page shows). */
function rowOf(html: string, attribute: string): string | null {
  const at = html.indexOf(attribute);
  if (at < 0) return null;
  const start = html.indexOf('>', at) + 1;
  const end = html.indexOf('</tr>', start);
  return html
    .slice(start, end)
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const ledgerCount = async (t: TestApp, sku: string) =>
  Number(
    (
      await t.store.db
        .selectFrom('stock_ledger')
        .innerJoin('products', 'products.id', 'stock_ledger.product_id')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('products.sku', '=', sku)
        .executeTakeFirstOrThrow()
    ).n,
  );

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`console catalogue, stock, import, staff and audit pages (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    /**
     * What every test here starts from, on an app and a database of its own (closed when the test
     * ends), so any one test runs alone.
     */
    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect, { REFUND_REVIEW: 'manual', LOW_STOCK_THRESHOLD: '6' });
      await loadCatalogue(t, ORDER_CATALOGUE);
      await staff(t, 'owner@example.com', 'owner');
      await staff(t, 'wh@example.com', 'warehouse');
      await staff(t, 'support@example.com', 'support');
      const owner = await signedIn(t, 'owner@example.com');
      const ownerToken = await owner.csrf();
      return { t, owner, ownerToken };
    };

    it('dashboard: orders and refunds per day for 30 days (chart data and table), the low-stock rows, a disabled webhook endpoint, the refund worker', async (ctx) => {
      const { t, owner } = await build(ctx);
      const m = await newMerchant(t, 'Dashboard shop');
      const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 2 }]);
      await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      const refund = await t.merchant(m.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, { skuCode: 'C', quantity: 1, refundReason: 'Other' });
      assert.equal(refund.status, 200, refund.raw);
      const hook = await t.merchant(m.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/stockist', events: ['refund.succeeded'] });
      assert.equal(hook.status, 200, hook.raw);
      const disabled = await t.admin('PATCH', `/admin/v1/webhooks/${hook.body.data.id}`, { status: 'disabled', reason: 'receiver gone' });
      assert.equal(disabled.status, 200, disabled.raw);

      const r = await owner.get('/console');
      assert.equal(r.statusCode, 200);
      const chart = JSON.parse(/data-chart="([^"]+)"/.exec(r.body)![1].replace(/&quot;|&#34;/g, '"')) as {
        days: number[];
        orders: number[];
        refunds: number[];
      };
      assert.equal(chart.days.length, CHART_DAYS);
      assert.equal(chart.days.at(-1), Math.floor(Date.now() / 86_400_000) * 86_400, 'the last day is today (UTC)');
      assert.deepEqual([chart.orders.at(-1), chart.refunds.at(-1)], [2, 1], 'today: two orders, one refund');
      assert.equal(
        chart.orders.slice(0, -1).reduce((a, b) => a + b, 0),
        0,
        'nothing on the days before',
      );
      const today = new Date().toISOString().slice(0, 10);
      assert.match(rowOf(r.body, `data-day="${today}"`)!, new RegExp(`^${today} 2 1$`));
      assert.match(r.body, /src="\/console\/assets\/uplot\.min\.js"/);
      // LOW_STOCK_THRESHOLD=6: A in US01 (5) is low, B in G006 (7) is not.
      assert.match(rowOf(r.body, 'data-low-stock="A@US01"')!, /A Mug US01 5/);
      assert.equal(rowOf(r.body, 'data-low-stock="B@G006"'), null);
      assert.match(rowOf(r.body, `data-endpoint="${hook.body.data.id}"`)!, /disabled ?: receiver gone/);
      assert.match(r.body, /data-stat="review-mode">manual</);
      assert.match(r.body, /data-stat="pending">1</);

      const asset = await owner.get('/console/assets/console-chart.js');
      assert.equal(asset.statusCode, 200);
      assert.match(asset.body, /new uPlot\(/);
      assert.equal((await owner.get('/console/assets/uplot.min.js')).statusCode, 200);
    });

    it('catalogue: search by name or SKU shows the stock per warehouse; LIKE wildcards are text', async (ctx) => {
      const { t, owner } = await build(ctx);
      const byName = await owner.get('/console/products?q=mug');
      assert.equal(byName.statusCode, 200);
      assert.match(rowOf(byName.body, 'data-sku="A"')!, /^A Mug 9\.32 USD G007: 10, US01: 5, W9: 100 115$/);
      assert.equal(rowOf(byName.body, 'data-sku="B"'), null);
      const all = await owner.get('/console/products');
      for (const sku of ['A', 'B', 'C', 'Z']) assert.ok(rowOf(all.body, `data-sku="${sku}"`), sku);
      const wildcard = await owner.get('/console/products?q=%25');
      assert.match(wildcard.body, /data-empty="products"/);
      const warehouse = await signedIn(t, 'wh@example.com');
      assert.equal((await warehouse.get('/console/products?q=B')).statusCode, 200, 'the warehouse role works the stock');
      const support = await signedIn(t, 'support@example.com');
      assert.equal((await support.get('/console/products')).statusCode, 403);
    });

    it('adjust with a reason: one ledger row, one audit row with the reason; the history shows it', async (ctx) => {
      const { t } = await build(ctx);
      const wh = await signedIn(t, 'wh@example.com');
      const token = await wh.csrf();
      const ledgerBefore = await ledgerCount(t, 'B');
      const r = await follow(
        wh,
        await wh.post('/console/products/B/adjust', { _csrf: token, warehouseCode: 'G006', delta: '-2', reason: 'two broken in the count' }),
      );
      assert.equal(r.statusCode, 200, r.body);
      assert.match(r.body, /Adjusted B in G006 by -2: now 5\./);
      assert.equal(await stockQty(t, 'B', 'G006'), 5);
      assert.equal(await ledgerCount(t, 'B'), ledgerBefore + 1);
      const [entry] = await auditRows(t);
      assert.equal(entry.action, 'stock.adjust');
      assert.equal(entry.actorKind, 'staff');
      assert.equal(entry.after.reason, 'two broken in the count');
      assert.equal(entry.after['B@G006'], 5);
      assert.equal(entry.before['B@G006'], 7);
      const page = await wh.get('/console/products/B');
      const newest = /<tr data-ledger="\d+">[\s\S]*?<\/tr>/
        .exec(page.body)![0]
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ');
      assert.match(newest, /G006 -2 5 adjustment · two broken in the count/, 'the history shows the reason typed (issue 29, item 11)');
      assert.match(rowOf(page.body, 'data-warehouse="G006"')!, /G006 Yiwu 5/);
    });

    it('takes +20 as the change, keeps the reason on the ledger row, and shows it in the history (issue 29, item 11)', async (ctx) => {
      const { t } = await build(ctx);
      // B in G006 holds 5 (7 in the catalogue, 2 found broken).
      assert.equal((await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'B', warehouseCode: 'G006', delta: -2 }] })).status, 200);
      const wh = await signedIn(t, 'wh@example.com');
      const r = await follow(
        wh,
        await wh.post('/console/products/B/adjust', {
          _csrf: await wh.csrf(),
          warehouseCode: 'G006',
          delta: ' +20 ',
          reason: 'found in the back <room>',
        }),
      );
      assert.equal(r.statusCode, 200, r.body);
      assert.match(r.body, /Adjusted B in G006 by \+20: now 25\./);
      const [row] = await t.store.db
        .selectFrom('stock_ledger')
        .innerJoin('products', 'products.id', 'stock_ledger.product_id')
        .select(['stock_ledger.delta', 'stock_ledger.reason', 'stock_ledger.kind'])
        .where('products.sku', '=', 'B')
        .orderBy('stock_ledger.id', 'desc')
        .limit(1)
        .execute();
      assert.deepEqual(row, { delta: 20, reason: 'found in the back <room>', kind: 'restock' });
      const page = await wh.get('/console/products/B');
      assert.match(page.body, /<q data-reason>found in the back &lt;room&gt;<\/q>/, 'escaped like any typed text');
      // Changes made elsewhere (an order, the operator API) carry no reason.
      const api = await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'B', warehouseCode: 'G006', delta: -20 }] });
      assert.equal(api.status, 200, api.raw);
      const after = await wh.get('/console/products/B');
      assert.doesNotMatch(/<tr data-ledger="\d+">[\s\S]*?<\/tr>/.exec(after.body)![0], /data-reason/);
    });

    it('a refused adjustment is a 4xx page with the form kept, and writes nothing', async (ctx) => {
      const { t, owner } = await build(ctx);
      const token = await owner.csrf();
      const cases: [Record<string, string>, number, RegExp][] = [
        [{ warehouseCode: 'G006', delta: '-1000', reason: 'count' }, 409, /below zero/],
        [{ warehouseCode: 'NOPE', delta: '1', reason: 'count' }, 400, /unknown warehouse NOPE/],
        [{ warehouseCode: 'G006', delta: '0', reason: 'count' }, 400, /a change of 0 changes nothing/],
        [{ warehouseCode: 'G006', delta: '1', reason: '' }, 400, /form was not filled in/],
        [{ warehouseCode: 'G006', delta: '1', reason: '   ' }, 400, /form was not filled in/],
        [{ warehouseCode: 'G006', delta: 'ten', reason: 'count' }, 400, /“ten” is not a change of stock: give a whole number such as \+20 or -5/],
        [{ warehouseCode: 'G006', delta: '+', reason: 'count' }, 400, /“\+” is not a change of stock/],
        [{ warehouseCode: 'G006', delta: '2.5', reason: 'count' }, 400, /“2\.5” is not a change of stock/],
        [{ warehouseCode: 'G006', delta: 'abc', reason: 'count' }, 400, /“abc” is not a change of stock/],
        [{ warehouseCode: 'G006', delta: '', reason: 'count' }, 400, /the change is missing/],
        [{ warehouseCode: 'G006', delta: '1000000001', reason: 'count' }, 400, /at most 1000000000 either way/],
      ];
      for (const [fields, status, message] of cases) {
        const before = await tableDigests(t.store);
        const r = await owner.post('/console/products/B/adjust', { _csrf: token, ...fields });
        assert.equal(r.statusCode, status, `${JSON.stringify(fields)}: ${r.body.slice(0, 300)}`);
        assert.match(r.body, message);
        if (status !== 400 || !/form was not filled in/.test(message.source))
          assert.match(
            r.body,
            new RegExp(`id="delta" name="delta" required maxlength="32" value="${fields.delta.replace(/[+.]/g, '\\$&')}"`),
            'the form keeps what was typed',
          );
        assert.deepEqual(await tableDigests(t.store), before, `${JSON.stringify(fields)}: nothing written`);
      }
      const unknown = await owner.post('/console/products/NOSUCH/adjust', { _csrf: token, warehouseCode: 'G006', delta: '1', reason: 'x' });
      assert.equal(unknown.statusCode, 404);
      assert.equal((await owner.get('/console/products/NOSUCH')).statusCode, 404);
      assert.equal((await owner.get('/console/products/A?before=x')).statusCode, 400);
    });

    it('the history walks the ledger newest first in keyset pages: every row once, none skipped', async (ctx) => {
      const { t, owner } = await build(ctx);
      const items = Array.from({ length: CATALOG_PAGE_SIZE + 7 }, (_, i) => ({ sku: 'Z', warehouseCode: 'G007', delta: i + 1 }));
      const r = await t.admin('POST', '/admin/v1/stocks/adjust', { items });
      assert.equal(r.status, 200, r.raw);
      const total = await ledgerCount(t, 'Z');
      const seen: number[] = [];
      let url: string | null = '/console/products/Z';
      let pages = 0;
      while (url) {
        const page = await owner.get(url);
        assert.equal(page.statusCode, 200);
        const ids = [...page.body.matchAll(/data-ledger="(\d+)"/g)].map((m) => Number(m[1]));
        assert.ok(ids.length <= CATALOG_PAGE_SIZE);
        seen.push(...ids);
        pages++;
        const older = /id="older" href="([^"]+)"/.exec(page.body);
        url = older ? older[1].replace(/&amp;/g, '&') : null;
      }
      assert.equal(pages, 2);
      assert.equal(seen.length, total);
      assert.deepEqual(
        seen,
        [...seen].sort((a, b) => b - a),
        'newest first',
      );
      assert.equal(new Set(seen).size, seen.length);
    });

    it('import: one bad row is listed with its line and nothing is written; the fixed file imports and is audited', async (ctx) => {
      const { t } = await build(ctx);
      const wh = await signedIn(t, 'wh@example.com');
      const token = await wh.csrf();
      const bad = 'sku,warehouseCode,qty\nA,G007,11\nA,NOPE,3\nC,US01,4\n';
      const before = await tableDigests(t.store);
      const started = await wh.post('/console/import', { _csrf: token, fileName: 'stock.csv', fileText: bad });
      assert.equal(started.statusCode, 303, /<p class="error"[^<]*<\/p>/.exec(started.body)?.[0] ?? started.body);
      const refused = await importOutcome(wh, started.headers.location as string);
      assert.equal(refused.state, 'refused');
      assert.match(rowOf(refused.body, 'data-line="3"')!, /^3 warehouseCode unknown warehouse NOPE$/);
      assert.equal([...refused.body.matchAll(/data-line=/g)].length, 1, 'only the bad row is listed');
      assert.deepEqual(await tableDigests(t.store), before, 'a refused import writes nothing');

      const fixed = await wh.post('/console/import', { _csrf: token, fileName: 'stock.csv', fileText: bad.replace('NOPE', 'G006') });
      const done = await importOutcome(wh, fixed.headers.location as string);
      assert.equal(done.state, 'done', done.body);
      assert.match(done.body.replace(/\s+/g, ' '), /Imported 3 rows: 3 stocks; <span data-ledger-rows>3<\/span> stock changes/);
      assert.deepEqual([await stockQty(t, 'A', 'G007'), await stockQty(t, 'A', 'G006'), await stockQty(t, 'C', 'US01')], [11, 3, 4]);
      const [entry] = await auditRows(t);
      assert.equal(entry.action, 'catalog.import');
      assert.equal(entry.after.fileNames, 'stock.csv');
      assert.equal(entry.after.stocks, 3);

      const other = await signedIn(t, 'owner@example.com');
      assert.equal((await other.get(fixed.headers.location as string)).statusCode, 404, 'an import page is its starter’s only');
    });

    it('import: a JSON document and a products CSV import too; bad uploads are refused with 4xx and write nothing', async (ctx) => {
      const { t, owner } = await build(ctx);
      const token = await owner.csrf();
      const json = JSON.stringify({ products: [{ sku: 'J1', name: 'Jug', price: 12, weightGrams: 900 }] });
      const r = await owner.post('/console/import', { _csrf: token, fileName: 'catalog.json', fileText: json });
      assert.equal((await importOutcome(owner, r.headers.location as string)).state, 'done');
      const csv = await owner.post('/console/import', {
        _csrf: token,
        fileName: 'products.csv',
        fileText: 'sku,name,price,weightGrams\nP1,Pan,20.00,1200\nP2,Pot,abc,1000\n',
      });
      const refused = await importOutcome(owner, csv.headers.location as string);
      assert.equal(refused.state, 'refused');
      assert.match(rowOf(refused.body, 'data-line="3"')!, /^3 price /);
      const broken = await owner.post('/console/import', { _csrf: token, fileName: 'catalog.json', fileText: '{"products": [' });
      assert.match((await importOutcome(owner, broken.headers.location as string)).body, /not valid JSON/);

      for (const fields of [
        { fileName: 'stock.txt', fileText: 'sku,warehouseCode,qty\nA,G007,1\n' },
        { fileName: '../etc/stock.csv', fileText: 'sku,warehouseCode,qty\nA,G007,1\n' },
        { fileName: 'stock.csv', fileText: '' },
        { fileName: '', fileText: 'sku,warehouseCode,qty\nA,G007,1\n' },
      ]) {
        const before = await tableDigests(t.store);
        const bad = await owner.post('/console/import', { _csrf: token, ...fields });
        assert.equal(bad.statusCode, 400, JSON.stringify(fields));
        assert.match(String(bad.headers['content-type']), /^text\/html/);
        assert.deepEqual(await tableDigests(t.store), before);
      }
      // Larger than the body limit (BODY_LIMIT_BYTES): refused before it is read.
      const huge = await owner.post('/console/import', { _csrf: token, fileName: 'stock.csv', fileText: 'x'.repeat(t.config.bodyLimitBytes + 1) });
      assert.equal(huge.statusCode, 413);
      const support = await signedIn(t, 'support@example.com');
      assert.equal((await support.post('/console/import', { _csrf: await support.csrf(), fileName: 'a.csv', fileText: 'x' })).statusCode, 403);
    });

    it('import: a CSV syntax error (a stray quote) is a bad row with its line in the dry run and the import, not a failure (issue 44, 1)', async (ctx) => {
      const { t, owner, ownerToken } = await build(ctx);
      const text = ['sku,name,price,weightGrams', 'R1,Ruler,1.00,10', 'S4-RUL-1,Steel ruler 12" long,4.00,100', 'R2,Tape,abc,5', 'R3,Pen,2,3'].join('\n');
      const before = await tableDigests(t.store);
      const posted = await owner.post('/console/import/preview', { _csrf: ownerToken, fileName: 'rulers.csv', fileText: text });
      assert.equal(posted.statusCode, 303, posted.body.slice(0, 300));
      const preview = await follow(owner, posted);
      assert.equal(preview.statusCode, 200);
      const problems = /<ul id="preview-problems">([\s\S]*?)<\/ul>/
        .exec(preview.body)![1]
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ');
      assert.match(problems, /rulers\.csv line 3: name has a quote \(&quot;\) inside a field that does not start with one/);
      assert.match(problems, /rulers\.csv line 4: price /);
      assert.ok(!preview.body.includes('data-action="apply-import"'), 'no apply button while a row is bad');
      assert.deepEqual(await tableDigests(t.store), before, 'a dry run writes nothing');

      const started = await owner.post('/console/import', { _csrf: ownerToken, fileName: 'rulers.csv', fileText: text });
      const refused = await importOutcome(owner, started.headers.location as string);
      assert.equal(refused.state, 'refused', refused.body);
      assert.match(rowOf(refused.body, 'data-line="3"')!, /^3 name has a quote/);
      assert.match(rowOf(refused.body, 'data-line="4"')!, /^4 price /);
      assert.equal([...refused.body.matchAll(/data-line=/g)].length, 2);
      // In the header: the file's kind cannot be told; a bad row of line 1.
      const header = await owner.post('/console/import', { _csrf: ownerToken, fileName: 'h.csv', fileText: 'sku,na"me,price,weightGrams\nR1,Ruler,1,1\n' });
      const headerOutcome = await importOutcome(owner, header.headers.location as string);
      assert.equal(headerOutcome.state, 'refused', headerOutcome.body);
      assert.match(rowOf(headerOutcome.body, 'data-line="1"')!, /^1 – has a quote/);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
    });

    it('a product’s imageUrl other than an absolute http(s) URL is refused by the product form and is a bad row of an import (issue 44, 13)', async (ctx) => {
      const { t, owner, ownerToken } = await build(ctx);
      const before = await tableDigests(t.store);
      const fields = {
        sku: 'JS-1',
        name: 'Trap',
        categoryId: '',
        price: '1',
        weightGrams: '1',
        imageUrl: 'javascript:alert(document.cookie)',
        optionsJson: '',
      };
      const form = await owner.post('/console/new-product', { _csrf: ownerToken, ...fields });
      assert.equal(form.statusCode, 400, form.body.slice(0, 300));
      assert.match(form.body, /id="imageUrl"[^>]*aria-invalid="true"/);
      assert.match(form.body, /must be an absolute http:\/\/ or https:\/\/ URL/);
      const edit = await owner.post('/console/products/A/edit', { _csrf: ownerToken, ...fields, sku: 'A' });
      assert.equal(edit.statusCode, 400, edit.body.slice(0, 300));
      const csv = 'sku,name,price,weightGrams,imageUrl\nOK-1,Fine,1,1,https://img.example/ok.jpg\nJS-1,Trap,1,1,javascript:alert(1)\n';
      const preview = await follow(owner, await owner.post('/console/import/preview', { _csrf: ownerToken, fileName: 'p.csv', fileText: csv }));
      assert.match(preview.body, /p\.csv line 3: <code>imageUrl<\/code> must be an absolute http:\/\/ or https:\/\/ URL/);
      const started = await owner.post('/console/import', { _csrf: ownerToken, fileName: 'p.csv', fileText: csv });
      const outcome = await importOutcome(owner, started.headers.location as string);
      assert.equal(outcome.state, 'refused');
      assert.match(rowOf(outcome.body, 'data-line="3"')!, /^3 imageUrl must be an absolute http/);
      const json = JSON.stringify({ products: [{ sku: 'JS-1', name: 'Trap', price: 1, weightGrams: 1, imageUrl: 'javascript:alert(1)' }] });
      const doc = await importOutcome(
        owner,
        (await owner.post('/console/import', { _csrf: ownerToken, fileName: 'c.json', fileText: json })).headers.location as string,
      );
      assert.equal(doc.state, 'refused');
      assert.match(doc.body, /products\[0\]\.imageUrl/);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
    });

    it('staff: create shows the one-time password once; disable, enable, a reset link and role change work and are audited', async (ctx) => {
      const { t, owner } = await build(ctx);
      const token = await owner.csrf();
      const created = await follow(owner, await owner.post('/console/staff', { _csrf: token, email: 'New.Hire@example.com', role: 'support' }));
      assert.equal(created.statusCode, 200, created.body);
      const password = /data-password>([A-Za-z0-9]+)</.exec(created.body)![1];
      assert.equal(password.length, 20);
      assert.ok(!(await owner.get('/console/staff')).body.includes(password), 'shown once, never again');
      const hire = browser(t);
      assert.equal((await hire.post('/console/sign-in', { email: 'new.hire@example.com', password })).statusCode, 303);
      const id = /action="\/console\/staff\/(\d+)\/role"[\s\S]*?/.exec(
        (await owner.get('/console/staff')).body.slice((await owner.get('/console/staff')).body.indexOf('data-staff="new.hire@example.com"')),
      )![1];

      const role = await follow(owner, await owner.post(`/console/staff/${id}/role`, { _csrf: token, role: 'warehouse' }));
      assert.equal(role.statusCode, 200);
      assert.match(rowOf(role.body, 'data-staff="new.hire@example.com"')!, /warehouse Active/);
      assert.equal((await hire.get('/console/products')).statusCode, 200, 'the new role applies from the next request');

      const disable = await follow(owner, await owner.post(`/console/staff/${id}/disable`, { _csrf: token }));
      assert.match(disable.body, /Disabled New\.Hire@example\.com; 1 session ended\./);
      assert.equal((await hire.get('/console')).statusCode, 303, 'signed out at once');
      assert.equal((await browser(t).post('/console/sign-in', { email: 'new.hire@example.com', password })).statusCode, 401);
      await owner.post(`/console/staff/${id}/enable`, { _csrf: token });
      const reset = await follow(owner, await owner.post(`/console/staff/${id}/reset-password`, { _csrf: token }));
      const link = new URL(/data-reset-url>([^<]+)</.exec(reset.body)![1]).pathname;
      const fresh = 'a fresh hire passphrase';
      assert.equal((await browser(t).post(link, { password: fresh, confirm: fresh })).statusCode, 303);
      assert.equal((await browser(t).post('/console/sign-in', { email: 'new.hire@example.com', password })).statusCode, 401, 'the old password is gone');
      assert.equal((await browser(t).post('/console/sign-in', { email: 'new.hire@example.com', password: fresh })).statusCode, 303);

      const actions = (await auditRows(t)).filter((a) => a.target === 'staff:new.hire@example.com' && a.actorKind === 'staff').map((a) => a.action);
      assert.deepEqual(
        actions.filter((a) => !a.startsWith('staff.sign')),
        ['staff.reset_password', 'staff.create_password_reset', 'staff.enable', 'staff.disable', 'staff.set_role', 'staff.create'],
      );
      assert.ok(!JSON.stringify(await auditRows(t)).includes(fresh), 'no password in the audit log');
    });

    it('staff: bad input and changes to your own account are refused with 4xx, nothing written; other roles get 403', async (ctx) => {
      const { t, owner } = await build(ctx);
      const token = await owner.csrf();
      const ownId = /data-staff="owner@example.com"[\s\S]*?reset-password/.exec((await owner.get('/console/staff')).body)![0];
      const me = /\/console\/staff\/(\d+)\/reset-password/.exec(ownId)![1];
      const cases: [string, Record<string, string>, number][] = [
        ['/console/staff', { email: 'not-an-email', role: 'support' }, 400],
        ['/console/staff', { email: 'x@example.com', role: 'admin' }, 400],
        ['/console/staff', { email: 'OWNER@example.com', role: 'support' }, 409],
        [`/console/staff/${me}/disable`, {}, 409],
        [`/console/staff/${me}/role`, { role: 'support' }, 409],
        ['/console/staff/123/disable', {}, 404],
        ['/console/staff/abc/disable', {}, 400],
      ];
      for (const [url, fields, status] of cases) {
        const before = await tableDigests(t.store);
        const r = await owner.post(url, { _csrf: token, ...fields });
        assert.equal(r.statusCode, status, `${url} ${JSON.stringify(fields)}: ${r.body.slice(0, 200)}`);
        assert.deepEqual(await tableDigests(t.store), before, `${url}: nothing written`);
      }
      for (const email of ['wh@example.com', 'support@example.com']) {
        const b = await signedIn(t, email);
        assert.equal((await b.get('/console/staff')).statusCode, 403, email);
        assert.equal((await b.get('/console/audit')).statusCode, 403, email);
        const before = await tableDigests(t.store);
        assert.equal((await b.post('/console/staff', { _csrf: await b.csrf(), email: 'sneaky@example.com', role: 'owner' })).statusCode, 403);
        assert.deepEqual(await tableDigests(t.store), before);
      }
    });

    it('audit log: filters by action, actor (email or kind:id) and target; keyset pages hold every entry once', async (ctx) => {
      const { t, owner } = await build(ctx);
      // A log with an import by the warehouse member, a staff account the owner created, and more
      // than one page of entries.
      const wh = await signedIn(t, 'wh@example.com');
      const imported = await wh.post('/console/import', { _csrf: await wh.csrf(), fileName: 'stock.csv', fileText: 'sku,warehouseCode,qty\nA,G007,11\n' });
      assert.equal((await importOutcome(wh, imported.headers.location as string)).state, 'done');
      assert.equal((await owner.post('/console/staff', { _csrf: await owner.csrf(), email: 'New.Hire@example.com', role: 'support' })).statusCode, 303);
      for (let i = 0; i < 10; i++)
        assert.equal((await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'A', warehouseCode: 'G007', delta: 1 }] })).status, 200);
      for (let i = 0; i < 40; i++)
        assert.equal((await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'C', warehouseCode: 'G007', delta: 1 }] })).status, 200);
      const byAction = await owner.get('/console/audit?action=stock.adjust');
      const actions = [...byAction.body.matchAll(/data-action="([a-z_.]+)"/g)].map((m) => m[1]);
      assert.ok(actions.length >= 2);
      assert.ok(actions.every((a) => a === 'stock.adjust'));
      const byEmail = await owner.get('/console/audit?actor=wh%40example.com');
      assert.match(byEmail.body, /catalog\.import/);
      const actors = [...byEmail.body.matchAll(/<td role="cell" data-label="Actor" data-actor>([^<]+)/g)].map((m) => m[1].trim());
      assert.ok(actors.length > 0 && actors.every((a) => a === 'wh@example.com'), actors.join(', '));
      const byKind = await owner.get('/console/audit?actor=admin_key%3A');
      assert.match(byKind.body, /data-empty="audit"/, 'an actor id must match exactly');
      const byTarget = await owner.get('/console/audit?target=staff%3Anew.hire%40example.com&action=staff.create');
      assert.equal([...byTarget.body.matchAll(/data-audit=/g)].length, 1);

      const all = (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list.length as number;
      assert.ok(all > 50, `enough entries for two pages (${all})`);
      const seen: string[] = [];
      let url: string | null = '/console/audit';
      while (url) {
        const page = await owner.get(url);
        assert.equal(page.statusCode, 200);
        seen.push(...[...page.body.matchAll(/data-audit="(\d+)"/g)].map((m) => m[1]));
        const older = /id="older" href="([^"]+)"/.exec(page.body);
        url = older ? older[1].replace(/&amp;/g, '&') : null;
      }
      // Viewing pages writes nothing, so the walk sees exactly what the API lists (up to its 200).
      assert.equal(new Set(seen).size, seen.length);
      assert.ok(seen.length >= all);

      for (const query of ['action=nope', 'cursor=zz', 'actor=nobody@example.com', 'actor=robot']) {
        const r = await owner.get(`/console/audit?${query}`);
        assert.equal(r.statusCode, 400, query);
      }
    });

    it('every new page refuses a signed-out browser, and a POST without the session token', async (ctx) => {
      const { t, owner, ownerToken } = await build(ctx);
      for (const url of ['/console/products', '/console/products/A', '/console/import', '/console/staff', '/console/audit']) {
        const r = await browser(t).get(url);
        assert.equal(r.statusCode, 303, url);
      }
      const before = await tableDigests(t.store);
      const r = await owner.post('/console/products/A/adjust', { warehouseCode: 'G007', delta: '1', reason: 'no token' });
      assert.equal(r.statusCode, 403);
      const cross = await owner.post('/console/staff', { _csrf: ownerToken, email: 'csrf@example.com', role: 'owner' }, { origin: 'https://evil.example' });
      assert.equal(cross.statusCode, 403);
      assert.deepEqual(await tableDigests(t.store), before);
      assert.ok(PASSWORD);
    });

    it('staff: two owners demoting or disabling each other at once: one change lands, the other is refused (the last active owner stays)', async (ctx) => {
      let { t, owner, ownerToken } = await build(ctx);
      await staff(t, 'second@example.com', 'owner');
      const second = await signedIn(t, 'second@example.com');
      const ids = Object.fromEntries((await t.store.db.selectFrom('staff_users').select(['id', 'email_key']).execute()).map((s) => [s.email_key, s.id]));
      const activeOwners = async () =>
        (await t.store.db.selectFrom('staff_users').select('email_key').where('role', '=', 'owner').where('status', '=', 'active').execute()).map(
          (s) => s.email_key,
        );
      const cli = { kind: 'cli' as const, id: 'test', requestId: null };
      for (const [change, fields, action] of [
        ['role', { role: 'support' }, 'staff.set_role'],
        ['disable', {}, 'staff.disable'],
      ] as const) {
        const auditBefore = (await auditRows(t)).filter((a) => a.action === action).length;
        const [fromOwner, fromSecond] = await Promise.all([
          owner.post(`/console/staff/${ids['second@example.com']}/${change}`, { _csrf: ownerToken, ...fields }),
          second.post(`/console/staff/${ids['owner@example.com']}/${change}`, { _csrf: await second.csrf(), ...fields }),
        ]);
        // One lands. The other is refused: 409 when both checked the owners at once (the rule), or —
        // when it came after the first had committed — 403 / 401 because its sender is no longer an
        // owner / no longer signed in. Either way nothing of it is written.
        const statuses = [fromOwner.statusCode, fromSecond.statusCode].sort();
        assert.equal(statuses[0], 303, change);
        assert.ok([401, 403, 409].includes(statuses[1]), `${change}: the other is refused (${statuses[1]})`);
        const refused = fromOwner.statusCode === 303 ? fromSecond : fromOwner;
        if (refused.statusCode === 409) assert.match(refused.body, /is the last active owner: make another account owner before you (demote|disable) it/);
        const left = await activeOwners();
        assert.equal(left.length, 1, `${change}: one active owner left, not none`);
        assert.equal((await auditRows(t)).filter((a) => a.action === action).length, auditBefore + 1, 'one change, one audit row');
        // Put both back as owners, signed in, for the next round.
        const removed = left[0] === 'owner@example.com' ? 'second@example.com' : 'owner@example.com';
        if (change === 'role') await setStaffRole(t.store.db, cli, removed, 'owner', Date.now());
        else {
          await enableStaff(t.store.db, cli, removed, Date.now());
          if (removed === 'owner@example.com') {
            owner = await signedIn(t, 'owner@example.com');
            ownerToken = await owner.csrf();
          }
        }
      }
    });
  });
}
