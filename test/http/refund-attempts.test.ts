import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { RefundWorker } from '../../src/jobs/refund.worker.ts';
import { claimDueRefunds } from '../../src/store/refunds.repository.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, useApp } from '../helpers.ts';

/**
 * Issue 13 item 12: a refund whose decision always fails is not retried forever. Every claim is an
 * attempt; after REFUND_MAX_ATTEMPTS the refund is parked for manual review, with the last error
 * shown to the operator (API, CLI) and counted in /metrics; the operator can still decide it.
 */
for (const dialect of DIALECTS) {
  describe(`poison refunds go to manual review (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    const t = useApp(dialect, { REFUND_MAX_ATTEMPTS: '3' });
    let token = '';
    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      token = (await newMerchant(t)).token;
    });
    const requestRefund = async () => {
      const o = await placeOrder(t, token, [{ sku: 'C', quantity: 2 }]);
      const r = await t.merchant(token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, {});
      assert.equal(r.status, 200, r.raw);
      return { orderId: o.id as string, refundNo: r.body.data as string };
    };
    const operatorView = async (refundNo: string, query = 'status=pending_review') => {
      const r = await t.admin('GET', `/admin/v1/refunds?${query}&pageSize=250`);
      assert.equal(r.status, 200, r.raw);
      return r.body.data.list.find((x: { refundNo: string }) => x.refundNo === refundNo);
    };
    const parkedRefunds = async () =>
      ((await t.admin('GET', '/admin/v1/refunds?manualReview=true&pageSize=250')).body.data.list as { refundNo: string }[]).map((r) => r.refundNo).sort();
    const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec((await t.admin('GET', '/metrics')).raw)?.[1]);

    it('parks a refund whose decision always throws after REFUND_MAX_ATTEMPTS, with the error visible', async () => {
      // Other tests may have parked (and decided) refunds of their own: compare with what this one finds.
      const parkedBefore = await parkedRefunds();
      const pendingReviewBefore = await metric('stockist_refunds_manual_review');
      const retryingBefore = await metric('stockist_refunds_retrying');
      const { orderId, refundNo } = await requestRefund();
      let clock = Date.now();
      const config = { refundReview: 'auto' as const, refundAutoDelayMs: 0, refundMaxAttempts: t.config.refundMaxAttempts };
      const poisoned = new RefundWorker({
        store: t.store,
        config,
        claimMs: 1000,
        now: () => clock,
        hooks: {
          record: async () => {
            throw new Error('ledger exploded');
          },
        },
      });
      assert.equal(t.config.refundMaxAttempts, 3);
      for (let attempt = 1; attempt <= 3; attempt++) {
        assert.equal(await poisoned.runOnce(), 0);
        const seen = await operatorView(refundNo);
        assert.deepEqual([seen.attempts, seen.lastError, seen.manualReview], [attempt, 'Error: ledger exploded', attempt === 3], `attempt ${attempt}`);
        if (attempt === 2) assert.equal(await metric('stockist_refunds_retrying'), retryingBefore + 1);
        assert.equal(await poisoned.runOnce(), 0, 'not again before the claim lapses');
        clock += 1001;
      }
      // Parked: no worker takes it again, however long it waits.
      for (let i = 0; i < 3; i++, clock += 5000) assert.equal(await poisoned.runOnce(), 0);
      const healthy = new RefundWorker({ store: t.store, config, now: () => clock });
      assert.equal(await healthy.runOnce(), 0, 'a healthy worker leaves a parked refund to the operator too');
      const seen = await operatorView(refundNo);
      assert.deepEqual([seen.refundStatus, seen.attempts, seen.manualReview, seen.lastError], ['pending_review', 3, true, 'Error: ledger exploded']);
      assert.deepEqual(await parkedRefunds(), [...parkedBefore, refundNo].sort());
      assert.equal(await operatorView(refundNo, 'manualReview=false'), undefined);
      assert.equal(await metric('stockist_refunds_manual_review'), pendingReviewBefore + 1);
      assert.equal(await metric('stockist_refunds_retrying'), retryingBefore);
      // The merchant still sees a pending refund, without the internal error.
      const merchantView = (await t.merchant(token, 'GET', `/openapi/v2/order/orders/refund/${orderId}`)).body.data.list[0];
      assert.equal(merchantView.refundStatus, 'pending_review');
      assert.ok(!JSON.stringify(merchantView).includes('exploded'));
      // The operator decides it.
      const approved = await t.admin('POST', `/admin/v1/refunds/${refundNo}/approve`, {});
      assert.equal(approved.body.data.refundStatus, 'refund_successfully', approved.raw);
      assert.equal(await metric('stockist_refunds_manual_review'), pendingReviewBefore);
      assert.deepEqual(await ledgerMismatches(t.store.db), []);
    });

    it('counts an attempt whose worker died without recording anything (crash, kill)', async () => {
      const { refundNo } = await requestRefund();
      let clock = Date.now();
      // Three workers each claimed it and died: nothing but the claim was written.
      for (let i = 0; i < 3; i++, clock += 1001) {
        const claimed = await t.store.db.transaction().execute((trx) => claimDueRefunds(trx, t.store.dialect, `dead-${i}`, clock, clock, clock + 1000, 50));
        assert.deepEqual(claimed, [Number(refundNo)]);
      }
      const worker = new RefundWorker({ store: t.store, config: { refundReview: 'auto', refundAutoDelayMs: 0, refundMaxAttempts: 3 }, now: () => clock });
      assert.equal(await worker.runOnce(), 0, 'not decided a fourth time');
      const seen = await operatorView(refundNo);
      assert.equal(seen.manualReview, true);
      assert.equal(seen.attempts, 3);
      assert.match(seen.lastError, /stopped.*3 times/);
      const rejected = await t.admin('POST', `/admin/v1/refunds/${refundNo}/reject`, { reason: 'checked by hand' });
      assert.equal(rejected.body.data.refundStatus, 'refund_failed');
    });

    it('decides a refund that failed once and then succeeds; the history stays for the operator', async () => {
      const { refundNo } = await requestRefund();
      let clock = Date.now();
      let failures = 1;
      const config = { refundReview: 'auto' as const, refundAutoDelayMs: 0, refundMaxAttempts: 3 };
      const flaky = new RefundWorker({
        store: t.store,
        config,
        claimMs: 1000,
        now: () => clock,
        hooks: {
          record: async () => {
            if (failures-- > 0) throw new Error('transient');
          },
        },
      });
      assert.equal(await flaky.runOnce(), 0);
      clock += 1001;
      assert.equal(await flaky.runOnce(), 1);
      const seen = await operatorView(refundNo, 'status=refund_successfully');
      assert.deepEqual([seen.attempts, seen.lastError, seen.manualReview], [2, 'Error: transient', false]);
    });

    it('does not spend attempts on storage faults (a full disk is not the refund’s fault)', async () => {
      const { refundNo } = await requestRefund();
      let clock = Date.now();
      const full = Object.assign(new Error('database or disk is full'), { code: dialect === 'sqlite' ? 'SQLITE_FULL' : '53100' });
      const config = { refundReview: 'auto' as const, refundAutoDelayMs: 0, refundMaxAttempts: 3 };
      const worker = new RefundWorker({
        store: t.store,
        config,
        claimMs: 1000,
        now: () => clock,
        hooks: {
          record: async () => {
            throw full;
          },
        },
      });
      for (let i = 0; i < 5; i++, clock += 1001) assert.equal(await worker.runOnce(), 0);
      const seen = await operatorView(refundNo);
      assert.deepEqual([seen.attempts, seen.manualReview, seen.lastError], [0, false, null]);
      assert.equal(await new RefundWorker({ store: t.store, config, now: () => clock }).runOnce(), 1, 'decided once the storage is back');
    });

    it('refuses a bad manualReview filter', async () => {
      const r = await t.admin('GET', '/admin/v1/refunds?manualReview=maybe');
      assert.equal(r.status, 400);
      assert.equal(r.body.code, 40000);
    });
  });
}
