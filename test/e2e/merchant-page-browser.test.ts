import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createClient, revokeClient } from '../../src/services/credentials.service.ts';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot, consoleSignIn } from './browser.ts';
import { buildTestApp, newMerchant, tableDigests } from '../helpers.ts';
import { enrol, invite, member } from '../http/manager-helpers.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';

const SKIP = chromiumSkip('the console merchant page browser test');
const PASSWORD = 'browser test passphrase';
const CLI = { kind: 'cli', id: 'test', requestId: null } as const;

/**
 * Issue 29, item 12, as an operator sees it: the merchant page lists the business manager users,
 * the pending invitations, every OAuth client (a revoked one marked revoked) and the tokens; each
 * action on a user or an invitation asks first, and a dismissed question changes nothing; a name
 * in use warns before a second merchant gets it.
 */
describe('console merchant page in a real browser', { skip: SKIP }, () => {
  it('shows users, invitations, clients and tokens; dismissed confirmations change nothing; a duplicate name warns', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    await createStaff(app.store.db, CLI, { email: 'owner@example.com', role: 'owner', password: PASSWORD }, Date.now());
    const m = await newMerchant(app, 'Page shop');
    const admin = await member(app, m.merchantId, 'admin@page-shop.example', 'admin');
    await enrol(admin, Date.now());
    await member(app, m.merchantId, 'developer@page-shop.example', 'developer');
    await invite(app, m.merchantId, 'pending@page-shop.example', 'viewer');
    const kept = await createClient(forMerchant(app.store.db, Number(m.merchantId)), CLI, 'Warehouse sync', Date.now());
    const gone = await createClient(forMerchant(app.store.db, Number(m.merchantId)), CLI, 'Old plugin', Date.now());
    await revokeClient(forMerchant(app.store.db, Number(m.merchantId)), CLI, gone.client.id, Date.now());

    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await consoleSignIn(page, origin, 'owner@example.com', PASSWORD);

    const merchantUrl = `${origin}/console/merchants/${m.merchantId}`;
    await page.goto(merchantUrl);
    const userRow = (email: string) => page.locator('tr[data-user]', { hasText: email });
    assert.equal((await userRow('admin@page-shop.example').locator('[data-field="two-factor"]').textContent())?.trim(), 'on');
    assert.equal((await userRow('developer@page-shop.example').locator('[data-field="two-factor"]').textContent())?.trim(), 'off');
    const invitation = page.locator('tr[data-invitation]', { hasText: 'pending@page-shop.example' });
    assert.equal(await invitation.count(), 1, 'the pending invitation is listed');
    assert.equal(await page.locator(`tr[data-client="${kept.client.id}"] [data-state="active"]`).count(), 1);
    const revoked = page.locator(`tr[data-client="${gone.client.id}"] [data-state="revoked"]`);
    assert.match((await revoked.textContent())!, /^Revoked/, 'a revoked client is marked revoked');
    assert.equal(await page.locator(`tr[data-token="${m.tokenId}"] [data-state="active"]`).count(), 1, 'the token and its state');
    await checkAccessibility(page);
    await screenshot(page, 'merchant-page', 'merchant');

    // Each action asks first; opened and dismissed (mouse, then keyboard), nothing changes.
    const before = await tableDigests(app.store);
    for (const [row, action, sentence] of [
      [userRow('admin@page-shop.example'), 'reset-two-factor', /authenticator app of admin@page-shop\.example stops working/],
      [userRow('developer@page-shop.example'), 'remove-user', /developer@page-shop\.example loses the business manager at once/],
      [invitation, 'cancel-invitation', /sent to pending@page-shop\.example stops working at once/],
    ] as const) {
      const summary = row.locator(`summary[data-confirm-open="${action}"]`);
      const button = row.locator(`button[data-action="${action}"]`);
      assert.equal(await button.isVisible(), false, `${action}: the real button is behind the question`);
      await summary.click();
      assert.equal(await button.isVisible(), true);
      assert.match((await row.locator('details.confirm[open] .confirm-body').textContent())!, sentence);
      if (action === 'reset-two-factor') {
        await checkAccessibility(page);
        await screenshot(page, 'merchant-page', 'merchant-reset-two-factor-confirm');
      }
      await summary.click();
      assert.equal(await button.isVisible(), false, `${action}: dismissed by mouse`);
      await summary.focus();
      await page.keyboard.press('Enter');
      assert.equal(await button.isVisible(), true, `${action}: Enter opens it`);
      await page.keyboard.press('Enter');
      assert.equal(await button.isVisible(), false, `${action}: Enter closes it`);
    }
    await page.reload();
    assert.deepEqual(await tableDigests(app.store), before, 'dismissed confirmations changed nothing');
    assert.equal(await page.locator('tr[data-user]').count(), 2);
    assert.equal(await page.locator('tr[data-invitation]').count(), 1);

    // Resend: a fresh link, shown once on the page.
    await Promise.all([page.waitForNavigation(), invitation.locator('button[data-action="resend-invitation"]').click()]);
    assert.equal(page.url(), merchantUrl);
    assert.match((await page.textContent('[data-secret]'))!, /\/manager\/invitations\/[A-Za-z0-9]{43}$/);
    await checkAccessibility(page);
    await screenshot(page, 'merchant-page', 'merchant-invitation-resent');

    // Confirmed, a removal applies.
    const developer = userRow('developer@page-shop.example');
    await developer.locator('summary[data-confirm-open="remove-user"]').click();
    await Promise.all([page.waitForNavigation(), developer.locator('button[data-action="remove-user"]').click()]);
    assert.match((await page.textContent('[data-notice]'))!, /User removed/);
    assert.equal(await page.locator('tr[data-user]', { hasText: 'developer@page-shop.example' }).count(), 0);

    // A second merchant under a name in use: a warning and a checkbox, not a refusal.
    await page.goto(`${origin}/console/merchants`);
    await page.fill('#name', ' PAGE shop');
    await Promise.all([page.waitForNavigation(), page.click('button[data-action="create-merchant"]')]);
    assert.match((await page.textContent('[data-warning="duplicate-name"]'))!, /A merchant named PAGE shop exists already/);
    await checkAccessibility(page);
    await screenshot(page, 'merchant-page', 'merchants-duplicate-name');
    await page.check('input[name="confirmDuplicate"]');
    await Promise.all([page.waitForNavigation(), page.click('button[data-action="create-merchant"]')]);
    assert.match(page.url(), /\/console\/merchants\/\d+$/);
    assert.notEqual(page.url(), merchantUrl);

    assert.deepEqual(foreign, [], 'nothing loaded from elsewhere');
    // The duplicate-name warning answers the form again at 409 (docs/web.md: a refusal's status), which Chromium logs.
    assert.deepEqual(
      consoleErrors.filter((e) => !/status of 409/.test(e)),
      [],
      'no other console errors (CSP included)',
    );
  });

  it('pages through every token and client of a merchant with many (issue 29, item 12)', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    await createStaff(app.store.db, CLI, { email: 'owner@example.com', role: 'owner', password: PASSWORD }, Date.now());
    const m = await newMerchant(app, 'Busy shop');
    for (let i = 0; i < 60; i++) {
      const r = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/tokens`, { scopes: ['orders:read'] });
      assert.equal(r.status, 200, r.raw);
    }
    for (let i = 0; i < 55; i++) {
      const c = await createClient(forMerchant(app.store.db, Number(m.merchantId)), CLI, `Plugin ${i}`, Date.now());
      await revokeClient(forMerchant(app.store.db, Number(m.merchantId)), CLI, c.client.id, Date.now());
    }
    const tokens = await app.store.db.selectFrom('api_tokens').select('id').where('merchant_id', '=', Number(m.merchantId)).execute();
    const clients = await app.store.db.selectFrom('oauth_clients').select('id').where('merchant_id', '=', Number(m.merchantId)).execute();

    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await consoleSignIn(page, origin, 'owner@example.com', PASSWORD);

    await page.goto(`${origin}/console/merchants/${m.merchantId}`);
    assert.equal(await page.textContent('[data-counts="tokens"]'), `1–50 of ${tokens.length}`);
    assert.equal(await page.textContent('[data-counts="clients"]'), `1–50 of ${clients.length}`);
    const seenTokens = await page.locator('tr[data-token]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-token')));
    await Promise.all([page.waitForURL(/tokensBefore=\d+/), page.click('a[data-next="tokens"]')]);
    assert.equal(await page.textContent('[data-counts="tokens"]'), `51–${tokens.length} of ${tokens.length}`);
    assert.equal(await page.locator('a[data-next="tokens"]').count(), 0, 'the last page of tokens');
    seenTokens.push(...(await page.locator('tr[data-token]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-token')))));
    assert.deepEqual([...seenTokens].sort(), tokens.map((r) => String(r.id)).sort(), 'every token, once');
    await checkAccessibility(page);
    await screenshot(page, 'merchant-page', 'merchant-tokens-page-2');
    // The clients' Next link keeps the tokens' page.
    await Promise.all([page.waitForURL(/clientsAfter=\d+/), page.click('a[data-next="clients"]')]);
    assert.match(page.url(), /tokensBefore=\d+/);
    assert.equal(await page.textContent('[data-counts="clients"]'), `51–${clients.length} of ${clients.length}`);
    assert.equal(await page.locator('tr[data-client] [data-state="revoked"]').count(), clients.length - 50);
    await page.click('text=Newest tokens');
    await page.waitForURL(/clientsAfter=\d+/);
    assert.equal(await page.textContent('[data-counts="tokens"]'), `1–50 of ${tokens.length}`);
    await screenshot(page, 'merchant-page', 'merchant-clients-page-2');
    await page.setViewportSize({ width: 390, height: 900 });
    assert.ok(((await page.evaluate('document.documentElement.scrollWidth')) as number) <= 390, 'no sideways scrolling on a phone');
    assert.deepEqual(foreign, []);
    assert.deepEqual(consoleErrors, []);
  });
});
