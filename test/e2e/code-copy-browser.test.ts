import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { checkAccessibility, chromiumSkip, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, newMerchant } from '../helpers.ts';

const SKIP = chromiumSkip('the code block copy browser test');
const PASSWORD = 'code copy passphrase';

/**
 * Front ends III item 9: every code block of a page has a Copy button (the page's own static
 * script, copy.js; the CSP allows no inline one) that puts exactly the block's text on the
 * clipboard, from the keyboard as well as by click; a block that already has its own button (a
 * one-time secret) gets no second one. axe-core on the page; screenshots in test-output/code-copy/.
 */
describe('code blocks in a real browser', { skip: SKIP }, () => {
  it('each code block has one Copy button, which copies the block with Enter or Space', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    const m = await newMerchant(app, 'Code copy shop');
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const invited = await app.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'dev@code-copy.example', role: 'developer' });
    assert.equal(invited.status, 200, invited.raw);

    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    await page.goto(`${origin}${new URL(invited.body.data.invitationUrl).pathname}`);
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);

    const blocks = await page.locator('main pre:has(> code)').count();
    assert.ok(blocks >= 2, `Get started shows its commands as code blocks (${blocks})`);
    await page.locator('main pre:has(> code) + button.copy').first().waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(await page.locator('main pre:has(> code) + button.copy:visible').count(), blocks, 'one visible Copy button after each block');

    /** Focuses the Copy button after the block holding `code`, presses `key`, and returns what the clipboard then holds. */
    const copyWith = async (code: string, key: 'Enter' | ' ') => {
      const button = page.locator(`pre:has(> code${code}) + button.copy`);
      await page.evaluate(() => navigator.clipboard.writeText(''));
      await button.focus();
      await page.keyboard.press(key);
      await page.waitForFunction((b) => b?.textContent?.startsWith('Copied'), await button.elementHandle());
      return page.evaluate(() => navigator.clipboard.readText());
    };
    assert.equal(await copyWith('[data-sdk-install]', 'Enter'), await page.textContent('[data-sdk-install]'));
    assert.equal(await copyWith('[data-sdk-run]', ' '), await page.textContent('[data-sdk-run]'));
    assert.equal(await page.getAttribute('pre:has(> code[data-sdk-run]) + button.copy', 'type'), 'button');
    await checkAccessibility(page);
    await screenshot(page, 'code-copy', 'get-started');

    // With a token shown once: its blocks keep their own Copy button, and get no second one.
    await Promise.all([page.waitForLoadState(), page.click('button[data-action="get-started-token"]')]);
    await page.locator('pre:has(> code[data-curl]) + button.copy').waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(await page.locator('pre:has(> code[data-curl]) + button.copy + button.copy').count(), 0);
    assert.equal(await copyWith('[data-curl]', 'Enter'), await page.textContent('[data-curl]'));
    await checkAccessibility(page);

    assert.deepEqual(consoleErrors, [], 'no script errors (a CSP refusal would show here)');
    assert.deepEqual(foreign, [], 'nothing loaded from another origin');
  });
});
