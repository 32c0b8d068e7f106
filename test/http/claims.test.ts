import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.ts';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { purgeOrphanEvidence, sweepStrayEvidence } from '../../src/services/claim-files.service.ts';
import { purgeTasks } from '../../src/jobs/purger.ts';
import { createBackup, restoreBackup } from '../../src/services/backup.service.ts';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/db.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { ADMIN_KEY, DIALECTS, PG_SKIP, buildTestApp, everyTableCount, loadCatalogue, newMerchant, stockQty } from '../helpers.ts';

const DE = { orderAddress: { country: 'DE', phone: '1', recipient: 'R', province: 'P' } };

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`claims after shipment (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    /** An app with the order catalogue, two merchants, and helpers for the claim's flow. */
    async function build(ctx: TestContext, env: Record<string, string> = {}) {
      // Evidence bytes go to DATA_DIR/files: a directory of the test's own.
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-claims-'));
      ctx.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const t = await buildTestApp(ctx, dialect, { DATA_DIR: dataDir, ...env });
      await loadCatalogue(t, ORDER_CATALOGUE);
      await t.admin('PUT', '/admin/v1/stocks', {
        items: [
          { sku: 'A', warehouseCode: 'G007', qty: 100 },
          { sku: 'B', warehouseCode: 'G006', qty: 100 },
        ],
      });
      const shop = (await newMerchant(t, 'Shop')).token;
      const other = (await newMerchant(t, 'Other')).token;
      /** An order shipped to DE: A from G007 and B from G006, each split shipped. */
      const shippedOrder = async (
        lines = [
          { sku: 'A', quantity: 3 },
          { sku: 'B', quantity: 2 },
        ],
        ship = true,
      ) => {
        const o = await placeOrder(t, shop, lines, DE);
        const split = (code: string) => o.splitOrders.find((s: any) => s.warehouseCode === code)?.id as string;
        if (ship)
          for (const s of o.splitOrders)
            assert.equal((await t.admin('POST', `/admin/v1/split-orders/${s.id}/ship`, { carrier: 'UPS', trackingCode: `1Z${s.id}` })).status, 200);
        return { order: o, a: split('G007'), b: split('G006') };
      };
      const open = (body: unknown, as = shop, headers: Record<string, string> = {}) =>
        t.app
          .inject({ method: 'POST', url: '/openapi/v1/claims', payload: body as object, headers: { authorization: `Bearer ${as}`, ...headers } })
          .then((r) => ({ status: r.statusCode, headers: r.headers, body: r.json() }));
      const claim = async (claimNo: string, as = shop) => (await t.merchant(as, 'GET', `/openapi/v1/claims/${claimNo}`)).body.data;
      const decide = (claimNo: string, action: string, body: unknown = {}) => t.admin('POST', `/admin/v1/claims/${claimNo}/${action}`, body);
      const transactions = async () => (await t.merchant(shop, 'GET', '/openapi/v1/account/transactions?pageSize=50')).body.data.list;
      const verified = async () => {
        const report = await verifyLedger(t.store.db);
        assert.deepEqual(report.breaches, [], 'ledger verify finds nothing');
        assert.deepEqual(await ledgerMismatches(t.store.db), [], 'stock equals its ledger');
      };
      const upload = (bytes: Buffer, contentType: string, as = shop, headers: Record<string, string> = {}) =>
        t.app
          .inject({
            method: 'POST',
            url: '/openapi/v1/claims/files',
            payload: bytes,
            headers: { authorization: `Bearer ${as}`, 'content-type': contentType, ...headers },
          })
          .then((r) => ({ status: r.statusCode, body: r.json() }));
      const filesIn = () =>
        fs.existsSync(path.join(dataDir, 'files'))
          ? fs.readdirSync(path.join(dataDir, 'files'), { recursive: true }).filter((f) => String(f).includes('-'))
          : [];
      return { t, shop, other, shippedOrder, open, claim, decide, transactions, verified, upload, filesIn, dataDir };
    }

    it('a damaged line credited once: open → approve → credited, one claim_credit of price × quantity, verify holds', async (ctx) => {
      const { t, shippedOrder, open, claim, decide, transactions, verified } = await build(ctx);
      const { a } = await shippedOrder();
      const opened = await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 2 }], description: 'box crushed' });
      assert.equal(opened.status, 200, JSON.stringify(opened.body));
      assert.match(opened.body.data.claimNo, /^\d{13}$/);
      assert.equal(opened.body.data.status, 'open');
      const claimNo = opened.body.data.claimNo;
      const c = await claim(claimNo);
      assert.deepEqual(
        { ...c, createDate: undefined, updateDate: undefined, parentOrderId: undefined },
        {
          claimNo,
          orderId: a,
          status: 'open',
          reason: 'damaged',
          resolution: 'refund',
          items: [{ sku: 'A', quantity: 2 }],
          description: 'box crushed',
          evidence: [],
          amount: null,
          replacementOrderId: null,
          returnRequired: false,
          returnTracking: null,
          decisionReason: null,
          createDate: undefined,
          updateDate: undefined,
          parentOrderId: undefined,
        },
      );

      const approved = await decide(claimNo, 'approve', { note: 'sorry' });
      assert.equal(approved.status, 200, approved.raw);
      assert.equal(approved.body.data.status, 'credited');
      assert.equal(approved.body.data.amount, 18.64);
      assert.equal((await claim(claimNo)).status, 'credited');
      const credits = (await transactions()).filter((x: any) => x.type === 'claim_credit');
      assert.deepEqual(
        credits.map((x: any) => [x.amount, x.reference]),
        [[18.64, claimNo]],
      );
      // Decided once: a second approval, a reject or a switch are refused by state, and nothing moves.
      for (const [action, body] of [
        ['approve', {}],
        ['reject', { reason: 'no' }],
        ['resolution', { resolution: 'reship' }],
        ['received', { warehouseCode: 'G007' }],
      ] as const) {
        const again = await decide(claimNo, action, body);
        assert.equal(again.status, 409, `${action}: ${again.raw}`);
        assert.equal(again.body.code, 40903);
      }
      assert.equal((await transactions()).filter((x: any) => x.type === 'claim_credit').length, 1);
      await verified();
      // The supplier's claims account carries the other side.
      const { rows } = await sql<{ n: number }>`select count(*) as n from journal_entries e join ledger_accounts c on c.id = e.counter_account_id
        where e.type = 'claim_credit' and c.kind = 'claims'`.execute(t.store.db);
      assert.equal(Number(rows[0].n), 1);
    });

    it("a whole not_received is credited with the split's freight; what is claimed cannot be claimed again", async (ctx) => {
      const { shippedOrder, open, decide, verified } = await build(ctx);
      const { order, b } = await shippedOrder();
      const split = order.splitOrders.find((s: any) => s.id === b);
      const r = await open({ orderId: b, reason: 'not_received', resolution: 'refund', items: [{ sku: 'B', quantity: 2 }] });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const credited = await decide(r.body.data.claimNo, 'approve');
      assert.equal(credited.body.data.amount, Math.round((2 * 4.5 + split.freightAmount) * 100) / 100);
      const again = await open({ orderId: b, reason: 'damaged', resolution: 'refund', items: [{ sku: 'B', quantity: 1 }] });
      assert.equal(again.status, 422);
      assert.equal(again.body.code, 42204);
      assert.equal(again.body.errors[0].field, 'items[0].quantity');
      assert.equal(again.body.errors[0].claimable, 0);
      await verified();
    });

    it('a partial not_received is credited without freight; a rejected claim gives its quantity back', async (ctx) => {
      const { shippedOrder, open, decide, claim } = await build(ctx);
      const { a } = await shippedOrder();
      const first = await open({ orderId: a, reason: 'not_received', resolution: 'refund', items: [{ sku: 'A', quantity: 3 }] });
      const rejected = await decide(first.body.data.claimNo, 'reject', { reason: 'tracking shows delivered' });
      assert.equal(rejected.status, 200, rejected.raw);
      assert.equal(rejected.body.data.status, 'rejected');
      assert.equal((await claim(first.body.data.claimNo)).decisionReason, 'tracking shows delivered');
      const partial = await open({ orderId: a, reason: 'not_received', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] });
      assert.equal(partial.status, 200, JSON.stringify(partial.body));
      assert.equal((await decide(partial.body.data.claimNo, 'approve')).body.data.amount, 9.32);
    });

    it('reship: a replacement order split and stocked like any order, charged nothing, linked both ways', async (ctx) => {
      const { t, shop, shippedOrder, open, decide, transactions, verified } = await build(ctx);
      const { a } = await shippedOrder();
      const before = await stockQty(t, 'A', 'G007');
      const r = await open({ orderId: a, reason: 'wrong_item', resolution: 'reship', items: [{ sku: 'A', quantity: 2 }] });
      const done = await decide(r.body.data.claimNo, 'approve');
      assert.equal(done.status, 200, done.raw);
      assert.equal(done.body.data.status, 'reshipped');
      const replacementId = done.body.data.replacementOrderId;
      assert.match(replacementId, /^\d+$/);
      const replacement = (await t.merchant(shop, 'GET', `/openapi/v2/order/orders/${replacementId}`)).body.data;
      assert.equal(replacement.finalAmount, 0);
      assert.equal(replacement.freightAmount, 0);
      assert.deepEqual(
        replacement.orderItems.map((i: any) => [i.skuCode, i.productNum, i.amount, i.warehouseCode]),
        [['A', 2, 0, 'G007']],
      );
      assert.equal(replacement.shippingAddress.country, 'DE');
      assert.equal(replacement.customOrderId, `claim-${r.body.data.claimNo}`);
      assert.equal(await stockQty(t, 'A', 'G007'), (before as number) - 2);
      // Charged nothing: one order_charge of 0 for it, no credit.
      const charges = (await transactions()).filter((x: any) => x.orderId === replacementId);
      assert.deepEqual(
        charges.map((x: any) => [x.type, x.amount]),
        [['order_charge', 0]],
      );
      const { rows } = await sql<{ claim_id: number }>`select claim_id from claim_resolutions where replacement_order_id = ${Number(replacementId)}`.execute(
        t.store.db,
      );
      assert.equal(String(rows[0].claim_id), r.body.data.claimNo);
      await verified();
    });

    it('reship out of stock: the claim stays approved with the reason, then switched to refund it is credited', async (ctx) => {
      const { t, shippedOrder, open, decide, claim, verified } = await build(ctx);
      const { a } = await shippedOrder();
      await t.admin('PUT', '/admin/v1/stocks', {
        items: [
          { sku: 'A', warehouseCode: 'G007', qty: 0 },
          { sku: 'A', warehouseCode: 'US01', qty: 0 },
          { sku: 'A', warehouseCode: 'W9', qty: 0 },
        ],
      });
      const r = await open({ orderId: a, reason: 'damaged', resolution: 'reship', items: [{ sku: 'A', quantity: 1 }] });
      const approved = await decide(r.body.data.claimNo, 'approve');
      assert.equal(approved.status, 200, approved.raw);
      assert.equal(approved.body.data.status, 'approved');
      assert.match(approved.body.data.decisionReason, /could not reship: .*insufficient stock/);
      assert.equal(approved.body.data.replacementOrderId, null);
      const switched = await decide(r.body.data.claimNo, 'resolution', { resolution: 'refund' });
      assert.equal(switched.status, 200, switched.raw);
      assert.equal(switched.body.data.status, 'credited');
      assert.equal(switched.body.data.resolution, 'refund');
      assert.equal((await claim(r.body.data.claimNo)).amount, 9.32);
      await verified();
    });

    it('a return: approved with returnRequired, tracking posted, received into a warehouse as a claim_return stock change, then credited', async (ctx) => {
      const { t, shop, shippedOrder, open, decide, claim, verified } = await build(ctx);
      const { a } = await shippedOrder();
      const r = await open({ orderId: a, reason: 'quality', resolution: 'refund', items: [{ sku: 'A', quantity: 2 }] });
      const claimNo = r.body.data.claimNo;
      const approved = await decide(claimNo, 'approve', { returnRequired: true });
      assert.equal(approved.body.data.status, 'awaiting_return');
      assert.equal(approved.body.data.returnRequired, true);
      // Received before the merchant sent anything is fine; but first the merchant posts the tracking.
      const posted = await t.merchant(shop, 'POST', `/openapi/v1/claims/${claimNo}/return`, { carrier: 'DHL', trackingCode: 'JD0001' });
      assert.equal(posted.status, 200, posted.raw);
      assert.deepEqual(posted.body.data.returnTracking, { carrier: 'DHL', trackingCode: 'JD0001' });
      const before = (await stockQty(t, 'A', 'G006')) ?? 0;
      const unknown = await decide(claimNo, 'received', { warehouseCode: 'NOPE' });
      assert.equal(unknown.status, 400);
      assert.equal(unknown.body.errors[0].field, 'warehouseCode');
      const received = await decide(claimNo, 'received', { warehouseCode: 'G006' });
      assert.equal(received.status, 200, received.raw);
      assert.equal(received.body.data.status, 'credited');
      assert.equal(received.body.data.amount, 18.64);
      assert.equal(await stockQty(t, 'A', 'G006'), before + 2);
      const { rows } = await sql<{ delta: number; kind: string; reason: string }>`select l.delta, l.kind, l.reason from stock_ledger l
        join warehouses w on w.id = l.warehouse_id where w.code = 'G006' and l.reason = 'claim_return'`.execute(t.store.db);
      assert.deepEqual(
        rows.map((x) => [Number(x.delta), x.kind, x.reason]),
        [[2, 'return', 'claim_return']],
      );
      assert.equal((await t.merchant(shop, 'POST', `/openapi/v1/claims/${claimNo}/return`, { carrier: 'DHL', trackingCode: 'x' })).status, 409);
      assert.equal((await claim(claimNo)).status, 'credited');
      await verified();
    });

    it('the merchant cancels an open claim; then no decision applies', async (ctx) => {
      const { t, shop, shippedOrder, open, decide } = await build(ctx);
      const { a } = await shippedOrder();
      const r = await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] });
      const cancelled = await t.merchant(shop, 'POST', `/openapi/v1/claims/${r.body.data.claimNo}/cancel`);
      assert.equal(cancelled.status, 200, cancelled.raw);
      assert.equal(cancelled.body.data.status, 'cancelled');
      const late = await decide(r.body.data.claimNo, 'approve');
      assert.equal(late.status, 409);
      assert.equal(late.body.code, 40903);
      assert.equal((await t.merchant(shop, 'POST', `/openapi/v1/claims/${r.body.data.claimNo}/cancel`)).status, 409);
    });

    it('bad input: each a clean 4xx with the field path, and nothing written', async (ctx) => {
      const { t, other, shippedOrder, open, decide } = await build(ctx);
      const { a, b } = await shippedOrder();
      const unshipped = (await shippedOrder([{ sku: 'A', quantity: 1 }], false)).a;
      const ok = { orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] };
      const openClaim = await open(ok);
      const before = await everyTableCount(t.store);
      const cases: [string, unknown, number, number, string | null, string?][] = [
        ['unknown split', { ...ok, orderId: '999999999' }, 404, 40400, null],
        ['the parent order id', { ...ok, orderId: '1' }, 404, 40400, null],
        ['unshipped split', { ...ok, orderId: unshipped }, 409, 40904, 'orderId'],
        ['beyond claimable', { ...ok, items: [{ sku: 'A', quantity: 3 }] }, 422, 42204, 'items[0].quantity'],
        ['SKU not in that split', { ...ok, items: [{ sku: 'B', quantity: 1 }] }, 400, 40000, 'items[0].sku'],
        [
          'duplicate SKUs',
          {
            ...ok,
            items: [
              { sku: 'A', quantity: 1 },
              { sku: 'A', quantity: 1 },
            ],
          },
          400,
          40000,
          'items[1].sku',
        ],
        ['empty items', { ...ok, items: [] }, 400, 40000, 'items'],
        ['zero quantity', { ...ok, items: [{ sku: 'A', quantity: 0 }] }, 400, 40000, 'items[0].quantity'],
        ['unknown reason', { ...ok, reason: 'lost' }, 400, 40000, 'reason'],
        ['unknown resolution', { ...ok, resolution: 'cash' }, 400, 40000, 'resolution'],
        ['description too long', { ...ok, description: 'x'.repeat(2001) }, 400, 40000, 'description'],
        ['seven evidence files', { ...ok, evidence: ['1', '2', '3', '4', '5', '6', '7'] }, 400, 40000, 'evidence'],
        ['evidence that is no file of the merchant', { ...ok, evidence: ['9500000000001'] }, 400, 40000, 'evidence[0]'],
        ['the same file twice', { ...ok, evidence: ['9500000000001', '9500000000001'] }, 400, 40000, 'evidence[1]'],
        ["another merchant's split", ok, 404, 40400, null, other],
      ];
      for (const [name, body, status, code, field, as] of cases) {
        const r = await open(body, as);
        assert.equal(r.status, status, `${name}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, code, name);
        assert.equal(r.body.data, null, name);
        if (field)
          assert.ok(
            r.body.errors?.some((e: any) => e.field === field),
            `${name}: ${JSON.stringify(r.body.errors)}`,
          );
      }
      const claimNo = openClaim.body.data.claimNo;
      const reject = await decide(claimNo, 'reject', {});
      assert.equal(reject.status, 400);
      assert.equal(reject.body.errors[0].field, 'reason');
      assert.equal((await decide(claimNo, 'reject', { reason: '   ' })).status, 400);
      assert.equal((await decide(claimNo, 'received', { warehouseCode: 'G007' })).body.code, 40903);
      assert.equal((await decide(claimNo, 'resolution', { resolution: 'bogus' })).status, 400);
      assert.equal((await decide('123', 'approve')).status, 404);
      assert.equal((await t.merchant(other, 'GET', `/openapi/v1/claims/${claimNo}`)).status, 404);
      assert.equal((await t.merchant(other, 'POST', `/openapi/v1/claims/${claimNo}/cancel`)).status, 404);
      assert.deepEqual(await everyTableCount(t.store), before, 'nothing written');
      assert.equal(b.length > 0, true);
    });

    it('past CLAIM_WINDOW_DAYS a split order cannot be claimed (409/40904)', async (ctx) => {
      const { t, shippedOrder, open } = await build(ctx, { CLAIM_WINDOW_DAYS: '1' });
      const { a } = await shippedOrder();
      await sql`update split_orders set shipped_at = shipped_at - ${2 * 86_400_000} where id = ${Number(a)}`.execute(t.store.db);
      const r = await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] });
      assert.equal(r.status, 409);
      assert.equal(r.body.code, 40904);
      assert.match(r.body.message, /claim window/);
    });

    it('Idempotency-Key: a retry replays the claim, another body with the key is 409/40900', async (ctx) => {
      const { shippedOrder, open, t, shop } = await build(ctx);
      const { a } = await shippedOrder();
      const body = { orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] };
      const first = await open(body, shop, { 'idempotency-key': 'claim-1' });
      const again = await open(body, shop, { 'idempotency-key': 'claim-1' });
      assert.equal(again.status, 200);
      assert.equal(again.body.data.claimNo, first.body.data.claimNo);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      const other = await open({ ...body, reason: 'quality' }, shop, { 'idempotency-key': 'claim-1' });
      assert.equal(other.status, 409);
      assert.equal(other.body.code, 40900);
      assert.equal((await t.merchant(shop, 'GET', '/openapi/v1/claims')).body.data.total, 1);
    });

    it('lists claims newest first, by page or cursor, with filters; the operator sees them oldest open first', async (ctx) => {
      const { t, shop, shippedOrder, open, decide } = await build(ctx);
      const { order, a, b } = await shippedOrder();
      const c1 = (await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] })).body.data.claimNo;
      const c2 = (await open({ orderId: b, reason: 'damaged', resolution: 'refund', items: [{ sku: 'B', quantity: 1 }] })).body.data.claimNo;
      const c3 = (await open({ orderId: a, reason: 'quality', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] })).body.data.claimNo;
      await decide(c3, 'reject', { reason: 'no' });
      const page1 = (await t.merchant(shop, 'GET', '/openapi/v1/claims?pageSize=2')).body.data;
      assert.deepEqual(
        page1.list.map((c: any) => c.claimNo),
        [c3, c2],
      );
      assert.equal(page1.total, 3);
      const page2 = (await t.merchant(shop, 'GET', `/openapi/v1/claims?cursor=${page1.nextCursor}`)).body.data;
      assert.deepEqual(
        page2.list.map((c: any) => c.claimNo),
        [c1],
      );
      assert.equal(page2.nextCursor, null);
      assert.equal((await t.merchant(shop, 'GET', `/openapi/v1/claims?cursor=${page1.nextCursor}&pageNumber=2`)).status, 400);
      assert.equal((await t.merchant(shop, 'GET', '/openapi/v1/claims?cursor=bogus')).status, 400);
      const ofA = (await t.merchant(shop, 'GET', `/openapi/v1/claims?orderId=${a}&status=open`)).body.data.list.map((c: any) => c.claimNo);
      assert.deepEqual(ofA, [c1]);
      const ofOrder = (await t.merchant(shop, 'GET', `/openapi/v1/claims?orderId=${order.id}`)).body.data.list.map((c: any) => c.claimNo);
      assert.deepEqual(ofOrder, [c3, c2, c1], 'the parent order id selects the claims of all its split orders');
      const queue = (await t.admin('GET', '/admin/v1/claims')).body.data;
      assert.deepEqual(
        queue.list.map((c: any) => [c.claimNo, c.status, c.overSla]),
        [
          [c1, 'open', false],
          [c2, 'open', false],
          [c3, 'rejected', false],
        ],
      );
      assert.equal((await t.admin('GET', '/admin/v1/claims?status=rejected')).body.data.total, 1);
      assert.equal((await t.admin('GET', `/admin/v1/claims/${c2}`)).body.data.claimNo, c2);
    });

    it('scopes: claims:read and claims:write are needed', async (ctx) => {
      const { t, shippedOrder } = await build(ctx);
      const { a } = await shippedOrder();
      const reader = (await newMerchant(t, 'Reader', { scopes: ['orders:read'] })).token;
      const r = await t.merchant(reader, 'POST', '/openapi/v1/claims', {
        orderId: a,
        reason: 'damaged',
        resolution: 'refund',
        items: [{ sku: 'A', quantity: 1 }],
      });
      assert.equal(r.status, 403);
      assert.equal((await t.merchant(reader, 'GET', '/openapi/v1/claims')).status, 403);
    });

    it('ledger verify names a credited claim without its credit, and a claim credit without its credited claim', async (ctx) => {
      const { t, shippedOrder, open, decide } = await build(ctx);
      const { a, b } = await shippedOrder();
      const credited = (await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] })).body.data.claimNo;
      await decide(credited, 'approve');
      const uncredited = (await open({ orderId: b, reason: 'damaged', resolution: 'refund', items: [{ sku: 'B', quantity: 1 }] })).body.data.claimNo;
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);
      // Broken on purpose, straight through SQL: one claim loses its state, the other claims a credit it never got.
      await sql`update claims set status = 'approved' where id = ${Number(credited)}`.execute(t.store.db);
      await sql`update claims set status = 'credited', amount_cents = 450 where id = ${Number(uncredited)}`.execute(t.store.db);
      const breaches = (await verifyLedger(t.store.db)).breaches;
      assert.deepEqual(
        breaches.map((x) => x.rule),
        ['claim_credit', 'claim_credit'],
      );
      assert.match(breaches[0].message, new RegExp(`claim ${uncredited}: 0 credits, expected exactly 1`));
      assert.match(breaches[1].message, new RegExp(`claim:${credited}\\) without a credited claim`));
    });

    const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(2000, 7)]);
    const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(100, 1)]);
    const PDF = Buffer.from('%PDF-1.7\n%âãÏÓ\n1 0 obj <<>> endobj\n');

    it('evidence: typed from the bytes, attached to a claim, served only to its merchant and the operator as an attachment', async (ctx) => {
      const { t, shop, other, shippedOrder, open, claim, upload } = await build(ctx);
      const png = await upload(PNG, 'image/png');
      assert.equal(png.status, 200, JSON.stringify(png.body));
      assert.deepEqual({ ...png.body.data, fileId: undefined }, { fileId: undefined, size: PNG.length, contentType: 'image/png' });
      const pdf = await upload(PDF, 'application/pdf');
      assert.equal(pdf.status, 200, JSON.stringify(pdf.body));
      const { a } = await shippedOrder();
      const opened = await open({
        orderId: a,
        reason: 'damaged',
        resolution: 'refund',
        items: [{ sku: 'A', quantity: 1 }],
        evidence: [png.body.data.fileId, pdf.body.data.fileId],
      });
      assert.equal(opened.status, 200, JSON.stringify(opened.body));
      assert.deepEqual((await claim(opened.body.data.claimNo)).evidence, [png.body.data.fileId, pdf.body.data.fileId]);
      const got = await t.app.inject({ method: 'GET', url: `/openapi/v1/claims/files/${png.body.data.fileId}`, headers: { authorization: `Bearer ${shop}` } });
      assert.equal(got.statusCode, 200);
      assert.deepEqual(got.rawPayload, PNG);
      assert.equal(got.headers['content-type'], 'image/png');
      assert.equal(got.headers['x-content-type-options'], 'nosniff');
      assert.match(String(got.headers['content-disposition']), /^attachment; filename="claim-evidence-\d+\.png"$/);
      const theirs = await t.app.inject({
        method: 'GET',
        url: `/openapi/v1/claims/files/${png.body.data.fileId}`,
        headers: { authorization: `Bearer ${other}` },
      });
      assert.equal(theirs.statusCode, 404);
      assert.equal(theirs.json().code, 40400);
      const operator = await t.app.inject({
        method: 'GET',
        url: `/admin/v1/claims/files/${pdf.body.data.fileId}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      assert.equal(operator.statusCode, 200);
      assert.deepEqual(operator.rawPayload, PDF);
      // A file on one claim cannot be named by another, nor by another merchant.
      const again = await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }], evidence: [png.body.data.fileId] });
      assert.equal(again.status, 400);
      assert.equal(again.body.errors[0].field, 'evidence[0]');
      const mine = await upload(JPEG, 'image/jpeg', other);
      const foreign = await open({
        orderId: a,
        reason: 'damaged',
        resolution: 'refund',
        items: [{ sku: 'A', quantity: 1 }],
        evidence: [mine.body.data.fileId],
      });
      assert.equal(foreign.status, 400);
      assert.equal(foreign.body.errors[0].field, 'evidence[0]');
    });

    it('evidence refused, and nothing kept: bytes not of their type, a 6 MB file, another content type, an empty body', async (ctx) => {
      const { t, shop, upload, filesIn } = await build(ctx);
      const before = await everyTableCount(t.store);
      const cases: [string, Buffer, string, number, number][] = [
        ['JPEG bytes sent as PNG', JPEG, 'image/png', 415, 41500],
        ['HTML sent as JPEG', Buffer.from('<html><script>alert(1)</script></html>'), 'image/jpeg', 415, 41500],
        ['SVG sent as PNG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'image/png', 415, 41500],
        ['a 6 MB file', Buffer.concat([JPEG, Buffer.alloc(6 * 1024 * 1024)]), 'image/jpeg', 413, 41300],
        ['text/plain', Buffer.from('hello'), 'text/plain', 415, 41500],
        ['image/svg+xml', Buffer.from('<svg/>'), 'image/svg+xml', 415, 41500],
        ['an empty body', Buffer.alloc(0), 'image/png', 400, 40000],
      ];
      for (const [name, bytes, type, status, code] of cases) {
        const r = await upload(bytes, type);
        assert.equal(r.status, status, `${name}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, code, name);
      }
      assert.deepEqual(await everyTableCount(t.store), before, 'no row written');
      assert.deepEqual(filesIn(), [], 'no file kept');
      // Sent in chunks, without a length: read up to the limit, the rest dropped, then 413.
      const { Readable } = await import('node:stream');
      const big = Buffer.concat([JPEG, Buffer.alloc(6 * 1024 * 1024)]);
      const chunked = await t.app.inject({
        method: 'POST',
        url: '/openapi/v1/claims/files',
        payload: Readable.from([big.subarray(0, 1 << 20), big.subarray(1 << 20)]),
        headers: { authorization: `Bearer ${shop}`, 'content-type': 'image/jpeg', 'transfer-encoding': 'chunked' },
      });
      assert.equal(chunked.statusCode, 413, chunked.body);
      assert.deepEqual(filesIn(), [], 'no file kept');
      assert.deepEqual(await everyTableCount(t.store), before, 'no row written');
    });

    it('evidence no claim names is purged after a day; a named file stays', async (ctx) => {
      const { t, shippedOrder, open, upload, filesIn, shop, dataDir } = await build(ctx);
      const named = (await upload(PNG, 'image/png')).body.data.fileId;
      const orphan = (await upload(JPEG, 'image/jpeg')).body.data.fileId;
      const { a } = await shippedOrder();
      await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }], evidence: [named] });
      assert.equal(filesIn().length, 2);
      assert.equal(await purgeOrphanEvidence(t.store.db, { dataDir, backupS3: null }, Date.now()), 0, 'not before a day');
      assert.equal(await purgeOrphanEvidence(t.store.db, { dataDir, backupS3: null }, Date.now() + 25 * 3600 * 1000), 1);
      assert.equal(filesIn().length, 1);
      assert.equal((await t.merchant(shop, 'GET', `/openapi/v1/claims/files/${orphan}`)).status, 404);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: `/openapi/v1/claims/files/${named}`, headers: { authorization: `Bearer ${shop}` } })).statusCode,
        200,
      );
    });

    it('bytes no row names (a kill between writing them and their row) are swept a day after their upload, with a stale .part; the rest stay', async (ctx) => {
      const { t, upload, shop, dataDir } = await build(ctx);
      const named = (await upload(PNG, 'image/png')).body.data.fileId;
      const now = Date.now();
      const dayAgo = now - 25 * 3600 * 1000;
      const folder = path.join(dataDir, 'files', '999');
      const stray = (ms: number, tail = '') => `${ms}-${'ab'.repeat(12)}${tail}`;
      fs.mkdirSync(folder, { recursive: true });
      fs.writeFileSync(path.join(folder, stray(dayAgo)), PNG); // placed, its row never committed
      fs.writeFileSync(path.join(folder, stray(now)), PNG); // an upload of now whose row is about to be written
      fs.writeFileSync(path.join(folder, stray(dayAgo + 1, '.part')), PNG); // an upload cut off by a kill
      fs.utimesSync(path.join(folder, stray(dayAgo + 1, '.part')), new Date(dayAgo), new Date(dayAgo));
      fs.writeFileSync(path.join(folder, stray(now + 1, '.part')), PNG); // an upload being received
      assert.ok(
        purgeTasks(t.store, t.config).some((p) => p.what === 'claim evidence bytes no row names'),
        'the worker runs the sweep',
      );
      assert.equal(await sweepStrayEvidence(t.store.db, { dataDir, backupS3: null }, now), 2);
      assert.deepEqual(fs.readdirSync(folder).sort(), [stray(now), stray(now + 1, '.part')].sort(), 'the young stray and the young .part stay');
      const kept = await t.app.inject({ method: 'GET', url: `/openapi/v1/claims/files/${named}`, headers: { authorization: `Bearer ${shop}` } });
      assert.equal(kept.statusCode, 200, 'a file a row names stays, however old');
      assert.equal(
        await sweepStrayEvidence(t.store.db, { dataDir, backupS3: null }, now + 2 * 86_400_000),
        2,
        'two days on: the two young ones are strays too; the named file still stays',
      );
      assert.deepEqual(fs.readdirSync(folder), []);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: `/openapi/v1/claims/files/${named}`, headers: { authorization: `Bearer ${shop}` } })).statusCode,
        200,
      );
    });

    it('evidence upload honours Idempotency-Key: a retry answers the first file and keeps one copy', async (ctx) => {
      const { upload, filesIn } = await build(ctx);
      const first = await upload(PNG, 'image/png', undefined, { 'idempotency-key': 'photo-1' });
      const retry = await upload(PNG, 'image/png', undefined, { 'idempotency-key': 'photo-1' });
      assert.equal(retry.body.data.fileId, first.body.data.fileId);
      assert.equal(filesIn().length, 1);
      const other = await upload(JPEG, 'image/jpeg', undefined, { 'idempotency-key': 'photo-1' });
      assert.equal(other.status, 409);
      assert.equal(filesIn().length, 1);
    });

    it('webhook events: claim.approved and claim.credited, committed with the decision; claim.rejected on a rejection', async (ctx) => {
      const { t, shop, shippedOrder, open, decide } = await build(ctx);
      const hook = await t.merchant(shop, 'POST', '/openapi/v1/webhooks', {
        url: 'http://127.0.0.1:9/hook',
        events: ['claim.approved', 'claim.rejected', 'claim.credited', 'claim.reshipped'],
      });
      assert.equal(hook.status, 200, hook.raw);
      const { a } = await shippedOrder();
      const credited = (await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] })).body.data.claimNo;
      await decide(credited, 'approve');
      const rejected = (await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] })).body.data.claimNo;
      await decide(rejected, 'reject', { reason: 'no damage visible' });
      const log = (await t.merchant(shop, 'GET', `/openapi/v1/webhooks/${hook.body.data.id}/deliveries`)).body.data.list;
      assert.deepEqual(log.map((d: any) => d.type).sort(), ['claim.approved', 'claim.credited', 'claim.rejected']);
      const { rows } = await sql<{ payload: string }>`select payload from webhook_events where type = 'claim.credited'`.execute(t.store.db);
      const body = JSON.parse(rows[0].payload);
      assert.equal(body.data.claimNo, credited);
      assert.equal(body.data.claim.status, 'credited');
      assert.equal(body.data.claim.amount, 9.32);
    });

    it('evidence is in the backup and comes back with the restore', {
      skip: dialect === 'postgres' ? 'the restore into a fresh DATA_DIR is the SQLite case' : false,
    }, async (ctx) => {
      const { t, shippedOrder, open, upload, dataDir } = await build(ctx);
      const fileId = (await upload(PNG, 'image/png')).body.data.fileId;
      const { a } = await shippedOrder();
      await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }], evidence: [fileId] });
      const config = loadConfig({ DATABASE_URL: t.config.databaseUrl, DATA_DIR: dataDir });
      const archives = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-claims-backup-'));
      ctx.after(() => fs.rmSync(archives, { recursive: true, force: true }));
      const backup = await createBackup({ config, store: t.store }, { toDir: archives });
      const evidence = Object.keys(backup.manifest.files).filter((f) => f.startsWith('files/'));
      assert.equal(evidence.length, 1);
      const target = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-claims-restore-'));
      ctx.after(() => fs.rmSync(target, { recursive: true, force: true }));
      const restored = await restoreBackup({ config: loadConfig({ DATA_DIR: target }) }, backup.file);
      assert.equal(restored.evidenceWritten, 1);
      assert.deepEqual(fs.readFileSync(path.join(target, ...evidence[0].split('/'))), PNG);
    });

    it('two decisions of one claim at once, on two servers: one wins, the other is 409 and changes nothing', async (ctx) => {
      const { t, shippedOrder, open, transactions, verified } = await build(ctx);
      const { a } = await shippedOrder();
      // A second server on the same database: its own pool and app.
      const store2 = await openStore(t.config.databaseUrl);
      const app2 = await buildApp({ config: t.config, store: store2, adminApiKey: ADMIN_KEY }, { logger: false });
      ctx.after(async () => {
        await app2.close();
        await store2.close();
      });
      const via = (app: typeof app2, url: string, payload: unknown) =>
        app.inject({ method: 'POST', url, payload: payload as object, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      for (let round = 0; round < 3; round++) {
        const claimNo = (await open({ orderId: a, reason: 'damaged', resolution: 'refund', items: [{ sku: 'A', quantity: 1 }] })).body.data.claimNo;
        const [one, two] = await Promise.all([
          via(t.app, `/admin/v1/claims/${claimNo}/approve`, {}),
          via(app2, `/admin/v1/claims/${claimNo}/${round === 1 ? 'reject' : 'approve'}`, { reason: 'duplicate' }),
        ]);
        const statuses = [one.statusCode, two.statusCode].sort();
        assert.deepEqual(statuses, [200, 409], `${one.body} / ${two.body}`);
        const loser = one.statusCode === 409 ? one : two;
        assert.equal(loser.json().code, 40903);
      }
      const credits = (await transactions()).filter((x: any) => x.type === 'claim_credit');
      // Round 1 may have been won by the reject; every approval that won credited exactly once.
      assert.ok(credits.length >= 2 && credits.length <= 3);
      assert.equal(new Set(credits.map((x: any) => x.reference)).size, credits.length);
      await verified();
    });
  });
}
