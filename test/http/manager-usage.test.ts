import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, loadCatalogue, newMerchant, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { browser, member } from './manager-helpers.ts';

/**
 * Issue 20, page 5: the business manager's Usage page shows the counts of the merchant's own
 * requests (made here through the API), the budget left, the errors by code and the newest 4xx.
 */

const STOCKS = '/openapi/v1/product/stocks?skus=SKU-A';

/** The text of the element carrying `attribute` (e.g. `data-total="2xx"`). */
const cell = (body: string, attribute: string) => new RegExp(`${attribute}[^>]*>([^<]*)<`).exec(body)?.[1];

const call = (t: TestApp, token: string, url: string, requestId: string) =>
  t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}`, 'x-request-id': requestId } });

for (const dialect of DIALECTS) {
  describe(`business manager: Usage (${dialect})`, () => {
    const clock = { now: Date.parse('2026-11-20T12:00:00Z') };
    const t = useApp(dialect, { RATE_LIMIT_PER_SECOND: '10', RATE_LIMIT_BURST: '50' }, { now: () => clock.now });

    it('shows each merchant its own counts, codes, recent 4xx and budget; a viewer may see it', async () => {
      await loadCatalogue(t);
      const a = await newMerchant(t, 'Usage shop');
      const b = await newMerchant(t, 'Other shop');
      for (let i = 0; i < 3; i++) assert.equal((await call(t, a.token, STOCKS, `a-ok-${i}`)).statusCode, 200);
      const missing = await call(t, a.token, '/openapi/v2/order/orders/987654321?note=QUERY-MARKER', 'a-missing-1');
      assert.equal(missing.statusCode, 404);
      const code = missing.json().code;
      await call(t, a.token, '/openapi/v2/order/orders/987654322', 'a-missing-2');
      assert.equal((await call(t, b.token, STOCKS, 'b-ok-1')).statusCode, 200);
      await call(t, b.token, '/openapi/v2/order/orders/1', 'b-missing-1');

      const viewer = await member(t, a.merchantId, 'usage-viewer@example.com', 'viewer');
      const page = await viewer.get('/manager/usage');
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /<a href="\/manager\/usage" aria-current="page">Usage<\/a>/);
      assert.deepEqual(
        ['2xx', '3xx', '4xx', '5xx'].map((c) => cell(page.body, `data-total="${c}"`)),
        ['3', '0', '2', '0'],
      );
      assert.equal(cell(page.body, 'data-day="2026-11-20"><td'), '2026-11-20');
      assert.match(
        page.body,
        /<tr data-day="2026-11-20"><td>2026-11-20<\/td><td data-class="2xx">3<\/td><td data-class="3xx">0<\/td><td data-class="4xx">2<\/td>/,
      );
      assert.equal((page.body.match(/<tr data-day=/g) ?? []).length, 30);
      // Each code in words, the code itself beside them for a developer (issue 44, 7).
      assert.match(
        page.body,
        new RegExp(`<tr data-code="${code}"><td data-words>Not found</td><td><code>${code}</code></td><td>404</td><td data-count>2</td><td>2026-11-20</td>`),
      );
      assert.match(page.body, /data-request-id="a-missing-2"[\s\S]*data-request-id="a-missing-1"/, 'newest first');
      assert.match(
        page.body,
        /<td data-request>Read an order<br><code>GET \/openapi\/v2\/order\/orders\/:id<\/code><\/td><td>404<\/td><td data-error>Not found<br><code>40400<\/code><\/td>/,
      );
      assert.doesNotMatch(page.body, /QUERY-MARKER|b-missing-1|b-ok-1/, 'no query strings, nothing of the other merchant');
      assert.equal(cell(page.body, 'data-budget="requests"'), '45 of 50', 'five requests taken from a burst of 50; the page took none');
      assert.equal(cell(page.body, 'data-budget="rate"'), '10');
      const chart = JSON.parse(/data-chart="([^"]*)"/.exec(page.body)![1].replace(/&quot;/g, '"'));
      assert.equal(chart.days.length, 30);
      assert.equal(chart.days.at(-1), Date.parse('2026-11-20T00:00:00Z') / 1000);
      assert.deepEqual([chart.ok.at(-1), chart.clientError.at(-1)], [3, 2]);
      assert.match(page.body, /<script src="\/manager\/assets\/uplot\.min\.js" defer><\/script>/);

      const other = await member(t, b.merchantId, 'usage-other@example.com', 'admin');
      const theirs = await other.get('/manager/usage');
      assert.deepEqual(
        ['2xx', '4xx'].map((c) => cell(theirs.body, `data-total="${c}"`)),
        ['1', '1'],
      );
      assert.match(theirs.body, /data-request-id="b-missing-1"/);
      assert.doesNotMatch(theirs.body, /a-missing-/);
      assert.equal(cell(theirs.body, 'data-budget="requests"'), '48 of 50');
    });

    it('is empty but whole for a merchant without requests, and closed to visitors without a session', async () => {
      const m = await newMerchant(t, 'Quiet shop');
      const dev = await member(t, m.merchantId, 'usage-dev@example.com', 'developer');
      const page = await dev.get('/manager/usage');
      assert.equal(page.statusCode, 200);
      assert.equal(cell(page.body, 'data-total="2xx"'), '0');
      assert.match(page.body, /data-empty="codes"/);
      assert.match(page.body, /data-empty="recent"/);
      assert.equal(cell(page.body, 'data-budget="requests"'), '50 of 50');

      const before = await tableDigests(t.store);
      const anonymous = await browser(t).get('/manager/usage');
      assert.equal(anonymous.statusCode, 303);
      assert.match(String(anonymous.headers.location), /^\/manager\/sign-in/);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
    });

    it('serves uPlot and the chart script from this server', async () => {
      for (const file of ['uplot.min.js', 'uplot.min.css', 'usage-chart.js']) {
        const r = await t.app.inject({ method: 'GET', url: `/manager/assets/${file}` });
        assert.equal(r.statusCode, 200, file);
        assert.ok(r.body.length > 100, file);
      }
      assert.match((await t.app.inject({ method: 'GET', url: '/manager/assets/usage-chart.js' })).body, /new uPlot\(/);
    });
  });
}
