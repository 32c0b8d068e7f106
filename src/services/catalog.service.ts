import { brokenCategoryChains } from '../domain/categories.ts';
import { normalizeCarriers, normalizeChannelType, trackingTemplateProblem, trackingUrl } from '../domain/channels.ts';
import { countryName } from '../domain/countries.ts';
import type { Actor, AuditSummary } from '../domain/audit.ts';
import { AppError, conflictState, notFound, validationFailed, type FieldError } from '../domain/errors.ts';
import { checkVersion, staleVersion, versionsOf, type VersionCheck } from '../domain/edit-versions.ts';
import type { CategoryBody, ChannelBody, ImportBody, ProductBody, WarehouseBody } from '../schemas/admin.ts';
import { listCategories, upsertCategory, existingCategoryIds, type Category } from '../store/categories.repository.ts';
import { insertAudit } from '../store/audit.repository.ts';
import { upsertChannel, listChannels, type Channel } from '../store/channels.repository.ts';
import type { Db, Handle, Trx } from '../store/db.ts';
import { productsBySku, upsertProduct, type Product, type ProductInput } from '../store/products.repository.ts';
import { listWarehouses, upsertWarehouse, warehousesByCode, type Warehouse } from '../store/warehouses.repository.ts';
import { setStocks } from './stock.service.ts';

/** `items`, 2, `qty` → `items[2].qty`; without a list prefix the field stands alone. */
const at = (prefix: string, index: number, name: string) => (prefix ? `${prefix}[${index}].${name}` : name);

function failIfAny(errors: FieldError[]) {
  if (errors.length > 0) throw validationFailed(errors, errors.length === 1 ? `${errors[0].field}: ${errors[0].message}` : 'validation failed');
}

/**
 * `onlyAt`: the versions a single-row save may replace (domain/edit-versions.ts); a row at another
 * version by the time it is written (a save that raced this one) is refused with 412, not overwritten.
 */
async function putWarehouses(db: Trx, rows: WarehouseBody[], _prefix: string, now: number, onlyAt: readonly number[] | null = null): Promise<Warehouse[]> {
  const out: Warehouse[] = [];
  for (const w of rows) {
    const code = w.countryCode.toUpperCase();
    const saved = await upsertWarehouse(
      db,
      { code: w.warehouseCode, name: w.name, countryCode: code, countryName: w.countryName ?? countryName(code), status: w.status ?? 1 },
      now,
      onlyAt,
    );
    if (!saved) throw staleVersion(`warehouse ${w.warehouseCode}`, (await warehousesByCode(db, [w.warehouseCode])).get(w.warehouseCode)?.version ?? null);
    out.push(saved);
  }
  return out;
}

/** Upserts first, then checks the whole tree, so one import may list children before parents. */
async function putCategories(db: Trx, rows: CategoryBody[], prefix: string, now: number): Promise<Category[]> {
  const out: Category[] = [];
  for (const c of rows) out.push(await upsertCategory(db, { id: c.categoryId, name: c.name, parentId: c.parentId, imgUrl: c.imgUrl ?? null }, now));
  const all = await listCategories(db);
  const broken = brokenCategoryChains(
    new Map(all.map((c) => [c.id, c.parent_id])),
    out.map((c) => c.id),
  );
  failIfAny(
    broken.map(({ id, reason }) => {
      const index = rows.findIndex((r) => r.categoryId === id);
      return { field: at(prefix, index, 'parentId'), message: reason === 'cycle' ? 'would make the category its own ancestor' : 'unknown parent category' };
    }),
  );
  return out;
}

/** A product of the operator API or of an import as the row the store writes; an import's CSV has no options column and passes null. */
export function productInput(p: ProductBody, options: ProductInput['options']): ProductInput {
  return { sku: p.sku, name: p.name, categoryId: p.categoryId ?? null, priceCents: p.price, weightGrams: p.weightGrams, imageUrl: p.imageUrl ?? null, options };
}

async function putProducts(db: Trx, rows: ProductBody[], prefix: string, now: number, onlyAt: readonly number[] | null = null): Promise<Product[]> {
  const categoryIds = rows.map((p) => p.categoryId).filter((id): id is number => typeof id === 'number');
  const known = await existingCategoryIds(db, categoryIds);
  failIfAny(
    rows.flatMap((p, i) =>
      typeof p.categoryId === 'number' && !known.has(p.categoryId) ? [{ field: at(prefix, i, 'categoryId'), message: 'unknown category' }] : [],
    ),
  );
  const out: Product[] = [];
  for (const p of rows) {
    const saved = await upsertProduct(db, productInput(p, p.options), now, onlyAt);
    if (!saved) throw staleVersion(`product ${p.sku}`, (await productsBySku(db, [p.sku])).get(p.sku)?.version ?? null);
    out.push(saved);
  }
  return out;
}

async function putChannels(db: Trx, rows: ChannelBody[], prefix: string, now: number, onlyAt: readonly number[] | null = null): Promise<void> {
  const warehouses = await warehousesByCode(
    db,
    rows.flatMap((c) => c.warehouseCodes),
  );
  const errors: FieldError[] = [];
  rows.forEach((c, i) => {
    if (!normalizeChannelType(c.channelType)) errors.push({ field: at(prefix, i, 'channelType'), message: 'must be one of: Standard, Express, Expedited' });
    c.warehouseCodes.forEach((code, j) => {
      if (!warehouses.has(code)) errors.push({ field: `${at(prefix, i, 'warehouseCodes')}[${j}]`, message: `unknown warehouse ${code}` });
    });
    if (c.deliveryDaysMax < c.deliveryDaysMin) errors.push({ field: at(prefix, i, 'deliveryDaysMax'), message: 'must not be less than deliveryDaysMin' });
    if (c.countries.includes('*') && c.countries.length > 1)
      errors.push({ field: at(prefix, i, 'countries'), message: 'is either ["*"] or a list of country codes' });
    const template = c.trackingUrlTemplate?.trim();
    const problem = template ? trackingTemplateProblem(template) : null;
    if (problem) errors.push({ field: at(prefix, i, 'trackingUrlTemplate'), message: problem });
  });
  failIfAny(errors);
  for (const c of rows) {
    const saved = await upsertChannel(
      db,
      {
        code: c.channelCode,
        name: c.name,
        channelType: normalizeChannelType(c.channelType)!,
        warehouseIds: c.warehouseCodes.map((code) => warehouses.get(code)!.id),
        countries: [...new Set(c.countries.map((x) => x.toUpperCase()))],
        baseFeeCents: c.baseFee,
        perKgFeeCents: c.perKgFee,
        deliveryDaysMin: c.deliveryDaysMin,
        deliveryDaysMax: c.deliveryDaysMax,
        carriers: c.carriers === undefined ? undefined : normalizeCarriers(c.carriers),
        trackingUrlTemplate: c.trackingUrlTemplate === undefined ? undefined : c.trackingUrlTemplate?.trim() || null,
      },
      now,
      onlyAt,
    );
    if (!saved) throw staleVersion(`channel ${c.channelCode}`, (await listChannels(db)).find((x) => x.code === c.channelCode)?.version ?? null);
  }
}

export interface ImportSummary {
  warehouses: number;
  categories: number;
  products: number;
  stocks: number;
  channels: number;
}

/**
 * Loads a whole catalogue document in dependency order, in one transaction: all or nothing. One
 * audit row (target `catalog:import`) counts what it held, however many rows that was.
 */
export async function importCatalog(db: Db, actor: Actor, doc: ImportBody, now: number): Promise<ImportSummary> {
  return db.transaction().execute(async (trx) => {
    const summary = await loadCatalog(trx, doc, now);
    await insertAudit(trx, actor, { action: 'catalog.import', target: 'catalog:import', before: null, after: { source: 'document', ...summary } }, now);
    return summary;
  });
}

/**
 * The document's rows in dependency order, inside the caller's transaction. Every section is
 * checked even after one is refused, so one answer lists every bad row (a refused section is not
 * written, so rows that depend on it are reported too); any problem refuses the whole document.
 */
export async function loadCatalog(db: Trx, doc: ImportBody, now: number): Promise<ImportSummary> {
  const errors: FieldError[] = [];
  const section = async (write: () => Promise<unknown>) => {
    try {
      await write();
    } catch (error) {
      // Only our own checks (raised before or after the section's statements) are collected; a
      // database error leaves a PostgreSQL transaction unusable and is passed on.
      if (error instanceof AppError && error.kind === 'invalid' && error.errors) errors.push(...error.errors);
      else throw error;
    }
  };
  await section(() => putWarehouses(db, doc.warehouses ?? [], 'warehouses', now));
  await section(() => putCategories(db, doc.categories ?? [], 'categories', now));
  await section(() => putProducts(db, doc.products ?? [], 'products', now));
  await section(() => setStocks(db, doc.stocks ?? [], 'stocks', now));
  await section(() => putChannels(db, doc.channels ?? [], 'channels', now));
  failIfAny(errors);
  return {
    warehouses: doc.warehouses?.length ?? 0,
    categories: doc.categories?.length ?? 0,
    products: doc.products?.length ?? 0,
    stocks: doc.stocks?.length ?? 0,
    channels: doc.channels?.length ?? 0,
  };
}

export { listChannels };

// One catalogue row saved by the operator (POST /admin/v1/warehouses … or the console), audited
// with what it was and what it became, in the transaction that saves it.

export const warehouseSummary = (w: Warehouse): AuditSummary => ({ name: w.name, countryCode: w.country_code, countryName: w.country_name, status: w.status });
export const categorySummary = (c: Category): AuditSummary => ({ name: c.name, parentId: c.parent_id, imgUrl: c.img_url });
export const productSummary = (p: Product): AuditSummary => ({
  name: p.name,
  categoryId: p.category_id,
  priceCents: p.price_cents,
  weightGrams: p.weight_grams,
  imageUrl: p.image_url,
  // A product without options says nothing of them (its rows read as before options were
  // editable); one with options shows them, so adding, changing or clearing them is on record.
  ...(p.options === null ? {} : { options: p.options }),
});
export const channelSummary = (c: Channel): AuditSummary => ({
  name: c.name,
  channelType: c.channel_type,
  warehouseCodes: c.warehouseCodes.join(','),
  countries: (JSON.parse(c.countries) as string[]).join(','),
  baseFeeCents: c.base_fee_cents,
  perKgFeeCents: c.per_kg_fee_cents,
  deliveryDaysMin: c.delivery_days_min,
  deliveryDaysMax: c.delivery_days_max,
  // Like a product's options: carriers and a tracking template are on record once a channel has them.
  ...channelShippingSummary(JSON.parse(c.carriers) as string[], c.tracking_url_template),
});
const channelShippingSummary = (carriers: string[], template: string | null): AuditSummary => ({
  ...(carriers.length === 0 ? {} : { carriers: carriers.join(',') }),
  ...(template === null ? {} : { trackingUrlTemplate: template }),
});

/**
 * How a save treats a row that exists: `upsert` (the operator API, SPEC §7) creates or replaces;
 * the console's forms say which they mean, `create` (409 when the code is taken: nothing is
 * overwritten by a form meant for a new row) or `update` (404 when there is none).
 */
export type SaveMode = 'upsert' | 'create' | 'update';

function checkMode(mode: SaveMode, what: string, exists: boolean) {
  if (mode === 'create' && exists) throw conflictState(`${what} exists already; edit it instead`);
  if (mode === 'update' && !exists) throw notFound(what);
}

/**
 * `check`: the version the save was made against (an edit form's, the API's If-Match); a row at
 * another version is refused (412) and nothing is written (domain/edit-versions.ts).
 */
export async function saveWarehouse(
  db: Db,
  actor: Actor,
  body: WarehouseBody,
  now: number,
  mode: SaveMode = 'upsert',
  check?: VersionCheck,
): Promise<Warehouse> {
  return db.transaction().execute(async (trx) => {
    const before = (await warehousesByCode(trx, [body.warehouseCode])).get(body.warehouseCode);
    checkMode(mode, `warehouse ${body.warehouseCode}`, before !== undefined);
    checkVersion(check, `warehouse ${body.warehouseCode}`, before?.version ?? null);
    const [saved] = await putWarehouses(trx, [body], '', now, versionsOf(check));
    const entry = { target: `warehouse:${saved.code}`, before: before ? warehouseSummary(before) : null, after: warehouseSummary(saved) };
    await insertAudit(trx, actor, { action: 'warehouse.save', ...entry }, now);
    return saved;
  });
}

export async function saveCategory(db: Db, actor: Actor, body: CategoryBody, now: number): Promise<Category> {
  return db.transaction().execute(async (trx) => {
    const before = (await listCategories(trx)).find((c) => c.id === body.categoryId);
    const [saved] = await putCategories(trx, [body], '', now);
    const entry = { target: `category:${saved.id}`, before: before ? categorySummary(before) : null, after: categorySummary(saved) };
    await insertAudit(trx, actor, { action: 'category.save', ...entry }, now);
    return saved;
  });
}

/** `check` as `saveWarehouse`'s. */
export async function saveProduct(db: Db, actor: Actor, body: ProductBody, now: number, mode: SaveMode = 'upsert', check?: VersionCheck): Promise<Product> {
  return db.transaction().execute(async (trx) => {
    const before = (await productsBySku(trx, [body.sku])).get(body.sku);
    checkMode(mode, `product ${body.sku}`, before !== undefined);
    checkVersion(check, `product ${body.sku}`, before?.version ?? null);
    const [saved] = await putProducts(trx, [body], '', now, versionsOf(check));
    const entry = { target: `product:${saved.sku}`, before: before ? productSummary(before) : null, after: productSummary(saved) };
    await insertAudit(trx, actor, { action: 'product.save', ...entry }, now);
    return saved;
  });
}

/** `check` as `saveWarehouse`'s. */
export async function saveChannel(db: Db, actor: Actor, body: ChannelBody, now: number, mode: SaveMode = 'upsert', check?: VersionCheck): Promise<Channel> {
  return db.transaction().execute(async (trx) => {
    const before = (await listChannels(trx)).find((c) => c.code === body.channelCode);
    checkMode(mode, `channel ${body.channelCode}`, before !== undefined);
    checkVersion(check, `channel ${body.channelCode}`, before?.version ?? null);
    await putChannels(trx, [body], '', now, versionsOf(check));
    const saved = (await listChannels(trx)).find((c) => c.code === body.channelCode)!;
    const entry = { target: `channel:${saved.code}`, before: before ? channelSummary(before) : null, after: channelSummary(saved) };
    await insertAudit(trx, actor, { action: 'channel.save', ...entry }, now);
    return saved;
  });
}

/** How a channel's shipments are shipped and tracked: the carriers the ship form offers and its tracking URL template. */
export interface ChannelShipping {
  carriers: string[];
  trackingUrlTemplate: string | null;
}

/** channel code → its carriers and tracking URL template (the order pages: the ship form and tracking links). */
export async function channelShippingByCode(db: Handle): Promise<Map<string, ChannelShipping>> {
  return new Map((await listChannels(db)).map((c) => [c.code, { carriers: JSON.parse(c.carriers) as string[], trackingUrlTemplate: c.tracking_url_template }]));
}

/** The tracking link of a shipped split, by its channel's template; null when the channel has none. */
export const trackingLinkOf = (shipping: Map<string, ChannelShipping>, channelCode: string, trackingCode: string | null): string | null =>
  trackingCode ? trackingUrl(shipping.get(channelCode)?.trackingUrlTemplate ?? null, trackingCode) : null;

// Reads for the console's catalogue forms.

/** One product by SKU, or 404. */
export async function productBySku(db: Handle, sku: string): Promise<Product> {
  const product = (await productsBySku(db, [sku])).get(sku);
  if (!product) throw notFound(`product ${sku}`);
  return product;
}

/** One warehouse by code, or 404. */
export async function warehouseByCode(db: Handle, code: string): Promise<Warehouse> {
  const warehouse = (await warehousesByCode(db, [code])).get(code);
  if (!warehouse) throw notFound(`warehouse ${code}`);
  return warehouse;
}

/** One channel by code (with its warehouses' codes), or 404. */
export async function channelByCode(db: Handle, code: string): Promise<Channel> {
  const channel = (await listChannels(db)).find((c) => c.code === code);
  if (!channel) throw notFound(`channel ${code}`);
  return channel;
}

export { listCategories, listWarehouses };
