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
  return { merchantId: Number(m.merchantId), orders: placed.map(Number) };
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

    it('names a removed line', async (c) => {
      const t = await buildTestApp(c, dialect);
      await ledgerWithMoney(t);
      const line = await t.store.db
        .selectFrom('journal_lines')
        .select(['entry_id', 'account_id'])
        .where('amount_cents', '>', 0)
        .orderBy('entry_id')
        .executeTakeFirstOrThrow();
      await t.store.db.deleteFrom('journal_lines').where('entry_id', '=', line.entry_id).where('account_id', '=', line.account_id).execute();
      const rules = (await verifyLedger(t.store.db)).breaches;
      assert.ok(
        rules.some((b) => b.rule === 'entry_sum' && b.message.startsWith(`entry ${line.entry_id}:`)),
        JSON.stringify(rules),
      );
    });

    it('names a changed balance', async (c) => {
      const t = await buildTestApp(c, dialect);
      const { merchantId } = await ledgerWithMoney(t);
      await t.store.db.updateTable('ledger_accounts').set({ balance_cents: sql`balance_cents + 1` }).where('merchant_id', '=', merchantId).execute();
      const breaches = (await verifyLedger(t.store.db)).breaches;
      assert.deepEqual(
        breaches.map((b) => b.rule),
        ['account_balance'],
      );
      assert.match(breaches[0].message, new RegExp(`^account merchant:${merchantId}:sandbox: balance `));
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
      await t.store.db.transaction().execute(async (trx) => {
        const dup = await trx.insertInto('journal_entries').values(copy).returning('id').executeTakeFirstOrThrow();
        const lines = await trx.selectFrom('journal_lines').select(['account_id', 'amount_cents']).where('entry_id', '=', charge.id).execute();
        await trx
          .insertInto('journal_lines')
          .values(lines.map((l) => ({ ...l, entry_id: dup.id })))
          .execute();
        await trx
          .updateTable('ledger_accounts')
          .set({ balance_cents: sql`balance_cents + ${charge.amount_cents}` })
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
        await t.store.db.deleteFrom('journal_lines').where('entry_id', '=', e.id).execute();
        await t.store.db.deleteFrom('journal_entries').where('id', '=', e.id).execute();
        await t.store.db
          .updateTable('ledger_accounts')
          .set({ balance_cents: sql`balance_cents - ${e.amount_cents}` })
          .where('id', '=', e.account_id)
          .execute();
      }
      const breaches = (await verifyLedger(t.store.db)).breaches;
      assert.deepEqual(breaches, [
        { rule: 'order_charge', message: `order ${orders[2]}: 0 charges, expected exactly 1` },
        { rule: 'refund_credit', message: `refund ${credit.refund_id}: 0 credits, expected exactly 1` },
      ]);
    });
  });
}
