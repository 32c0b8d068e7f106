import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, loadCatalogue, newMerchant, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { freshFormKey, HOST, ORIGIN } from './console-client.ts';
import { follow, member, type Browser } from './manager-helpers.ts';

/**
 * Claims after shipment in the business manager (SPEC §18, issue 40 item 7): "Open a claim" on a
 * shipped order's split (urlencoded with files uploaded by the script's route, or multipart with
 * the files), refusals in place with the form kept and nothing written, the claims list with its
 * filters, paging and CSV, a claim's page with history, evidence downloads, decision, replacement
 * link and the return's tracking, cancelling; roles and tenancy.
 */

const DE = { orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'P' } };
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2000, 7)]);
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(500, 32)]);

const csrfOf = (body: string) => /name="_csrf" value="([A-Za-z0-9]+)"/.exec(body)![1];

/** Sends the claim form as multipart/form-data (a browser without script), files included. */
async function postMultipart(t: TestApp, b: Browser, url: string, fields: [string, string][], files: { name: string; type: string; bytes: Buffer }[] = []) {
  const data = new FormData();
  for (const [k, v] of fields) data.append(k, v);
  for (const f of files) data.append('files', new File([new Uint8Array(f.bytes)], f.name, { type: f.type }));
  const request = new Request('http://localhost/', { method: 'POST', body: data });
  const payload = Buffer.from(await request.arrayBuffer());
  return t.app.inject({
    method: 'POST',
    url,
    remoteAddress: b.address,
    payload,
    headers: { host: HOST, origin: ORIGIN, 'content-type': request.headers.get('content-type')!, ...(b.cookie ? { cookie: b.cookie } : {}) },
  });
}

/** The script's upload: the raw bytes, the CSRF token in a header. */
const upload = (t: TestApp, b: Browser, csrf: string, type: string, bytes: Buffer) =>
  t.app.inject({
    method: 'POST',
    url: '/manager/claims/files',
    remoteAddress: b.address,
    payload: bytes,
    headers: { host: HOST, origin: ORIGIN, 'content-type': type, 'x-csrf-token': csrf, ...(b.cookie ? { cookie: b.cookie } : {}) },
  });

for (const dialect of DIALECTS) {
  describe(`business manager claims (${dialect})`, () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-manager-claims-'));
    after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const t = useApp(dialect, { DATA_DIR: dataDir, RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000' });
    let ready: Promise<void> | null = null;
    const setUp = () => {
      ready ??= (async () => {
        await loadCatalogue(t, ORDER_CATALOGUE);
        await t.admin('PUT', '/admin/v1/stocks', {
          items: [
            { sku: 'A', warehouseCode: 'G007', qty: 1000 },
            { sku: 'B', warehouseCode: 'G006', qty: 1000 },
          ],
        });
      })();
      return ready;
    };

    /** A merchant with an admin signed in, and a shipped order (3 × A from G007, 1 × B from G006 not shipped). */
    async function shop(name: string) {
      await setUp();
      const m = await newMerchant(t, name);
      const admin = await member(t, m.merchantId, `admin-${m.merchantId}@example.com`, 'admin');
      const o = await placeOrder(
        t,
        m.token,
        [
          { sku: 'A', quantity: 3 },
          { sku: 'B', quantity: 1 },
        ],
        DE,
      );
      const shipped = o.splitOrders.find((s: { warehouseCode: string }) => s.warehouseCode === 'G007').id as string;
      const waiting = o.splitOrders.find((s: { warehouseCode: string }) => s.warehouseCode === 'G006').id as string;
      assert.equal((await t.admin('POST', `/admin/v1/split-orders/${shipped}/ship`, { carrier: 'UPS', trackingCode: `1Z${shipped}` })).status, 200);
      return { m, admin, orderId: String(o.id), shipped, waiting };
    }

    const claimCount = async () =>
      Number(
        (
          await t.store.db
            .selectFrom('claims')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );

    it('opens a claim from the order page with a file uploaded by the script, shows it in the list and on its page', async () => {
      const { admin, orderId, shipped, waiting } = await shop('Claim opener');
      const order = await admin.get(`/manager/orders/${orderId}`);
      assert.equal(order.statusCode, 200);
      assert.ok(order.body.includes(`data-open-claim="${shipped}"`), 'the shipped split offers a claim');
      assert.ok(!order.body.includes(`data-open-claim="${waiting}"`), 'the split waiting to ship does not');

      const formPage = await admin.get(`/manager/split-orders/${shipped}/claim`);
      assert.equal(formPage.statusCode, 200, formPage.body.slice(0, 300));
      assert.match(formPage.body, /enctype="multipart\/form-data"/);
      assert.match(formPage.body, /up to 3<\/label>/);
      assert.match(formPage.body, /src="\/manager\/assets\/claim-upload\.js"/);
      const csrf = csrfOf(formPage.body);

      const up = await upload(t, admin, csrf, 'image/png', PNG);
      assert.equal(up.statusCode, 200, up.body);
      const { fileId, label } = up.json();
      assert.match(label, /^PNG, 2 KB$/);
      // An HTML page sent as a PNG is refused (typed by its bytes), as JSON for the script; nothing kept.
      const before = await tableDigests(t.store);
      const bad = await upload(t, admin, csrf, 'image/png', Buffer.from('<html><script>alert(1)</script></html>'));
      assert.equal(bad.statusCode, 415);
      assert.match(bad.json().message, /not a JPEG, PNG, WebP or PDF/);
      assert.deepEqual(await tableDigests(t.store), before);
      // Past 5 MB: 413, as JSON for the script, nothing kept.
      const huge = await upload(t, admin, csrf, 'image/png', Buffer.concat([PNG, Buffer.alloc(5 * 1024 * 1024)]));
      assert.equal(huge.statusCode, 413);
      assert.match(huge.json().message, /at most 5242880 bytes/);
      assert.deepEqual(await tableDigests(t.store), before);
      // Without the CSRF header: refused.
      assert.equal((await upload(t, admin, 'wrong', 'image/png', PNG)).statusCode, 403);

      const posted = await admin.post(`/manager/split-orders/${shipped}/claim`, {
        _csrf: csrf,
        sku: ['A'],
        quantity: ['2'],
        reason: 'damaged',
        resolution: 'refund',
        description: 'crushed <b>box</b>',
        evidence: [fileId],
      });
      assert.equal(posted.statusCode, 303, posted.body.slice(0, 500));
      const claimNo = /\/manager\/claims\/(\d+)$/.exec(String(posted.headers.location))![1];
      const page = await follow(admin, posted);
      assert.match(page.body, new RegExp(`Claim ${claimNo} opened`), 'the notice');
      assert.match(page.body, /data-status="open">Open: waiting for the supplier</);
      assert.match(page.body, /data-line="A">A .* × <span data-num>2<\/span>/);
      assert.match(page.body, /crushed &lt;b&gt;box&lt;\/b&gt;/, 'the description is text');
      assert.match(page.body, new RegExp(`href="/manager/claims/files/${fileId}" download>Evidence 1 of 1: PNG, 2 KB`));
      assert.match(page.body, /You opened the claim \(Open: waiting for the supplier\)/);
      assert.match(page.body, /data-action="cancel-claim"/);

      const file = await admin.get(`/manager/claims/files/${fileId}`);
      assert.equal(file.statusCode, 200);
      assert.match(String(file.headers['content-disposition']), /^attachment/);
      assert.equal(file.headers['x-content-type-options'], 'nosniff');
      assert.deepEqual(file.rawPayload, PNG);

      const list = await admin.get('/manager/claims');
      assert.equal(list.statusCode, 200);
      assert.match(list.body, new RegExp(`data-claim="${claimNo}"`));
      assert.match(list.body, /data-label="Status"><span class="badge">Open: waiting for the supplier</);
      // Audited as the user's change (SPEC §14), in the claim's transaction.
      const audit = (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list.filter((a: { target: string }) => a.target === `claim:${claimNo}`);
      assert.deepEqual(
        audit.map((a: { action: string; actorKind: string }) => [a.action, a.actorKind]),
        [['claim.open', 'merchant_user']],
      );
      assert.equal(audit[0].after.items, 'A x 2');
      const api = await t.admin('GET', `/admin/v1/claims/${claimNo}`);
      assert.deepEqual(api.body.data.items, [{ sku: 'A', quantity: 2 }]);
      assert.deepEqual(api.body.data.evidence, [fileId]);

      // Only 1 of A left: the order page still offers a claim; the form says so.
      assert.match((await admin.get(`/manager/split-orders/${shipped}/claim`)).body, /up to 1<\/label>/);
      // The split waiting to ship: the form explains, at 409.
      const closed = await admin.get(`/manager/split-orders/${waiting}/claim`);
      assert.equal(closed.statusCode, 409);
      assert.match(closed.body, /has not shipped: before shipment, ask for a refund instead/);
    });

    it('opens a claim from the multipart form with its files (no script); refused files and fields are shown in place, the form kept', async () => {
      const { admin, shipped } = await shop('No script shop');
      const formPage = await admin.get(`/manager/split-orders/${shipped}/claim`);
      const csrf = csrfOf(formPage.body);
      const base: [string, string][] = [
        ['_csrf', csrf],
        ['_formKey', freshFormKey()],
        ['sku', 'A'],
      ];

      // Too many units, no reason: nothing written, the typed values kept.
      let before = await tableDigests(t.store);
      const refused = await postMultipart(
        t,
        admin,
        `/manager/split-orders/${shipped}/claim`,
        [...base, ['quantity', '5'], ['reason', ''], ['resolution', 'reship'], ['description', 'kept text']],
        [{ name: 'photo.png', type: 'image/png', bytes: PNG }],
      );
      assert.equal(refused.statusCode, 400, refused.body.slice(0, 300));
      assert.match(refused.body, /data-refused/);
      assert.match(refused.body, /A: at most 3 can be claimed/);
      assert.match(refused.body, /choose a reason/);
      assert.match(refused.body, /id="qty-0" name="quantity" type="number"[^>]*value="5" aria-invalid="true"/);
      assert.match(refused.body, /value="reship" checked/);
      assert.match(refused.body, />kept text<\/textarea>/);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written, not even the file');

      // A file that is not what it says: named, nothing of the claim written.
      const claims0 = await claimCount();
      const wrongType = await postMultipart(
        t,
        admin,
        `/manager/split-orders/${shipped}/claim`,
        [...base, ['quantity', '1'], ['reason', 'damaged'], ['resolution', 'refund'], ['description', '']],
        [{ name: 'fake.png', type: 'image/png', bytes: Buffer.from('GIF89a not a png at all') }],
      );
      assert.equal(wrongType.statusCode, 415, wrongType.body.slice(0, 300));
      assert.match(wrongType.body, /fake\.png: the bytes are not a JPEG, PNG, WebP or PDF file/);
      assert.equal(await claimCount(), claims0);

      // Seven files: over the limit, refused before any is stored.
      before = await tableDigests(t.store);
      const seven = await postMultipart(
        t,
        admin,
        `/manager/split-orders/${shipped}/claim`,
        [...base, ['quantity', '1'], ['reason', 'damaged'], ['resolution', 'refund']],
        Array.from({ length: 7 }, (_, i) => ({ name: `p${i}.png`, type: 'image/png', bytes: PNG })),
      );
      assert.equal(seven.statusCode, 400);
      assert.match(seven.body, /at most 6 files \(7 chosen\)/);
      assert.deepEqual(await tableDigests(t.store), before);

      // A description over 2,000 characters.
      const long = await postMultipart(t, admin, `/manager/split-orders/${shipped}/claim`, [
        ...base,
        ['quantity', '1'],
        ['reason', 'damaged'],
        ['resolution', 'refund'],
        ['description', 'x'.repeat(2001)],
      ]);
      assert.equal(long.statusCode, 400);
      assert.match(long.body, /at most 2,000 characters/);

      // Without a session the body is not even parsed (401); a route that takes no files refuses multipart before reading it (415).
      const anonymous = await postMultipart(t, { ...admin, cookie: null }, `/manager/split-orders/${shipped}/claim`, base, [
        { name: 'photo.png', type: 'image/png', bytes: PNG },
      ]);
      assert.equal(anonymous.statusCode, 401);
      const elsewhere = await postMultipart(t, admin, `/manager/claims/${shipped}/return`, [
        ['_csrf', csrf],
        ['carrier', 'X'],
        ['trackingCode', 'Y'],
      ]);
      assert.equal(elsewhere.statusCode, 415);

      // Right: a PNG and a PDF with the form.
      const opened = await postMultipart(
        t,
        admin,
        `/manager/split-orders/${shipped}/claim`,
        [...base.slice(0, 1), ['_formKey', freshFormKey()], ['sku', 'A'], ['quantity', '3'], ['reason', 'not_received'], ['resolution', 'reship']],
        [
          { name: 'photo.png', type: 'image/png', bytes: PNG },
          { name: 'receipt.pdf', type: 'application/pdf', bytes: PDF },
        ],
      );
      assert.equal(opened.statusCode, 303, opened.body.slice(0, 500));
      const page = await follow(admin, opened);
      assert.match(page.body, /Evidence 1 of 2: PNG, 2 KB/);
      assert.match(page.body, /Evidence 2 of 2: PDF, 1 KB/);
      assert.match(page.body, /Reship: a replacement order, charged nothing/);
      // Nothing left to claim: the order page offers no claim on that split.
      const closed = await admin.get(`/manager/split-orders/${shipped}/claim`);
      assert.equal(closed.statusCode, 409);
      assert.match(closed.body, /refunded or on other claims already/);
    });

    it('follows the decision: credited, rejected with its reason, reshipped with the replacement link, the return tracking posted', async () => {
      const { admin, shipped, m } = await shop('Decisions shop');
      const open = async (quantity: number, resolution = 'refund') => {
        const r = await t.merchant(m.token, 'POST', '/openapi/v1/claims', { orderId: shipped, reason: 'damaged', resolution, items: [{ sku: 'A', quantity }] });
        assert.equal(r.status, 200, r.raw);
        return r.body.data.claimNo as string;
      };
      const credited = await open(1);
      await t.admin('POST', `/admin/v1/claims/${credited}/approve`, {});
      const c = await admin.get(`/manager/claims/${credited}`);
      assert.match(c.body, /data-status="credited">Credited to your account</);
      assert.match(c.body, /data-field="amount" data-num>[0-9.]+ USD</);
      assert.match(c.body, /The supplier approved the claim/);
      assert.match(c.body, /The supplier credited your account/);
      assert.ok(!c.body.includes('data-action="cancel-claim"'), 'no cancel once decided');

      const rejected = await open(1);
      await t.admin('POST', `/admin/v1/claims/${rejected}/reject`, { reason: 'photos show no damage' });
      const r = await admin.get(`/manager/claims/${rejected}`);
      assert.match(r.body, /Reason for the decision<\/dt><dd data-field="decision">photos show no damage/);
      assert.match(r.body, /The supplier rejected the claim \(Rejected\): <q>photos show no damage<\/q>/);

      const back = await open(1, 'reship');
      await t.admin('POST', `/admin/v1/claims/${back}/approve`, { returnRequired: true });
      const awaiting = await admin.get(`/manager/claims/${back}`);
      assert.match(awaiting.body, /data-form="claim-return"/);
      const csrf = csrfOf(awaiting.body);
      // Blank carrier: the page again, typed values kept, nothing written.
      const before = await tableDigests(t.store);
      const blank = await admin.post(`/manager/claims/${back}/return`, { _csrf: csrf, carrier: '', trackingCode: 'RT-1' });
      assert.equal(blank.statusCode, 400, blank.body.slice(0, 300));
      assert.match(blank.body, /data-refused/);
      assert.match(blank.body, /id="return-tracking" name="trackingCode"[^>]*value="RT-1"/);
      assert.deepEqual(await tableDigests(t.store), before);
      const posted = await admin.post(`/manager/claims/${back}/return`, { _csrf: csrf, carrier: 'DHL', trackingCode: 'RT-1' });
      const page = await follow(admin, posted);
      assert.match(page.body, /Return tracking of claim \d+ saved/);
      assert.match(page.body, /data-field="return">DHL RT-1</);
      assert.match(page.body, /You posted the return tracking/);
      await t.admin('POST', `/admin/v1/claims/${back}/received`, { warehouseCode: 'G007' });
      const done = await admin.get(`/manager/claims/${back}`);
      assert.match(done.body, /data-status="reshipped"/);
      const replacement = /data-replacement="(\d+)"/.exec(done.body)?.[1];
      assert.ok(replacement, 'the replacement order is linked');
      assert.match(done.body, new RegExp(`href="/manager/orders/${replacement}"`));
      assert.ok(!done.body.includes('data-form="claim-return"'), 'no return form once received');
      // Posting the return now: the wrong state, on the page, nothing written.
      const late = await admin.post(`/manager/claims/${back}/return`, { _csrf: csrf, carrier: 'DHL', trackingCode: 'RT-2' });
      assert.equal(late.statusCode, 409);
      assert.match(late.body, /Not done: nothing was changed/);
    });

    it('lists with filters, pages and the CSV (BOM), cancels an open claim; a viewer reads only', async () => {
      const { admin, shipped, m, orderId } = await shop('List shop');
      const empty = await admin.get('/manager/claims');
      assert.match(empty.body, /data-empty>No claims yet/);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await t.merchant(m.token, 'POST', '/openapi/v1/claims', {
          orderId: shipped,
          reason: 'quality',
          resolution: 'refund',
          items: [{ sku: 'A', quantity: 1 }],
        });
        ids.push(r.body.data.claimNo);
      }
      await t.admin('POST', `/admin/v1/claims/${ids[0]}/reject`, { reason: 'no' });
      const rejected = await admin.get('/manager/claims?status=rejected');
      assert.match(rejected.body, new RegExp(`data-claim="${ids[0]}"`));
      assert.ok(!rejected.body.includes(`data-claim="${ids[1]}"`));
      const byOrder = await admin.get(`/manager/claims?order=${orderId}`);
      assert.equal([...byOrder.body.matchAll(/data-claim="/g)].length, 3);
      assert.match((await admin.get('/manager/claims?status=nonsense')).body, /status/);
      assert.equal((await admin.get('/manager/claims?status=nonsense')).statusCode, 400);
      assert.equal((await admin.get('/manager/claims?from=2026-02-30x')).statusCode, 400);
      const backwards = await admin.get('/manager/claims?from=2026-12-02&to=2026-12-01');
      assert.equal(backwards.statusCode, 400);
      assert.match(backwards.body, /from: must not be after to/);
      const none = await admin.get('/manager/claims?status=credited');
      assert.match(none.body, /No claims match/);

      const csv = await admin.get('/manager/claims.csv?status=open');
      assert.equal(csv.statusCode, 200);
      assert.deepEqual([...csv.rawPayload.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
      const lines = csv.body
        .replace(/^\uFEFF/, '')
        .trimEnd()
        .split('\r\n');
      assert.equal(
        lines[0],
        'claim_no,split_order_id,order_id,opened_at,status,reason,resolution,items,description,amount,replacement_order_id,return_carrier,return_tracking_code,decision_reason,updated_at',
      );
      assert.equal(lines.length, 3, csv.body);

      const csrf = await admin.csrf(`/manager/claims/${ids[1]}`);
      const cancelled = await follow(admin, await admin.post(`/manager/claims/${ids[1]}/cancel`, { _csrf: csrf }));
      assert.match(cancelled.body, /Claim \d+ cancelled/);
      assert.match(cancelled.body, /You cancelled the claim/);
      const audit = (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list.filter((a: { target: string }) => a.target === `claim:${ids[1]}`);
      assert.deepEqual(
        audit.map((a: { action: string }) => a.action),
        ['claim.cancel'],
      );
      const again = await admin.post(`/manager/claims/${ids[1]}/cancel`, { _csrf: csrf });
      assert.equal(again.statusCode, 409);

      const viewer = await member(t, m.merchantId, `viewer-${m.merchantId}@example.com`, 'viewer');
      assert.equal((await viewer.get('/manager/claims')).statusCode, 200);
      const seen = await viewer.get(`/manager/claims/${ids[2]}`);
      assert.equal(seen.statusCode, 200);
      assert.ok(!seen.body.includes('data-action="cancel-claim"'), 'a viewer is offered no change');
      assert.ok(!(await viewer.get(`/manager/orders/${orderId}`)).body.includes('data-open-claim'), 'nor a claim');
      const before = await tableDigests(t.store);
      const vcsrf = await viewer.csrf('/manager/claims');
      assert.equal((await viewer.get(`/manager/split-orders/${shipped}/claim`)).statusCode, 403);
      assert.equal((await viewer.post(`/manager/claims/${ids[2]}/cancel`, { _csrf: vcsrf })).statusCode, 403);
      assert.equal((await upload(t, viewer, vcsrf, 'image/png', PNG)).statusCode, 403);
      assert.deepEqual(await tableDigests(t.store), before, 'refused: nothing written');
    });

    it('pages the list 25 at a time', async () => {
      const { admin, m } = await shop('Paging shop');
      const o = await placeOrder(t, m.token, [{ sku: 'A', quantity: 30 }], DE);
      const split = o.splitOrders[0].id as string;
      await t.admin('POST', `/admin/v1/split-orders/${split}/ship`, { carrier: 'UPS', trackingCode: '1Zpage' });
      for (let i = 0; i < 26; i++)
        await t.merchant(m.token, 'POST', '/openapi/v1/claims', {
          orderId: split,
          reason: 'quality',
          resolution: 'refund',
          items: [{ sku: 'A', quantity: 1 }],
        });
      const first = await admin.get('/manager/claims');
      assert.equal([...first.body.matchAll(/data-claim="/g)].length, 25);
      const next = /rel="next" href="([^"]+)"/.exec(first.body)![1].replace(/&amp;/g, '&');
      const second = await admin.get(next);
      assert.equal([...second.body.matchAll(/data-claim="/g)].length, 1);
      assert.match(second.body, /rel="prev"/);
    });

    it('another merchant’s claim, file and split order answer 404 and write nothing', async () => {
      const a = await shop('Tenant A claims');
      const b = await shop('Tenant B claims');
      const csrfB = csrfOf((await b.admin.get(`/manager/split-orders/${b.shipped}/claim`)).body);
      const up = (await upload(t, b.admin, csrfB, 'image/png', PNG)).json();
      const claim = await t.merchant(b.m.token, 'POST', '/openapi/v1/claims', {
        orderId: b.shipped,
        reason: 'damaged',
        resolution: 'refund',
        items: [{ sku: 'A', quantity: 1 }],
        evidence: [up.fileId],
      });
      const claimNo = claim.body.data.claimNo;
      const csrfA = await a.admin.csrf('/manager/claims');
      const before = await tableDigests(t.store);
      assert.equal((await a.admin.get(`/manager/claims/${claimNo}`)).statusCode, 404);
      assert.equal((await a.admin.get(`/manager/claims/files/${up.fileId}`)).statusCode, 404);
      assert.equal((await a.admin.get(`/manager/split-orders/${b.shipped}/claim`)).statusCode, 404);
      assert.equal((await a.admin.post(`/manager/claims/${claimNo}/cancel`, { _csrf: csrfA })).statusCode, 404);
      assert.equal((await a.admin.post(`/manager/claims/${claimNo}/return`, { _csrf: csrfA, carrier: 'X', trackingCode: 'Y' })).statusCode, 404);
      assert.equal(
        (await a.admin.post(`/manager/split-orders/${b.shipped}/claim`, { _csrf: csrfA, sku: 'A', quantity: '1', reason: 'damaged', resolution: 'refund' }))
          .statusCode,
        404,
      );
      assert.deepEqual(await tableDigests(t.store), before);
      // B's file named as evidence on A's claim: refused in place, nothing of the claim written.
      const claims0 = await claimCount();
      const stolen = await a.admin.post(`/manager/split-orders/${a.shipped}/claim`, {
        _csrf: csrfA,
        sku: 'A',
        quantity: '1',
        reason: 'damaged',
        resolution: 'refund',
        evidence: up.fileId,
      });
      assert.equal(stolen.statusCode, 400, stolen.body.slice(0, 300));
      assert.match(stolen.body, /a file named is not one of yours/);
      assert.equal(await claimCount(), claims0);
    });
  });
}
