import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, consoleSignIn, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, loadCatalogue } from '../helpers.ts';

const SKIP = chromiumSkip('the edit conflict browser test');
const PASSWORD = 'edit conflict passphrase';

/**
 * Two tabs on one product's edit form, in Chromium against a real server (docs/web.md, "Edit
 * conflicts"): tab A renames the product; tab B, opened before, changes only the price and saves.
 * Before optimistic concurrency tab B said "saved" and the old name came back; now its save writes
 * nothing and answers the conflict page (409) with both versions, which passes axe-core with no
 * serious or critical violation; "Save mine over the stored version" applies tab B's fields
 * against the stored version, and "Discard" goes back to the stored one. Screenshots at 1280 and
 * 390 px in test-output/edit-conflict/.
 */
describe('console: two tabs on one product edit form in a real browser', { skip: SKIP }, () => {
  it('the second tab’s stale save does not undo the first tab’s rename: a conflict page instead', { timeout: 300_000 }, async (t) => {
    const app = await buildTestApp(t, 'sqlite');
    await loadCatalogue(app);
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'owner@example.com', role: 'owner', password: PASSWORD },
      Date.now(),
    );
    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page: tabA, foreign, consoleErrors, newTab } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await consoleSignIn(tabA, origin, 'owner@example.com', PASSWORD);
    // A second tab of the same browser: the same session.
    const tabB = await newTab();
    const submit = async (page: Page, selector: string) => {
      const [response] = await Promise.all([page.waitForNavigation(), page.click(selector)]);
      return response!.status();
    };
    const stored = async () => app.store.db.selectFrom('products').select(['name', 'price_cents']).where('sku', '=', 'SKU-A').executeTakeFirstOrThrow();
    const edit = `${origin}/console/products/SKU-A/edit`;

    // Tab B opens the form first and is left open.
    await tabB.goto(edit);
    // Tab A renames the product and saves.
    await tabA.goto(edit);
    await tabA.fill('#name', 'Mug, renamed');
    await submit(tabA, 'button[data-action="save-product"]');
    assert.match((await tabA.textContent('[data-notice]'))!, /Product SKU-A saved/);
    assert.deepEqual(await stored(), { name: 'Mug, renamed', price_cents: 932 });

    // Tab B changes only the price and saves: nothing written, the conflict page with both versions.
    await tabB.fill('#price', '15.00');
    assert.equal(await submit(tabB, 'button[data-action="save-product"]'), 409);
    assert.deepEqual(await stored(), { name: 'Mug, renamed', price_cents: 932 }, 'the stale save did not put the old name back');
    assert.match((await tabB.textContent('h1'))!, /Not saved: Product SKU-A changed meanwhile/);
    const rows = await tabB.$$eval('table[data-conflict] tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('th, td')].map((cell) => cell.textContent?.trim() ?? '')),
    );
    assert.deepEqual(rows, [
      ['Name', 'Mug', 'Mug, renamed'],
      ['Price (USD)', '15.00', '9.32'],
    ]);
    await checkAccessibility(tabB);
    await screenshot(tabB, 'edit-conflict', 'product-conflict');

    // "Discard mine": the edit form of what is stored now.
    await submit(tabB, 'a[data-action="discard"]');
    assert.equal(await tabB.inputValue('#name'), 'Mug, renamed');
    assert.equal(await tabB.inputValue('#price'), '9.32');

    // The stale save again, and this time "Save mine over the stored version": tab B's fields win, knowingly.
    await tabA.goto(edit);
    await tabA.fill('#weightGrams', '360');
    await submit(tabA, 'button[data-action="save-product"]');
    await tabB.fill('#price', '15.00');
    assert.equal(await submit(tabB, 'button[data-action="save-product"]'), 409);
    assert.equal(await submit(tabB, 'button[data-action="reapply"]'), 200);
    assert.match((await tabB.textContent('[data-notice]'))!, /Product SKU-A saved/);
    assert.deepEqual(await stored(), { name: 'Mug, renamed', price_cents: 1500 });

    assert.deepEqual(foreign, [], 'nothing loaded from elsewhere');
    // Chromium logs every 4xx page it loads: the two conflict pages, nothing else.
    assert.deepEqual(consoleErrors, Array(2).fill('Failed to load resource: the server responded with a status of 409 (Conflict)'));
  });
});
