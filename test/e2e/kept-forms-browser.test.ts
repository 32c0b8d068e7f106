import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { createStaff } from '../../src/services/staff.service.ts';
import { buildTestApp, type TestApp } from '../helpers.ts';
import { checkAccessibility, chromiumSkip, consoleSignIn, localOnlyPage, screenshot } from './browser.ts';

const SKIP = chromiumSkip('the kept forms browser test');
const PASSWORD = 'kept forms passphrase';

const products = async (app: TestApp) =>
  Number(
    (
      await app.store.db
        .selectFrom('products')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/**
 * Front ends III, 3, as a person meets it: the session ends while a form is being filled in; the
 * button then leads to the sign-in page (saying the form was not sent), and signing in leads back
 * to the same form filled in. Nothing is written until the button is pressed again.
 */
describe('a form survives the session ending, in a real browser', { skip: SKIP }, () => {
  it('console: new product, session idles out, submit, sign in, the form is filled, nothing written until pressed', { timeout: 300_000 }, async (t) => {
    const clock = { now: Date.now() };
    const app = await buildTestApp(t, 'sqlite', { CONSOLE_SESSION_IDLE_MINUTES: '30' }, { now: () => clock.now });
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'keeper@example.com', role: 'owner', password: PASSWORD },
      Date.now(),
    );
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });

    await consoleSignIn(page, origin, 'keeper@example.com', PASSWORD);
    await page.goto(`${origin}/console/new-product`);
    await page.fill('#sku', 'KEPT-B1');
    await page.fill('#name', 'Kept in the browser');
    await page.fill('#price', '9.75');
    await page.fill('#weightGrams', '120');
    await page.fill('#optionsJson', '{"colour":"teal"}');
    const before = await products(app);

    // The session idles out while the form is open.
    clock.now += 31 * 60_000;
    await Promise.all([page.waitForNavigation(), page.click('#product-form button[type=submit]')]);
    assert.match((await page.textContent('main'))!, /Your session had ended, so that form was not sent and nothing was changed/);
    assert.equal(await page.locator('main form[action="/console/sign-in"]').count(), 1, 'the sign-in form, not a bare error page');
    assert.equal(await products(app), before, 'nothing written');
    await checkAccessibility(page);
    await screenshot(page, 'kept-forms', 'sign-in-again');

    await page.fill('#email', 'keeper@example.com');
    await page.fill('#password', PASSWORD);
    await Promise.all([page.waitForURL(`${origin}/console/new-product`), page.click('main button[type=submit]')]);
    assert.match((await page.textContent('main'))!, /the form is filled in as you left it, but not sent/);
    assert.equal(await page.inputValue('#sku'), 'KEPT-B1');
    assert.equal(await page.inputValue('#name'), 'Kept in the browser');
    assert.equal(await page.inputValue('#price'), '9.75');
    assert.equal(await page.inputValue('#weightGrams'), '120');
    assert.equal(await page.inputValue('#optionsJson'), '{"colour":"teal"}');
    assert.equal(await products(app), before, 'filled, not sent');
    await checkAccessibility(page);
    await screenshot(page, 'kept-forms', 'filled-again');

    // Pressed: now it is sent, once.
    await Promise.all([page.waitForNavigation(), page.click('#product-form button[type=submit]')]);
    assert.equal(await products(app), before + 1);
    const created = await app.store.db.selectFrom('products').select(['sku', 'name']).where('sku', '=', 'KEPT-B1').executeTakeFirst();
    assert.equal(created?.name, 'Kept in the browser');

    assert.deepEqual(foreign, [], 'no request left the server');
    // Chromium logs the 401 of the signed-out submission itself; nothing else.
    assert.deepEqual(
      consoleErrors.filter((e) => !/status of 401/.test(e)),
      [],
      'no script errors',
    );
  });
});
