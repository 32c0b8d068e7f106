import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createStaff } from '../../src/services/staff.service.ts';
import { checkAccessibility, chromiumSkip, consoleSignIn, localOnlyPage, screenshot } from './browser.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

const SKIP = chromiumSkip('the console claims browser test');
const PASSWORD = 'claims desk passphrase';
/** A real 1×1 PNG: the thumbnail decodes. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(200, 32)]);

/**
 * The console's claims queue and a claim's page in Chromium (issue 40 item 6): the overdue claim
 * marked, the thumbnail an image from the console's download route and the PDF a link, approve
 * hidden until its confirmation is opened, then credited after POST → 303 → GET with the notice.
 * axe-core (0 serious or critical) on the queue and the claim, at 1280 and 390 px, and nothing
 * scrolls sideways on the phone.
 */
describe('console claims in a real browser', { skip: SKIP }, () => {
  it('works the queue and decides a claim, accessible at 1280 and 390 px', { timeout: 300_000 }, async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-claims-browser-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const app = await buildTestApp(t, 'sqlite', { DATA_DIR: dataDir });
    await createStaff(
      app.store.db,
      { kind: 'cli', id: 'test', requestId: null },
      { email: 'desk@example.com', role: 'support', password: PASSWORD },
      Date.now(),
    );
    await loadCatalogue(app, ORDER_CATALOGUE);
    await app.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'A', warehouseCode: 'G007', qty: 100 }] });
    const shop = await newMerchant(app, 'Claims shop');
    const o = await placeOrder(app, shop.token, [{ sku: 'A', quantity: 3 }], { orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'P' } });
    const split = o.splitOrders[0].id as string;
    assert.equal((await app.admin('POST', `/admin/v1/split-orders/${split}/ship`, { carrier: 'UPS', trackingCode: '1ZB' })).status, 200);
    const files: string[] = [];
    for (const [bytes, type] of [
      [PNG, 'image/png'],
      [PDF, 'application/pdf'],
    ] as const) {
      const r = await app.app.inject({
        method: 'POST',
        url: '/openapi/v1/claims/files',
        payload: bytes,
        headers: { authorization: `Bearer ${shop.token}`, 'content-type': type },
      });
      assert.equal(r.statusCode, 200, r.body);
      files.push(r.json().data.fileId);
    }
    const claimNos: string[] = [];
    for (const [reason, evidence] of [
      ['damaged', files],
      ['missing_parts', []],
    ] as const) {
      const r = await app.merchant(shop.token, 'POST', '/openapi/v1/claims', {
        orderId: split,
        reason,
        resolution: 'refund',
        items: [{ sku: 'A', quantity: 1 }],
        description: 'The box arrived crushed and one part is missing.',
        evidence,
      });
      assert.equal(r.status, 200, r.raw);
      claimNos.push(r.body.data.claimNo);
    }
    // The first one is three days old: past the 48 h SLA.
    await app.store.db
      .updateTable('claims')
      .set({ created_at: Date.now() - 72 * 3600 * 1000 })
      .where('id', '=', Number(claimNos[0]))
      .execute();

    await app.app.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
    const { page, foreign, consoleErrors } = await localOnlyPage(t, origin, { width: 1280, height: 900 });
    await consoleSignIn(page, origin, 'desk@example.com', PASSWORD);
    const atPhone = async (name: string) => {
      await page.setViewportSize({ width: 390, height: 844 });
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), 0, `${name}: nothing scrolls sideways at 390 px`);
      await checkAccessibility(page);
      await page.setViewportSize({ width: 1280, height: 900 });
    };

    await page.goto(`${origin}/console/claims`);
    const overdue = page.locator(`#claim-${claimNos[0]}`);
    assert.equal(await overdue.getAttribute('class'), 'breach');
    assert.match((await overdue.locator('td[data-label="Waiting"]').textContent())!, /past SLA/);
    assert.equal(await page.locator(`#claim-${claimNos[1]}`).getAttribute('class'), null);
    await checkAccessibility(page);
    await screenshot(page, 'claims', 'queue');
    await atPhone('queue');
    assert.equal(await overdue.locator('td[data-label="Waiting"]').isVisible(), true);

    await overdue.locator(`a[data-claim="${claimNos[0]}"]`).click();
    await page.waitForURL(`${origin}/console/claims/${claimNos[0]}`);
    // The thumbnail is an image from the console's route that decoded; the PDF a link only.
    const img = page.locator(`li[data-file="${files[0]}"] img`);
    await img.evaluate((el) => (el as HTMLImageElement).decode());
    assert.equal(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth), 1);
    assert.equal(await page.locator(`li[data-file="${files[1]}"] img`).count(), 0);
    assert.equal(await page.locator(`li[data-file="${files[1]}"] a`).getAttribute('href'), `/console/claims/files/${files[1]}`);
    assert.equal(await page.locator('button[data-action="approve"]').isVisible(), false, 'approve hidden until asked');
    await checkAccessibility(page);
    await screenshot(page, 'claims', 'claim');
    await atPhone('claim');

    await page.locator('summary[data-confirm-open="approve"]').click();
    await page.locator('#approve-note').fill('Sorry about the box');
    await page.locator('button[data-action="approve"]').click();
    await page.waitForSelector('.notice, #flash :text("approved and credited")', { timeout: 30_000 });
    assert.match((await page.textContent('#flash'))!, new RegExp(`Claim ${claimNos[0]} approved and credited\\.`));
    assert.match((await page.textContent('h1'))!, /Credited$/);
    assert.match((await page.textContent('[data-history]'))!, /desk@example\.com — approved \(Credited\)/);
    await checkAccessibility(page);
    await screenshot(page, 'claims', 'credited');
    assert.deepEqual(foreign, []);
    assert.deepEqual(consoleErrors, []);
  });
});
