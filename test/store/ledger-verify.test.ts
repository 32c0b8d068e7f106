import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { RefundWorker } from '../../src/jobs/refund.worker.ts';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';
import { DIALECTS, PG_SKIP, buildTestApp, loadCatalogue, newMerchant, type TestApp } from '../helpers.ts';

/** `stockist ledger verify` (SPEC §15) names each breach of a database broken on purpose. */
async function ledgerWithMoney(t: TestApp) {
  await loadCatalogue(t, ORDER_CATALOGUE);
  const m = await newMerchant(t, 'Verified');
  const DE = { country: 'DE', phone: '1', recipient: 'R', province: 'P' };
  const placed = [];
  for (let i = 0; i < 3; i++)
    placed.push((await t.merchant(m.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 }], { orderAddress: DE }))).body.data);
  await t.merchant(m.token, 'POST', `/openapi/v2/order/orders/${placed[0]}/refund`, {});
  await new RefundWorker({ store: t.store, config: { refundReview: 'auto', refundAutoDelayMs: 0 } }).runOnce();
  await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/account/top-ups`, { environment: 'sandbox', amount: 50, reference: 'wire-9' });
  return { merchantId: Number(m.merchantId), orders: placed.map(Number), token: m.token };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`ledger verify on a database broken on purpose (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('passes on an intact ledger: charges, a refund credit and a top-up', async (c) => {
      const t = await buildTestApp(c, dialect);
      await ledgerWithMoney(t);
      const report = await verifyLedger(t.store.db);
      assert.deepEqual(report.breaches, []);
      assert.equal(report.entries, 5, 'three charges, one refund credit, one top-up');
    });

    it('refuses an unbalanced entry written straight through SQL: the lines are the entry, not rows of their own', async (c) => {
      const t = await buildTestApp(c, dialect);
      await ledgerWithMoney(t);
      const db = t.store.db;
      const charge = await db.selectFrom('journal_entries').selectAll().where('type', '=', 'order_charge').orderBy('id').executeTakeFirstOrThrow();
      const linesBefore = await db.selectFrom('journal_lines').selectAll().orderBy('entry_id').orderBy('account_id').execute();
      // A third line, a removed line, a changed line: there is no line to write.
      await assert.rejects(db.insertInto('journal_lines').values({ entry_id: charge.id, account_id: charge.account_id, amount_cents: 1 }).execute());
      await assert.rejects(db.deleteFrom('journal_lines').where('entry_id', '=', charge.id).execute());
      await assert.rejects(db.updateTable('journal_lines').set({ amount_cents: 1 }).where('entry_id', '=', charge.id).execute());
      // An entry with one side only, or both sides on one account.
      const { id: _id, ...copy } = charge;
      const next = { ...copy, cause: 'tampered', seq: 1000 };
      await assert.rejects(
        db
          .insertInto('journal_entries')
          .values({ ...next, counter_account_id: null as unknown as number })
          .execute(),
      );
      await assert.rejects(
        db
          .insertInto('journal_entries')
          .values({ ...next, counter_account_id: charge.account_id })
          .execute(),
      );
      await assert.rejects(db.updateTable('journal_entries').set({ counter_account_id: charge.account_id }).where('id', '=', charge.id).execute());
      await assert.rejects(db.updateTable('journal_entries').set({ counter_account_id: 999_999 }).where('id', '=', charge.id).execute());
      assert.deepEqual(await db.selectFrom('journal_lines').selectAll().orderBy('entry_id').orderBy('account_id').execute(), linesBefore);
      const sums = await db
        .selectFrom('journal_lines')
        .select((eb) => ['entry_id', eb.fn.sum<number | string>('amount_cents').as('sum'), eb.fn.countAll<number | string>().as('lines')])
        .groupBy('entry_id')
        .execute();
      assert.ok(sums.length === 5 && sums.every((r) => Number(r.sum) === 0 && Number(r.lines) === 2), JSON.stringify(sums));
      assert.deepEqual((await verifyLedger(db)).breaches, []);
    });

    it('names a changed balance', async (c) => {
      const t = await buildTestApp(c, dialect);
      const { merchantId } = await ledgerWithMoney(t);
      await t.store.db.updateTable('ledger_accounts').set({ balance_cents: sql`balance_cents + 1` }).where('merchant_id', '=', merchantId).execute();
      const breaches = (await verifyLedger(t.store.db)).breaches;
      assert.deepEqual(
        breaches.map((b) => b.rule),
        ['entry_chain', 'account_balance'],
      );
      assert.match(breaches[0].message, new RegExp(`^account merchant:${merchantId}:sandbox: balance .* but its newest entry's balanceAfter is `));
      assert.match(breaches[1].message, new RegExp(`^account merchant:${merchantId}:sandbox: balance `));
    });

    it('names a charge posted twice once the unique constraint is dropped', async (c) => {
      const t = await buildTestApp(c, dialect);
      const { orders } = await ledgerWithMoney(t);
      await sql`drop index journal_entries_cause_uq`.execute(t.store.db);
      const charge = await t.store.db
        .selectFrom('journal_entries')
        .selectAll()
        .where('order_id', '=', orders[1])
        .where('type', '=', 'order_charge')
        .executeTakeFirstOrThrow();
      const { id: _id, ...copy } = charge;
      // The copy is posted as the account's next entry, the chain and the balance kept: only the second charge is wrong.
      await t.store.db.transaction().execute(async (trx) => {
        const account = await trx.selectFrom('ledger_accounts').selectAll().where('id', '=', charge.account_id).executeTakeFirstOrThrow();
        await trx
          .insertInto('journal_entries')
          .values({
            ...copy,
            seq: account.last_seq + 1,
            balance_after_cents: account.balance_cents + charge.amount_cents,
            created_at: account.last_posted_at,
          })
          .execute();
        await trx
          .updateTable('ledger_accounts')
          .set({ balance_cents: sql`balance_cents + ${charge.amount_cents}`, last_seq: sql`last_seq + 1` })
          .where('id', '=', charge.account_id)
          .execute();
      });
      const breaches = (await verifyLedger(t.store.db)).breaches;
      assert.deepEqual(breaches, [{ rule: 'order_charge', message: `order ${orders[1]}: 2 charges, expected exactly 1` }]);
    });

    it('names a refund that succeeded without its credit, and an order without its charge', async (c) => {
      const t = await buildTestApp(c, dialect);
      const { orders } = await ledgerWithMoney(t);
      const credit = await t.store.db.selectFrom('journal_entries').selectAll().where('type', '=', 'refund_credit').executeTakeFirstOrThrow();
      const charge = await t.store.db
        .selectFrom('journal_entries')
        .selectAll()
        .where('order_id', '=', orders[2])
        .where('type', '=', 'order_charge')
        .executeTakeFirstOrThrow();
      for (const e of [credit, charge]) {
        await t.store.db.deleteFrom('journal_entries').where('id', '=', e.id).execute();
        await t.store.db
          .updateTable('ledger_accounts')
          .set({ balance_cents: sql`balance_cents - ${e.amount_cents}` })
          .where('id', '=', e.account_id)
          .execute();
      }
      const breaches = (await verifyLedger(t.store.db)).breaches;
      const of = (rule: string) => breaches.filter((b) => b.rule === rule).map((b) => b.message);
      assert.deepEqual(of('order_charge'), [`order ${orders[2]}: 0 charges, expected exactly 1`]);
      assert.deepEqual(of('refund_credit'), [`refund ${credit.refund_id}: 0 credits, expected exactly 1`]);
      // The removed entries leave gaps in the account's sequence, and the refunded order is missing its credit.
      assert.ok(
        of('entry_chain').some((m) => m.includes('the sequence skips')),
        JSON.stringify(breaches),
      );
      assert.ok(
        of('order_refunded').some((m) => m.startsWith(`order ${orders[0]}: refundedAmount `)),
        JSON.stringify(breaches),
      );
      assert.deepEqual([...new Set(breaches.map((b) => b.rule))].sort(), ['entry_chain', 'order_charge', 'order_refunded', 'refund_credit']);
    });

    // The tamperings `ledger verify` used to miss: each is named now.
    const entries = (t: TestApp, merchantId: number) =>
      t.store.db.selectFrom('journal_entries').selectAll().where('merchant_id', '=', merchantId).orderBy('seq').execute();
    const rulesOf = async (t: TestApp) => (await verifyLedger(t.store.db)).breaches;

    it('names a cancellation credit deleted with the balance and the sequence fixed up to match', async (c) => {
      const t = await buildTestApp(c, dialect);
      const { merchantId, orders, token } = await ledgerWithMoney(t);
      const record = (await t.merchant(token, 'GET', `/openapi/v2/order/orders/${orders[1]}`)).body.data;
      const cancelled = await t.admin('POST', `/admin/v1/split-orders/${record.splitOrders[0].id}/cancel`, { reason: 'warehouse flooded' });
      assert.equal(cancelled.status, 200, cancelled.raw);
      assert.deepEqual(await rulesOf(t), []);
      const credit = (await entries(t, merchantId)).at(-1)!;
      assert.equal(credit.type, 'cancellation_credit');
      await t.store.db.deleteFrom('journal_entries').where('id', '=', credit.id).execute();
      await t.store.db
        .updateTable('ledger_accounts')
        .set({ balance_cents: sql`balance_cents - ${credit.amount_cents}`, last_seq: sql`last_seq - 1` })
        .where('id', '=', credit.account_id)
        .execute();
      assert.deepEqual(await rulesOf(t), [
        {
          rule: 'order_refunded',
          message: `order ${orders[1]}: refundedAmount ${credit.amount_cents / 100}, but its refund and cancellation credits sum to 0`,
        },
      ]);
    });

    it("names an inflated order's refunded amount", async (c) => {
      const t = await buildTestApp(c, dialect);
      const { orders } = await ledgerWithMoney(t);
      await t.store.db.updateTable('orders').set({ refunded_cents: sql`refunded_cents + 100` }).where('id', '=', orders[2]).execute();
      assert.deepEqual(await rulesOf(t), [
        { rule: 'order_refunded', message: `order ${orders[2]}: refundedAmount 1, but its refund and cancellation credits sum to 0` },
      ]);
    });

    it('names a changed balanceAfter: the chain breaks at that entry and the one after it', async (c) => {
      const t = await buildTestApp(c, dialect);
      const { merchantId } = await ledgerWithMoney(t);
      const [, second, third] = await entries(t, merchantId);
      await t.store.db.updateTable('journal_entries').set({ balance_after_cents: sql`balance_after_cents + 7` }).where('id', '=', second.id).execute();
      const breaches = await rulesOf(t);
      assert.deepEqual(
        breaches.map((b) => b.rule),
        ['entry_chain', 'entry_chain'],
      );
      assert.match(breaches[0].message, new RegExp(`^account merchant:${merchantId}:sandbox: entry ${second.id} \\(seq 2\\): balanceAfter `));
      assert.match(breaches[1].message, new RegExp(`^account merchant:${merchantId}:sandbox: entry ${third.id} \\(seq 3\\): balanceAfter `));
    });

    it("names an entry moved to another merchant, and an entry's changed currency", async (c) => {
      const t = await buildTestApp(c, dialect);
      const { merchantId } = await ledgerWithMoney(t);
      const other = await newMerchant(t, 'Other');
      const [first, second] = await entries(t, merchantId);
      await t.store.db
        .updateTable('journal_entries')
        .set({ merchant_id: Number(other.merchantId) })
        .where('id', '=', first.id)
        .execute();
      await t.store.db.updateTable('journal_entries').set({ currency: 'EUR' }).where('id', '=', second.id).execute();
      assert.deepEqual(await rulesOf(t), [
        { rule: 'entry_account', message: `entry ${first.id}: merchant ${other.merchantId}, its account is merchant ${merchantId}'s` },
        { rule: 'entry_account', message: `entry ${second.id}: currency EUR, its account's is USD` },
        // …and no longer the currency of the supplier account on its other side.
        { rule: 'entry_account', message: `entry ${second.id}: a EUR order_charge against the sales account in USD` },
      ]);
    });

    it('names a changed created_at that puts an entry before the one it follows', async (c) => {
      const t = await buildTestApp(c, dialect);
      const { merchantId } = await ledgerWithMoney(t);
      const [first, second] = await entries(t, merchantId);
      await t.store.db
        .updateTable('journal_entries')
        .set({ created_at: first.created_at - 60_000 })
        .where('id', '=', second.id)
        .execute();
      const breaches = await rulesOf(t);
      assert.equal(breaches.length, 1, JSON.stringify(breaches));
      assert.equal(breaches[0].rule, 'entry_chain');
      assert.match(breaches[0].message, new RegExp(`entry ${second.id} \\(seq 2\\): created .* before the entry before it`));
    });

    it('names a raised orders_before_ledger: charged orders would pass as placed before the ledger', async (c) => {
      const t = await buildTestApp(c, dialect);
      const { orders } = await ledgerWithMoney(t);
      await t.store.db.updateTable('ledger_meta').set({ value: orders[2] }).where('name', '=', 'orders_before_ledger').execute();
      const breaches = await rulesOf(t);
      assert.deepEqual([...new Set(breaches.map((b) => b.rule))], ['ledger_start']);
      // Three charges and the refund's credit.
      assert.equal(breaches.length, 4, JSON.stringify(breaches));
      assert.match(breaches[0].message, new RegExp(`moves money for order ${orders[0]}, which the ledger says was placed before it began`));
    });
  });
}
