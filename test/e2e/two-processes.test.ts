import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { makeDatabase } from '../../scripts/chaos/harness.ts';
import { openStore } from '../../src/store/db.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { ADDRESS, ORDER_CATALOGUE } from '../fixtures.ts';
import { PG_SKIP, PG_URL } from '../helpers.ts';
import { exited, freePort, serverTestEnv, startProcess, tempDir } from './process.ts';

const ADMIN_KEY = 'two-processes-admin-key-0123';
const STOCK = 40;
const BUYERS = 120;

/**
 * SPEC §4.3 and §5.3 across real processes: two `stockist serve` processes (each an API and a refund
 * worker, as two instances behind a load balancer would be) on one PostgreSQL database. The
 * in-process tests (orders-concurrency, refunds) share one Node event loop and module state; here
 * nothing is shared but the database.
 */
describe('two server processes on one PostgreSQL database', { skip: PG_SKIP }, () => {
  it('sell exactly the stock there is to buyers on both, and decide each refund once', { timeout: 600_000 }, async (t) => {
    const dir = tempDir();
    const database = await makeDatabase('postgres', dir, PG_URL!);
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: database.url,
      ...serverTestEnv(ADMIN_KEY),
      // Patience for a pool connection on a loaded test machine.
      DB_CONNECT_TIMEOUT_MS: '60000',
      REFUND_REVIEW: 'auto',
      // Refunds fall due together, after both workers have seen them pending: they compete for each.
      REFUND_AUTO_DELAY_MS: '1500',
    };
    const processes: Awaited<ReturnType<typeof startProcess>>[] = [];
    t.after(async () => {
      for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGKILL');
      await Promise.all(processes.map((p) => exited(p.child)));
      await database.drop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const urls: string[] = [];
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      processes.push(await startProcess(['serve', '--port', String(port)], env, /Stockist listening/));
      urls.push(`http://127.0.0.1:${port}`);
    }
    const call = async (base: string, method: string, url: string, token: string, body?: unknown) => {
      const r = await fetch(base + url, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(60_000),
      });
      return { status: r.status, body: (await r.json()) as any };
    };

    const imported = await call(urls[0], 'POST', '/admin/v1/import', ADMIN_KEY, ORDER_CATALOGUE);
    assert.equal(imported.status, 200, JSON.stringify(imported.body));
    assert.equal((await call(urls[1], 'PUT', '/admin/v1/stocks', ADMIN_KEY, { items: [{ sku: 'B', warehouseCode: 'G006', qty: STOCK }] })).status, 200);
    const merchant = await call(urls[1], 'POST', '/admin/v1/merchants', ADMIN_KEY, { name: 'Two Processes' });
    const token = (await call(urls[0], 'POST', `/admin/v1/merchants/${merchant.body.data.merchantId}/tokens`, ADMIN_KEY, {})).body.data.accessToken;

    const oneB = { orderAddress: ADDRESS, orderItemsList: [{ sku: 'B', quantity: 1 }] };
    // Oversell: three buyers for every unit, half of them on each process, all at once.
    const bought = await Promise.all(Array.from({ length: BUYERS }, (_, i) => call(urls[i % 2], 'POST', '/openapi/v1/order/orders', token, oneB)));
    const codes = bought.map((r) => r.body.code);
    assert.deepEqual(
      codes.filter((c) => c !== 10000 && c !== 42201),
      [],
      `every buyer got an order or 42201: ${codes.join(',')}`,
    );
    const orderIds = bought.filter((r) => r.body.code === 10000).map((r) => String(r.body.data));
    assert.equal(orderIds.length, STOCK, 'exactly the stock there was was sold');
    assert.equal(new Set(orderIds).size, STOCK);

    const store = await openStore(database.url);
    t.after(() => store.close());
    const qtyOfB = async () => {
      const row = await store.db
        .selectFrom('stocks')
        .innerJoin('products', 'products.id', 'stocks.product_id')
        .select('qty')
        .where('sku', '=', 'B')
        .executeTakeFirstOrThrow();
      return row.qty;
    };
    assert.equal(await qtyOfB(), 0);
    const sold = await store.db
      .selectFrom('order_items')
      .select((eb) => eb.fn.sum<number>('quantity').as('n'))
      .where('sku', '=', 'B')
      .executeTakeFirstOrThrow();
    assert.equal(Number(sold.n), STOCK);
    const sales = await store.db
      .selectFrom('stock_ledger')
      .select((eb) => eb.fn.sum<number>('delta').as('n'))
      .where('kind', '=', 'sale')
      .executeTakeFirstOrThrow();
    assert.equal(Number(sales.n), -STOCK, 'the ledger holds exactly the sales');
    assert.deepEqual(await ledgerMismatches(store.db), []);

    // Refunds: every order refunded, requested through both processes; both processes' workers decide.
    const refunds = await Promise.all(
      orderIds.map((id, i) => call(urls[i % 2], 'POST', `/openapi/v2/order/orders/${id}/refund`, token, { refundReason: 'Other' })),
    );
    assert.deepEqual(
      refunds.map((r) => r.body.code),
      orderIds.map(() => 10000),
    );
    const refundIds = refunds.map((r) => Number(r.body.data));
    const deadline = Date.now() + 240_000;
    for (;;) {
      const pending = await store.db.selectFrom('refunds').select('id').where('status', '=', 'pending_review').execute();
      if (pending.length === 0) break;
      assert.ok(Date.now() < deadline, `${pending.length} refunds still pending after 240 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const decided = await store.db.selectFrom('refunds').select(['id', 'status', 'decided_by']).where('id', 'in', refundIds).execute();
    assert.equal(decided.length, STOCK);
    const undecided = decided.filter((r) => r.status !== 'refund_successfully' || r.decided_by !== 'auto');
    assert.deepEqual(undecided, [], 'every refund approved by a worker');
    const returns = await store.db.selectFrom('stock_ledger').select(['refund_id', 'delta']).where('kind', '=', 'return').execute();
    assert.deepEqual(
      returns.map((r) => r.refund_id).sort((a, b) => a! - b!),
      [...refundIds].sort((a, b) => a - b),
      'one stock return per refund',
    );
    assert.ok(returns.every((r) => r.delta === 1));
    const items = await store.db.selectFrom('order_items').select(['refunded_quantity', 'pending_refund_quantity']).execute();
    assert.ok(
      items.every((i) => i.refunded_quantity === 1 && i.pending_refund_quantity === 0),
      'each line refunded once',
    );
    assert.equal(await qtyOfB(), STOCK, 'all the stock is back');
    assert.deepEqual(await ledgerMismatches(store.db), []);

    // SPEC §15: one charge per order and one credit per refund, posted by whichever process did it.
    assert.deepEqual((await verifyLedger(store.db)).breaches, []);
    // A prepaid balance that covers k of N orders sent at once through both processes: exactly k.
    const payer = await call(urls[0], 'POST', '/admin/v1/merchants', ADMIN_KEY, { name: 'Prepaid Two Processes' });
    const payerId = payer.body.data.merchantId;
    const payerToken = (await call(urls[1], 'POST', `/admin/v1/merchants/${payerId}/tokens`, ADMIN_KEY, {})).body.data.accessToken;
    const oneC = { orderAddress: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 1 }] };
    const probe = await call(urls[0], 'POST', '/openapi/v1/order/orders', payerToken, oneC);
    const each = (await call(urls[0], 'GET', `/openapi/v2/order/orders/${probe.body.data}`, payerToken)).body.data.finalAmount as number;
    const K = 7;
    const N = 40;
    // Paid up first: an owing account is switched to prepaid only with a limit that covers the debt.
    const funds = ((K + 1) * each).toFixed(2);
    assert.equal(
      (await call(urls[0], 'POST', `/admin/v1/merchants/${payerId}/account/top-ups`, ADMIN_KEY, { environment: 'sandbox', amount: funds, reference: 'k-of-n' }))
        .status,
      200,
    );
    assert.equal(
      (await call(urls[1], 'PATCH', `/admin/v1/merchants/${payerId}/account?environment=sandbox`, ADMIN_KEY, { billingMode: 'prepaid' })).status,
      200,
    );
    const paid = await Promise.all(Array.from({ length: N }, (_, i) => call(urls[i % 2], 'POST', '/openapi/v1/order/orders', payerToken, oneC)));
    const paidCodes = paid.map((r) => r.body.code);
    assert.deepEqual(
      paidCodes.filter((c) => c !== 10000 && c !== 42203),
      [],
      `every payer got an order or 42203: ${paidCodes.join(',')}`,
    );
    assert.equal(paidCodes.filter((c) => c === 10000).length, K, 'exactly the orders the balance covered');
    const account = await call(urls[1], 'GET', '/openapi/v1/account', payerToken);
    assert.equal(account.body.data.balance, 0);
    assert.deepEqual((await verifyLedger(store.db)).breaches, []);

    for (const p of processes) p.child.kill('SIGTERM');
    for (const p of processes) assert.equal(await exited(p.child), 0, p.output());
  });
});
