import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';

const SKIP = chromiumSkip('the business manager Usage page browser test');
const PASSWORD = 'usage browser passphrase';

/** Issue 20, page 5 in Chromium: the chart is drawn from this server's uPlot, accessible, at 1280 and 390 px. */
describe('business manager Usage page in a real browser', { skip: SKIP }, () => {
  it('draws the 30-day chart, lists errors and the recent 4xx, passes axe-core', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    await loadCatalogue(app);
    const m = await newMerchant(app, 'Chart shop');
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const api = (path: string, requestId: string) => fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${m.token}`, 'x-request-id': requestId } });
    for (let i = 0; i < 4; i++) assert.equal((await api('/openapi/v1/product/stocks?skus=SKU-A', `ok-${i}`)).status, 200);
    assert.equal((await api('/openapi/v2/order/orders/55555', 'browser-missing-1')).status, 404);
    assert.equal((await api('/openapi/v1/product/stocks?skus=', 'browser-bad-1')).status, 400);

    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'viewer@usage.example', role: 'viewer' });
    assert.equal(invited.status, 200, invited.raw);
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await page.goto(`${origin}${new URL(invited.body.data.invitationUrl).pathname}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);

    await Promise.all([page.waitForURL(`${origin}/manager/usage`), page.click('nav a[href="/manager/usage"]')]);
    await page.waitForSelector('#usage-chart[data-chart-rendered="true"] canvas');
    const drawn = await page.evaluate(() => {
      const canvas = document.querySelector('#usage-chart canvas') as HTMLCanvasElement;
      return { width: canvas.clientWidth, height: canvas.clientHeight, series: document.querySelectorAll('#usage-chart .u-legend .u-series').length };
    });
    assert.ok(drawn.width >= 280 && drawn.height >= 200, JSON.stringify(drawn));
    assert.equal(drawn.series, 5, 'the day and four status classes');
    assert.equal(await page.textContent('[data-total="2xx"]'), '4');
    assert.equal(await page.textContent('[data-total="4xx"]'), '2');
    assert.deepEqual(await page.$$eval('#recent-table tbody tr', (rows) => rows.map((r) => r.getAttribute('data-request-id'))), [
      'browser-bad-1',
      'browser-missing-1',
    ]);
    assert.equal(await page.locator('#codes-table tbody tr').count(), 2);

    await checkAccessibility(page);
    await screenshot(page, 'manager', 'usage');
    // At 390 px the chart has followed the page's width.
    await page.setViewportSize({ width: 390, height: 900 });
    await page.waitForFunction(() => (document.querySelector('#usage-chart canvas') as HTMLCanvasElement).clientWidth <= 390);
    await checkAccessibility(page);
    assert.deepEqual(foreign, [], 'everything the page needs comes from this server');
    assert.deepEqual(consoleErrors, []);
  });
});
