import { centsToAmount } from '../domain/money.ts';
import { formatInstant } from '../domain/time.ts';
import type { Category } from '../store/categories.repository.ts';
import type { Channel } from '../store/channels.repository.ts';
import type { Merchant } from '../store/merchants.repository.ts';
import type { Product } from '../store/products.repository.ts';
import type { Warehouse } from '../store/warehouses.repository.ts';

/** Storage rows → the API's field names; ids as strings, money as amounts, times as ISO seconds. */
export const presentWarehouse = (w: Warehouse) => ({
  warehouseId: w.id,
  warehouseCode: w.code,
  name: w.name,
  countryCode: w.country_code,
  countryName: w.country_name,
  status: w.status,
  updateDate: formatInstant(w.updated_at),
});

export const presentCategory = (c: Category) => ({
  categoryId: c.id,
  name: c.name,
  parentId: c.parent_id,
  imgUrl: c.img_url,
  updateDate: formatInstant(c.updated_at),
});

export const presentProduct = (p: Product) => ({
  sku: p.sku,
  name: p.name,
  categoryId: p.category_id,
  price: centsToAmount(p.price_cents),
  weightGrams: p.weight_grams,
  imageUrl: p.image_url,
  options: p.options === null ? null : JSON.parse(p.options),
  updateDate: formatInstant(p.updated_at),
});

/** The merchant catalogue's product (SPEC §3): the operator's view without `options`. */
export function presentCatalogProduct(p: Product) {
  const { options: _options, ...product } = presentProduct(p);
  return { ...product, updateDate: product.updateDate! };
}

export const presentChannel = (c: Channel) => ({
  channelCode: c.code,
  name: c.name,
  channelType: c.channel_type,
  warehouseCodes: c.warehouseCodes,
  countries: JSON.parse(c.countries) as string[],
  baseFee: centsToAmount(c.base_fee_cents),
  perKgFee: centsToAmount(c.per_kg_fee_cents),
  deliveryDaysMin: c.delivery_days_min,
  deliveryDaysMax: c.delivery_days_max,
  carriers: JSON.parse(c.carriers) as string[],
  trackingUrlTemplate: c.tracking_url_template,
  updateDate: formatInstant(c.updated_at),
});

export const presentMerchant = (m: Merchant) => ({
  merchantId: String(m.id),
  name: m.name,
  status: m.status,
  clientId: m.client_id,
  createDate: formatInstant(m.created_at),
  updateDate: formatInstant(m.updated_at),
});
