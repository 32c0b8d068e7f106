import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot, consoleSignIn } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant, stockQty, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE } from '../fixtures.ts';

const SKIP = chromiumSkip('the web forms browser test');
const PASSWORD = 'browser test passphrase';

const rows = async (app: TestApp, table: 'stock_ledger' | 'audit_log' | 'api_tokens' | 'oauth_clients') =>
  Number(
    (
      await app.store.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/**
 * Issue 29, 1 and 2, as a person meets them: after every form, a reload, going back and forward,
 * and a double click apply the change once; a destructive action asks first, and a dismissed
 * confirmation (mouse or keyboard) changes nothing.
 */
describe('web forms in a real browser', { skip: SKIP }, () => {
  it('console: adjust stock, issue a token, then reload, go back and forward, double click: each applies once; revoke and disable ask first', {
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
    const m = await newMerchant(app, 'Forms shop');
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    const look = async (name: string) => {
      await checkAccessibility(page);
      await screenshot(page, 'web-forms', name);
    };

    await consoleSignIn(page, origin, 'owner@example.com', PASSWORD);

    // Stock +3, the story: POST → 303 → the product page; a reload posts nothing again.
    const productUrl = `${origin}/console/products/B`;
    await page.goto(productUrl);
    const qty = (await stockQty(app, 'B', 'G006'))!;
    const ledger = await rows(app, 'stock_ledger');
    const audit = await rows(app, 'audit_log');
    await page.selectOption('#warehouseCode', 'G006');
    await page.fill('#delta', '3');
    await page.fill('#reason', 'found three in the count');
    await Promise.all([page.waitForNavigation(), page.click('form[action$="/adjust"] button[type=submit]')]);
    assert.equal(page.url(), productUrl, 'the answer is the product page (303)');
    assert.match((await page.textContent('#adjusted'))!, /by \+3: now/);
    await look('console-product-adjusted');
    await page.reload();
    assert.equal(await page.locator('#adjusted').count(), 0, 'the one-time message is gone after a reload');
    await page.goBack();
    await page.goForward();
    assert.equal(await stockQty(app, 'B', 'G006'), qty + 3, 'applied once');
    assert.equal(await rows(app, 'stock_ledger'), ledger + 1, 'one ledger row');
    assert.equal(await rows(app, 'audit_log'), audit + 1, 'one audit row');

    // A double click on the same rendered form: one change.
    await page.goto(productUrl);
    await page.selectOption('#warehouseCode', 'G006');
    await page.fill('#delta', '2');
    await page.fill('#reason', 'double click');
    // The second click's submission aborts the first's navigation (net::ERR_ABORTED under load), so
    // wait for the page either answer leads to — the product page saying "Adjusted …" or "That form
    // was sent already" — not for one particular navigation.
    await page.dblclick('form[action$="/adjust"] button[type=submit]');
    await page.waitForSelector('#adjusted, [data-notice]');
    await page.waitForLoadState();
    assert.equal(await stockQty(app, 'B', 'G006'), qty + 5, 'the double click applied once');
    assert.equal(await rows(app, 'stock_ledger'), ledger + 2);

    // Issue a token: shown once on the merchant page; a reload issues nothing more and hides it.
    const merchantUrl = `${origin}/console/merchants/${m.merchantId}`;
    await page.goto(merchantUrl);
    const tokens = await rows(app, 'api_tokens');
    await Promise.all([page.waitForNavigation(), page.click('button[data-action=issue-token]')]);
    assert.equal(page.url(), merchantUrl);
    const secret = (await page.textContent('[data-secret]'))!;
    assert.match(secret, /^stk_test_/);
    await look('console-token-issued');
    await page.reload();
    assert.ok(!(await page.content()).includes(secret), 'not shown again');
    await page.goBack();
    await page.goForward();
    assert.equal(await rows(app, 'api_tokens'), tokens + 1, 'one token');

    // Revoke asks first. Opened and dismissed (mouse, then keyboard): nothing changes.
    const issued = page.locator('tr[data-token]', { has: page.locator('[data-state="active"]') }).last();
    const tokenId = (await issued.getAttribute('data-token'))!;
    const summary = issued.locator('summary[data-confirm-open=revoke]');
    assert.equal(await issued.locator('button[data-action=revoke]').isVisible(), false, 'the real button is behind the question');
    await summary.click();
    assert.match((await issued.locator('.confirm-body').textContent())!, new RegExp(`Token ${tokenId} stops working at once`));
    await look('console-revoke-confirm');
    await summary.click();
    await summary.focus();
    await page.keyboard.press('Enter');
    assert.equal(await issued.locator('button[data-action=revoke]').isVisible(), true, 'Enter opens it');
    await page.keyboard.press('Enter');
    assert.equal(await issued.locator('button[data-action=revoke]').isVisible(), false, 'Enter closes it');
    await page.reload();
    assert.equal(await page.locator(`tr[data-token="${tokenId}"] [data-state="active"]`).count(), 1, 'a dismissed confirmation revoked nothing');
    assert.equal((await app.merchant(secret, 'GET', '/openapi/v2/order/orders')).status, 200);

    // Disable merchant: dismissed changes nothing; confirmed by keyboard (Tab to the button, Enter) it applies.
    const disable = page.locator('summary[data-confirm-open=disable]');
    await disable.click();
    assert.match((await page.locator('details.confirm[open] .confirm-body').textContent())!, /Disabling Forms shop refuses every API call/);
    await disable.click();
    await page.reload();
    assert.equal(await page.textContent('[data-field="merchant-status"]'), 'Active');
    await disable.click();
    await page.locator('button[data-action=disable]').focus();
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-field="merchant-status"]:text("Disabled")', { timeout: 30_000 });

    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(foreign, []);
  });

  it('business manager: a client and a token apply once across reloads; rotate, revoke, delete and remove ask first and a dismissed question changes nothing', {
    timeout: 300_000,
  }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    const m = await newMerchant(app, 'Forms manager shop');
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'admin@forms.example', role: 'admin' });
    const other = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'dev@forms.example', role: 'developer' });
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    const look = async (name: string) => {
      await checkAccessibility(page);
      await screenshot(page, 'web-forms', name);
    };
    // The developer accepts in a page of its own, then the admin.
    for (const link of [other.body.data.invitationUrl, invited.body.data.invitationUrl]) {
      await page.context().clearCookies();
      await page.goto(`${origin}${new URL(link).pathname}`);
      await page.fill('#password', PASSWORD);
      await page.fill('#confirm', PASSWORD);
      await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);
    }

    const credentials = `${origin}/manager/credentials`;
    await page.goto(credentials);
    const clients = await rows(app, 'oauth_clients');
    await page.fill('#client-name', 'Backend');
    await Promise.all([page.waitForNavigation(), page.click('button[data-action="create-client"]')]);
    assert.equal(page.url(), credentials);
    assert.match((await page.textContent('[data-secret]'))!, /^sks_/);
    await page.reload();
    assert.equal(await page.locator('[data-secret]').count(), 0, 'shown once');
    await page.goBack();
    await page.goForward();
    assert.equal(await rows(app, 'oauth_clients'), clients + 1, 'one client');

    const row = page.locator('tr[data-client]', { hasText: 'Backend' });
    for (const action of ['rotate-client', 'revoke-client']) {
      await row.locator(`summary[data-confirm-open="${action}"]`).click();
      await look(`manager-${action}-confirm`);
      await row.locator(`summary[data-confirm-open="${action}"]`).click();
    }
    const audit = await rows(app, 'audit_log');
    await page.reload();
    assert.equal(await rows(app, 'audit_log'), audit, 'dismissed: nothing rotated or revoked');
    assert.match((await row.textContent())!, /Active/);

    // Remove a member: asks first; dismissed, the member stays.
    await page.goto(`${origin}/manager/team`);
    const member = page.locator('tr', { hasText: 'dev@forms.example' });
    await member.locator('summary[data-confirm-open="remove"]').click();
    assert.match(
      (await member.locator('.confirm-body').textContent())!,
      /dev@forms\.example is signed out at once and can no longer sign in to Forms manager shop/,
    );
    await look('manager-remove-confirm');
    await member.locator('summary[data-confirm-open="remove"]').click();
    await page.reload();
    assert.equal(await page.locator('tr', { hasText: 'dev@forms.example' }).count(), 1, 'still on the team');
    assert.equal(await rows(app, 'audit_log'), audit);

    assert.deepEqual(consoleErrors, []);
    assert.deepEqual(foreign, []);
  });
});
