import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { seedDemo } from '../../src/demo/seed.ts';
import { demoSku } from '../../src/demo/demo-data.ts';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, consoleSignIn, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp } from '../helpers.ts';
import { placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the keyboard and phone browser test');
const PASSWORD = 'keyboard phone passphrase';
const PHONE = 390;

/** The element that has the focus, as `tag#id.class` and its text. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const e = document.activeElement as HTMLElement | null;
    return e ? { tag: e.tagName.toLowerCase(), id: e.id, className: e.className, text: (e.textContent ?? '').trim() } : null;
  });

/** The computed outline of the focused element (only :focus-visible draws one). */
const focusOutline = (page: Page) =>
  page.evaluate(() => {
    const e = document.activeElement as HTMLElement;
    const style = getComputedStyle(e);
    return { style: style.outlineStyle, width: Number.parseFloat(style.outlineWidth), color: style.outlineColor, focusVisible: e.matches(':focus-visible') };
  });

/**
 * The elements matching `selector` that reach past the phone's right edge or sit in a region that
 * scrolls sideways (so the reader would have to scroll to see them), as text for the message.
 */
const offScreen = (page: Page, selector: string) =>
  page.evaluate(
    ([selector, width]) =>
      [...document.querySelectorAll(selector)]
        .filter((e) => {
          const box = e.getBoundingClientRect();
          if (box.right > width + 0.5 || box.left < -0.5) return true;
          for (let p = e.parentElement; p; p = p.parentElement)
            if (p.scrollWidth > p.clientWidth + 1 && getComputedStyle(p).overflowX !== 'visible') return true;
          return false;
        })
        .map((e) => `${e.tagName.toLowerCase()} ${(e.textContent ?? '').trim().slice(0, 40)}`),
    [selector, PHONE] as const,
  );

/** Tab from the top of the page: the skip link is the first stop, shown with its focus ring, and Enter puts the focus on <main>. */
async function skipLinkWorks(page: Page, where: string) {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('Tab');
  assert.deepEqual(await focused(page), { tag: 'a', id: '', className: 'skip-link', text: 'Skip to content' }, `${where}: the skip link is the first tab stop`);
  const box = await page.locator('.skip-link').boundingBox();
  assert.ok(box && box.y >= 0 && box.height > 0, `${where}: the focused skip link is on screen`);
  const ring = await focusOutline(page);
  assert.ok(ring.focusVisible && ring.style === 'solid' && ring.width >= 2, `${where}: the skip link shows a focus ring (${JSON.stringify(ring)})`);
  await page.keyboard.press('Enter');
  assert.equal((await focused(page))?.tag, 'main', `${where}: Enter on the skip link moves the focus to main`);
  // The next Tab goes on from inside main, past the header's navigation.
  await page.keyboard.press('Tab');
  assert.ok(await page.evaluate(() => !!document.activeElement?.closest('main')), `${where}: the tab after the skip link is inside main`);
}

/** Tabs through the page: every stop shows a solid outline of at least 2 px (the ring). */
async function everyStopHasARing(page: Page, where: string, stops = 25) {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  const missing: string[] = [];
  for (let i = 0; i < stops; i++) {
    await page.keyboard.press('Tab');
    const ring = await focusOutline(page);
    const at = await focused(page);
    if (at?.tag === 'body') break;
    if (!(ring.focusVisible && ring.style !== 'none' && ring.width >= 2))
      missing.push(`${at?.tag}.${at?.className} "${at?.text.slice(0, 30)}": ${JSON.stringify(ring)}`);
  }
  assert.deepEqual(missing, [], `${where}: focus stops without a visible ring`);
}

/** At 390 px the navigation is folded behind "Menu"; Enter opens it, Escape closes it again and the focus returns to the button. */
async function menuCollapses(page: Page, where: string) {
  const menu = page.locator('button.menu-toggle');
  assert.equal(await menu.isVisible(), true, `${where}: the Menu button shows on a phone`);
  assert.equal(await menu.getAttribute('aria-expanded'), 'false');
  assert.equal(await page.locator('#site-nav').isVisible(), false, `${where}: the navigation is folded away`);
  await menu.focus();
  await page.keyboard.press('Enter');
  assert.equal(await menu.getAttribute('aria-expanded'), 'true', `${where}: Enter opens the menu`);
  assert.equal(await page.locator('#site-nav').isVisible(), true);
  assert.equal(await page.evaluate('document.documentElement.scrollWidth'), PHONE, `${where}: the open menu fits the phone`);
  await checkAccessibility(page);
  await page.keyboard.press('Tab');
  assert.ok(await page.evaluate(() => !!document.activeElement?.closest('#site-nav')), `${where}: the next tab stop is in the navigation`);
  await page.keyboard.press('Escape');
  assert.equal(await menu.getAttribute('aria-expanded'), 'false', `${where}: Escape closes the menu`);
  assert.equal((await focused(page))?.className, 'menu-toggle', `${where}: the focus is back on the Menu button`);
  await page.keyboard.press('Space');
  assert.equal(await menu.getAttribute('aria-expanded'), 'true', `${where}: Space opens it too`);
  await page.keyboard.press('Space');
  // On a wide screen the navigation is shown and there is no Menu button.
  await page.setViewportSize({ width: 1280, height: 900 });
  assert.equal(await menu.isVisible(), false, `${where}: no Menu button on a wide screen`);
  assert.equal(await page.locator('#site-nav').isVisible(), true);
  await page.setViewportSize({ width: PHONE, height: 900 });
}

/** The page does not scroll sideways and what `selector` names is on screen without scrolling. */
async function fitsAndShows(page: Page, selector: string, what: string) {
  assert.equal(await page.evaluate('document.documentElement.scrollWidth'), PHONE, `${what}: the page fits ${PHONE} px`);
  assert.ok((await page.locator(selector).count()) > 0, `${what}: ${selector} is on the page`);
  assert.deepEqual(await offScreen(page, selector), [], `${what}: shown without scrolling sideways`);
}

/**
 * Issue 44, item 6: keyboard and phones on both front ends. The skip link is the first tab stop and
 * moves the focus to main; every control shows a focus ring; at 390 px the refund queue's actions,
 * the audit logs' changes and the balance's amounts are on screen without sideways scrolling (rows
 * stacked as cards), the navigation folds behind a Menu button that a keyboard opens and closes,
 * and /sdk fits. axe-core finds nothing serious or critical on each state.
 */
describe('keyboard and phone (issue 44, 6)', { skip: SKIP }, () => {
  it('skip link, focus ring, folded navigation and stacked tables at 390 px, in the console and the business manager', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite', { REFUND_REVIEW: 'manual' });
    const demo = await seedDemo(app.store, app.config);
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'owner@stockist.test', role: 'owner', password: PASSWORD },
      Date.now(),
    );
    const order = await placeOrder(app, demo.token, [
      { sku: demoSku(1), quantity: 2 },
      { sku: demoSku(2), quantity: 1 },
    ]);
    const refund = await app.merchant(demo.token, 'POST', `/openapi/v2/order/orders/${order.id}/refund`, {
      skuCode: demoSku(1),
      quantity: 1,
      refundReason: 'Other',
      remark: 'The box arrived crushed; the customer sent photos of both sides.',
    });
    assert.equal(refund.status, 200, refund.raw);
    const invited = await app.admin('POST', `/admin/v1/merchants/${demo.merchantId}/users`, { email: 'admin@demo-merchant.example', role: 'admin' });
    assert.equal(invited.status, 200, invited.raw);
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: PHONE, height: 900 });

    // The console at 390 px.
    await consoleSignIn(page, origin, 'owner@stockist.test', PASSWORD);
    await skipLinkWorks(page, 'console dashboard');
    await menuCollapses(page, 'console dashboard');
    await page.goto(`${origin}/console/refunds`);
    await screenshot(page, 'keyboard-phone', 'console-refunds');
    await fitsAndShows(page, '[data-confirm-open="approve"], [data-confirm-open="reject"]', 'the refund queue');
    await fitsAndShows(page, '[data-merchant-reason], [data-lines]', 'the refund queue');
    await page.click('[data-confirm-open="reject"]');
    await fitsAndShows(page, 'button[data-action="reject"], input[name="reason"]', 'the refund queue, reject opened');
    await checkAccessibility(page);
    await everyStopHasARing(page, 'console refunds');
    await page.goto(`${origin}/console/audit`);
    await screenshot(page, 'keyboard-phone', 'console-audit');
    await fitsAndShows(page, 'td[data-change] li', 'the console audit log');
    await checkAccessibility(page);
    await skipLinkWorks(page, 'console audit');

    // The business manager at 390 px, as the merchant's admin.
    await page.goto(`${origin}${new URL(invited.body.data.invitationUrl).pathname}`);
    await skipLinkWorks(page, 'manager invitation (signed out, no navigation)');
    await everyStopHasARing(page, 'manager invitation');
    await page.fill('#password', PASSWORD);
    await page.fill('#confirm', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/manager`), page.click('main button[type=submit]')]);
    await skipLinkWorks(page, 'manager Get started');
    await menuCollapses(page, 'manager Get started');
    await everyStopHasARing(page, 'manager Get started');
    await page.goto(`${origin}/manager/balance`);
    await screenshot(page, 'keyboard-phone', 'manager-balance');
    await fitsAndShows(page, 'tr[data-transaction] td.num', 'the balance');
    await checkAccessibility(page);
    await page.goto(`${origin}/manager/audit`);
    await screenshot(page, 'keyboard-phone', 'manager-audit');
    await fitsAndShows(page, 'td[data-change] li', 'the business manager audit log');
    await checkAccessibility(page);

    // The client package's page.
    await page.goto(`${origin}/sdk`);
    await screenshot(page, 'keyboard-phone', 'sdk');
    assert.equal(await page.evaluate('document.documentElement.scrollWidth'), PHONE, '/sdk fits a phone');

    assert.deepEqual(foreign, [], 'no request leaves the server');
    assert.deepEqual(consoleErrors, [], 'no script error');
  });

  it("amounts and quantities in the viewer's locale (issue 44, 7): 1,234.50 in English, 1.234,50 in German; the CSV keeps 1234.50", {
    timeout: 120_000,
  }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    const demo = await seedDemo(app.store, app.config);
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'owner@stockist.test', role: 'owner', password: PASSWORD },
      Date.now(),
    );
    const topUp = await app.admin('POST', `/admin/v1/merchants/${demo.merchantId}/account/top-ups`, {
      environment: 'sandbox',
      amount: 1234.5,
      reference: 'BANK-LOCALE',
    });
    assert.equal(topUp.status, 200, topUp.raw);
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const cells = (page: Page) => page.locator('table tr[data-transaction] td.num').allTextContents();
    for (const [locale, amount, balance] of [
      ['en-US', '1,234.50', '1,734.50 USD'],
      ['de-DE', '1.234,50', '1.734,50 USD'],
    ] as const) {
      const { page } = await localOnlyPage(t, origin, { width: 1280, height: 900 }, [], { locale });
      await consoleSignIn(page, origin, 'owner@stockist.test', PASSWORD);
      await page.goto(`${origin}/console/merchants/${demo.merchantId}/transactions?environment=sandbox`);
      assert.ok((await cells(page)).includes(amount), `${locale}: the top-up reads ${amount} (${(await cells(page)).join(' | ')})`);
      await page.goto(`${origin}/console/merchants/${demo.merchantId}`);
      assert.equal(await page.textContent('[data-account="sandbox"] [data-field="balance"]'), balance, `${locale}: the balance`);
      // The download is for machines: no separators, a point for decimals.
      const csv = await page.evaluate(
        async (url) => (await fetch(url)).text(),
        `${origin}/console/merchants/${demo.merchantId}/transactions.csv?environment=sandbox`,
      );
      assert.match(csv, /,1234\.50,/);
    }
  });
});
