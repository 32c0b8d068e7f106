import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot, consoleSignIn } from './browser.ts';
import { buildTestApp, newMerchant } from '../helpers.ts';

const SKIP = chromiumSkip('the credentials browser test');
const PASSWORD = 'browser test passphrase';

/**
 * Issue 29, item 14, as a person meets it: the token forms start with only the read scopes ticked,
 * a one-time secret has a Copy button that puts exactly the secret on the clipboard (the page's
 * own static script; the CSP allows no inline one), and a client secret is rotated with a grace
 * period. axe-core on each page; screenshots in test-output/credentials/.
 */
describe('credentials in a real browser', { skip: SKIP }, () => {
  it('business manager and console: copy buttons copy the secret shown once; forms start least-privileged; rotation takes a grace period', {
    timeout: 300_000,
  }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'owner@example.com', role: 'owner', password: PASSWORD },
      Date.now(),
    );
    const m = await newMerchant(app, 'Copy shop');
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'dev@copy.example', role: 'developer' });
    assert.equal(invited.status, 200, invited.raw);

    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    const look = async (name: string) => {
      await checkAccessibility(page);
      await screenshot(page, 'credentials', name);
    };
    const clipboard = () => page.evaluate(() => navigator.clipboard.readText());
    /** Clicks the Copy button beside `secret` and returns what the clipboard then holds. */
    const copy = async (secret: string) => {
      const button = page.locator(`${secret} + button.copy`);
      await button.waitFor({ state: 'visible', timeout: 10_000 }); // shown by the script: hidden without it
      await button.click();
      await page.waitForFunction((b) => b?.textContent?.startsWith('Copied'), await button.elementHandle());
      return clipboard();
    };

    // Business manager: a personal token, created with the form as it starts (read scopes only).
    await page.goto(`${origin}${new URL(invited.body.data.invitationUrl).pathname}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);
    await page.goto(`${origin}/manager/credentials`);
    const ticked = await page.$$eval('form[data-form="new-token"] input[name=scopes]:checked', (boxes) => boxes.map((b) => (b as HTMLInputElement).value));
    assert.deepEqual(ticked, ['catalog:read', 'stock:read', 'orders:read', 'account:read', 'claims:read']);
    await look('manager-credentials');

    // Nothing ticked: refused with the reason, the form back with what was typed.
    await page.fill('#token-name', 'Nothing ticked');
    for (const box of await page.$$('form[data-form="new-token"] input[name=scopes]')) await box.uncheck();
    await Promise.all([page.waitForLoadState(), page.click('button[data-action="create-token"]')]);
    assert.match((await page.textContent('#token-error'))!, /tick at least one scope/);
    assert.equal(await page.inputValue('#token-name'), 'Nothing ticked');
    await look('manager-token-refused');
    // The refusal is a 400 page, which Chromium logs as a failed load: expected here, and only here.
    assert.deepEqual(consoleErrors.splice(0), ['Failed to load resource: the server responded with a status of 400 (Bad Request)']);

    await page.goto(`${origin}/manager/credentials`);
    await page.fill('#token-name', 'Reporting');
    await Promise.all([page.waitForURL(`${origin}/manager/credentials`), page.click('button[data-action="create-token"]')]);
    const token = (await page.textContent('[data-secret]'))!;
    assert.match(token, /^stk_test_/);
    assert.equal(await copy('[data-secret]'), token, 'the clipboard holds the token, nothing more');
    assert.equal((await app.merchant(token, 'GET', '/openapi/v1/product/products')).status, 200, 'the copied token works');
    await look('manager-token-copied');

    // An OAuth client, then its secret rotated with a 3 h grace: the old one still works.
    await page.fill('#client-name', 'Shop backend');
    await Promise.all([page.waitForURL(`${origin}/manager/credentials`), page.click('button[data-action="create-client"]')]);
    const clientId = (await page.textContent('[data-client-id]'))!;
    const first = await copy('[data-secret]');
    assert.match(first, /^sks_/);
    const row = page.locator('tr[data-client]').last();
    await row.locator('summary[data-confirm-open="rotate-client"]').click();
    assert.equal(await row.locator('input[name=graceHours]').inputValue(), '0', 'no grace unless chosen');
    await row.locator('input[name=graceHours]').fill('3');
    await look('manager-rotate-grace');
    await Promise.all([page.waitForURL(`${origin}/manager/credentials`), row.locator('button[data-action="rotate-client"]').click()]);
    assert.match((await page.textContent('[data-old-secret-until]'))!, /keeps working until/);
    const second = await copy('[data-secret]');
    assert.notEqual(second, first);
    const grant = (secret: string) =>
      fetch(`${origin}/openapi/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret }),
      });
    assert.equal((await grant(first)).status, 200, 'the old secret, within its grace');
    assert.equal((await grant(second)).status, 200, 'the new secret');
    await look('manager-client-rotated');

    // Console: the token form starts with read scopes; the token issued has a copy button too.
    await consoleSignIn(page, origin, 'owner@example.com', PASSWORD);
    await page.goto(`${origin}/console/merchants/${m.merchantId}`);
    const consoleTicked = await page.$$eval('input[name=scopes]:checked', (boxes) => boxes.map((b) => (b as HTMLInputElement).value));
    assert.deepEqual(consoleTicked, ['catalog:read', 'stock:read', 'orders:read', 'account:read', 'claims:read']);
    await Promise.all([page.waitForURL(`${origin}/console/merchants/${m.merchantId}`), page.click('button[data-action=issue-token]')]);
    const issued = (await page.textContent('[data-secret]'))!;
    assert.equal(await copy('[data-secret]'), issued);
    await look('console-token-copied');

    assert.deepEqual(foreign, [], 'nothing loaded from elsewhere');
    assert.deepEqual(consoleErrors, [], 'no script errors (the CSP refused nothing)');
  });
});
