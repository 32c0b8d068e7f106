import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, DIALECTS, PG_SKIP, everyTableCount, loadCatalogue, newMerchant, useApp, type TestApp } from '../helpers.ts';
import { order } from '../fixtures.ts';

/**
 * SPEC §4.4 bounds that keep every total exact, identical on SQLite and PostgreSQL: an order's final
 * amount ≤ 10,000,000,000 minor units (also what a quote would cost), prices and channel fees ≤ the
 * same, a stock row ≤ 1,000,000,000 after any operator set, adjustment or import (an adjustment that
 * would pass it is 409/40903, like one that would go below zero). Before, an order of 10^9 units
 * at 10^9 was stored past 2^53 on SQLite and failed with a bigint overflow (500) on PostgreSQL.
 * Also SPEC §5.1: a refund with `orderItems: []` is 400, not a refund of the whole order.
 */
const CATALOGUE = {
  warehouses: [{ warehouseCode: 'BW', name: 'Bounds', countryCode: 'US' }],
  products: [
    { sku: 'MAX', name: 'At the price bound', price: '100000000.00', weightGrams: 1 },
    { sku: 'NEAR', name: 'Just under', price: '99999999.50', weightGrams: 1 },
    { sku: 'FIT', name: 'Fits with freight', price: '99999999.00', weightGrams: 1 },
    { sku: 'MANY', name: 'Cheap, plentiful', price: '1000000', weightGrams: 1 },
    { sku: 'LEAD', name: 'Heavy and free', price: 0, weightGrams: 1_000_000_000 },
    { sku: 'MUG', name: 'Mug', price: 5, weightGrams: 300 },
  ],
  stocks: [
    { sku: 'MAX', warehouseCode: 'BW', qty: 10 },
    { sku: 'NEAR', warehouseCode: 'BW', qty: 10 },
    { sku: 'FIT', warehouseCode: 'BW', qty: 10 },
    { sku: 'MANY', warehouseCode: 'BW', qty: 1_000_000_000 },
    { sku: 'LEAD', warehouseCode: 'BW', qty: 1_000_000_000 },
    { sku: 'MUG', warehouseCode: 'BW', qty: 10 },
  ],
  // A flat 1.00 per package: the freight is known exactly whatever the weight.
  channels: [
    {
      channelCode: 'FLAT',
      name: 'Flat',
      channelType: 'Standard',
      warehouseCodes: ['BW'],
      countries: ['*'],
      baseFee: 1,
      perKgFee: 0,
      deliveryDaysMin: 1,
      deliveryDaysMax: 2,
    },
  ],
};
const ADDRESS = { country: 'US', phone: '1', recipient: 'R', province: 'CA' };
const place = (lines: unknown[]) => order(lines, { orderAddress: ADDRESS });

async function refused(t: TestApp, call: () => Promise<{ status: number; body: any; raw: string }>, status: number, code: number, field: string) {
  const before = await everyTableCount(t.store);
  const stock = await t.store.db.selectFrom('stocks').select(['product_id', 'qty']).orderBy('product_id').execute();
  const r = await call();
  assert.equal(r.status, status, r.raw);
  assert.equal(r.body.code, code, r.raw);
  assert.equal(r.body.errors?.[0]?.field, field, r.raw);
  assert.deepEqual(await everyTableCount(t.store), before, 'nothing written');
  assert.deepEqual(await t.store.db.selectFrom('stocks').select(['product_id', 'qty']).orderBy('product_id').execute(), stock, 'stock unchanged');
  return r.body;
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`money and quantity bounds (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);
    let token = '';
    const setUp = async () => {
      if (token) return token;
      await loadCatalogue(t, CATALOGUE);
      token = (await newMerchant(t, 'Bounded')).token;
      return token;
    };
    const create = (lines: unknown[]) => t.merchant(token, 'POST', '/openapi/v1/order/orders', place(lines));

    it('bounds prices and channel fees at 100000000.00', async () => {
      await setUp();
      const body = await refused(
        t,
        () => t.admin('POST', '/admin/v1/products', { sku: 'X', name: 'x', price: '100000000.01', weightGrams: 1 }),
        400,
        40000,
        'price',
      );
      assert.match(body.errors[0].message, /at most 100000000\.00/);
      await refused(t, () => t.admin('POST', '/admin/v1/products', { sku: 'X', name: 'x', price: 1e15, weightGrams: 1 }), 400, 40000, 'price');
      const channel = {
        channelCode: 'C',
        name: 'C',
        channelType: 'Standard',
        warehouseCodes: ['BW'],
        countries: ['*'],
        baseFee: 1,
        perKgFee: 1,
        deliveryDaysMin: 1,
        deliveryDaysMax: 2,
      };
      await refused(t, () => t.admin('POST', '/admin/v1/channels', { ...channel, baseFee: '100000000.01' }), 400, 40000, 'baseFee');
      await refused(t, () => t.admin('POST', '/admin/v1/channels', { ...channel, perKgFee: 1e11 }), 400, 40000, 'perKgFee');
      await refused(
        t,
        () => t.admin('POST', '/admin/v1/import', { products: [{ sku: 'X', name: 'x', price: '100000000.01', weightGrams: 1 }] }),
        400,
        40000,
        'products[0].price',
      );
    });

    it('refuses an order whose final amount passes 10,000,000,000 minor units, naming it; accepts one at the bound', async () => {
      await setUp();
      // 10^9 units at 1,000,000.00: 10^17 minor units, past 2^53 (SQLite stored it inexactly; PostgreSQL answered 500).
      const huge = await refused(t, () => create([{ sku: 'MANY', quantity: 1_000_000_000 }]), 400, 40000, 'orderItemsList');
      assert.match(huge.errors[0].message, /final amount would be more than 100000000\.00|final amount would be/);
      // 2 × 100000000.00: refused on the goods alone, before a channel is chosen.
      const two = await refused(t, () => create([{ sku: 'MAX', quantity: 2 }]), 400, 40000, 'orderItemsList');
      assert.equal(two.errors[0].message, "the order's final amount would be 200000000.00; at most 100000000.00 is accepted");
      // The goods alone fit; the freight takes it over.
      const near = await refused(t, () => create([{ sku: 'NEAR', quantity: 1 }]), 400, 40000, 'orderItemsList');
      assert.equal(near.errors[0].message, "the order's final amount would be 100000000.50; at most 100000000.00 is accepted");
      // Lines add up: each fits alone, not together.
      await refused(
        t,
        () =>
          create([
            { sku: 'FIT', quantity: 1 },
            { sku: 'MUG', quantity: 1 },
          ]),
        400,
        40000,
        'orderItemsList',
      );
      // Exactly at the bound: 99999999.00 + 1.00.
      const ok = await create([{ sku: 'FIT', quantity: 1 }]);
      assert.equal(ok.status, 200, ok.raw);
      const record = (await t.merchant(token, 'GET', `/openapi/v2/order/orders/${ok.body.data}`)).body.data;
      assert.equal(record.finalAmount, 100000000);
    });

    it('refuses a package too heavy to weigh exactly', async () => {
      await setUp();
      // 10^9 units of 10^9 g: 10^18 g, past 2^53.
      const body = await refused(t, () => create([{ sku: 'LEAD', quantity: 1_000_000_000 }]), 400, 40000, 'orderItemsList');
      assert.match(body.errors[0].message, /weight/);
    });

    it('refuses quotes for orders that could not be placed, on both quote endpoints', async () => {
      await setUp();
      for (const path of ['channel', 'automaticSplit/channel']) {
        const r = await t.merchant(token, 'POST', `/openapi/v2/order/orders/${path}`, { shipToCountry: 'US', products: [{ sku: 'MAX', quantity: 2 }] });
        assert.equal(r.status, 400, r.raw);
        assert.equal(r.body.errors[0].field, 'products');
        const many = await t.merchant(token, 'POST', `/openapi/v2/order/orders/${path}`, {
          shipToCountry: 'US',
          products: [{ sku: 'MANY', quantity: 1_000_000_000 }],
        });
        assert.equal(many.status, 400, many.raw);
        const near = await t.merchant(token, 'POST', `/openapi/v2/order/orders/${path}`, { shipToCountry: 'US', products: [{ sku: 'NEAR', quantity: 1 }] });
        assert.equal(near.status, 400, `${path}: freight takes it over: ${near.raw}`);
        const fit = await t.merchant(token, 'POST', `/openapi/v2/order/orders/${path}`, { shipToCountry: 'US', products: [{ sku: 'MUG', quantity: 1 }] });
        assert.equal(fit.status, 200, fit.raw);
      }
    });

    it('keeps every stock row at most 1,000,000,000 after an operator set, adjustment or import', async (ctx) => {
      // An app of its own: it raises MUG's stock to the bound and empties it, and the orders and
      // quotes of the other tests take MUG.
      const t = await buildTestApp(ctx, dialect);
      await loadCatalogue(t, CATALOGUE);
      await refused(
        t,
        () => t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'MUG', warehouseCode: 'BW', qty: 1_000_000_001 }] }),
        400,
        40000,
        'items[0].qty',
      );
      await refused(
        t,
        () => t.admin('POST', '/admin/v1/import', { stocks: [{ sku: 'MUG', warehouseCode: 'BW', qty: '1000000001' }] }),
        400,
        40000,
        'stocks[0].qty',
      );
      const set = await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'MUG', warehouseCode: 'BW', qty: 999_999_990 }] });
      assert.equal(set.status, 200, set.raw);
      const up = await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'MUG', warehouseCode: 'BW', delta: 10 }] });
      assert.equal(up.body.data.items[0].qty, 1_000_000_000, 'up to the bound is fine');
      const past = await refused(
        t,
        () => t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'MUG', warehouseCode: 'BW', delta: 1 }] }),
        409,
        40903,
        'items[0].delta',
      );
      assert.match(past.message, /above 1000000000/);
      assert.equal(past.errors[0].qty, 1_000_000_000);
      // One bad row refuses the whole request, the good rows included.
      await refused(
        t,
        () =>
          t.admin('POST', '/admin/v1/stocks/adjust', {
            items: [
              { sku: 'MUG', warehouseCode: 'BW', delta: -5 },
              { sku: 'MANY', warehouseCode: 'BW', delta: 1 },
            ],
          }),
        409,
        40903,
        'items[1].delta',
      );
      // Repeated adjustments cannot creep past it either (a row with no stock yet included).
      await refused(
        t,
        () => t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'MAX', warehouseCode: 'BW', delta: 999_999_995 }] }),
        409,
        40903,
        'items[0].delta',
      );
      const down = await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'MUG', warehouseCode: 'BW', delta: -1_000_000_000 }] });
      assert.equal(down.body.data.items[0].qty, 0);
    });

    it('refuses a refund with an empty orderItems list instead of refunding the whole order', async () => {
      await setUp();
      // The MUG this order takes, whatever the tests before it took.
      await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'MUG', warehouseCode: 'BW', qty: 10 }] });
      const placed = await create([{ sku: 'MUG', quantity: 1 }]);
      assert.equal(placed.status, 200, placed.raw);
      const body = await refused(
        t,
        () => t.merchant(token, 'POST', `/openapi/v2/order/orders/${placed.body.data}/refund`, { orderItems: [] }),
        400,
        40000,
        'orderItems',
      );
      assert.match(body.errors[0].message, /fewer than 1/);
      const whole = await t.merchant(token, 'POST', `/openapi/v2/order/orders/${placed.body.data}/refund`, {});
      assert.equal(whole.status, 200, 'leaving orderItems out still refunds the whole order');
    });
  });
}
