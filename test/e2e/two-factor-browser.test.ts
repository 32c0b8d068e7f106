import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Secret, TOTP } from 'otpauth';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, newMerchant } from '../helpers.ts';

const SKIP = chromiumSkip('the two-factor browser test');
const PASSWORD = 'browser test passphrase';

const code = (secret: string, at: number) => TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: at });

/**
 * Issue 29, 13, as a person sees it: the QR code on the enrolment page, recovery codes shown once
 * on the page the form's 303 leads to (a reload shows none), new codes, one signing in once; and
 * an admin's reset of the member's two-factor, asked first on the Team page.
 */
describe('business manager two-factor in a real browser', { skip: SKIP }, () => {
  it('enrols from an inline SVG QR code, shows ten recovery codes once, signs in with one once only; an admin resets it after a confirmation', {
    timeout: 240_000,
  }, async (t) => {
    // Every password and code tried draws on the account's sign-in limit (five, one more a minute):
    // the server's clock moves on ten minutes where the story needs more tries.
    let ahead = 0;
    const app = await buildTestApp(t, 'sqlite', {}, { now: () => Date.now() + ahead });
    const m = await newMerchant(app, 'Two-factor shop');
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'phone@browser.example', role: 'developer' });
    assert.equal(invited.status, 200, invited.raw);
    const admin = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'admin@browser.example', role: 'admin' });
    assert.equal(admin.status, 200, admin.raw);

    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    const look = async (name: string) => {
      await checkAccessibility(page);
      await screenshot(page, 'two-factor', name);
    };
    await page.goto(`${origin}${new URL(invited.body.data.invitationUrl).pathname}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);

    // The enrolment page: the QR code is inline SVG, drawn at its size, named for screen readers.
    await page.goto(`${origin}/manager/two-factor`);
    const qr = page.locator('figure[data-totp-qr] > svg');
    assert.equal(await qr.count(), 1);
    assert.equal(await qr.getAttribute('role'), 'img');
    assert.match((await qr.getAttribute('aria-label')) ?? '', /QR code/);
    const box = (await qr.boundingBox())!;
    assert.ok(box.width >= 150 && Math.abs(box.width - box.height) < 1, `a square of at least 150 px: ${JSON.stringify(box)}`);
    assert.ok((await page.locator('figure[data-totp-qr] svg path').count()) >= 2, 'drawn with paths');
    await look('enrol');
    await page.setViewportSize({ width: 390, height: 900 });
    assert.ok((await qr.boundingBox())!.width <= 390, 'fits a phone');
    await page.setViewportSize({ width: 1280, height: 900 });

    const secret = (await page.textContent('[data-totp-secret]'))!;
    const enrolledAt = Date.now();
    await page.fill('#password', PASSWORD);
    await page.fill('#code', code(secret, enrolledAt));
    // POST → 303 → the two-factor page, which shows the codes this once.
    await Promise.all([page.waitForNavigation(), page.click('main button[type=submit]')]);
    assert.equal(page.url(), `${origin}/manager/two-factor`);
    assert.equal(await page.getAttribute('[data-two-factor]', 'data-two-factor'), 'on');
    const codes = await page.locator('[data-recovery-code]').allTextContents();
    assert.equal(codes.length, 10);
    await look('recovery-codes');
    // Shown once: a reload (a GET: the form is not sent again) lists none, only how many are left.
    await page.reload();
    assert.equal(await page.locator('[data-recovery-code]').count(), 0);
    assert.equal(await page.getAttribute('[data-recovery-codes-left]', 'data-recovery-codes-left'), '10');
    assert.equal(await page.locator('[data-notice]').count(), 0, 'nothing was sent again');

    const signInWith = async (recoveryCode: string) => {
      await Promise.all([page.waitForURL(`${origin}/manager/sign-in`), page.click('.who button[type=submit]')]);
      await page.fill('#email', 'phone@browser.example');
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL(`${origin}/manager/sign-in/code`), page.click('main button[type=submit]')]);
      await page.fill('#code', recoveryCode);
      await Promise.all([page.waitForLoadState(), page.click('main button[type=submit]')]);
    };

    // No phone: a recovery code signs in, once.
    await page.goto(`${origin}/manager/two-factor`);
    await signInWith(codes[0]);
    assert.equal(page.url(), `${origin}/manager`);
    await page.goto(`${origin}/manager/two-factor`);
    assert.equal(await page.getAttribute('[data-recovery-codes-left]', 'data-recovery-codes-left'), '9');
    assert.match((await page.textContent('[data-recovery-codes-left]'))!, /You have 9 unused recovery codes left\./);
    await look('codes-left');

    // New codes (the password as proof): shown once after the 303; the old ones, used or not, stop.
    ahead += 10 * 60_000;
    await page.fill('#proof', PASSWORD);
    await Promise.all([page.waitForNavigation(), page.click('button[data-action="regenerate-recovery-codes"]')]);
    assert.equal(page.url(), `${origin}/manager/two-factor`);
    const fresh = await page.locator('[data-recovery-code]').allTextContents();
    assert.equal(fresh.length, 10);
    assert.ok(!fresh.some((c) => codes.includes(c)));
    assert.equal(await page.getAttribute('[data-recovery-codes-left]', 'data-recovery-codes-left'), '10');
    await page.reload();
    assert.equal(await page.locator('[data-recovery-code]').count(), 0, 'shown once');

    await page.goto(`${origin}/manager/two-factor`);
    await signInWith(codes[0]);
    assert.equal(page.url(), `${origin}/manager/sign-in/code`, 'the used code is refused');
    assert.match((await page.textContent('main .error'))!, /not right \(or was used already\)/);
    await look('recovery-code-refused');

    // The admin resets the member's two-factor from the Team page: asked first; dismissed, nothing changes.
    await page.context().clearCookies();
    await page.goto(`${origin}${new URL(admin.body.data.invitationUrl).pathname}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);
    await page.goto(`${origin}/manager/team`);
    const row = page.locator('tr', { hasText: 'phone@browser.example' });
    const summary = row.locator('summary[data-confirm-open="reset-two-factor"]');
    assert.equal(await row.locator('button[data-action="reset-two-factor"]').isVisible(), false, 'the real button is behind the question');
    await summary.click();
    assert.match(
      (await row.locator('details.confirm[open] .confirm-body').textContent())!,
      /Two-factor sign-in of phone@browser\.example is turned off: their authenticator key and recovery codes stop working, and they are signed out everywhere at once/,
    );
    await look('reset-confirm');
    await summary.click();
    await page.reload();
    assert.match((await row.textContent())!, /\bon\b/, 'dismissed: two-factor is still on');
    await summary.click();
    await Promise.all([page.waitForURL(`${origin}/manager/team`), row.locator('button[data-action="reset-two-factor"]').click()]);
    assert.match((await page.textContent('[data-notice]'))!, /Two-factor sign-in of phone@browser\.example is off, and their sessions have ended/);
    assert.equal(await row.locator('summary[data-confirm-open="reset-two-factor"]').count(), 0, 'nothing left to reset');
    await look('reset-done');
    await page.reload();
    assert.equal(await page.locator('[data-notice]').count(), 0, 'said once');

    // The member signs in with the password alone and may enrol again.
    await page.context().clearCookies();
    await page.goto(`${origin}/manager/sign-in`);
    await page.fill('#email', 'phone@browser.example');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);
    await page.goto(`${origin}/manager/two-factor`);
    assert.equal(await page.getAttribute('[data-two-factor]', 'data-two-factor'), 'off');

    assert.deepEqual(foreign, [], 'nothing loaded from elsewhere');
    assert.deepEqual(consoleErrors, ['Failed to load resource: the server responded with a status of 401 (Unauthorized)'], 'only the refused code’s page');
  });
});
