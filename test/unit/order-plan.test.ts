import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChannelOffer } from '../../src/domain/freight.ts';
import { planOrder, type OrderLine, type OrderRequest, type ProductFacts, type StockFacts } from '../../src/domain/order-plan.ts';
import { AppError } from '../../src/domain/errors.ts';

const product = (id: number, sku: string, priceCents: number, weightGrams: number): ProductFacts => ({
  id,
  sku,
  name: `Product ${sku}`,
  imageUrl: null,
  priceCents,
  weightGrams,
});
const PRODUCTS = new Map([product(1, 'MUG', 1250, 400), product(2, 'TEE', 900, 200)].map((p) => [p.sku, p]));
const row = (productId: number, warehouseId: number, warehouseCode: string, countryCode: string, qty: number): StockFacts => ({
  productId,
  warehouseId,
  warehouseCode,
  countryCode,
  enabled: true,
  qty,
});
// Two warehouses: US01 in the destination country, CN01 abroad (and the default warehouse).
const STOCK = [row(1, 10, 'US01', 'US', 3), row(1, 20, 'CN01', 'CN', 10), row(2, 20, 'CN01', 'CN', 5)];
const offer = (code: string, type: ChannelOffer['type'], warehouseCodes: string[], baseFeeCents: number, perKgFeeCents: number): ChannelOffer => ({
  code,
  name: code,
  type,
  warehouseCodes,
  countries: ['*'],
  baseFeeCents,
  perKgFeeCents,
  deliveryDaysMin: 3,
  deliveryDaysMax: 9,
});
const OFFERS = [
  offer('US-STD', 'Standard', ['US01'], 300, 100),
  offer('CN-STD', 'Standard', ['CN01'], 500, 200),
  offer('CN-EXP', 'Express', ['CN01'], 1500, 400),
];
const line = (index: number, sku: string, quantity: number, more: Partial<OrderLine> = {}): OrderLine => ({
  index,
  sku,
  quantity,
  warehouseCode: null,
  channelCode: null,
  channelType: null,
  ...more,
});
const order = (lines: OrderLine[], more: Partial<OrderRequest> = {}): OrderRequest => ({
  shipTo: 'US',
  lines,
  channelCode: null,
  channelType: 'Standard',
  ...more,
});
const refusal = (code: number) => (e: unknown) => e instanceof AppError && e.code === code;

describe('planOrder (SPEC §4.2–4.4)', () => {
  it('allocates across warehouses, picks one channel per group, and adds freight and totals', () => {
    const plan = planOrder(order([line(0, 'MUG', 5), line(1, 'TEE', 2)]), PRODUCTS, STOCK, OFFERS, 'CN01');
    // MUG: 3 from US01 (the destination country first), 2 from CN01; TEE: 2 from CN01.
    assert.deepEqual(
      plan.splits.map((s) => ({
        warehouse: s.warehouseCode,
        channel: s.channelCode,
        weight: s.weightGrams,
        freight: s.freightCents,
        items: s.items.map((i) => `${i.sku}×${i.quantity}`),
      })),
      [
        { warehouse: 'US01', channel: 'US-STD', weight: 1200, freight: 300 + 120, items: ['MUG×3'] },
        { warehouse: 'CN01', channel: 'CN-STD', weight: 1200, freight: 500 + 240, items: ['MUG×2', 'TEE×2'] },
      ],
    );
    assert.equal(plan.subtotalCents, 5 * 1250 + 2 * 900);
    assert.equal(plan.freightCents, 420 + 740);
    assert.deepEqual(plan.splits[1].items[0], {
      lineIndex: 0,
      productId: 1,
      sku: 'MUG',
      productName: 'Product MUG',
      imageUrl: null,
      unitCents: 1250,
      quantity: 2,
    });
  });

  it('decrements each stock row once, summed over lines, in (product, warehouse) order, as sale ledger rows', () => {
    const plan = planOrder(order([line(0, 'TEE', 1), line(1, 'MUG', 4), line(2, 'TEE', 2)]), PRODUCTS, STOCK, OFFERS, 'CN01');
    assert.deepEqual(plan.decrements, [
      { productId: 1, warehouseId: 10, delta: -3, kind: 'sale' },
      { productId: 1, warehouseId: 20, delta: -1, kind: 'sale' },
      { productId: 2, warehouseId: 20, delta: -3, kind: 'sale' },
    ]);
  });

  it("lets a line's channel wish win over the order's, for the line's whole group", () => {
    const plan = planOrder(order([line(0, 'TEE', 1), line(1, 'TEE', 1, { channelType: 'Express' })]), PRODUCTS, STOCK, OFFERS, 'CN01');
    assert.deepEqual(
      plan.splits.map((s) => s.channelCode),
      ['CN-EXP'],
    );
    // A line naming only a type still takes the order's channel code when that channel serves the group.
    const withCode = planOrder(order([line(0, 'TEE', 1, { channelType: 'Express' })], { channelCode: 'CN-STD' }), PRODUCTS, STOCK, OFFERS, 'CN01');
    assert.deepEqual(
      withCode.splits.map((s) => s.channelCode),
      ['CN-STD'],
    );
    const byOrder = planOrder(order([line(0, 'TEE', 1)], { channelType: 'Express' }), PRODUCTS, STOCK, OFFERS, 'CN01');
    assert.deepEqual(
      byOrder.splits.map((s) => s.channelCode),
      ['CN-EXP'],
    );
  });

  it('refuses unknown SKUs (42200), short stock (42201) and unserved groups (42202)', () => {
    assert.throws(() => planOrder(order([line(0, 'NOPE', 1)]), PRODUCTS, STOCK, OFFERS, 'CN01'), refusal(42200));
    assert.throws(
      () => planOrder(order([line(0, 'MUG', 10), line(1, 'MUG', 4)]), PRODUCTS, STOCK, OFFERS, 'CN01'),
      (e: unknown) => {
        assert.ok(refusal(42201)(e));
        assert.deepEqual(
          (e as AppError).errors?.map((x) => x.field),
          ['orderItemsList[1].quantity'],
        );
        return true;
      },
    );
    assert.throws(
      () =>
        planOrder(
          order([line(0, 'MUG', 1)]),
          PRODUCTS,
          STOCK,
          OFFERS.filter((o) => o.code !== 'US-STD'),
          'CN01',
        ),
      refusal(42202),
    );
  });

  it('refuses an order whose total with freight would pass the SPEC §4.4 bound (400/40000)', () => {
    const dear = new Map([['GOLD', product(3, 'GOLD', 9_999_999_999, 1)]]);
    assert.throws(
      () => planOrder(order([line(0, 'GOLD', 1)]), dear, [row(3, 10, 'US01', 'US', 1)], OFFERS, 'CN01'),
      (e: unknown) => {
        assert.ok(refusal(40000)(e));
        assert.match((e as AppError).message, /^orderItemsList: the order's final amount would be 100000003\.00/);
        return true;
      },
    );
  });
});
