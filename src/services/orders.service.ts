import { chargeOrder, orderChargePosting } from './ledger.service.ts';
import type { Transaction } from 'kysely';
import type { LineRequest } from '../domain/allocation.ts';
import type { Config } from '../config.ts';
import { normalizeChannelType, CHANNEL_TYPES, type ChannelType } from '../domain/channels.ts';
import { fieldError, validationFailed, type AppError, type FieldError } from '../domain/errors.ts';
import type { ChannelOffer } from '../domain/freight.ts';
import { allocateOrder, planOrder, type OrderLine, type ProductFacts } from '../domain/order-plan.ts';
import { freeOfCharge } from '../domain/claims.ts';
import { normalizeSalePlatform } from '../domain/sale-platforms.ts';
import type { AddressBody, CreateOrderBody } from '../schemas/orders.ts';
import type { listChannels } from '../store/channels.repository.ts';
import type { Dialect, Handle, Trx } from '../store/db.ts';
import * as orders from '../store/orders.repository.ts';
import { productsBySku, type Product } from '../store/products.repository.ts';
import type { Database } from '../store/schema.ts';
import { within, type MerchantScope } from '../store/tenancy.ts';
import { readStockRows } from '../store/stocks.repository.ts';
import { readOrderInputs, writeOrder } from '../store/order-placement.repository.ts';
import { RetryAttempt, idempotencyConflict, requestHash, runIdempotent, type KeyInWork, type KeyStore } from './idempotency.service.ts';

export type NormalizedLine = OrderLine;

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
    return {
      index,
      sku: item.sku,
      quantity: item.quantity,
      warehouseCode: blankToNull(item.warehouseCode),
      channelCode: blankToNull(item.channelCode),
      channelType,
    };
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

/** The quotes' dry run: the allocation an order would get now, nothing locked or reserved. */
export async function allocateForQuote(db: Handle, lines: LineRequest[], shipTo: string, config: Pick<Config, 'defaultWarehouse'>, listField: string) {
  const products = factsBySku([
    ...(
      await productsBySku(
        db,
        lines.map((l) => l.sku),
      )
    ).values(),
  ]);
  const stock = await readStockRows(
    db,
    [...products.values()].map((p) => p.id),
  );
  return allocateOrder(lines, products, stock, shipTo, config.defaultWarehouse, listField);
}

interface CreatedOrder {
  orderId: number;
  replayed: boolean;
}

/**
 * SPEC §4.3: one transaction loads the products, locks their stock rows and reads the channels;
 * `planOrder` decides everything (domain/order-plan.ts); then the parent order, split orders,
 * items and stock decrements with their ledger rows are written — or nothing is. On PostgreSQL the
 * reads are one statement and the writes another, the charge and the Idempotency-Key row included
 * (store/order-placement.repository.ts).
 */
async function createOrderIn(
  trx: Transaction<Database>,
  dialect: Dialect,
  config: OrderConfig,
  scope: MerchantScope<Trx>,
  order: NormalizedOrder,
  hash: string,
  now: number,
  /** The Idempotency-Key's row, when the order's statement may write it (idempotency.service.ts). */
  key: KeyInWork<CreatedOrder> | null,
  /** A claim's reshipment (SPEC §18): planned like any order, every price and freight zero, charged 0. */
  free = false,
): Promise<CreatedOrder> {
  if (order.customOrderId !== null) {
    const existing = await orders.findOrderByCustomId(scope, order.customOrderId);
    if (existing) {
      if (existing.request_hash !== hash) throw idempotencyConflict(`customOrderId ${order.customOrderId} was already used for a different order`);
      return { orderId: existing.id, replayed: true };
    }
  }
  const inputs = await readOrderInputs(
    trx,
    dialect,
    order.lines.map((l) => l.sku),
  );
  const planned = planOrder(order, factsBySku(inputs.products), inputs.stock, inputs.channels.map(toOffer), config.defaultWarehouse);
  const plan = free ? freeOfCharge(planned) : planned;

  // SPEC §15: charged last (the account row is locked until the commit); a prepaid account that
  // cannot cover it refuses the order (42203) and the transaction leaves no trace.
  const ledger = { env: config.env, supplierCurrency: config.supplierCurrency };
  const finalCents = plan.subtotalCents + plan.freightCents;
  const written = await writeOrder(scope, dialect, {
    orderId: inputs.orderId,
    order: {
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
      currency_code: config.supplierCurrency,
      subtotal_cents: plan.subtotalCents,
      freight_cents: plan.freightCents,
      coupon_cents: 0,
      promotion_cents: 0,
      refunded_cents: 0,
      pay_date: now,
      completed_date: null,
      cancel_date: null,
      refund_date: null,
      created_at: now,
      updated_at: now,
    },
    splits: plan.splits.map((s) => ({
      row: {
        warehouse_id: s.warehouseId,
        warehouse_code: s.warehouseCode,
        country_code: s.countryCode,
        channel_code: s.channelCode,
        channel_type: s.channelType,
        status: 'waiting_to_ship',
        freight_cents: s.freightCents,
        weight_grams: s.weightGrams,
        carrier: null,
        tracking_code: null,
        shipped_at: null,
        delivered_at: null,
        created_at: now,
        updated_at: now,
      },
      items: s.items.map((i) => ({
        line_index: i.lineIndex,
        product_id: i.productId,
        sku: i.sku,
        product_name: i.productName,
        image_url: i.imageUrl,
        unit_cents: i.unitCents,
        quantity: i.quantity,
        refunded_quantity: 0,
        pending_refund_quantity: 0,
        created_at: now,
        updated_at: now,
      })),
    })),
    decrements: plan.decrements,
    charge: (orderId) => orderChargePosting(ledger, orderId, finalCents),
    keyRow: key && ((orderId) => key.rowFor({ orderId, replayed: false })),
    now,
  });
  // The rows are locked (or the database is single-writer), so this only fails if that promise breaks.
  if (!written.applied) throw new RetryAttempt(`stock moved under order ${written.orderId}`);
  await chargeOrder(scope, dialect, ledger, written.orderId, finalCents, now, written.posted);
  if (written.keyStored) key?.stored(written.keyStored);
  return { orderId: written.orderId, replayed: false };
}

/** The catalogue facts a plan needs, by SKU. */
const factsBySku = (products: Product[]): Map<string, ProductFacts> =>
  new Map(products.map((p) => [p.sku, { id: p.id, sku: p.sku, name: p.name, imageUrl: p.image_url, priceCents: p.price_cents, weightGrams: p.weight_grams }]));

/**
 * The replacement order of a claim resolved by reshipment (SPEC §18), in the decision's
 * transaction: allocated, split by warehouse and its stock taken like any order (42201 when the stock
 * is short, which the caller turns into the claim's reason), every price and freight zero, and a
 * charge of 0 so the ledger still has one charge per order.
 */
export async function placeReplacementOrder(
  trx: Transaction<Database>,
  dialect: Dialect,
  config: OrderConfig,
  scope: MerchantScope<Trx>,
  order: NormalizedOrder,
  claimId: number,
  now: number,
): Promise<number> {
  const created = await createOrderIn(trx, dialect, config, scope, order, `claim:${claimId}`, now, null, true);
  return created.orderId;
}

type OrderConfig = Pick<Config, 'defaultWarehouse' | 'env' | 'supplierCurrency'>;

export interface OrderDeps {
  store: KeyStore;
  config: OrderConfig;
}

/** POST /v1/order/orders: normalise, then create under the Idempotency-Key and customOrderId rules. */
export async function placeOrder(deps: OrderDeps, merchant: MerchantScope, body: CreateOrderBody, idempotencyKey: string | null, requestId: string) {
  const order = normalizeOrder(body);
  const hash = requestHash(order);
  return runIdempotent<CreatedOrder>(
    deps.store,
    { merchantId: merchant.merchantId, key: idempotencyKey, request: { route: 'orders.create', hash }, requestId },
    (trx, key) => createOrderIn(trx, deps.store.dialect, deps.config, within(merchant, trx), order, hash, Date.now(), key),
    (created) => ({ data: String(created.orderId), replayed: created.replayed }),
  );
}
