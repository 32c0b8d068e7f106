import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { RefundWorker } from '../../src/jobs/refund.worker.ts';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, stockQty, tableDigests, useApp, type TestApp } from '../helpers.ts';

/** SPEC §15 from the merchant's and the operator's side: charges, credits, prepaid refusals, top-ups, adjustments. */
const DE = { country: 'DE', phone: '1', recipient: 'R', province: 'P' };
const worker = (t: TestApp) => new RefundWorker({ store: t.store, config: { refundReview: 'auto', refundAutoDelayMs: 0 } });

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`money: accounts, charges and credits (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);

    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      await t.admin('PUT', '/admin/v1/stocks', {
        items: [
          { sku: 'A', warehouseCode: 'G007', qty: 100000 },
          { sku: 'B', warehouseCode: 'G006', qty: 100000 },
          { sku: 'C', warehouseCode: 'G007', qty: 100000 },
        ],
      });
    });

    /** A merchant of its own for each test: nothing depends on the order tests run in. */
    const shop = async (name: string) => {
      const m = await newMerchant(t, name);
      return {
        ...m,
        account: async () => (await t.merchant(m.token, 'GET', '/openapi/v1/account')).body,
        transactions: async (query = '') => (await t.merchant(m.token, 'GET', `/openapi/v1/account/transactions${query}`)).body,
        order: (lines: unknown[]) => t.merchant(m.token, 'POST', '/openapi/v1/order/orders', order(lines, { orderAddress: DE })),
        terms: (body: Record<string, unknown>) => t.admin('PATCH', `/admin/v1/merchants/${m.merchantId}/account`, { environment: 'sandbox', ...body }),
        topUp: (amount: unknown, reference: string) =>
          t.admin('POST', `/admin/v1/merchants/${m.merchantId}/account/top-ups`, { environment: 'sandbox', amount, reference }),
      };
    };
    const finalAmountOf = async (token: string, orderId: string) =>
      (await t.merchant(token, 'GET', `/openapi/v2/order/orders/${orderId}`)).body.data.finalAmount as number;
    const clean = async () => {
      const report = await verifyLedger(t.store.db);
      assert.deepEqual(report.breaches, [], 'every invariant of SPEC §15 holds');
      return report;
    };

    it('shows an account before any money moved: zero, on account, the supplier currency', async () => {
      const s = await shop('Fresh');
      const a = await s.account();
      assert.equal(a.code, 10000);
      assert.deepEqual(a.data, {
        environment: 'sandbox',
        currency: 'USD',
        balance: 0,
        creditLimit: 0,
        available: 0,
        billingMode: 'on_account',
        lowBalanceThreshold: null,
      });
      assert.deepEqual((await s.transactions()).data, { total: 0, pageNumber: 1, pageSize: 20, list: [], nextCursor: null });
    });

    it('charges an order when it is placed (on account: below zero without limit)', async () => {
      const s = await shop('Charged');
      const r = await s.order([{ sku: 'A', quantity: 2 }]);
      assert.equal(r.status, 200, r.raw);
      const final = await finalAmountOf(s.token, r.body.data);
      const a = (await s.account()).data;
      assert.equal(a.balance, -final);
      assert.equal(a.available, -final);
      const page = (await s.transactions()).data;
      assert.equal(page.total, 1);
      assert.equal(page.list[0].type, 'order_charge');
      assert.equal(page.list[0].amount, -final);
      assert.equal(page.list[0].balanceAfter, -final);
      assert.equal(page.list[0].orderId, r.body.data);
      assert.equal(page.list[0].refundNo, null);
      await clean();
    });

    it('credits a refund when the worker decides it successful, and nothing when it fails', async () => {
      const s = await shop('Refunded');
      const placed = await s.order([
        { sku: 'A', quantity: 1 },
        { sku: 'B', quantity: 1 },
      ]);
      const orderId = placed.body.data;
      const final = await finalAmountOf(s.token, orderId);
      const rq = await t.merchant(s.token, 'POST', `/openapi/v2/order/orders/${orderId}/refund`, { skuCode: 'A', quantity: 1 });
      assert.equal(rq.status, 200, rq.raw);
      await worker(t).runOnce();
      const refund = (await t.merchant(s.token, 'GET', `/openapi/v2/order/orders/refund/${orderId}`)).body.data.list[0];
      assert.equal(refund.refundStatus, 'refund_successfully');
      const page = (await s.transactions()).data;
      assert.deepEqual(
        page.list.map((e: { type: string }) => e.type),
        ['refund_credit', 'order_charge'],
      );
      assert.equal(page.list[0].amount, refund.amount);
      assert.equal(page.list[0].refundNo, refund.refundNo);
      assert.equal((await s.account()).data.balance, Math.round((-final + refund.amount) * 100) / 100);
      await clean();
    });

    it('refuses an order a prepaid account cannot cover with 42203, changing nothing', async () => {
      const s = await shop('Prepaid');
      assert.equal((await s.terms({ billingMode: 'prepaid', creditLimit: '5.00' })).status, 200);
      assert.equal((await s.topUp('10.00', 'wire-1')).status, 200);
      const before = await tableDigests(t.store);
      const stockBefore = await stockQty(t, 'C', 'G007');
      const r = await s.order([{ sku: 'C', quantity: 10 }]);
      assert.equal(r.status, 422, r.raw);
      assert.equal(r.body.code, 42203);
      assert.equal(r.body.errors[0].field, 'account');
      assert.equal(r.body.errors[0].available, 15);
      assert.ok(r.body.errors[0].required > 15, 'required is the final amount');
      assert.deepEqual(await tableDigests(t.store), before, 'no order, no stock change, no entry');
      assert.equal(await stockQty(t, 'C', 'G007'), stockBefore);
      // One the account covers goes through and takes it down to what is left.
      const ok = await s.order([{ sku: 'C', quantity: 1 }]);
      assert.equal(ok.status, 200, ok.raw);
      const final = await finalAmountOf(s.token, ok.body.data);
      const a = (await s.account()).data;
      assert.equal(a.balance, Math.round((10 - final) * 100) / 100);
      assert.equal(a.available, Math.round((15 - final) * 100) / 100);
      await clean();
    });

    it('does not keep a 42203 under its Idempotency-Key: refused for the balance, topped up, the same key places the order once', async () => {
      const s = await shop('RetryAfterTopUp');
      assert.equal((await s.terms({ billingMode: 'prepaid' })).status, 200);
      const send = () =>
        t.app
          .inject({
            method: 'POST',
            url: '/openapi/v1/order/orders',
            payload: order([{ sku: 'C', quantity: 1 }], { orderAddress: DE }) as object,
            headers: { authorization: `Bearer ${s.token}`, 'idempotency-key': 'order-after-top-up' },
          })
          .then((r) => ({ status: r.statusCode, replayed: r.headers['idempotent-replayed'], body: r.json() }));
      const refused = await send();
      assert.equal(refused.status, 422, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 42203);
      const keys = await t.store.db.selectFrom('idempotency_keys').select('idempotency_key').where('merchant_id', '=', Number(s.merchantId)).execute();
      assert.deepEqual(keys, [], 'nothing kept under the key');
      assert.equal((await s.topUp('100.00', 'retry-funds')).status, 200);
      const placed = await send();
      assert.equal(placed.status, 200, JSON.stringify(placed.body));
      assert.notEqual(placed.replayed, 'true');
      const again = await send();
      assert.equal(again.status, 200);
      assert.equal(again.replayed, 'true', 'now the order is kept and replayed');
      assert.equal(again.body.data, placed.body.data);
      assert.equal((await s.transactions('?type=order_charge')).data.total, 1, 'charged once');
      await clean();
    });

    it('accepts exactly the concurrent orders a prepaid balance covers', async () => {
      const s = await shop('Race');
      // Price one order, then fund exactly k = 3 of N = 12.
      const probe = await s.order([{ sku: 'C', quantity: 1 }]);
      const each = await finalAmountOf(s.token, probe.body.data);
      const owed = -(await s.account()).data.balance;
      // Paid up first: an owing account cannot be switched to prepaid without a limit that covers the debt.
      assert.equal((await s.topUp((owed + 3 * each).toFixed(2), 'race-funds')).status, 200);
      assert.equal((await s.terms({ billingMode: 'prepaid' })).status, 200);
      const results = await Promise.all(Array.from({ length: 12 }, () => s.order([{ sku: 'C', quantity: 1 }])));
      const accepted = results.filter((r) => r.status === 200).length;
      assert.equal(accepted, 3, results.map((r) => r.status).join(','));
      assert.ok(results.every((r) => r.status === 200 || r.body.code === 42203));
      assert.equal((await s.account()).data.balance, 0);
      await clean();
    });

    it('top-ups are idempotent on their reference; another amount under it is refused', async () => {
      const s = await shop('TopUp');
      const first = await s.topUp(25, 'INV-100');
      assert.equal(first.status, 200, first.raw);
      assert.equal(first.body.data.replayed, false);
      assert.equal(first.body.data.transaction.type, 'top_up');
      assert.equal(first.body.data.transaction.reference, 'INV-100');
      assert.equal(first.body.data.account.balance, 25);
      const again = await s.topUp('25.00', 'INV-100');
      assert.equal(again.status, 200);
      assert.equal(again.body.data.replayed, true);
      assert.equal(again.body.data.transaction.id, first.body.data.transaction.id);
      assert.equal((await s.account()).data.balance, 25);
      const different = await s.topUp(30, 'INV-100');
      assert.equal(different.status, 409);
      assert.equal((await s.account()).data.balance, 25);
      const audit = (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list;
      const topUps = audit.filter((row: { action: string; target: string }) => row.action === 'account.top_up' && row.target === `merchant:${s.merchantId}`);
      assert.equal(topUps.length, 1, 'the top-up is audited once (the repeat posted nothing)');
      await clean();
    });

    it('a top-up reference is one payment whatever its letter case, recorded before this version or after', async () => {
      const s = await shop('RefCase');
      const first = await s.topUp('25.00', 'BANK-X');
      assert.equal(first.status, 200, first.raw);
      const lower = await s.topUp('25.00', 'bank-x');
      assert.equal(lower.status, 200, lower.raw);
      assert.equal(lower.body.data.replayed, true);
      assert.equal(lower.body.data.transaction.id, first.body.data.transaction.id);
      assert.equal(lower.body.data.transaction.reference, 'BANK-X', 'the first as recorded');
      const other = await s.topUp('30.00', 'Bank-X');
      assert.equal(other.status, 409, other.raw);
      assert.match(other.body.message, /reference Bank-X was already used for a top-up of 25/);
      const another = await s.topUp('25.00', 'BANK-Y');
      assert.equal(another.body.data.replayed, false, 'other text is another reference');
      // A top-up recorded by an earlier version: its cause keeps the reference as typed.
      const legacy = await s.topUp('7.00', 'Wire-Legacy');
      const id = legacy.body.data.transaction.id;
      const account = await t.store.db.selectFrom('journal_entries').select('account_id').where('id', '=', Number(id)).executeTakeFirstOrThrow();
      await t.store.db
        .updateTable('journal_entries')
        .set({ cause: `top_up:${account.account_id}:Wire-Legacy` })
        .where('id', '=', Number(id))
        .execute();
      const retried = await s.topUp('7.00', 'WIRE-LEGACY');
      assert.equal(retried.body.data.replayed, true, retried.raw);
      assert.equal(retried.body.data.transaction.id, id);
      assert.equal((await s.account()).data.balance, 57, '25 + 25 (BANK-Y) + 7, nothing twice');
      await clean();
    });

    it('adjustments are signed, need a reason, and post once per Idempotency-Key', async () => {
      const s = await shop('Adjusted');
      const url = `/admin/v1/merchants/${s.merchantId}/account/adjustments`;
      const post = (body: unknown, key?: string) =>
        t.app
          .inject({
            method: 'POST',
            url,
            payload: body as object,
            headers: { authorization: `Bearer ${'test-admin-key-0123456789'}`, ...(key ? { 'idempotency-key': key } : {}) },
          })
          .then((r) => ({ status: r.statusCode, body: r.json() }));
      const down = await post({ environment: 'sandbox', amount: '-12.50', reason: 'damaged goods fee' }, 'adj-1');
      assert.equal(down.status, 200, JSON.stringify(down.body));
      assert.equal(down.body.data.transaction.amount, -12.5);
      assert.equal((await post({ environment: 'sandbox', amount: '-12.50', reason: 'damaged goods fee' }, 'adj-1')).body.data.replayed, true);
      const reused = await post({ environment: 'sandbox', amount: '-13.00', reason: 'damaged goods fee' }, 'adj-1');
      assert.equal(reused.status, 409, 'the same key for another amount');
      // A replay compares every field: the same key and amount with another reason is another request.
      const otherReason = await post({ environment: 'sandbox', amount: '-12.50', reason: 'wire fee' }, 'adj-1');
      assert.equal(otherReason.status, 409, JSON.stringify(otherReason.body));
      assert.equal(otherReason.body.code, 40900);
      assert.deepEqual(otherReason.body.errors, [{ field: 'Idempotency-Key', message: 'already used for a different reason' }]);
      const otherEnvironment = await post({ environment: 'production', amount: '-12.50', reason: 'damaged goods fee' }, 'adj-1');
      assert.equal(otherEnvironment.body.data.replayed, false, "another environment's account: its own key space");
      assert.equal((await post({ environment: 'sandbox', amount: 2, reason: 'goodwill' })).status, 200);
      assert.equal((await s.account()).data.balance, -10.5);
      const types = (await s.transactions('?type=adjustment')).data.list.map((e: { description: string }) => e.description);
      assert.deepEqual(types, ['Adjustment: goodwill', 'Adjustment: damaged goods fee']);
      await clean();
    });

    it('refuses bad operator input with a clean 4xx that writes nothing', async () => {
      const s = await shop('BadInput');
      const base = `/admin/v1/merchants/${s.merchantId}/account`;
      const before = await tableDigests(t.store);
      const cases: [string, string, unknown, number][] = [
        ['POST', `${base}/top-ups`, { environment: 'sandbox', amount: 0, reference: 'r' }, 400],
        ['POST', `${base}/top-ups`, { environment: 'sandbox', amount: -5, reference: 'r' }, 400],
        ['POST', `${base}/top-ups`, { environment: 'sandbox', amount: 'ten', reference: 'r' }, 400],
        ['POST', `${base}/top-ups`, { environment: 'sandbox', amount: '1.005', reference: 'r' }, 400],
        ['POST', `${base}/top-ups`, { environment: 'sandbox', amount: '100000000.01', reference: 'r' }, 400],
        ['POST', `${base}/top-ups`, { environment: 'sandbox', amount: 5 }, 400],
        ['POST', `${base}/top-ups`, { environment: 'sandbox', amount: 5, reference: 'x'.repeat(129) }, 400],
        ['POST', `${base}/top-ups`, { environment: 'sandbox', amount: 5, reference: 'bad\u0000ref' }, 400],
        ['POST', `${base}/top-ups`, { environment: 'staging', amount: 5, reference: 'r' }, 400],
        ['POST', `${base}/adjustments`, { environment: 'sandbox', amount: 5 }, 400],
        ['POST', `${base}/adjustments`, { environment: 'sandbox', amount: 0, reason: 'zero' }, 400],
        ['POST', `${base}/adjustments`, { environment: 'sandbox', amount: 5, reason: 'y'.repeat(501) }, 400],
        ['POST', `${base}/adjustments`, { environment: 'sandbox', amount: 5, reason: '' }, 400],
        ['PATCH', base, { environment: 'sandbox', billingMode: 'credit_card' }, 400],
        ['PATCH', base, { environment: 'sandbox', creditLimit: -1 }, 400],
        ['PATCH', base, { billingMode: 'prepaid' }, 400],
        ['POST', '/admin/v1/merchants/999999/account/top-ups', { environment: 'sandbox', amount: 5, reference: 'r' }, 404],
        ['GET', '/admin/v1/merchants/999999/account', undefined, 404],
      ];
      for (const [method, url, body, status] of cases) {
        const r = await t.admin(method as 'POST', url, body);
        assert.equal(r.status, status, `${method} ${url} ${JSON.stringify(body)} → ${r.raw}`);
        assert.equal(r.body.data, null);
      }
      // A top-up that would take the balance past 10^10 minor units.
      assert.equal((await s.topUp('100000000.00', 'max')).status, 200);
      const over = await s.topUp('0.01', 'over');
      assert.equal(over.status, 400, over.raw);
      assert.equal(over.body.errors[0].field, 'amount');
      // A merchant's token is not the operator's key.
      assert.equal((await t.merchant(s.token, 'GET', `${base}?environment=sandbox`)).status, 401);
      const after = await tableDigests(t.store);
      for (const table of Object.keys(before).filter((n) => !['ledger_accounts', 'journal_entries', 'journal_lines', 'audit_log'].includes(n))) {
        assert.equal(after[table], before[table], `${table} unchanged`);
      }
      assert.equal((await s.transactions()).data.total, 1, 'only the one good top-up posted');
    });

    /** A refused operator change: 409/40903 with the numbers, nothing written, and `ledger verify` still clean. */
    const refusedByFloor = async (
      attempt: () => Promise<{ status: number; raw: string; body: { code: number; message: string; errors: Record<string, unknown>[] } }>,
    ) => {
      const before = await tableDigests(t.store);
      const r = await attempt();
      assert.equal(r.status, 409, r.raw);
      assert.equal(r.body.code, 40903);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written, not even an audit row');
      await clean();
      return r.body;
    };

    it('refuses an adjustment that would take a prepaid account below its floor, naming the numbers', async () => {
      const s = await shop('FloorAdjust');
      assert.equal((await s.terms({ billingMode: 'prepaid', creditLimit: '50.00' })).status, 200);
      assert.equal((await s.topUp('20.00', 'floor-1')).status, 200);
      const adjust = (amount: string) =>
        t.admin('POST', `/admin/v1/merchants/${s.merchantId}/account/adjustments`, { environment: 'sandbox', amount, reason: 'chargeback' });
      const body = await refusedByFloor(() => adjust('-100.00'));
      assert.match(body.message, /adjustment of -100\.00 would take this prepaid account from 20\.00 to -80\.00, below its floor of -50\.00/);
      assert.deepEqual(
        { ...body.errors[0], message: undefined },
        { field: 'amount', message: undefined, balance: -80, creditLimit: 50, available: -30, amount: -100, requiredCreditLimit: 80 },
      );
      // Down to the floor exactly is allowed; on account, anything is.
      assert.equal((await adjust('-70.00')).status, 200);
      assert.equal((await s.account()).data.available, 0);
      assert.equal((await s.terms({ billingMode: 'on_account' })).status, 200);
      assert.equal((await adjust('-100.00')).status, 200);
      await clean();
    });

    it('refuses switching an owing account to prepaid unless the credit limit covers the debt', async () => {
      const s = await shop('FloorSwitch');
      assert.equal((await s.order([{ sku: 'C', quantity: 1 }])).status, 200);
      const owed = -(await s.account()).data.balance;
      assert.ok(owed > 0);
      const patch = (body: Record<string, unknown>) => t.admin('PATCH', `/admin/v1/merchants/${s.merchantId}/account?environment=sandbox`, body);
      const body = await refusedByFloor(() => patch({ billingMode: 'prepaid' }));
      assert.equal(body.errors[0].field, 'billingMode');
      assert.equal(body.errors[0].balance, -owed);
      assert.equal(body.errors[0].creditLimit, 0);
      assert.equal(body.errors[0].requiredCreditLimit, owed);
      assert.match(body.message, new RegExp(`prepaid needs a credit limit of at least ${owed.toFixed(2).replace('.', '\\.')} \\(it would be 0\\.00\\)`));
      const short = await refusedByFloor(() => patch({ billingMode: 'prepaid', creditLimit: (owed - 0.01).toFixed(2) }));
      assert.equal(short.errors[0].field, 'creditLimit');
      const ok = await patch({ billingMode: 'prepaid', creditLimit: owed.toFixed(2) });
      assert.equal(ok.status, 200, ok.raw);
      assert.equal(ok.body.data.available, 0);
      await clean();
    });

    it('refuses lowering a prepaid credit limit below the current debt', async () => {
      const s = await shop('FloorLimit');
      assert.equal((await s.terms({ billingMode: 'prepaid', creditLimit: '80.00' })).status, 200);
      const down = await t.admin('POST', `/admin/v1/merchants/${s.merchantId}/account/adjustments`, { environment: 'sandbox', amount: '-50', reason: 'fee' });
      assert.equal(down.status, 200, down.raw);
      const body = await refusedByFloor(() => s.terms({ creditLimit: '10.00' }));
      assert.equal(body.errors[0].field, 'creditLimit');
      assert.equal(body.errors[0].balance, -50);
      assert.equal(body.errors[0].creditLimit, 10);
      assert.match(
        body.message,
        /a credit limit of 10\.00 leaves this prepaid account's balance of -50\.00 below its floor of -10\.00; at least 50\.00 is needed/,
      );
      assert.equal((await s.terms({ creditLimit: '50.00' })).status, 200, 'the debt exactly');
      assert.equal((await s.terms({ lowBalanceThreshold: '5.00' })).status, 200, 'other terms are untouched by the rule');
      await clean();
    });

    it('takes the PATCH environment from ?environment= (SPEC §15), the body as before, and refuses the two disagreeing', async () => {
      const s = await shop('PatchQuery');
      const url = `/admin/v1/merchants/${s.merchantId}/account`;
      const byQuery = await t.admin('PATCH', `${url}?environment=production`, { creditLimit: '7.00' });
      assert.equal(byQuery.status, 200, byQuery.raw);
      assert.equal(byQuery.body.data.environment, 'production');
      assert.equal((await t.admin('GET', `${url}?environment=production`)).body.data.creditLimit, 7);
      assert.equal((await t.admin('GET', `${url}?environment=sandbox`)).body.data.creditLimit, 0, 'the other environment is untouched');
      const byBody = await t.admin('PATCH', url, { environment: 'sandbox', creditLimit: '3.00' });
      assert.equal(byBody.status, 200, byBody.raw);
      assert.equal(byBody.body.data.environment, 'sandbox');
      const same = await t.admin('PATCH', `${url}?environment=sandbox`, { environment: 'sandbox', creditLimit: '4.00' });
      assert.equal(same.status, 200, same.raw);
      const before = await tableDigests(t.store);
      const differ = await t.admin('PATCH', `${url}?environment=production`, { environment: 'sandbox', creditLimit: '9.00' });
      assert.equal(differ.status, 400, differ.raw);
      assert.equal(differ.body.errors[0].field, 'environment');
      assert.match(differ.body.message, /the query says production and the body says sandbox/);
      const neither = await t.admin('PATCH', url, { creditLimit: '9.00' });
      assert.equal(neither.status, 400, neither.raw);
      assert.match(neither.body.message, /environment: is required: \?environment=sandbox/);
      assert.equal((await t.admin('PATCH', `${url}?environment=staging`, { creditLimit: '9.00' })).status, 400);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written by the refusals');
    });

    it('lets a payment reduce a debt that orders took past the bound, while one amount stays bounded', async () => {
      await loadCatalogue(t, {
        products: [{ sku: 'YACHT', name: 'Yacht', price: '99999000.00', weightGrams: 1 }],
        stocks: [{ sku: 'YACHT', warehouseCode: 'G007', qty: 10 }],
      });
      const s = await shop('DeepDebt');
      // Orders on account have no limit: three of the largest an order may be owe more than 100,000,000.00.
      for (let i = 0; i < 3; i++) {
        const placed = await s.order([{ sku: 'YACHT', quantity: 1 }]);
        assert.equal(placed.status, 200, placed.raw);
      }
      const owed = (await s.account()).data.balance as number;
      assert.ok(owed < -100_000_000, String(owed));
      const pay = await s.topUp('1.00', 'deep-1');
      assert.equal(pay.status, 200, pay.raw);
      assert.equal(pay.body.data.account.balance, Math.round((owed + 1) * 100) / 100);
      const adjust = (amount: string) =>
        t.admin('POST', `/admin/v1/merchants/${s.merchantId}/account/adjustments`, { environment: 'sandbox', amount, reason: 'r' });
      assert.equal((await adjust('0.01')).status, 200, 'an adjustment toward zero too');
      const deeper = await adjust('-0.01');
      assert.equal(deeper.status, 400, deeper.raw);
      assert.equal(deeper.body.errors[0].field, 'amount');
      assert.equal((await s.topUp('100000000.01', 'deep-2')).status, 400, 'one amount is still at most 100,000,000.00');
      await clean();
    });

    it('walks transactions with a cursor and filters by type and time', async () => {
      const s = await shop('Walker');
      for (let i = 0; i < 5; i++) assert.equal((await s.topUp(i + 1, `walk-${i}`)).status, 200);
      for (let i = 0; i < 2; i++) assert.equal((await s.order([{ sku: 'C', quantity: 1 }])).status, 200);
      const seen: string[] = [];
      let page = (await s.transactions('?pageSize=3')).data;
      assert.equal(page.total, 7);
      for (;;) {
        seen.push(...page.list.map((e: { id: string }) => e.id));
        if (page.nextCursor === null) break;
        page = (await s.transactions(`?cursor=${encodeURIComponent(page.nextCursor)}`)).data;
      }
      assert.equal(seen.length, 7);
      assert.equal(new Set(seen).size, 7);
      assert.deepEqual(
        seen,
        [...seen].sort((a, b) => Number(b) - Number(a)),
        'newest first',
      );
      assert.equal((await s.transactions('?type=top_up')).data.total, 5);
      assert.equal((await s.transactions('?type=order_charge')).data.total, 2);
      assert.equal((await s.transactions('?createEndTime=2001-01-01T00:00:00Z')).data.total, 0);
      const bad = await t.merchant(s.token, 'GET', '/openapi/v1/account/transactions?cursor=nope');
      assert.equal(bad.status, 400);
      assert.equal((await t.merchant(s.token, 'GET', '/openapi/v1/account/transactions?type=bribe')).status, 400);
      // Another merchant sees none of them.
      const other = await shop('Other');
      assert.equal((await other.transactions()).data.total, 0);
    });

    it('sends balance.low once per crossing of the threshold, from adjustments and from an order', async () => {
      const s = await shop('Low');
      const hook = await t.merchant(s.token, 'POST', '/openapi/v1/webhooks', { url: 'http://127.0.0.1:9/low', events: ['balance.low'] });
      assert.equal(hook.status, 200, hook.raw);
      const adjust = (amount: string) =>
        t.admin('POST', `/admin/v1/merchants/${s.merchantId}/account/adjustments`, { environment: 'sandbox', amount, reason: 'test' }).then((r) => {
          assert.equal(r.status, 200, r.raw);
          return r.body.data.transaction.id as string;
        });
      const events = async () =>
        (await t.store.db.selectFrom('webhook_events').select(['type', 'payload']).where('type', '=', 'balance.low').orderBy('id').execute()).map((e) =>
          JSON.parse(e.payload),
        );
      assert.equal((await s.terms({ lowBalanceThreshold: '50.00' })).status, 200);
      assert.equal((await s.topUp('100.00', 'low-1')).status, 200);
      await adjust('-30');
      assert.equal((await events()).length, 0, 'available 70: above');
      const crossing = await adjust('-30');
      await adjust('-5');
      let sent = await events();
      assert.equal(sent.length, 1, 'available 40 crossed once; 35 is still below: no second event');
      assert.equal(sent[0].type, 'balance.low');
      assert.equal(sent[0].data.transactionId, crossing);
      assert.equal(sent[0].data.account.available, 40);
      assert.equal(sent[0].data.account.lowBalanceThreshold, 50);
      assert.equal((await s.topUp('100.00', 'low-2')).status, 200);
      assert.equal((await s.terms({ lowBalanceThreshold: '134.99' })).status, 200);
      const placed = await s.order([{ sku: 'C', quantity: 1 }]);
      assert.equal(placed.status, 200, placed.raw);
      sent = await events();
      assert.equal(sent.length, 2, 'the order took 135 below 134.99: a second crossing');
      assert.match(sent[1].data.transactionId, /^\d+$/);
      const charge = (await s.transactions('?type=order_charge')).data.list[0];
      assert.equal(sent[1].data.transactionId, charge.id);
    });

    it('needs the account:read scope, which a token issued without scopes has', async () => {
      const narrow = await newMerchant(t, 'Narrow', { scopes: ['orders:read'] });
      const r = await t.merchant(narrow.token, 'GET', '/openapi/v1/account');
      assert.equal(r.status, 403);
      const wide = await newMerchant(t, 'Wide');
      assert.equal((await t.merchant(wide.token, 'GET', '/openapi/v1/account')).status, 200);
    });
  });
}
