import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Secret, TOTP } from 'otpauth';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, newMerchant } from '../helpers.ts';

const SKIP = chromiumSkip('the two-factor browser test');
const PASSWORD = 'browser test passphrase';

const code = (secret: string, at: number) => TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: at });

/** Issue 29, 13, as a person sees it: the QR code on the enrolment page, recovery codes shown once, one signing in once. */
describe('business manager two-factor in a real browser', { skip: SKIP }, () => {
  it('enrols from an inline SVG QR code, shows ten recovery codes once, and signs in with one once only', { timeout: 180_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    const m = await newMerchant(app, 'Two-factor shop');
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'phone@browser.example', role: 'developer' });
    assert.equal(invited.status, 200, invited.raw);

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
    await Promise.all([page.waitForLoadState(), page.click('main button[type=submit]')]);
    assert.equal(await page.getAttribute('[data-two-factor]', 'data-two-factor'), 'on');
    const codes = await page.locator('[data-recovery-code]').allTextContents();
    assert.equal(codes.length, 10);
    await look('recovery-codes');
    // Shown once: the page itself again lists none, only how many are left.
    await page.goto(`${origin}/manager/two-factor`);
    assert.equal(await page.locator('[data-recovery-code]').count(), 0);
    assert.equal(await page.getAttribute('[data-recovery-codes-left]', 'data-recovery-codes-left'), '10');

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

    await page.goto(`${origin}/manager/two-factor`);
    await signInWith(codes[0]);
    assert.equal(page.url(), `${origin}/manager/sign-in/code`, 'the used code is refused');
    assert.match((await page.textContent('main .error'))!, /not right \(or was used already\)/);
    await look('recovery-code-refused');

    assert.deepEqual(foreign, [], 'nothing loaded from elsewhere');
    assert.deepEqual(consoleErrors, ['Failed to load resource: the server responded with a status of 401 (Unauthorized)'], 'only the refused code’s page');
  });
});
