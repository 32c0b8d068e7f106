import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot, consoleSignIn } from './browser.ts';
import { buildTestApp } from '../helpers.ts';

const SKIP = chromiumSkip('the staff password reset browser test');
const PASSWORD = 'staff reset browser passphrase';
const NEW = 'a new chosen staff passphrase';

/**
 * Issue 32 item 5, the console's side, in Chromium against a real server: an owner makes a
 * password reset link for a staff member (shown once), the staff member opens it in a browser of
 * their own (a fresh context: no session, no cookie), chooses a password and signs in with it. The
 * form's POST, sent again (a reload that resubmits), is refused and applies nothing the second
 * time. Pages checked with axe-core and screenshotted (test-output/staff-reset/).
 */
describe('console: a staff password reset link in a real browser', { skip: SKIP }, () => {
  it('the owner makes the link, the staff member sets a password on it in a fresh browser and signs in; a resubmitted POST does not apply twice', {
    timeout: 300_000,
  }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    const cli = { kind: 'cli' as const, id: 'test', requestId: null };
    await createStaff(app.store.db, cli, { email: 'owner@example.com', role: 'owner', password: PASSWORD }, Date.now());
    const target = await createStaff(app.store.db, cli, { email: 'forgetful@example.com', role: 'warehouse', password: PASSWORD }, Date.now());
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const resetsApplied = async () =>
      (
        await app.store.db
          .selectFrom('audit_log')
          .select('id')
          .where('action', '=', 'staff.reset_password')
          .where('target', '=', 'staff:forgetful@example.com')
          .execute()
      ).length;

    // The owner, in the browser of localOnlyPage.
    const { page: owner, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await consoleSignIn(owner, origin, 'owner@example.com', PASSWORD);
    await owner.goto(`${origin}/console/staff`);
    await Promise.all([
      owner.waitForNavigation(),
      owner.click(`tr[data-staff="forgetful@example.com"] form[action="/console/staff/${target.id}/reset-password"] button[data-action="reset-password"]`),
    ]);
    assert.equal(owner.url(), `${origin}/console/staff`, 'the reset answers 303 to the staff page, which shows the link');
    const link = ((await owner.textContent('[data-reset-url]')) ?? '').trim();
    assert.match(link, new RegExp(`^${origin}/console/password-reset/[A-Za-z0-9]{43}$`));
    await checkAccessibility(owner);
    await screenshot(owner, 'staff-reset', 'link-shown');
    await owner.goto(`${origin}/console/staff`);
    assert.ok(!(await owner.content()).includes(link), 'the link is shown once');

    // The staff member, in a browser context of their own: no cookie, no session.
    const context = await owner
      .context()
      .browser()!
      .newContext({ viewport: { width: 1280, height: 900 } });
    t.after(() => context.close());
    const staff = await context.newPage();
    assert.deepEqual(await context.cookies(), []);
    await staff.goto(link);
    assert.match((await staff.textContent('main')) ?? '', /forgetful@example\.com/);
    await checkAccessibility(staff);
    await screenshot(staff, 'staff-reset', 'choose-password');
    // A common password is refused on the page, nothing applied.
    await staff.fill('#password', 'password1234');
    await staff.fill('#confirm', 'password1234');
    await staff.click('button[type=submit]');
    await staff.waitForSelector('p.error');
    assert.match((await staff.textContent('p.error')) ?? '', /too easy to guess/);
    assert.equal(await resetsApplied(), 0);
    await staff.fill('#password', NEW);
    await staff.fill('#confirm', NEW);
    await Promise.all([staff.waitForURL(`${origin}/console/sign-in?reset=1`), staff.click('button[type=submit]')]);
    assert.match((await staff.textContent('#sign-in-done')) ?? '', /Your new password is set/);
    await checkAccessibility(staff);
    await screenshot(staff, 'staff-reset', 'password-set');
    assert.equal(await resetsApplied(), 1);

    // A reload shows the sign-in page again (the POST answered with a redirect); the POST itself, sent again, is refused.
    await staff.reload();
    assert.equal(staff.url(), `${origin}/console/sign-in?reset=1`);
    const again = await staff.evaluate(
      async ([url, password]) => {
        const r = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ password, confirm: password }),
          redirect: 'manual',
        });
        return { status: r.status, body: await r.text() };
      },
      [link, 'yet another staff passphrase'] as const,
    );
    assert.equal(again.status, 404);
    assert.match(again.body, /This password reset link is not valid/);
    assert.equal(await resetsApplied(), 1, 'applied once');
    await staff.goto(link);
    assert.match((await staff.textContent('main')) ?? '', /This password reset link is not valid/);
    await checkAccessibility(staff);
    await screenshot(staff, 'staff-reset', 'link-used');

    // Signs in with the new password, not the old one nor the refused resubmission's.
    const signIn = async (password: string) => {
      await staff.goto(`${origin}/console/sign-in`);
      await staff.fill('#email', 'forgetful@example.com');
      await staff.fill('#password', password);
      await staff.click('button[type=submit]');
      await staff.waitForLoadState('load');
    };
    await signIn(PASSWORD);
    assert.match((await staff.textContent('p.error')) ?? '', /Wrong email or password/);
    await signIn('yet another staff passphrase');
    assert.match((await staff.textContent('p.error')) ?? '', /Wrong email or password/);
    await signIn(NEW);
    assert.equal(staff.url(), `${origin}/console`);
    assert.match((await staff.textContent('header')) ?? '', /forgetful@example\.com \(warehouse\)/);

    assert.deepEqual(foreign, [], 'nothing loaded from another origin');
    assert.deepEqual(consoleErrors, []);
  });
});
