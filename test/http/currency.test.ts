import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CurrencyChangeRefused } from '../../src/domain/money.ts';
import { checkSupplierCurrency } from '../../src/services/currency.service.ts';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { ORDER_CATALOGUE, order, placeOrder } from '../fixtures.ts';
import { DIALECTS, buildTestApp, tableDigests, loadCatalogue, newMerchant } from '../helpers.ts';
import { signedIn, staff, type Browser } from './console-client.ts';
import { member } from './manager-helpers.ts';

/**
 * Issue 41 item 6, one currency everywhere: with SUPPLIER_CURRENCY=EUR every amount the merchant
 * API, the operator API, both front ends, the statement and the ledger show is in EUR — products,
 * quotes, an order charged in EUR, its refund credited in EUR, the account and its statement —
 * and no page or answer says USD.
 */
const month = new Date().toISOString().slice(0, 7);
/** The statement PDF's text is read back where poppler is installed (as test/e2e/statement-pdf.test.ts does). */
const hasPdfToText = spawnSync('pdftotext', ['-v']).status === 0;

/** A page of a front end: 200, says EUR, never USD. */
async function euroPage(b: Browser, url: string, mustShow: RegExp = /EUR|€/) {
  const r = await b.get(url);
  assert.equal(r.statusCode, 200, `${url}: ${r.body.slice(0, 300)}`);
  assert.match(r.body, mustShow, url);
  assert.doesNotMatch(r.body, /USD|US\$/, `${url} says USD`);
  return r.body;
}

for (const dialect of DIALECTS) {
  describe(`one currency everywhere: SUPPLIER_CURRENCY=EUR (${dialect})`, () => {
    it('products, quotes, the order, its refund, the account, the statement and both front ends are in EUR', { timeout: 240_000 }, async (c) => {
      const t = await buildTestApp(c, dialect, { SUPPLIER_CURRENCY: 'EUR', REFUND_REVIEW: 'manual' });
      await loadCatalogue(t, ORDER_CATALOGUE);
      const m = await newMerchant(t, 'Euro Shop');

      // The catalogue: the operator API and the merchant API give the price; the console says EUR.
      const product = await t.admin('GET', '/admin/v1/products/A');
      assert.equal(product.status, 200, product.raw);
      assert.equal(product.body.data.price, 9.32);

      // Quotes name the currency of their freight.
      const lines = { shipToCountry: 'US', products: [{ sku: 'A', quantity: 2 }] };
      const quote = await t.merchant(m.token, 'POST', '/openapi/v2/order/orders/channel', lines);
      assert.equal(quote.status, 200, quote.raw);
      assert.ok(quote.body.data.length > 0);
      for (const q of quote.body.data) assert.equal(q.estimatedFreightCurrency, 'EUR');
      const byType = await t.merchant(m.token, 'POST', '/openapi/v2/order/orders/automaticSplit/channel', lines);
      assert.equal(byType.status, 200, byType.raw);
      for (const q of byType.body.data) assert.equal(q.estimatedFreightCurrency, 'EUR');

      // The order is in EUR and charged in EUR.
      const o = await placeOrder(t, m.token, [
        { sku: 'A', quantity: 2 },
        { sku: 'C', quantity: 1 },
      ]);
      assert.equal(o.currencyCode, 'EUR');
      const listed = await t.merchant(m.token, 'GET', '/openapi/v2/order/orders');
      assert.equal(listed.body.data.list[0].currencyCode, 'EUR');
      const charged = await t.merchant(m.token, 'GET', '/openapi/v1/account/transactions');
      assert.deepEqual(
        charged.body.data.list.map((e: { type: string; currency: string; amount: number }) => [e.type, e.currency, e.amount]),
        [['order_charge', 'EUR', -o.finalAmount]],
      );

      // A refund, reviewed by the operator in the console's queue (EUR), credited in EUR.
      const refund = await t.merchant(m.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, { skuCode: 'C', quantity: 1 });
      assert.equal(refund.status, 200, refund.raw);
      await staff(t, 'owner@example.com', 'owner');
      const owner = await signedIn(t, 'owner@example.com');
      const pending = (await t.merchant(m.token, 'GET', `/openapi/v2/order/orders/refund/${o.id}`)).body.data.list[0];
      const refundNo: string = pending.refundNo;
      const credit: number = pending.amount;
      await euroPage(owner, '/console/refunds', new RegExp(`${credit.toFixed(2)} EUR`));
      const approved = await t.admin('POST', `/admin/v1/refunds/${refundNo}/approve`, {});
      assert.equal(approved.status, 200, approved.raw);

      const account = await t.merchant(m.token, 'GET', '/openapi/v1/account');
      assert.equal(account.body.data.currency, 'EUR');
      const balance = Math.round((-o.finalAmount + credit) * 100) / 100;
      assert.equal(account.body.data.balance, balance);
      const transactions = await t.merchant(m.token, 'GET', '/openapi/v1/account/transactions');
      assert.deepEqual(
        transactions.body.data.list.map((e: { type: string; currency: string }) => [e.type, e.currency]),
        [
          ['refund_credit', 'EUR'],
          ['order_charge', 'EUR'],
        ],
      );
      const operatorView = await t.admin('GET', `/admin/v1/merchants/${m.merchantId}/account?environment=sandbox`);
      assert.equal(operatorView.body.data.currency, 'EUR');

      // The ledger: every account, the supplier's too, and every entry in EUR; verify finds nothing.
      const accounts = await t.store.db.selectFrom('ledger_accounts').select(['kind', 'currency']).execute();
      assert.ok(accounts.some((a) => a.kind === 'sales'));
      assert.deepEqual([...new Set(accounts.map((a) => a.currency))], ['EUR'], 'no account in another currency');
      const entries = await t.store.db.selectFrom('journal_entries').select('currency').execute();
      assert.deepEqual([...new Set(entries.map((e) => e.currency))], ['EUR']);
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);

      // The console: products, the product and channel forms, the order, the merchant's account, the dashboard.
      await euroPage(owner, '/console/products', /9\.32 EUR/);
      await euroPage(owner, '/console/products/A', /9\.32 EUR/);
      await euroPage(owner, '/console/products/A/edit', /Price \(EUR\)/);
      await euroPage(owner, '/console/new-product', /Price \(EUR\)/);
      await euroPage(owner, '/console/channels/STD/edit', /Base fee \(EUR\)/);
      await euroPage(owner, `/console/orders/${o.id}`, new RegExp(`${o.finalAmount.toFixed(2)} EUR`));
      await euroPage(owner, `/console/merchants/${m.merchantId}`, new RegExp(`${balance.toFixed(2)} EUR`));
      await euroPage(owner, `/console/merchants/${m.merchantId}/transactions`);
      await euroPage(owner, '/console', /EUR/);
      await euroPage(owner, '/console/orders', new RegExp(`${o.finalAmount.toFixed(2)} EUR`));
      await euroPage(owner, '/console/refunds/all', new RegExp(`${credit.toFixed(2)} EUR`));
      const refundsCsv = await owner.get('/console/refunds/all.csv');
      assert.equal(refundsCsv.statusCode, 200);
      assert.doesNotMatch(refundsCsv.body, /USD/);
      const ordersCsv = await owner.get('/console/orders.csv');
      assert.match(ordersCsv.body, /,EUR/);
      assert.doesNotMatch(ordersCsv.body, /USD/);

      // The business manager: the balance, the order, the statement.
      const viewer = await member(t, m.merchantId, 'euro-viewer@example.com', 'viewer');
      await euroPage(viewer, '/manager/balance', new RegExp(`${balance.toFixed(2)} EUR`));
      await euroPage(viewer, `/manager/orders/${o.id}`, new RegExp(`${o.finalAmount.toFixed(2)} EUR`));
      await euroPage(viewer, '/manager/orders', new RegExp(`${o.finalAmount.toFixed(2)} EUR`));
      const csv = await viewer.get(`/manager/balance/statement?month=${month}&format=csv`);
      assert.equal(csv.statusCode, 200, csv.body.slice(0, 300));
      const rows = csv.rawPayload.subarray(3).toString('utf8').trimEnd().split('\r\n').slice(1);
      assert.equal(rows.length, 4, 'opening, the charge, the credit, closing');
      for (const row of rows) assert.match(row, /,EUR$/, row);
      assert.doesNotMatch(csv.body, /USD/);
      const pdf = await viewer.get(`/manager/balance/statement?month=${month}&format=pdf`);
      assert.equal(pdf.statusCode, 200);
      if (hasPdfToText) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-currency-'));
        c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
        fs.writeFileSync(path.join(dir, 'statement.pdf'), pdf.rawPayload);
        const text = execFileSync('pdftotext', ['-layout', path.join(dir, 'statement.pdf'), '-'], { encoding: 'utf8' });
        assert.match(text, /EUR/);
        assert.doesNotMatch(text, /USD/);
      }
    });

    it('a database without money takes the configured currency, accounts already opened included; with money, another is refused', async (c) => {
      const t = await buildTestApp(c, dialect);
      const m = await newMerchant(t, 'Early Terms');
      // Terms set before any money moved open the accounts, in the currency of that time (USD).
      const terms = await t.admin('PATCH', `/admin/v1/merchants/${m.merchantId}/account?environment=sandbox`, { lowBalanceThreshold: 10 });
      assert.equal(terms.status, 200, terms.raw);
      const currencies = async () => [...new Set((await t.store.db.selectFrom('ledger_accounts').select('currency').execute()).map((a) => a.currency))];
      assert.deepEqual(await currencies(), ['USD']);

      assert.equal(await checkSupplierCurrency(t.store.db, 'EUR'), null, 'no money yet');
      assert.deepEqual(await currencies(), ['EUR'], "the merchant's and the supplier's accounts, still at zero, are in EUR now");

      // Money moves in EUR (this app's own configuration still says USD: the account's currency decides the entry's).
      const paid = await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/account/top-ups`, { environment: 'sandbox', amount: '7.00', reference: 'W-1' });
      assert.equal(paid.status, 200, paid.raw);
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);
      assert.equal(await checkSupplierCurrency(t.store.db, 'EUR'), 'EUR');
      await assert.rejects(checkSupplierCurrency(t.store.db, 'USD'), (error: Error) => {
        assert.ok(error instanceof CurrencyChangeRefused);
        assert.match(error.message, /^SUPPLIER_CURRENCY is USD, but this database already holds money in EUR/);
        return true;
      });
      assert.deepEqual(await currencies(), ['EUR'], 'refused: nothing changed');
    });

    it('no posting mixes currencies: against a supplier account in another currency nothing is posted, and verify names such an entry', async (c) => {
      const t = await buildTestApp(c, dialect, { SUPPLIER_CURRENCY: 'EUR' });
      await loadCatalogue(t, ORDER_CATALOGUE);
      const m = await newMerchant(t, 'Mixed');
      const DE = { country: 'DE', phone: '1', recipient: 'R', province: 'P' };
      const first = await t.merchant(m.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 }], { orderAddress: DE }));
      assert.equal(first.status, 200, first.raw);
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, []);

      // The supplier's sales account as a database changed by hand (or by an earlier version's currency change) leaves it.
      await t.store.db.updateTable('ledger_accounts').set({ currency: 'USD' }).where('kind', '=', 'sales').execute();
      const before = await tableDigests(t.store);
      const refused = await t.merchant(m.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 }], { orderAddress: DE }));
      assert.equal(refused.status, 500, refused.raw);
      assert.equal(refused.body.code, 50000);
      assert.deepEqual(await tableDigests(t.store), before, 'no order, no stock taken, no entry');

      const charge = await t.store.db.selectFrom('journal_entries').select('id').where('type', '=', 'order_charge').executeTakeFirstOrThrow();
      assert.deepEqual((await verifyLedger(t.store.db)).breaches, [
        { rule: 'entry_account', message: `entry ${charge.id}: a EUR order_charge against the sales account in USD` },
      ]);
    });
  });
}
