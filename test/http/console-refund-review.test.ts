import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, loadCatalogue, newMerchant, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { follow, signedIn, staff, type Browser } from './console-client.ts';
import { member } from './manager-helpers.ts';

/**
 * The console's refund review queue: what deciding needs is on the row (the merchant's reason and
 * remark, the lines with their products and splits, whether anything of the order has shipped);
 * approve and reject ask first; a rejection needs a reason, refused in place without one, and the
 * merchant reads it (the refund's failureReason, in the API and the business manager); the count
 * of refunds waiting follows each decision.
 */

const csrfOf = (body: string) => /name="_csrf" value="([A-Za-z0-9]+)"/.exec(body)![1];
const rowOf = (html: string, refundNo: string) => {
  const start = html.indexOf(`<tr id="refund-${refundNo}"`);
  assert.ok(start >= 0, `row of refund ${refundNo}`);
  return html.slice(start, html.indexOf('</tr>', start));
};
const refundRow = (t: TestApp, refundNo: string) =>
  t.store.db.selectFrom('refunds').select(['status', 'failure_reason']).where('id', '=', Number(refundNo)).executeTakeFirstOrThrow();

for (const dialect of DIALECTS) {
  describe(`console refund review queue (${dialect})`, () => {
    const t = useApp(dialect, { REFUND_REVIEW: 'manual' });

    /** An order of B (split shipped) and C (waiting), and pending refunds of C; the support agent's browser. */
    async function queueWithShippedSplit(email: string, refunds = 2) {
      await loadCatalogue(t, ORDER_CATALOGUE);
      const m = await newMerchant(t, `Review shop ${email}`);
      const o = await placeOrder(t, m.token, [
        { sku: 'B', quantity: 1 },
        { sku: 'C', quantity: 3 },
      ]);
      const splitOf = (sku: string) => String(o.orderItems.find((i: { skuCode: string }) => i.skuCode === sku).splitOrderId);
      const shipped = await t.admin('POST', `/admin/v1/split-orders/${splitOf('B')}/ship`, { carrier: 'DHL', trackingCode: 'T1' });
      assert.equal(shipped.status, 200, shipped.raw);
      const refundNos: string[] = [];
      for (let i = 0; i < refunds; i++) {
        const r = await t.merchant(m.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, {
          skuCode: 'C',
          quantity: 1,
          refundReason: "don't want anymore",
          remark: `box ${i + 1} dented`,
        });
        assert.equal(r.status, 200, r.raw);
        refundNos.push(r.body.data);
      }
      await staff(t, email, 'support');
      const b = await signedIn(t, email);
      return { m, o, refundNos, b, splitB: splitOf('B'), splitC: splitOf('C') };
    }

    it("shows the merchant's reason and remark, the lines with their products and splits, and which split has shipped", async () => {
      const { refundNos, b, splitB, splitC } = await queueWithShippedSplit('queue-view@example.com');
      const page = await b.get('/console/refunds');
      assert.equal(page.statusCode, 200);
      const row = rowOf(page.body, refundNos[0]);
      assert.match(
        row,
        /<td role="cell" data-label="Merchant&#39;s reason" data-merchant-reason>Don&#39;t Want Anymore<br><q data-remark>box 1 dented<\/q><\/td>/,
      );
      assert.match(row, new RegExp(`<ul class="lines" data-lines><li>C Bowl × 1 \\(split ${splitC}, waiting to ship\\)</li></ul>`));
      assert.match(row, new RegExp(`<td role="cell" data-label="Shipped" data-shipped="yes"><strong>Split ${splitB} shipped</strong></td>`));
      assert.match(page.body, /<p id="queue-summary" data-waiting>\d+ refunds? waiting, oldest first\.<\/p>/);
    });

    it('approve and reject ask first: each button is inside a closed confirmation that says what happens', async () => {
      const { refundNos, b } = await queueWithShippedSplit('queue-confirm@example.com', 1);
      const row = rowOf((await b.get('/console/refunds')).body, refundNos[0]);
      for (const [action, said] of [
        ['approve', /returns its lines to stock and credits the merchant/],
        ['reject', /the merchant sees your reason/],
      ] as const) {
        const confirm = new RegExp(
          `<details class="confirm">\\s*<summary data-confirm-open="${action}">[^<]*<span class="visually-hidden"> refund ${refundNos[0]}</span></summary>\\s*<div class="confirm-body">[\\s\\S]*?data-action="${action}"[\\s\\S]*?</details>`,
        ).exec(row);
        assert.ok(confirm, `${action}: the button is inside a closed <details class="confirm">`);
        assert.match(confirm[0], said);
        assert.equal((row.match(new RegExp(`data-action="${action}"`, 'g')) ?? []).length, 1, `${action}: no button outside the confirmation`);
      }
      assert.match(row, /<input id="reason-\d+" name="reason" required maxlength="500" value="">/, 'the reason is required in the form too');
    });

    it('refuses a rejection without a reason in place (the page again, 400, the row says why; htmx: the row alone), nothing written', async () => {
      const { refundNos, b } = await queueWithShippedSplit('queue-reason@example.com', 1);
      const token = csrfOf((await b.get('/console/refunds')).body);
      for (const reason of [undefined, '', '   ']) {
        const before = await tableDigests(t.store);
        const r = await b.post(`/console/refunds/${refundNos[0]}/reject`, reason === undefined ? { _csrf: token } : { _csrf: token, reason });
        assert.equal(r.statusCode, 400, r.body.slice(0, 300));
        assert.match(String(r.headers['content-type']), /^text\/html/);
        assert.match(r.body, /<h1>Refund review<\/h1>/, 'the queue, not a bare error page');
        const row = rowOf(r.body, refundNos[0]);
        assert.match(row, /<details class="confirm" open>\s*<summary data-confirm-open="reject">/, 'the rejection stays open');
        assert.match(
          row,
          /<p class="error" id="reason-error-\d+" role="alert" data-refused>say why the refund is rejected: the merchant is shown the reason<\/p>/,
        );
        assert.match(row, /aria-invalid="true"/);
        assert.deepEqual(await tableDigests(t.store), before, `${JSON.stringify(reason)}: nothing written`);
      }
      const htmx = await b.post(`/console/refunds/${refundNos[0]}/reject`, { _csrf: token, reason: ' ' }, { 'hx-request': 'true' });
      assert.equal(htmx.statusCode, 400);
      assert.equal(htmx.headers['hx-refused'], 'row', 'web.js swaps it like a success');
      assert.match(htmx.body, /^\s*<tr id="refund-\d+"/, 'the row alone');
      assert.match(htmx.body, /data-refused>say why/);
      assert.equal((await refundRow(t, refundNos[0])).status, 'pending_review');
    });

    it('a rejection’s reason reaches the merchant: the API’s failureReason and the business manager’s order page', async () => {
      const { m, o, refundNos, b } = await queueWithShippedSplit('queue-merchant@example.com', 1);
      const token = csrfOf((await b.get('/console/refunds')).body);
      const rejected = await b.post(`/console/refunds/${refundNos[0]}/reject`, { _csrf: token, reason: '  Opened and used  ' });
      assert.equal(rejected.statusCode, 303);
      assert.match((await follow(b, rejected)).body, new RegExp(`data-notice>Refund ${refundNos[0]} rejected\\.<`));
      assert.deepEqual(await refundRow(t, refundNos[0]), { status: 'refund_failed', failure_reason: 'Opened and used' });
      const api = await t.merchant(m.token, 'GET', `/openapi/v2/order/orders/refund/${o.id}`);
      assert.equal(api.status, 200, api.raw);
      const record = api.body.data.list.find((r: { refundNo: string }) => r.refundNo === refundNos[0]);
      assert.deepEqual([record.refundStatus, record.failureReason], ['refund_failed', 'Opened and used']);
      const viewer: Browser = await member(t, m.merchantId, 'queue-merchant-viewer@example.com', 'viewer');
      const order = await viewer.get(`/manager/orders/${o.id}`);
      assert.equal(order.statusCode, 200);
      assert.match(order.body, /Refund failed: Opened and used/);
    });

    it('the count of refunds waiting follows each decision: htmx swaps it out of band with the decided row', async () => {
      const { refundNos, b } = await queueWithShippedSplit('queue-count@example.com', 2);
      const page = await b.get('/console/refunds');
      const waiting = Number(/<p id="queue-summary" data-waiting>(\d+) refunds? waiting/.exec(page.body)![1]);
      const token = csrfOf(page.body);
      const approved = await b.post(`/console/refunds/${refundNos[0]}/approve`, { _csrf: token }, { 'hx-request': 'true' });
      assert.equal(approved.statusCode, 200, approved.body.slice(0, 300));
      assert.match(approved.body, /data-status="refund_successfully"/);
      assert.match(
        approved.body,
        new RegExp(`<template><p id="queue-summary" data-waiting hx-swap-oob="true">${waiting - 1} refunds? waiting, oldest first\\.</p></template>`),
      );
      const rejected = await b.post(`/console/refunds/${refundNos[1]}/reject`, { _csrf: token, reason: 'used' }, { 'hx-request': 'true' });
      assert.match(rejected.body, new RegExp(`hx-swap-oob="true">${waiting - 2} refunds? waiting`));
      assert.match((await b.get('/console/refunds')).body, new RegExp(`data-waiting>${waiting - 2} refunds? waiting`));
    });
  });
}
