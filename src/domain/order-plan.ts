import { allocateLines, groupByWarehouse, type LineRequest, type Piece, type StockAvailability } from './allocation.ts';
import type { ChannelType } from './channels.ts';
import { AppError, fieldError } from './errors.ts';
import { chooseChannel, freightCents, type ChannelOffer } from './freight.ts';
import { orderTotalProblem } from './money.ts';

/** What a plan needs to know of a catalogue product. */
export interface ProductFacts {
  id: number;
  sku: string;
  name: string;
  imageUrl: string | null;
  priceCents: number;
  weightGrams: number;
}

/** One stock row of a requested product (locked, when an order is placed). */
export interface StockFacts extends StockAvailability {
  productId: number;
}

/** An order line with its own channel wishes (SPEC §4.1). */
export interface OrderLine extends LineRequest {
  channelCode: string | null;
  channelType: ChannelType | null;
}

/** One warehouse's share of an allocation: one split order. */
export interface WarehouseGroup {
  warehouseId: number;
  warehouseCode: string;
  countryCode: string;
  pieces: Piece[];
  weightGrams: number;
}

/** 422/42200 listing every line whose SKU is not in the catalogue; nothing when all are known. */
function checkKnownSkus(lines: { index: number; sku: string }[], products: Map<string, ProductFacts>, listField: string): void {
  const unknown = lines.filter((l) => !products.has(l.sku));
  if (unknown.length === 0) return;
  throw new AppError(
    'unprocessable',
    42200,
    `unknown SKU${unknown.length > 1 ? 's' : ''}: ${[...new Set(unknown.map((l) => l.sku))].join(', ')}`,
    unknown.map((l) => ({ field: `${listField}[${l.index}].sku`, message: 'unknown SKU', sku: l.sku })),
  );
}

/**
 * The allocation shared by order creation and both quotes: SPEC §4.2 allocation over the given
 * stock rows, grouped by warehouse, with each group's weight and the subtotal. 42201 lists every
 * short line; a weight or a subtotal too large to stay exact is refused (SPEC §4.4).
 */
export function allocateOrder(
  lines: LineRequest[],
  products: Map<string, ProductFacts>,
  stock: StockFacts[],
  shipTo: string,
  defaultWarehouse: string,
  listField: string,
): { groups: WarehouseGroup[]; subtotalCents: number } {
  checkKnownSkus(lines, products, listField);
  const skuOf = new Map([...products.values()].map((p) => [p.id, p.sku]));
  const bySku = new Map<string, StockAvailability[]>();
  for (const r of stock) {
    const sku = skuOf.get(r.productId)!;
    if (!bySku.has(sku)) bySku.set(sku, []);
    bySku.get(sku)!.push({ warehouseId: r.warehouseId, warehouseCode: r.warehouseCode, countryCode: r.countryCode, enabled: r.enabled, qty: r.qty });
  }
  const allocation = allocateLines(lines, bySku, { destinationCountry: shipTo, defaultWarehouse });
  if (!allocation.ok) {
    throw new AppError(
      'unprocessable',
      42201,
      'insufficient stock',
      allocation.short.map((s) => ({
        field: `${listField}[${s.lineIndex}].quantity`,
        message: `only ${s.available} available`,
        sku: s.sku,
        requested: s.requested,
        available: s.available,
      })),
    );
  }
  const countryOf = new Map(stock.map((r) => [r.warehouseId, r.countryCode]));
  const groups = groupByWarehouse(allocation.pieces).map((g) => ({
    ...g,
    countryCode: countryOf.get(g.warehouseId)!,
    weightGrams: g.pieces.reduce((sum, p) => sum + products.get(p.sku)!.weightGrams * p.quantity, 0),
  }));
  // A weight past 2^53 g would be stored and charged inexactly (SPEC §4.4: totals stay exact).
  if (groups.some((g) => !Number.isSafeInteger(g.weightGrams))) throw fieldError(listField, 'the package weight is too large');
  const subtotalCents = allocation.pieces.reduce((sum, p) => sum + products.get(p.sku)!.priceCents * p.quantity, 0);
  const tooLarge = orderTotalProblem(subtotalCents, 0);
  if (tooLarge) throw fieldError(listField, tooLarge);
  return { groups, subtotalCents };
}

export interface OrderRequest {
  shipTo: string;
  lines: OrderLine[];
  channelCode: string | null;
  channelType: ChannelType;
}

export interface PlannedItem {
  lineIndex: number;
  productId: number;
  sku: string;
  productName: string;
  imageUrl: string | null;
  unitCents: number;
  quantity: number;
}

export interface PlannedSplit {
  warehouseId: number;
  warehouseCode: string;
  countryCode: string;
  channelCode: string;
  channelType: string;
  freightCents: number;
  weightGrams: number;
  items: PlannedItem[];
}

/** One stock row's change and the ledger row that records it. */
export interface StockDecrement {
  productId: number;
  warehouseId: number;
  delta: number;
  kind: 'sale';
}

export interface OrderPlan {
  subtotalCents: number;
  freightCents: number;
  splits: PlannedSplit[];
  /** In (product, warehouse) order: the order the stock rows were locked in. */
  decrements: StockDecrement[];
}

/**
 * SPEC §4.2–4.4 as one pure function: allocation, one channel per warehouse group (a line's own
 * channel wishes win over the order's; the first line in the group that has any decides), freight,
 * totals, the split orders and items to write and the stock decrements (each one a `sale` ledger
 * row). Throws the 422 the order gets (42200, 42201, 42202, 42200 for totals) — before anything is
 * written, so both databases refuse alike.
 */
export function planOrder(
  order: OrderRequest,
  products: Map<string, ProductFacts>,
  stock: StockFacts[],
  offers: ChannelOffer[],
  defaultWarehouse: string,
): OrderPlan {
  const { groups, subtotalCents } = allocateOrder(order.lines, products, stock, order.shipTo, defaultWarehouse, 'orderItemsList');
  const lineOf = new Map(order.lines.map((l) => [l.index, l]));
  const planned = groups.map((g) => {
    const first = g.pieces.map((p) => lineOf.get(p.lineIndex)!).find((l) => l.channelCode !== null || l.channelType !== null);
    const channel = chooseChannel(offers, g.warehouseCode, order.shipTo, g.weightGrams, {
      requestedCode: first?.channelCode ?? order.channelCode,
      requestedType: first?.channelType ?? order.channelType,
    });
    return { g, channel };
  });
  const unserved = planned.filter((x) => x.channel === null).map((x) => x.g);
  if (unserved.length) {
    throw new AppError(
      'unprocessable',
      42202,
      `no logistics channel ships from ${unserved.map((g) => g.warehouseCode).join(', ')} to ${order.shipTo}`,
      unserved.map((g) => ({
        field: 'orderAddress.country',
        message: `no channel from ${g.warehouseCode} to ${order.shipTo}`,
        warehouseCode: g.warehouseCode,
        country: order.shipTo,
      })),
    );
  }
  const splits = planned.map(
    ({ g, channel }): PlannedSplit => ({
      warehouseId: g.warehouseId,
      warehouseCode: g.warehouseCode,
      countryCode: g.countryCode,
      channelCode: channel!.code,
      channelType: channel!.type,
      freightCents: freightCents(channel!, g.weightGrams),
      weightGrams: g.weightGrams,
      items: g.pieces.map((p) => {
        const product = products.get(p.sku)!;
        return {
          lineIndex: p.lineIndex,
          productId: product.id,
          sku: p.sku,
          productName: product.name,
          imageUrl: product.imageUrl,
          unitCents: product.priceCents,
          quantity: p.quantity,
        };
      }),
    }),
  );
  const freight = splits.reduce((sum, s) => sum + s.freightCents, 0);
  const tooLarge = orderTotalProblem(subtotalCents, freight);
  if (tooLarge) throw fieldError('orderItemsList', tooLarge);
  return { subtotalCents, freightCents: freight, splits, decrements: decrementsOf(splits) };
}

/** One decrement per (product, warehouse), summed over the splits' items, in lock order. */
function decrementsOf(splits: PlannedSplit[]): StockDecrement[] {
  const byRow = new Map<string, StockDecrement>();
  for (const s of splits) {
    for (const i of s.items) {
      const key = `${i.productId}:${s.warehouseId}`;
      const d = byRow.get(key) ?? { productId: i.productId, warehouseId: s.warehouseId, delta: 0, kind: 'sale' as const };
      d.delta -= i.quantity;
      byRow.set(key, d);
    }
  }
  return [...byRow.values()].sort((a, b) => a.productId - b.productId || a.warehouseId - b.warehouseId);
}
