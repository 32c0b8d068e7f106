import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot, consoleSignIn } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the money pages browser test');
const PASSWORD = 'money browser passphrase';
const PHONE_WIDTH = 390;

/** No page may scroll sideways on a phone. */
async function fitsPhone(page: Page, name: string) {
  const original = page.viewportSize();
  await page.setViewportSize({ width: PHONE_WIDTH, height: 900 });
  const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
  await checkAccessibility(page);
  if (original) await page.setViewportSize(original);
  assert.ok(width <= PHONE_WIDTH, `${name}: the page is ${width} px wide on a ${PHONE_WIDTH} px screen`);
}

/** SPEC §15 in Chromium: the console's money forms (owner) and the business manager's Balance page, axe-clean at 1280 and 390 px. */
describe('money pages in a real browser', { skip: SKIP }, () => {
  it('records a payment and an adjustment in the console (a reload posts nothing again), and the merchant sees them on its Balance page', {
    timeout: 300_000,
  }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    await loadCatalogue(app, ORDER_CATALOGUE);
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'owner@example.com', role: 'owner', password: PASSWORD },
      Date.now(),
    );
    const m = await newMerchant(app, 'Browser Money');
    const order = await placeOrder(app, m.token, [{ sku: 'C', quantity: 2 }]);
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });

    await consoleSignIn(page, origin, 'owner@example.com', PASSWORD);
    const merchantUrl = `${origin}/console/merchants/${m.merchantId}`;
    await page.goto(merchantUrl);
    const balance = () => page.textContent('[data-account="sandbox"] [data-field="balance"]');
    assert.equal(await balance(), `-${order.finalAmount.toFixed(2)} USD`);

    await page.fill('#topup-sandbox-amount', '200');
    await page.fill('#topup-sandbox-reference', 'BANK-BROWSER-1');
    await Promise.all([page.waitForURL(`${merchantUrl}#account-sandbox`), page.click('[data-account="sandbox"] [data-action="top-up"]')]);
    const afterTopUp = (200 - order.finalAmount).toFixed(2);
    assert.equal(await balance(), `${afterTopUp} USD`);
    await page.reload();
    assert.equal(await balance(), `${afterTopUp} USD`, 'a reload of the page after the POST posts nothing');

    await page.fill('#adjust-sandbox-amount', '-1.50');
    await page.fill('#adjust-sandbox-reason', 'wire fee');
    await Promise.all([page.waitForURL(`${merchantUrl}#account-sandbox`), page.click('[data-account="sandbox"] [data-action="adjust"]')]);
    const afterFee = (200 - order.finalAmount - 1.5).toFixed(2);
    assert.equal(await balance(), `${afterFee} USD`);
    await page.goBack();
    await page.goForward();
    assert.equal(await balance(), `${afterFee} USD`);
    await checkAccessibility(page);
    await screenshot(page, 'money', 'console-merchant-money');
    await fitsPhone(page, 'console merchant page');

    // The merchant's viewer: the Balance page and a statement download.
    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'viewer@money.example', role: 'viewer' });
    await page.goto(`${origin}${new URL(invited.body.data.invitationUrl).pathname}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);
    await Promise.all([page.waitForURL(`${origin}/manager/balance`), page.click('nav a[href="/manager/balance"]')]);
    assert.equal(await page.textContent('[data-field="balance"]'), `${afterFee} USD`);
    assert.equal(await page.locator('[data-transaction]').count(), 3);
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-action="statement-csv"]')]);
    const csv = await (await download.createReadStream()).toArray();
    const text = Buffer.concat(csv as Buffer[]).toString('utf8');
    assert.match(text, /^\uFEFFdate,type,description/, 'a UTF-8 byte order mark, then the header');
    assert.match(text, new RegExp(`closing_balance,Closing balance,,,,,${afterFee.replace('.', '\\.')},USD`));
    await checkAccessibility(page);
    await screenshot(page, 'money', 'manager-balance');
    await fitsPhone(page, 'manager balance page');
    assert.deepEqual(foreign, [], 'everything the pages need comes from this server');
    assert.deepEqual(consoleErrors, []);
  });
});
