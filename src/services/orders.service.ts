import type { Transaction } from 'kysely';
import type { Config } from '../config.ts';
import { allocateLines, groupByWarehouse, type LineRequest, type Piece, type StockAvailability } from '../domain/allocation.ts';
import { normalizeChannelType, CHANNEL_TYPES, type ChannelType } from '../domain/channels.ts';
import { AppError, fieldError, validationFailed, type FieldError } from '../domain/errors.ts';
import { chooseChannel, freightCents, type ChannelOffer } from '../domain/freight.ts';
import { normalizeSalePlatform } from '../domain/sale-platforms.ts';
import type { AddressBody, CreateOrderBody } from '../schemas/orders.ts';
import { listChannels } from '../store/channels.repository.ts';
import type { Dialect, Handle } from '../store/db.ts';
import * as orders from '../store/orders.repository.ts';
import { productsBySku, type Product } from '../store/products.repository.ts';
import type { Database } from '../store/schema.ts';
import { forMerchant } from '../store/tenancy.ts';
import { addQty } from '../store/stocks.repository.ts';
import { RetryAttempt, idempotencyConflict, requestHash, runIdempotent } from './idempotency.service.ts';

export interface NormalizedLine extends LineRequest {
  channelCode: string | null;
  channelType: ChannelType | null;
}

export interface NormalizedOrder {
  address: Record<string, string | null>;
  shipTo: string;
  lines: NormalizedLine[];
  remark: string | null;
  salePlatform: string | null;
  channelCode: string | null;
  channelType: ChannelType;
  customOrderId: string | null;
}

const blankToNull = (v: string | null | undefined) => (v === undefined || v === null || v === '' ? null : v);

function normalizeAddress(a: AddressBody): Record<string, string | null> {
  return {
    country: a.country.toUpperCase(),
    phone: a.phone,
    recipient: a.recipient,
    province: a.province,
    street1: blankToNull(a.street1),
    street2: blankToNull(a.street2),
    city: blankToNull(a.city),
    zip: blankToNull(a.zip),
    ioss: blankToNull(a.ioss),
    vat: blankToNull(a.vat),
  };
}

function channelTypeOf(value: string | null | undefined, field: string): ChannelType | null {
  const v = blankToNull(value);
  if (v === null) return null;
  const t = normalizeChannelType(v);
  if (!t) throw fieldError(field, `must be one of: ${CHANNEL_TYPES.join(', ')}`);
  return t;
}

/** SPEC §4.1 rules a schema cannot express: the address's two spellings, channel types, platforms. */
export function normalizeOrder(body: CreateOrderBody): NormalizedOrder {
  const a = body.orderAddress ? normalizeAddress(body.orderAddress) : null;
  const b = body.orderAddresses ? normalizeAddress(body.orderAddresses) : null;
  if (!a && !b) throw fieldError('orderAddress', 'is required (orderAddresses is accepted as another spelling)');
  if (a && b && requestHash(a) !== requestHash(b)) throw fieldError('orderAddresses', 'differs from orderAddress; send one of them');
  const address = (a ?? b)!;
  const errors: FieldError[] = [];
  const lines = body.orderItemsList.map((item, index): NormalizedLine => {
    let channelType: ChannelType | null = null;
    try {
      channelType = channelTypeOf(item.channelType, `orderItemsList[${index}].channelType`);
    } catch (e) {
      errors.push(...((e as AppError).errors ?? []));
    }
    return { index, sku: item.sku, quantity: item.quantity, warehouseCode: blankToNull(item.warehouseCode), channelCode: blankToNull(item.channelCode), channelType };
  });
  let channelType: ChannelType = 'Standard';
  try {
    channelType = channelTypeOf(body.channelType, 'channelType') ?? 'Standard';
  } catch (e) {
    errors.push(...((e as AppError).errors ?? []));
  }
  if (errors.length) throw validationFailed(errors);
  return {
    address,
    shipTo: address.country!,
    lines,
    remark: blankToNull(body.remark),
    salePlatform: normalizeSalePlatform(body.salePlatform),
    channelCode: blankToNull(body.channelCode),
    channelType,
    customOrderId: blankToNull(body.customOrderId),
  };
}

export const toOffer = (c: Awaited<ReturnType<typeof listChannels>>[number]): ChannelOffer => ({
  code: c.code,
  name: c.name,
  type: c.channel_type as ChannelType,
  warehouseCodes: c.warehouseCodes,
  countries: JSON.parse(c.countries),
  baseFeeCents: c.base_fee_cents,
  perKgFeeCents: c.per_kg_fee_cents,
  deliveryDaysMin: c.delivery_days_min,
  deliveryDaysMax: c.delivery_days_max,
});

/** Known products by SKU, or 422/42200 listing every unknown one with its line. */
export async function requireProducts(db: Handle, lines: { index: number; sku: string }[], listField: string): Promise<Map<string, Product>> {
  const products = await productsBySku(db, lines.map((l) => l.sku));
  const unknown = lines.filter((l) => !products.has(l.sku));
  if (unknown.length) {
    throw new AppError(
      422,
      42200,
      `unknown SKU${unknown.length > 1 ? 's' : ''}: ${[...new Set(unknown.map((l) => l.sku))].join(', ')}`,
      unknown.map((l) => ({ field: `${listField}[${l.index}].sku`, message: 'unknown SKU', sku: l.sku })),
    );
  }
  return products;
}

export interface PlannedGroup {
  warehouseId: number;
  warehouseCode: string;
  countryCode: string;
  pieces: Piece[];
  weightGrams: number;
}

/**
 * The allocation shared by order creation and both quotes: stock rows (locked when `lock`),
 * SPEC §4.2 allocation, grouped by warehouse. 42201 lists every short line.
 */
export async function planAllocation(
  db: Handle,
  dialect: Dialect,
  lines: LineRequest[],
  shipTo: string,
  config: Pick<Config, 'defaultWarehouse'>,
  listField: string,
  lock: boolean,
): Promise<{ products: Map<string, Product>; groups: PlannedGroup[] }> {
  const products = await requireProducts(db, lines, listField);
  const rows = await orders.lockStockRows(db, lock ? dialect : 'sqlite', [...products.values()].map((p) => p.id));
  const skuOf = new Map([...products.values()].map((p) => [p.id, p.sku]));
  const stock = new Map<string, StockAvailability[]>();
  for (const r of rows) {
    const sku = skuOf.get(r.productId)!;
    if (!stock.has(sku)) stock.set(sku, []);
    stock.get(sku)!.push({ warehouseId: r.warehouseId, warehouseCode: r.warehouseCode, countryCode: r.countryCode, enabled: r.enabled, qty: r.qty });
  }
  const allocation = allocateLines(lines, stock, { destinationCountry: shipTo, defaultWarehouse: config.defaultWarehouse });
  if (!allocation.ok) {
    throw new AppError(
      422,
      42201,
      'insufficient stock',
      allocation.short.map((s) => ({ field: `${listField}[${s.lineIndex}].quantity`, message: `only ${s.available} available`, sku: s.sku, requested: s.requested, available: s.available })),
    );
  }
  const countryOf = new Map(rows.map((r) => [r.warehouseId, r.countryCode]));
  const groups = groupByWarehouse(allocation.pieces).map((g) => ({
    ...g,
    countryCode: countryOf.get(g.warehouseId)!,
    weightGrams: g.pieces.reduce((sum, p) => sum + products.get(p.sku)!.weight_grams * p.quantity, 0),
  }));
  return { products, groups };
}

export interface CreatedOrder {
  orderId: number;
  replayed: boolean;
}

/**
 * SPEC §4.3: one transaction locks the SKUs' stock rows, allocates, chooses channels, writes the
 * parent order, split orders and items, and decrements stock with ledger rows — or writes nothing.
 */
export async function createOrderIn(
  trx: Transaction<Database>,
  dialect: Dialect,
  config: Pick<Config, 'defaultWarehouse'>,
  merchantId: number,
  order: NormalizedOrder,
  hash: string,
  now: number,
): Promise<CreatedOrder> {
  const scope = forMerchant(trx, merchantId);
  if (order.customOrderId !== null) {
    const existing = await orders.findOrderByCustomId(scope, order.customOrderId);
    if (existing) {
      if (existing.request_hash !== hash) throw idempotencyConflict(`customOrderId ${order.customOrderId} was already used for a different order`);
      return { orderId: existing.id, replayed: true };
    }
  }
  const { products, groups } = await planAllocation(trx, dialect, order.lines, order.shipTo, config, 'orderItemsList', true);
  const offers = (await listChannels(trx)).map(toOffer);
  const lineOf = new Map(order.lines.map((l) => [l.index, l]));
  const planned = groups.map((g) => {
    // A line's own channel wishes win over the order's; the first line in the group decides.
    const first = g.pieces.map((p) => lineOf.get(p.lineIndex)!).find((l) => l.channelCode !== null || l.channelType !== null);
    const channel = chooseChannel(offers, g.warehouseCode, order.shipTo, g.weightGrams, {
      requestedCode: first?.channelCode ?? order.channelCode,
      requestedType: first?.channelType ?? order.channelType,
    });
    return { ...g, channel, freight: channel ? freightCents(channel, g.weightGrams) : 0 };
  });
  const unserved = planned.filter((g) => g.channel === null);
  if (unserved.length) {
    throw new AppError(
      422,
      42202,
      `no logistics channel ships from ${unserved.map((g) => g.warehouseCode).join(', ')} to ${order.shipTo}`,
      unserved.map((g) => ({ field: 'orderAddress.country', message: `no channel from ${g.warehouseCode} to ${order.shipTo}`, warehouseCode: g.warehouseCode, country: order.shipTo })),
    );
  }
  const subtotal = planned.reduce((sum, g) => sum + g.pieces.reduce((s, p) => s + products.get(p.sku)!.price_cents * p.quantity, 0), 0);
  const freight = planned.reduce((sum, g) => sum + g.freight, 0);
  const orderId = await orders.insertOrder(scope, {
    custom_order_id: order.customOrderId,
    request_hash: hash,
    sale_platform: order.salePlatform,
    channel_type: order.channelType,
    channel_code: order.channelCode,
    remark: order.remark,
    ship_to_country: order.shipTo,
    address: JSON.stringify(order.address),
    status: 'processing',
    financial_status: 'paid',
    fulfillment_status: 'waiting_to_ship',
    refund_status: null,
    currency_code: 'USD',
    subtotal_cents: subtotal,
    freight_cents: freight,
    coupon_cents: 0,
    promotion_cents: 0,
    refunded_cents: 0,
    pay_date: now,
    completed_date: null,
    cancel_date: null,
    refund_date: null,
    created_at: now,
    updated_at: now,
  });
  for (const g of planned) {
    const splitId = await orders.insertSplitOrder(scope, {
      order_id: orderId,
      warehouse_id: g.warehouseId,
      warehouse_code: g.warehouseCode,
      country_code: g.countryCode,
      channel_code: g.channel!.code,
      channel_type: g.channel!.type,
      status: 'waiting_to_ship',
      freight_cents: g.freight,
      weight_grams: g.weightGrams,
      carrier: null,
      tracking_code: null,
      shipped_at: null,
      delivered_at: null,
      created_at: now,
      updated_at: now,
    });
    await orders.insertItems(
      scope,
      g.pieces.map((p) => {
        const product = products.get(p.sku)!;
        return {
          order_id: orderId,
          split_order_id: splitId,
          line_index: p.lineIndex,
          product_id: product.id,
          sku: p.sku,
          product_name: product.name,
          image_url: product.image_url,
          unit_cents: product.price_cents,
          quantity: p.quantity,
          refunded_quantity: 0,
          pending_refund_quantity: 0,
          created_at: now,
          updated_at: now,
        };
      }),
    );
  }
  // Decrement in (product, warehouse) order, the order the rows were locked in.
  const decrements = new Map<string, { productId: number; warehouseId: number; qty: number }>();
  for (const g of planned) {
    for (const p of g.pieces) {
      const productId = products.get(p.sku)!.id;
      const key = `${productId}:${p.warehouseId}`;
      const d = decrements.get(key) ?? { productId, warehouseId: p.warehouseId, qty: 0 };
      d.qty += p.quantity;
      decrements.set(key, d);
    }
  }
  for (const d of [...decrements.values()].sort((a, b) => a.productId - b.productId || a.warehouseId - b.warehouseId)) {
    const applied = await addQty(trx, { productId: d.productId, warehouseId: d.warehouseId }, -d.qty, { kind: 'sale', orderId }, now);
    // The rows are locked (or the database is single-writer), so this only fails if that promise breaks.
    if (!applied) throw new RetryAttempt(`stock moved under order ${orderId}`);
  }
  return { orderId, replayed: false };
}

export interface OrderDeps {
  store: { db: import('../store/db.ts').Db; dialect: Dialect };
  config: Pick<Config, 'defaultWarehouse'>;
}

/** POST /v1/order/orders: normalise, then create under the Idempotency-Key and customOrderId rules. */
export async function placeOrder(deps: OrderDeps, merchantId: number, body: CreateOrderBody, idempotencyKey: string | null, requestId: string) {
  const order = normalizeOrder(body);
  const hash = requestHash(order);
  return runIdempotent(
    deps.store.db,
    { merchantId, key: idempotencyKey, hash: requestHash({ route: 'orders.create', hash }), requestId },
    (trx) => createOrderIn(trx, deps.store.dialect, deps.config, merchantId, order, hash, Date.now()),
    (created) => ({ data: String(created.orderId), replayed: created.replayed }),
  );
}
