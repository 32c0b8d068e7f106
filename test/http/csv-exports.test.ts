import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { ordersCsvForOperator } from '../../src/services/order-search.service.ts';
import { auditCsv } from '../../src/services/audit.service.ts';
import { transactionsCsv } from '../../src/services/ledger.service.ts';
import { refundsCsvForOperator } from '../../src/services/refunds.service.ts';
import { stockCsv } from '../../src/services/stock-history.service.ts';
import { forMerchant } from '../../src/store/tenancy.ts';
import type { CsvExport } from '../../src/domain/csv.ts';
import { signedIn, staff, type Browser } from './console-client.ts';
import { member } from './manager-helpers.ts';
import { buildTestApp, DIALECTS, loadCatalogue, newMerchant, tableDigests } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

/**
 * Issue 29, item 7: every list of the console and the business manager downloads as CSV — the
 * page's filters applied, every matching row (not one page), merchants by name, cells a
 * spreadsheet would run as formulas defused (OWASP "CSV Injection"), streamed from keyset reads;
 * a manager user's file holds only their merchant's rows.
 */

type Row = Record<string, string>;

/** A CSV download's rows (the header row names the fields), after checking it is one. */
function csvRows(r: Awaited<ReturnType<Browser['get']>>, name: string): Row[] {
  assert.equal(r.statusCode, 200, r.body.slice(0, 300));
  assert.equal(r.headers['content-type'], 'text/csv; charset=utf-8');
  const day = new Date().toISOString().slice(0, 10);
  assert.equal(r.headers['content-disposition'], `attachment; filename="${name}-${day}.csv"`);
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.match(r.body, /\r\n$/, 'records end in CRLF (RFC 4180)');
  assert.deepEqual([...r.rawPayload.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'starts with the UTF-8 byte order mark (Excel reads it as UTF-8)');
  return parse(r.body, { columns: true, bom: true }) as Row[];
}

/** The header row, after the byte order mark. */
const header = (body: string) => body.replace(/^\uFEFF/, '').split('\r\n')[0];

/** Every row of an export, read as the download reads it. */
async function allRows(file: CsvExport) {
  const rows = [];
  for await (const row of file.rows) rows.push(row);
  return rows;
}

const FORMULA_NAME = '=HYPERLINK("http://evil.example/","click, here")';

for (const dialect of DIALECTS) {
  describe(`CSV exports of the lists (${dialect})`, () => {
    /**
     * What every test here starts from, on an app and a database of its own (closed when the test
     * ends), so any one test runs alone.
     */
    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect, { REFUND_REVIEW: 'manual' });
      const shopOrders: string[] = [];
      await loadCatalogue(t, ORDER_CATALOGUE);
      const shop = await newMerchant(t, FORMULA_NAME);
      const other = await newMerchant(t, 'Shop Two');
      for (const custom of ['+SUM(1,2)', '@cmd', 'PLAIN-1'])
        shopOrders.unshift((await placeOrder(t, shop.token, [{ sku: 'C', quantity: 1 }], { customOrderId: custom })).id);
      const otherOrder = (await placeOrder(t, other.token, [{ sku: 'C', quantity: 2 }])).id;
      const refund = await t.merchant(shop.token, 'POST', `/openapi/v2/order/orders/${shopOrders[0]}/refund`, {
        skuCode: 'C',
        quantity: 1,
        refundReason: 'Other',
      });
      assert.equal(refund.status, 200, refund.raw);
      const topUp = await t.admin('POST', `/admin/v1/merchants/${shop.merchantId}/account/top-ups`, {
        environment: 'sandbox',
        amount: 50,
        reference: '-wire 1',
      });
      assert.equal(topUp.status, 200, topUp.raw);
      await staff(t, 'csv-owner@example.com', 'owner');
      await staff(t, 'csv-support@example.com', 'support');
      await staff(t, 'csv-warehouse@example.com', 'warehouse');
      const owner = await signedIn(t, 'csv-owner@example.com');
      const support = await signedIn(t, 'csv-support@example.com');
      const warehouse = await signedIn(t, 'csv-warehouse@example.com');
      return { t, owner, support, warehouse, shop, other, shopOrders, otherOrder };
    };

    it('console orders: the page says "1–3 of 3", names merchants and links the CSV with its filters; the file has every matching order', async (ctx) => {
      const { support, warehouse, shop, shopOrders, otherOrder } = await build(ctx);
      const page = await support.get(`/console/orders?merchant=${shop.merchantId}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<span data-counts>1–3 of 3<\/span>/);
      assert.match(
        page.body,
        /data-merchant="\d+">=HYPERLINK\(&quot;http:\/\/evil\.example\/&quot;,&quot;click, here&quot;\)<\/a><\/td>/,
        'the merchant is shown by name',
      );
      assert.ok(page.body.includes(`href="/console/orders.csv?q=&amp;merchant=${shop.merchantId}&amp;status=&amp;from=&amp;to="`));

      const r = await warehouse.get(`/console/orders.csv?q=&merchant=${shop.merchantId}&status=&from=&to=`);
      const rows = csvRows(r, 'orders');
      assert.equal(
        header(r.body),
        'order_id,custom_order_id,merchant_id,merchant,placed_at,status,fulfillment_status,refund_status,currency,subtotal,freight,coupon,total,refunded,items',
      );
      assert.deepEqual(
        rows.map((o) => o.order_id),
        shopOrders,
        'only the filtered merchant, newest first',
      );
      // OWASP: a cell starting with = + - @ is prefixed with ' so a spreadsheet shows it as text.
      assert.equal(rows[0].merchant, `'${FORMULA_NAME}`);
      assert.deepEqual(
        rows.map((o) => o.custom_order_id),
        ['PLAIN-1', "'@cmd", "'+SUM(1,2)"],
      );
      assert.equal(rows[2].items, 'C x 1');
      assert.match(rows[2].total, /^\d+\.\d{2}$/);

      const all = csvRows(await support.get('/console/orders.csv'), 'orders');
      assert.deepEqual(all.map((o) => o.order_id).sort(), [...shopOrders, otherOrder].sort(), 'no filter: every order');
      assert.equal(all.find((o) => o.order_id === otherOrder)!.merchant, 'Shop Two');
      assert.equal(csvRows(await support.get('/console/orders.csv?status=cancel'), 'orders').length, 0, 'a filter that matches nothing: the header only');
    });

    it('console orders: a malformed filter is a 400 page before any download starts, and nothing is written', async (ctx) => {
      const { t, support } = await build(ctx);
      const before = await tableDigests(t.store);
      const r = await support.get('/console/orders.csv?status=lost');
      assert.equal(r.statusCode, 400);
      assert.match(r.headers['content-type'] as string, /^text\/html/);
      assert.match(r.body, /status must be one of/);
      assert.equal((await support.get('/console/orders.csv?from=2026-13-45')).statusCode, 400);
      assert.deepEqual(await tableDigests(t.store), before);
    });

    it('reads in keyset batches: a batch of 1 or 2 rows gives the same file as one batch', async (ctx) => {
      const { t, shop } = await build(ctx);
      const whole = await allRows(await ordersCsvForOperator(t.store.db, t.store.dialect, {}));
      for (const batch of [1, 2])
        assert.deepEqual(await allRows(await ordersCsvForOperator(t.store.db, t.store.dialect, {}, batch)), whole, `orders, batch ${batch}`);
      const scope = forMerchant(t.store.db, Number(shop.merchantId));
      const transactions = await allRows(transactionsCsv(scope, 'sandbox'));
      assert.equal(transactions.length, 4);
      assert.deepEqual(await allRows(transactionsCsv(scope, 'sandbox', 2)), transactions);
      const stock = await allRows(stockCsv(t.store.db, ''));
      assert.deepEqual(await allRows(stockCsv(t.store.db, '', 1)), stock);
      const audit = await allRows(await auditCsv(t.store.db, { actor: '', action: '', target: '' }));
      assert.ok(audit.length >= 3);
      assert.deepEqual(await allRows(await auditCsv(t.store.db, { actor: '', action: '', target: '' }, 2)), audit);
      const refunds = await allRows(await refundsCsvForOperator(t.store.db, { refundSlaHours: 24 }, null, Date.now()));
      assert.deepEqual(await allRows(await refundsCsvForOperator(t.store.db, { refundSlaHours: 24 }, null, Date.now(), 1)), refunds);
    });

    it('console refund queue: names merchants, says where the page stands, and downloads the whole queue (support and owner, not the warehouse)', async (ctx) => {
      const { support, warehouse, shopOrders } = await build(ctx);
      const page = await support.get('/console/refunds');
      assert.match(page.body, /<span data-counts>1–1 of 1<\/span>/);
      assert.ok(page.body.includes('href="/console/refunds.csv"'));
      const rows = csvRows(await support.get('/console/refunds.csv'), 'refund-review');
      assert.equal(rows.length, 1);
      assert.equal(rows[0].order_id, shopOrders[0]);
      assert.equal(rows[0].merchant, `'${FORMULA_NAME}`);
      assert.equal(rows[0].status, 'pending_review');
      assert.equal(rows[0].items, 'C x 1');
      assert.equal((await warehouse.get('/console/refunds.csv')).statusCode, 403);
    });

    it('console stock: the search as CSV, one row per product and warehouse, the search term applied', async (ctx) => {
      const { owner, support, warehouse } = await build(ctx);
      const page = await warehouse.get('/console/products?q=mug');
      assert.match(page.body, /<span data-counts>1–1 of 1<\/span>/);
      assert.ok(page.body.includes('href="/console/products.csv?q=mug"'));
      const rows = csvRows(await warehouse.get('/console/products.csv?q=mug'), 'stock');
      assert.deepEqual(rows, [
        { sku: 'A', name: 'Mug', price: '9.32', warehouse: 'G007', quantity: '10' },
        { sku: 'A', name: 'Mug', price: '9.32', warehouse: 'US01', quantity: '5' },
        { sku: 'A', name: 'Mug', price: '9.32', warehouse: 'W9', quantity: '100' },
      ]);
      const every = csvRows(await owner.get('/console/products.csv'), 'stock');
      assert.deepEqual(
        every.find((r) => r.sku === 'Z'),
        { sku: 'Z', name: 'Nowhere', price: '1.00', warehouse: '', quantity: '0' },
        'a product without stock: one row',
      );
      assert.equal((await support.get('/console/products.csv')).statusCode, 403);
    });

    it('console audit log: the filtered log as CSV (owner only), staff named by email', async (ctx) => {
      const { owner, support, other } = await build(ctx);
      const csrf = await owner.csrf();
      await owner.post(`/console/merchants/${other.merchantId}/disable`, { _csrf: csrf });
      await owner.post(`/console/merchants/${other.merchantId}/enable`, { _csrf: csrf });
      const page = await owner.get('/console/audit?action=merchant.disable');
      assert.match(page.body, /<span data-counts>1–1 of 1<\/span>/);
      assert.ok(page.body.includes('href="/console/audit.csv?actor=&amp;action=merchant.disable&amp;target="'));
      const rows = csvRows(await owner.get('/console/audit.csv?actor=&action=merchant.disable&target='), 'audit-log');
      assert.equal(rows.length, 1);
      assert.equal(rows[0].actor, 'csv-owner@example.com');
      assert.equal(rows[0].action, 'merchant.disable');
      const all = csvRows(await owner.get('/console/audit.csv'), 'audit-log');
      assert.ok(all.length > 1 && all.some((r) => r.action === 'merchant.create'));
      assert.equal((await owner.get('/console/audit.csv?actor=nobody')).statusCode, 400, 'a filter naming no one: 400 before the download');
      assert.equal((await support.get('/console/audit.csv')).statusCode, 403);
    });

    it("console transactions: a merchant's account as CSV; an unknown merchant is a 404 page", async (ctx) => {
      const { support, warehouse, shop } = await build(ctx);
      const page = await support.get(`/console/merchants/${shop.merchantId}/transactions?environment=sandbox`);
      assert.match(page.body, /<span data-counts>1–4 of 4 transactions, newest first<\/span>/);
      const r = await support.get(`/console/merchants/${shop.merchantId}/transactions.csv?environment=sandbox`);
      const rows = csvRows(r, `transactions-${shop.merchantId}-sandbox`);
      assert.equal(header(r.body), 'id,at,type,description,order_id,refund_no,reference,amount,balance_after,currency');
      assert.equal(rows.length, 4);
      assert.equal(rows[0].type, 'top_up', 'newest first');
      assert.equal(rows[0].reference, "'-wire 1", 'text starting with - is defused');
      assert.equal(rows[0].amount, '50.00');
      assert.match(rows[1].amount, /^-\d+\.\d{2}$/, 'a negative amount stays a number');
      assert.equal((await support.get('/console/merchants/987654321/transactions.csv')).statusCode, 404);
      assert.equal((await warehouse.get(`/console/merchants/${shop.merchantId}/transactions.csv`)).statusCode, 403);
    });

    it("business manager: orders, transactions and the audit log as CSV, each holding only the user's merchant", async (ctx) => {
      const { t, owner, shop, other, shopOrders, otherOrder } = await build(ctx);
      const viewer = await member(t, shop.merchantId, 'csv-viewer@shop.example', 'viewer');
      const theirs = await member(t, other.merchantId, 'csv-admin@two.example', 'admin');

      const page = await viewer.get('/manager/orders');
      assert.match(page.body, /<span data-counts>1–3 of 3<\/span>/);
      assert.ok(page.body.includes('href="/manager/orders.csv?q=&amp;status=&amp;from=&amp;to="'));
      // A merchant in the query string is not a way into another merchant's orders.
      const mine = csvRows(await viewer.get(`/manager/orders.csv?merchant=${other.merchantId}`), 'orders');
      assert.deepEqual(
        mine.map((o) => o.order_id),
        shopOrders,
      );
      assert.deepEqual(
        csvRows(await theirs.get('/manager/orders.csv'), 'orders').map((o) => o.order_id),
        [otherOrder],
      );
      assert.deepEqual(csvRows(await viewer.get(`/manager/orders.csv?q=${otherOrder}`), 'orders'), [], "another merchant's order id finds nothing");
      assert.deepEqual(
        csvRows(await viewer.get('/manager/orders.csv?q=PLAIN-1'), 'orders').map((o) => o.order_id),
        [shopOrders[0]],
        'the search term applies',
      );

      const balance = await viewer.get('/manager/balance');
      assert.match(balance.body, /<span data-counts>1–4 of 4, newest first<\/span>/);
      const transactions = csvRows(await viewer.get('/manager/balance/transactions.csv'), 'transactions-sandbox');
      assert.equal(transactions.length, 4);
      assert.ok(transactions.every((row) => row.order_id === '' || shopOrders.includes(row.order_id)));
      const theirTransactions = csvRows(await theirs.get('/manager/balance/transactions.csv'), 'transactions-sandbox');
      assert.deepEqual(
        theirTransactions.map((row) => row.order_id),
        [otherOrder],
      );

      // A change the merchant's own admin makes: their export names them by email, as their audit page does; so does the console's.
      const invited = await theirs.post('/manager/team/invitations', {
        _csrf: await theirs.csrf('/manager/team'),
        email: 'csv-later@two.example',
        role: 'viewer',
      });
      assert.equal(invited.statusCode, 303, invited.body.slice(0, 300));
      const audit = csvRows(await theirs.get('/manager/audit.csv'), 'audit-log');
      assert.ok(audit.length > 0);
      assert.equal(
        audit.find((row) => row.action === 'merchant_user.invite' && row.target === 'merchant_user:csv-later@two.example')?.actor,
        'csv-admin@two.example',
      );
      const operatorView = csvRows(await owner.get('/console/audit.csv?actor=&action=merchant_user.invite&target='), 'audit-log');
      assert.equal(operatorView.find((row) => row.target === 'merchant_user:csv-later@two.example')?.actor, 'csv-admin@two.example');
      assert.ok(
        audit.every((row) => !row.target.includes(shop.merchantId)),
        "no row of the other merchant's log",
      );
      assert.ok(
        audit.every((row) => !row.actor.includes('@example.com')),
        "the operator's staff are not named to a merchant",
      );
      assert.equal((await viewer.get('/manager/audit.csv')).statusCode, 403, 'the audit log is for admins');
    });
  });
}
