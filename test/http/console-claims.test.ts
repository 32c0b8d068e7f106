import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, loadCatalogue, newMerchant, tableDigests, useApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { follow, signedIn, staff, type Browser } from './console-client.ts';

/**
 * The console's claims (SPEC §18, issue 40 item 6), from the staff's browser: the queue (open first,
 * oldest first, past CLAIM_SLA_HOURS marked, filters, CSV), a claim's page (order and lines, safe
 * evidence thumbnails, the description, history), the decisions (each POST → 303 → the claim with a
 * notice; destructive ones ask first; support decides, warehouse receives), refusals in place with
 * nothing written, and the dashboard's counts.
 */

const DE = { orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'P' } };
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2000, 7)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(500, 32)]);
const HOUR = 3600 * 1000;

const csrfOf = (body: string) => /name="_csrf" value="([A-Za-z0-9]+)"/.exec(body)![1];
const rowOf = (html: string, claimNo: string) => {
  const start = html.indexOf(`<tr role="row" id="claim-${claimNo}"`);
  assert.ok(start >= 0, `row of claim ${claimNo}`);
  return html.slice(start, html.indexOf('</tr>', start));
};

for (const dialect of DIALECTS) {
  describe(`console claims (${dialect})`, () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-console-claims-'));
    after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const t = useApp(dialect, { DATA_DIR: dataDir, CLAIM_SLA_HOURS: '48' });
    let ready: Promise<{ shop: { token: string; id: string }; other: { token: string; id: string } }> | null = null;

    /** The catalogue with stock, and two merchants (once per suite). */
    const setUp = () => {
      ready ??= (async () => {
        await loadCatalogue(t, ORDER_CATALOGUE);
        await t.admin('PUT', '/admin/v1/stocks', {
          items: [
            { sku: 'A', warehouseCode: 'G007', qty: 1000 },
            { sku: 'B', warehouseCode: 'G006', qty: 1000 },
          ],
        });
        const shop = await newMerchant(t, 'Claims shop');
        const other = await newMerchant(t, 'Other shop');
        return { shop: { token: shop.token, id: shop.merchantId }, other: { token: other.token, id: other.merchantId } };
      })();
      return ready;
    };

    /** A shipped order of `token` (A from G007), and a claim opened on it; `hoursAgo` moves its opening back. */
    async function claimOn(token: string, body: Record<string, unknown> = {}, hoursAgo = 0) {
      const o = await placeOrder(t, token, [{ sku: 'A', quantity: 3 }], DE);
      const split = o.splitOrders.find((s: { warehouseCode: string }) => s.warehouseCode === 'G007').id as string;
      assert.equal((await t.admin('POST', `/admin/v1/split-orders/${split}/ship`, { carrier: 'UPS', trackingCode: `1Z${split}` })).status, 200);
      const r = await t.app.inject({
        method: 'POST',
        url: '/openapi/v1/claims',
        headers: { authorization: `Bearer ${token}` },
        payload: {
          orderId: split,
          reason: 'damaged',
          resolution: 'refund',
          items: [{ sku: 'A', quantity: 2 }],
          description: 'box crushed <b>badly</b>',
          ...body,
        },
      });
      assert.equal(r.statusCode, 200, r.body);
      const claimNo = r.json().data.claimNo as string;
      if (hoursAgo > 0)
        await t.store.db
          .updateTable('claims')
          .set({ created_at: Date.now() - hoursAgo * HOUR })
          .where('id', '=', Number(claimNo))
          .execute();
      return { claimNo, orderId: String(o.id), split };
    }

    const upload = async (token: string, bytes: Buffer, type: string) => {
      const r = await t.app.inject({
        method: 'POST',
        url: '/openapi/v1/claims/files',
        payload: bytes,
        headers: { authorization: `Bearer ${token}`, 'content-type': type },
      });
      assert.equal(r.statusCode, 200, r.body);
      return r.json().data.fileId as string;
    };
    const status = async (claimNo: string) =>
      (await t.store.db.selectFrom('claims').select('status').where('id', '=', Number(claimNo)).executeTakeFirstOrThrow()).status;

    let browsers = 0;
    const as = async (role: 'owner' | 'support' | 'warehouse'): Promise<Browser> => {
      const email = `claims-${role}-${++browsers}@example.com`;
      await staff(t, email, role);
      return signedIn(t, email);
    };

    it('the queue: open claims first and oldest first, overdue marked, a nav link, filters by status, merchant and reason', async () => {
      const { shop, other } = await setUp();
      const old = await claimOn(shop.token, {}, 72);
      const fresh = await claimOn(other.token, { reason: 'wrong_item' });
      const b = await as('support');
      const page = await b.get('/console/claims');
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, /<a href="\/console\/claims"[^>]*>Claims<\/a>/, 'the navigation links the queue');
      assert.ok(page.body.indexOf(`id="claim-${old.claimNo}"`) < page.body.indexOf(`id="claim-${fresh.claimNo}"`), 'oldest first');
      assert.match(rowOf(page.body, old.claimNo), /class="breach" data-overdue[\s\S]*past SLA/);
      assert.doesNotMatch(rowOf(page.body, fresh.claimNo), /data-overdue|past SLA/);
      assert.match(rowOf(page.body, old.claimNo), /data-label="Waiting">3 d 0 h <strong>past SLA/);

      const byReason = await b.get('/console/claims?reason=wrong_item');
      assert.match(byReason.body, new RegExp(`id="claim-${fresh.claimNo}"`));
      assert.doesNotMatch(byReason.body, new RegExp(`id="claim-${old.claimNo}"`));
      assert.match(byReason.body, /<option value="wrong_item" selected>/);
      const byMerchant = await b.get(`/console/claims?merchant=${shop.id}`);
      assert.match(byMerchant.body, new RegExp(`id="claim-${old.claimNo}"`));
      assert.doesNotMatch(byMerchant.body, new RegExp(`id="claim-${fresh.claimNo}"`));
      const byStatus = await b.get('/console/claims?status=credited&reason=wrong_item');
      assert.match(byStatus.body, /data-empty>No claims match\./);

      // Bad filters: a clean 400 naming the field, no page of everything.
      for (const [q, field] of [
        ['status=lost', 'status'],
        ['reason=bored', 'reason'],
        ['merchant=abc', 'merchant'],
      ] as const) {
        const r = await b.get(`/console/claims?${q}`);
        assert.equal(r.statusCode, 400, `${q}: ${r.statusCode}`);
        assert.match(r.body, new RegExp(field));
      }
    });

    it('the queue as CSV: UTF-8 BOM, a header, one row per claim, the filters of the page', async () => {
      const { shop } = await setUp();
      const c = await claimOn(shop.token, { reason: 'missing_parts', description: '=HYPERLINK("x")' }, 50);
      const b = await as('warehouse');
      const r = await b.get('/console/claims.csv?reason=missing_parts');
      assert.equal(r.statusCode, 200);
      assert.match(String(r.headers['content-type']), /^text\/csv; charset=utf-8/);
      assert.match(String(r.headers['content-disposition']), /attachment; filename="claims-\d{4}-\d{2}-\d{2}\.csv"/);
      assert.equal(r.rawPayload.subarray(0, 3).toString('hex'), 'efbbbf', 'starts with the UTF-8 byte order mark');
      const lines = r.body
        .replace(/^\uFEFF/, '')
        .trim()
        .split('\r\n');
      assert.match(lines[0], /^claim_no,merchant_id,merchant,split_order_id,order_id,opened_at,status,reason,resolution,items,description,amount,/);
      const row = lines.find((l) => l.startsWith(`${c.claimNo},`));
      assert.ok(row, 'the claim is a row');
      assert.match(row, /,open,missing_parts,refund,A x 2,/);
      assert.match(row, /,yes$/, 'overSla');
      assert.match(row, /'=HYPERLINK/, 'a formula is neutralised');
      assert.ok(
        lines.slice(1).every((l) => l.includes(',missing_parts,')),
        'only the filtered reason',
      );
      assert.equal((await b.get('/console/claims.csv?reason=nope')).statusCode, 400);
    });

    it('the claim page: order and lines, the description escaped, evidence as img only for images (PDF a link), history', async () => {
      const { shop } = await setUp();
      const png = await upload(shop.token, PNG, 'image/png');
      const pdf = await upload(shop.token, PDF, 'application/pdf');
      const c = await claimOn(shop.token, { evidence: [png, pdf] });
      const b = await as('support');
      const page = await b.get(`/console/claims/${c.claimNo}`);
      assert.equal(page.statusCode, 200, page.body);
      assert.match(page.body, new RegExp(`<a href="/console/orders/${c.orderId}" data-order="${c.orderId}">`));
      assert.match(page.body, new RegExp(`${c.split} \\(Shipped, from G007\\)`));
      assert.match(page.body, /<tr role="row" data-line="A">[\s\S]*?data-label="Shipped">3<[\s\S]*?data-claimed><strong>2<\/strong>/);
      assert.match(page.body, /data-description>box crushed &lt;b&gt;badly&lt;\/b&gt;<\/p>/, 'the description is text, never markup');
      assert.match(
        page.body,
        new RegExp(
          `<li data-file="${png}" data-kind="image"><a href="/console/claims/files/${png}" download><img src="/console/claims/files/${png}" alt="Evidence 1 of 2: PNG`,
        ),
      );
      assert.match(page.body, new RegExp(`<li data-file="${pdf}" data-kind="link"><a href="/console/claims/files/${pdf}" download>Evidence 2 of 2: PDF`));
      assert.doesNotMatch(page.body, new RegExp(`<img src="/console/claims/files/${pdf}"`), 'no img of a PDF');
      assert.match(page.body, /<ol class="history" data-history>\s*<li><time[^>]*>[^<]*<\/time>: the merchant — opened \(Open\)/);

      // The image is the operator's download: its bytes, an attachment, nosniff, sandboxed.
      const img = await b.get(`/console/claims/files/${png}`);
      assert.equal(img.statusCode, 200);
      assert.equal(img.headers['content-type'], 'image/png');
      assert.equal(img.headers['x-content-type-options'], 'nosniff');
      assert.match(String(img.headers['content-disposition']), /^attachment/);
      assert.match(String(img.headers['content-security-policy']), /sandbox/);
      assert.ok(img.rawPayload.equals(PNG));
      assert.equal((await b.get('/console/claims/files/9999999999999')).statusCode, 404);
      assert.equal((await b.get('/console/claims/9999999999999')).statusCode, 404);
    });

    it('approve asks first, then credits: 303 → the claim with a notice, history and the decision note', async () => {
      const { shop } = await setUp();
      const c = await claimOn(shop.token);
      const b = await as('support');
      const page = await b.get(`/console/claims/${c.claimNo}`);
      for (const action of ['approve', 'require-return', 'reject']) {
        const confirm = new RegExp(
          `<details class="confirm">\\s*<summary data-confirm-open="${action}">[\\s\\S]*?data-action="${action}"[\\s\\S]*?</details>`,
        ).exec(page.body);
        assert.ok(confirm, `${action}: the button is inside a closed confirmation`);
        assert.equal((page.body.match(new RegExp(`data-action="${action}"`, 'g')) ?? []).length, 1);
      }
      assert.doesNotMatch(page.body, /data-action="received"/, 'not awaiting a return');
      const posted = await b.post(`/console/claims/${c.claimNo}/approve`, { _csrf: csrfOf(page.body), note: 'sorry about that' });
      assert.equal(posted.headers.location, `/console/claims/${c.claimNo}`);
      const next = await follow(b, posted);
      assert.match(next.body, new RegExp(`Claim ${c.claimNo} approved and credited\\.`));
      assert.match(next.body, /data-status="credited"/);
      assert.match(next.body, /<dt>Credited<\/dt><dd>/);
      assert.match(next.body, /claims-support-\d+@example\.com — approved \(Credited\): <q>sorry about that<\/q>/);
      assert.match(next.body, /data-no-actions/, 'nothing left to decide');
      assert.equal(await status(c.claimNo), 'credited');
      const tx = await t.merchant(shop.token, 'GET', '/openapi/v1/account/transactions?pageSize=50');
      assert.equal(tx.body.data.list.filter((x: { type: string; reference: string }) => x.type === 'claim_credit' && x.reference === c.claimNo).length, 1);
    });

    it('reject needs a reason: without one the page again with the reason, nothing written; with one, rejected', async () => {
      const { shop } = await setUp();
      const c = await claimOn(shop.token);
      const b = await as('support');
      const token = csrfOf((await b.get(`/console/claims/${c.claimNo}`)).body);
      const before = await tableDigests(t.store);
      const refused = await b.post(
        `/console/claims/${c.claimNo}/reject`,
        { _csrf: token, reason: '  ' },
        { referer: `http://localhost:80/console/claims/${c.claimNo}` },
      );
      assert.equal(refused.statusCode, 400, refused.body.slice(0, 300));
      assert.match(refused.body, /Not done: [\s\S]*reason/);
      assert.match(refused.body, new RegExp(`<h1>Claim ${c.claimNo}`), 'the claim page, in place');
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
      const next = await follow(b, await b.post(`/console/claims/${c.claimNo}/reject`, { _csrf: token, reason: 'photos show no damage' }));
      assert.match(next.body, new RegExp(`Claim ${c.claimNo} rejected\\.`));
      assert.match(next.body, /<dt>Decision note<\/dt><dd>photos show no damage<\/dd>/);
      assert.equal(await status(c.claimNo), 'rejected');
    });

    it('a decision in the wrong state: refused in place (409) naming the state, nothing written', async () => {
      const { shop } = await setUp();
      const c = await claimOn(shop.token);
      const b = await as('owner');
      const token = csrfOf((await b.get(`/console/claims/${c.claimNo}`)).body);
      await follow(b, await b.post(`/console/claims/${c.claimNo}/approve`, { _csrf: token }));
      const before = await tableDigests(t.store);
      for (const [action, fields] of [
        ['approve', {}],
        ['reject', { reason: 'late' }],
        ['require-return', {}],
        ['received', { warehouseCode: 'G007' }],
        ['resolution', { resolution: 'reship' }],
      ] as const) {
        const r = await b.post(
          `/console/claims/${c.claimNo}/${action}`,
          { _csrf: token, ...fields },
          { referer: `http://localhost:80/console/claims/${c.claimNo}` },
        );
        assert.equal(r.statusCode, 409, `${action}: ${r.statusCode} ${r.body.slice(0, 200)}`);
        assert.match(r.body, /Not done: [\s\S]*credited/, `${action}: the reason names the state`);
        assert.match(r.body, new RegExp(`<h1>Claim ${c.claimNo}`));
      }
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
    });

    it('require return → the warehouse marks it received into a warehouse: stock back, resolved; support may not receive, warehouse may not decide', async () => {
      const { shop } = await setUp();
      const c = await claimOn(shop.token);
      const support = await as('support');
      const token = csrfOf((await support.get(`/console/claims/${c.claimNo}`)).body);
      const next = await follow(support, await support.post(`/console/claims/${c.claimNo}/require-return`, { _csrf: token }));
      assert.match(next.body, /waiting for the goods to come back/);
      assert.equal(await status(c.claimNo), 'awaiting_return');
      assert.doesNotMatch(next.body, /data-action="received"/, 'support does not receive goods');
      assert.match(next.body, /data-action="resolution-reship"/, 'support may switch the resolution');
      assert.equal((await support.post(`/console/claims/${c.claimNo}/received`, { _csrf: token, warehouseCode: 'G007' })).statusCode, 403);

      const ret = await t.merchant(shop.token, 'POST', `/openapi/v1/claims/${c.claimNo}/return`, { carrier: 'DHL', trackingCode: 'RET1' });
      assert.equal(ret.status, 200, ret.raw);

      const warehouse = await as('warehouse');
      const page = await warehouse.get(`/console/claims/${c.claimNo}`);
      assert.match(page.body, /<dt>Return<\/dt><dd>DHL RET1<\/dd>/);
      assert.match(page.body, /<details class="confirm">\s*<summary data-confirm-open="received">/);
      assert.doesNotMatch(page.body, /data-action="(approve|reject|resolution-reship)"/, 'the warehouse does not decide');
      const wToken = csrfOf(page.body);
      assert.equal((await warehouse.post(`/console/claims/${c.claimNo}/approve`, { _csrf: wToken })).statusCode, 403);
      const stockBefore = await t.store.db
        .selectFrom('stocks as s')
        .innerJoin('products as p', 'p.id', 's.product_id')
        .innerJoin('warehouses as w', 'w.id', 's.warehouse_id')
        .select('s.qty')
        .where('p.sku', '=', 'A')
        .where('w.code', '=', 'G007')
        .executeTakeFirstOrThrow();
      const received = await follow(warehouse, await warehouse.post(`/console/claims/${c.claimNo}/received`, { _csrf: wToken, warehouseCode: 'G007' }));
      assert.match(received.body, new RegExp(`Claim ${c.claimNo} received into G007; approved and credited\\.`));
      assert.equal(await status(c.claimNo), 'credited');
      const stockAfter = await t.store.db
        .selectFrom('stocks as s')
        .innerJoin('products as p', 'p.id', 's.product_id')
        .innerJoin('warehouses as w', 'w.id', 's.warehouse_id')
        .select('s.qty')
        .where('p.sku', '=', 'A')
        .where('w.code', '=', 'G007')
        .executeTakeFirstOrThrow();
      assert.equal(Number(stockAfter.qty) - Number(stockBefore.qty), 2, 'the claimed units are back in stock');
    });

    it('switch resolution while awaiting the return, then received: reshipped, the replacement order linked', async () => {
      const { shop } = await setUp();
      const c = await claimOn(shop.token);
      const b = await as('owner');
      const token = csrfOf((await b.get(`/console/claims/${c.claimNo}`)).body);
      await follow(b, await b.post(`/console/claims/${c.claimNo}/require-return`, { _csrf: token }));
      const switched = await follow(b, await b.post(`/console/claims/${c.claimNo}/resolution`, { _csrf: token, resolution: 'reship' }));
      assert.match(switched.body, new RegExp(`Claim ${c.claimNo} resolves by reship`));
      assert.match(switched.body, /data-action="resolution-refund"/);
      const bad = await b.post(
        `/console/claims/${c.claimNo}/resolution`,
        { _csrf: token, resolution: 'gift' },
        { referer: `http://localhost:80/console/claims/${c.claimNo}` },
      );
      assert.equal(bad.statusCode, 400);
      const received = await follow(b, await b.post(`/console/claims/${c.claimNo}/received`, { _csrf: token, warehouseCode: 'G007' }));
      assert.match(received.body, /a replacement order is placed/);
      assert.match(received.body, /<dt>Replacement order<\/dt><dd><a href="\/console\/orders\/\d+" data-replacement="\d+">/);
      assert.equal(await status(c.claimNo), 'reshipped');
    });

    it('a reshipment out of stock stays approved with the reason; retry offered, and a switch to refund credits it', async () => {
      const { shop } = await setUp();
      const c = await claimOn(shop.token, { resolution: 'reship' });
      const b = await as('support');
      const token = csrfOf((await b.get(`/console/claims/${c.claimNo}`)).body);
      // No A anywhere: the replacement cannot be made.
      const held = await t.store.db
        .selectFrom('stocks as s')
        .innerJoin('products as p', 'p.id', 's.product_id')
        .innerJoin('warehouses as w', 'w.id', 's.warehouse_id')
        .select(['w.code as warehouseCode', 's.qty as qty'])
        .where('p.sku', '=', 'A')
        .execute();
      await t.admin('PUT', '/admin/v1/stocks', { items: held.map((h) => ({ sku: 'A', warehouseCode: h.warehouseCode, qty: 0 })) });
      try {
        const approved = await follow(b, await b.post(`/console/claims/${c.claimNo}/approve`, { _csrf: token }));
        assert.match(approved.body, new RegExp(`Claim ${c.claimNo} is approved: could not reship`));
        assert.match(approved.body, /<dt>Decision note<\/dt><dd>could not reship/);
        assert.match(approved.body, /data-action="retry-reship"/);
        assert.match(approved.body, /data-action="resolution-refund"/);
        assert.equal(await status(c.claimNo), 'approved');
      } finally {
        await t.admin('PUT', '/admin/v1/stocks', { items: held.map((h) => ({ sku: 'A', warehouseCode: h.warehouseCode, qty: Number(h.qty) })) });
      }
      const switched = await follow(b, await b.post(`/console/claims/${c.claimNo}/resolution`, { _csrf: token, resolution: 'refund' }));
      assert.match(switched.body, new RegExp(`Claim ${c.claimNo} resolves by refund; approved and credited\\.`));
      assert.equal(await status(c.claimNo), 'credited');
    });

    it('the dashboard counts open and overdue claims, and links the queue for roles that may open it', async () => {
      const { shop } = await setUp();
      // An overdue claim and one within the SLA of its own; the counts below take the other tests' too.
      await claimOn(shop.token, {}, 72);
      await claimOn(shop.token);
      const b = await as('support');
      const open = Number(
        (
          await t.store.db
            .selectFrom('claims')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('status', '=', 'open')
            .executeTakeFirstOrThrow()
        ).n,
      );
      const overdue = Number(
        (
          await t.store.db
            .selectFrom('claims')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('status', '=', 'open')
            .where('created_at', '<', Date.now() - 48 * HOUR)
            .executeTakeFirstOrThrow()
        ).n,
      );
      assert.ok(overdue > 0 && open > overdue, 'the claims made above are counted');
      const page = await b.get('/console');
      assert.match(page.body, new RegExp(`<dd data-stat="claims-open">${open}</dd>`));
      assert.match(page.body, new RegExp(`<div class="breach"><dt>Past the 48 h SLA</dt><dd data-stat="claims-overdue">${overdue}</dd>`));
      assert.match(page.body, /<a href="\/console\/claims">Open the claims queue<\/a>/);
    });
  });
}
