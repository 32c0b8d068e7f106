import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { up as orderCurrency } from '../../src/store/migrations/0046_order_currency.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { DIALECTS, buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';

/**
 * Migration 0046 (issue 41 item 6): orders that earlier versions wrote as USD while charging them in
 * the supplier's currency take the currency they were charged in; the others keep theirs.
 */
for (const dialect of DIALECTS) {
  describe(`0046_order_currency (${dialect})`, () => {
    it("relabels an order with its charge's currency, and leaves an order without a charge as it was", async (c) => {
      const t = await buildTestApp(c, dialect, { SUPPLIER_CURRENCY: 'EUR' });
      await loadCatalogue(t, ORDER_CATALOGUE);
      const m = await newMerchant(t, 'Relabelled');
      const charged = await placeOrder(t, m.token, [{ sku: 'C', quantity: 1 }]);
      const beforeLedger = await placeOrder(t, m.token, [{ sku: 'C', quantity: 2 }]);
      // As an earlier version left them: both written as USD; the second as an order placed before the ledger (no charge).
      await t.store.db.updateTable('orders').set({ currency_code: 'USD' }).execute();
      await t.store.db.deleteFrom('journal_entries').where('cause', '=', `order:${beforeLedger.id}`).execute();
      // The migration itself, run again over them (later migrations have run since: the
      // migrator would refuse to run an older one out of order).
      await orderCurrency({ db: t.store.db, dialect: t.store.dialect });
      const currencyOf = async (id: string) =>
        (await t.store.db.selectFrom('orders').select('currency_code').where('id', '=', Number(id)).executeTakeFirstOrThrow()).currency_code;
      assert.equal(await currencyOf(charged.id), 'EUR', 'charged in EUR: an EUR order');
      assert.equal(await currencyOf(beforeLedger.id), 'USD', 'no charge: as it was');
      const shown = await t.merchant(m.token, 'GET', `/openapi/v2/order/orders/${charged.id}`);
      assert.equal(shown.body.data.currencyCode, 'EUR');
    });
  });
}
