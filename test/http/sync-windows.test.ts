import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, useApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { formatInstant } from '../../src/domain/time.ts';

/**
 * SPEC §1 Times (issue 13 item 13): responses show whole seconds, so a window's end bound covers
 * its whole second. A client that syncs [T0, T1] then [T1+1s, T2] with times read from responses
 * never misses a row — on every window: order create and update windows, the stock window, the
 * product catalogue's update window.
 */
const S = Date.UTC(2030, 0, 2, 6, 21, 20);
const iso = (ms: number) => formatInstant(ms)!;
/** Row times inside one second and just after it: milliseconds that responses do not show. */
const TIMES = [S - 3000, S + 250, S + 999, S + 1000, S + 4500];

for (const dialect of DIALECTS) {
  describe(`sync windows cover the end bound's whole second (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    const t = useApp(dialect);
    let token = '';
    const orderIds: string[] = [];
    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      token = (await newMerchant(t)).token;
      for (const at of TIMES) {
        const o = await placeOrder(t, token, [{ sku: 'C', quantity: 1 }]);
        await t.store.db
          .updateTable('orders')
          .set({ created_at: at, updated_at: at + 60_000 })
          .where('id', '=', Number(o.id))
          .execute();
        orderIds.push(o.id);
      }
    });
    const ids = async (query: string) => {
      const r = await t.merchant(token, 'GET', `/openapi/v2/order/orders?pageSize=250&${query}`);
      assert.equal(r.status, 200, r.raw);
      return r.body.data.list.map((o: { id: string }) => o.id).sort();
    };

    it('createEndTime = an order’s own createDate returns that order', async () => {
      for (const [i, id] of orderIds.entries()) {
        const o = (await t.merchant(token, 'GET', `/openapi/v2/order/orders/${id}`)).body.data;
        assert.equal(o.createDate, iso(TIMES[i]));
        assert.ok((await ids(`createEndTime=${o.createDate}`)).includes(id), `createEndTime=${o.createDate}`);
        assert.ok((await ids(`updateEndTime=${o.updateDate}`)).includes(id), `updateEndTime=${o.updateDate}`);
        assert.ok((await ids(`createStartTime=${o.createDate}&createEndTime=${o.createDate}`)).includes(id));
      }
    });

    it('[T0, T1] then [T1+1s, T2] loses nothing and repeats nothing (create and update windows)', async () => {
      const all = [...orderIds].sort();
      for (const [start, end] of [
        ['createStartTime', 'createEndTime'],
        ['updateStartTime', 'updateEndTime'],
      ]) {
        const shift = start === 'updateStartTime' ? 60_000 : 0;
        const t0 = iso(S - 10_000 + shift);
        const t1 = iso(S + shift);
        const t1next = iso(S + 1000 + shift);
        const t2 = iso(S + 10_000 + shift);
        const first = await ids(`${start}=${t0}&${end}=${t1}`);
        const second = await ids(`${start}=${t1next}&${end}=${t2}`);
        assert.deepEqual(first, orderIds.slice(0, 3).sort(), `${end}=${t1} covers .250 and .999`);
        assert.deepEqual([...first, ...second].sort(), all, start);
      }
    });

    it('the operator’s order windows follow the same rule', async () => {
      const r = await t.admin('GET', `/admin/v1/orders?createEndTime=${iso(S)}&pageSize=250`);
      const seen = r.body.data.list.map((o: { id: string }) => o.id);
      assert.ok(
        orderIds.slice(0, 3).every((id) => seen.includes(id)),
        r.raw,
      );
      assert.ok(!seen.includes(orderIds[3]));
    });

    it('the stock window (dateEndTime) covers its whole second', async () => {
      const ledger = await t.store.db
        .selectFrom('stock_ledger')
        .innerJoin('products', 'products.id', 'stock_ledger.product_id')
        .select(['stock_ledger.id as id', 'products.sku as sku'])
        .execute();
      const skuTimes: Record<string, number> = { A: S - 3000, B: S + 999, C: S + 1000 };
      for (const row of ledger)
        await t.store.db
          .updateTable('stock_ledger')
          .set({ created_at: skuTimes[row.sku] ?? S - 50_000 })
          .where('id', '=', row.id)
          .execute();
      const skus = async (query: string) =>
        (await t.merchant(token, 'GET', `/openapi/v1/product/stocks?pageNumber=1&pageSize=100&${query}`)).body.data.list
          .map((r: { sku: string }) => r.sku)
          .sort();
      assert.deepEqual(await skus(`dateStartTime=${iso(S - 10_000)}&dateEndTime=${iso(S)}`), ['A', 'B']);
      assert.deepEqual(await skus(`dateStartTime=${iso(S + 1000)}&dateEndTime=${iso(S + 10_000)}`), ['C']);
    });

    it('the product catalogue’s updateEndTime covers its whole second', async () => {
      const productTimes: Record<string, number> = { A: S + 1, B: S + 999, C: S + 1000, Z: S - 1 };
      for (const [sku, at] of Object.entries(productTimes)) await t.store.db.updateTable('products').set({ updated_at: at }).where('sku', '=', sku).execute();
      const skus = async (query: string) =>
        (await t.merchant(token, 'GET', `/openapi/v1/product/products?pageSize=100&${query}`)).body.data.list.map((p: { sku: string }) => p.sku).sort();
      assert.deepEqual(await skus(`updateStartTime=${iso(S - 10_000)}&updateEndTime=${iso(S)}`), ['A', 'B', 'Z']);
      assert.deepEqual(await skus(`updateStartTime=${iso(S + 1000)}&updateEndTime=${iso(S + 10_000)}`), ['C']);
    });
  });
}
