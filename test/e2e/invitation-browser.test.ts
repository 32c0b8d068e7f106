import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, newMerchant } from '../helpers.ts';

const SKIP = chromiumSkip('the invitation browser test');
const PASSWORD = 'invitation browser passphrase';

/**
 * Issue 29 item 17, in Chromium against a real server: the invitation page names the business it
 * is for, and an admin cancels an open invitation from the Team page (a POST answered 303 back to
 * the page, the invitation gone from it), after which its link opens only "not valid" and cannot be
 * accepted. The invitee's pages are opened in a browser context of their own (no session).
 * Screenshots in test-output/invitation/.
 */
describe('business manager: invitations name the business and can be cancelled, in a real browser', { skip: SKIP }, () => {
  it('the invitation page names the merchant; the Team page cancels an open invitation; its link then refuses', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    const m = await newMerchant(app, 'Harbour Lights Trading');
    await newMerchant(app, 'Some Other Shop');
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'boss@harbour.example', role: 'admin' });
    assert.equal(invited.status, 200, invited.raw);

    const { page: admin, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    const look = async (page: typeof admin, name: string) => {
      await checkAccessibility(page);
      await screenshot(page, 'invitation', name);
    };

    // The admin's own invitation names the business.
    await admin.goto(`${origin}${new URL(invited.body.data.invitationUrl).pathname}`);
    assert.equal(await admin.textContent('h1'), 'Join Harbour Lights Trading');
    assert.equal(await admin.textContent('[data-merchant]'), 'Harbour Lights Trading');
    assert.doesNotMatch((await admin.textContent('main')) ?? '', /Some Other Shop/);
    await look(admin, 'invitation');
    await admin.fill('#password', PASSWORD);
    await admin.fill('#confirm', PASSWORD);
    await Promise.all([admin.waitForURL(`${origin}/manager`), admin.click('main button[type=submit]')]);

    // The admin invites someone on the Team page; the link is shown once; the invitation is listed as open.
    await admin.goto(`${origin}/manager/team`);
    await admin.fill('#invite-email', 'newcomer@harbour.example');
    await admin.selectOption('#invite-role', 'viewer');
    await Promise.all([admin.waitForLoadState(), admin.click('button[data-action="invite"]')]);
    const link = ((await admin.textContent('[data-invitation-url]')) ?? '').trim();
    assert.match(link, /\/manager\/invitations\/[A-Za-z0-9]{43}$/);
    const row = admin.locator('li[data-invitation]', { hasText: 'newcomer@harbour.example' });
    assert.equal(await row.count(), 1);

    // The invitee sees which business invited them (their own browser: no session).
    const context = await admin
      .context()
      .browser()!
      .newContext({ viewport: { width: 1280, height: 900 } });
    t.after(() => context.close());
    const invitee = await context.newPage();
    await invitee.goto(link);
    assert.equal(await invitee.textContent('[data-merchant]'), 'Harbour Lights Trading');
    assert.match((await invitee.textContent('#invitation-for')) ?? '', /as viewer, with the address newcomer@harbour\.example/);

    // The admin cancels it: POST, 303 back to the Team page, the invitation gone.
    await admin.goto(`${origin}/manager/team`);
    await look(admin, 'team-open-invitation');
    await row.locator('summary[data-confirm-open="revoke-invitation"]').click();
    const [response] = await Promise.all([
      admin.waitForResponse((r) => r.request().method() === 'POST' && /\/manager\/team\/invitations\/\d+\/revoke$/.test(r.url())),
      row.locator('button[data-action="revoke-invitation"]').click(),
    ]);
    assert.equal(response.status(), 303);
    assert.equal(response.headers().location, '/manager/team');
    await admin.waitForURL(`${origin}/manager/team`);
    assert.equal(await admin.locator('li[data-invitation]', { hasText: 'newcomer@harbour.example' }).count(), 0, 'no longer listed');
    await look(admin, 'team-invitation-cancelled');
    const audit = await app.store.db.selectFrom('audit_log').select(['action', 'target']).where('action', '=', 'merchant_user.revoke_invitation').execute();
    assert.deepEqual(audit, [{ action: 'merchant_user.revoke_invitation', target: 'merchant_user:newcomer@harbour.example' }]);

    // The invitee's open page can no longer be used, nor the link opened again.
    await invitee.fill('#password', PASSWORD);
    await invitee.fill('#confirm', PASSWORD);
    await invitee.click('main button[type=submit]');
    await invitee.waitForLoadState('load');
    assert.match((await invitee.textContent('main')) ?? '', /This invitation link is not valid/);
    const reopened = await invitee.goto(link);
    assert.equal(reopened?.status(), 404);
    await look(invitee, 'invitation-cancelled');
    const users = await app.store.db.selectFrom('merchant_users').select('email').where('email_key', '=', 'newcomer@harbour.example').execute();
    assert.deepEqual(users, [], 'no account was made');

    assert.deepEqual(foreign, [], 'nothing loaded from another origin');
    assert.deepEqual(
      consoleErrors.filter((e) => !/404/.test(e)),
      [],
    );
  });
});
