import type { Selectable } from 'kysely';
import type { Handle, Trx } from './db.ts';
import { prepared } from './prepared.ts';
import type { ProductsTable } from './schema.ts';

export type Product = Selectable<ProductsTable>;

export interface ProductInput {
  sku: string;
  name: string;
  categoryId: number | null;
  priceCents: number;
  weightGrams: number;
  imageUrl: string | null;
  options: unknown;
}

const columnsOf = (p: ProductInput) => ({
  name: p.name,
  category_id: p.categoryId,
  price_cents: p.priceCents,
  weight_grams: p.weightGrams,
  image_url: p.imageUrl,
  options: p.options === undefined || p.options === null ? null : JSON.stringify(p.options),
});

/** Any product at all (the demo seed fills only an empty database). */
export const anyProduct = (db: Handle) => db.selectFrom('products').select('id').limit(1).executeTakeFirst();

/**
 * Creates or replaces a product, bumping its version. `onlyAtVersions`: replace it only while its
 * version is one of these (an optimistic save, domain/edit-versions.ts); undefined when it is at
 * another (nothing written).
 */
export async function upsertProduct(db: Trx, p: ProductInput, now: number, onlyAtVersions: readonly number[] | null = null): Promise<Product | undefined> {
  const values = columnsOf(p);
  return db
    .insertInto('products')
    .values({ sku: p.sku, ...values, created_at: now, updated_at: now })
    .onConflict((oc) => {
      const update = oc.column('sku').doUpdateSet((eb) => ({ ...values, updated_at: now, version: eb('products.version', '+', 1) }));
      return onlyAtVersions === null ? update : update.where('products.version', 'in', [...onlyAtVersions]);
    })
    .returningAll()
    .executeTakeFirst();
}

/** sku → product, for the SKUs that exist. */
export async function productsBySku(db: Handle, skus: string[]): Promise<Map<string, Product>> {
  if (skus.length === 0) return new Map();
  const rows = await productRowsBySku.all(db, [...new Set(skus)]);
  return new Map(rows.map((r) => [r.sku, r]));
}

/** The ids of the products of these SKUs (unknown SKUs are absent): an import's batch of stock rows. */
export async function productIdsBySku(db: Handle, skus: string[]): Promise<Map<string, number>> {
  if (skus.length === 0) return new Map();
  const rows = await db.selectFrom('products').select(['id', 'sku']).where('sku', 'in', skus).execute();
  return new Map(rows.map((r) => [r.sku, r.id]));
}

const productRowsBySku = prepared((db, skus: string[]) => db.selectFrom('products').selectAll().where('sku', 'in', skus));

export interface ProductPageQuery {
  /** null: any category. */
  categoryIds: number[] | null;
  start: number | null;
  end: number | null;
  offset: number;
  limit: number;
}

/**
 * With an update window: ascending update time then id, so a client can sync incrementally;
 * without: id order, where new products only ever append (stable pages).
 */
export async function productsPage(db: Handle, q: ProductPageQuery): Promise<{ total: number; rows: Product[] }> {
  if (q.categoryIds !== null && q.categoryIds.length === 0) return { total: 0, rows: [] };
  let base = db.selectFrom('products');
  if (q.categoryIds !== null) base = base.where('category_id', 'in', q.categoryIds);
  if (q.start !== null) base = base.where('updated_at', '>=', q.start);
  if (q.end !== null) base = base.where('updated_at', '<=', q.end);
  let page = base.selectAll();
  if (q.start !== null || q.end !== null) page = page.orderBy('updated_at');
  const [count, rows] = await Promise.all([
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    page.orderBy('id').offset(q.offset).limit(q.limit).execute(),
  ]);
  return { total: Number(count.n), rows };
}

/** Upserts many products in one statement (the bulk import path); SKUs must be distinct. */
/** Which of a product's optional columns a CSV file has: one it lacks is left as it is on a product that exists. */
export interface GivenProductColumns {
  categoryId: boolean;
  imageUrl: boolean;
}

/**
 * Inserts or updates products by SKU (a products CSV). An existing product takes the file's name,
 * price and weight, and its category and image only where the file has those columns (an empty
 * cell in a column it has clears the value); its options, which a CSV cannot carry, stay.
 */
export async function upsertProducts(db: Trx, rows: ProductInput[], now: number, given: GivenProductColumns): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('products')
    .values(rows.map((p) => ({ sku: p.sku, ...columnsOf(p), created_at: now, updated_at: now })))
    .onConflict((oc) =>
      oc.column('sku').doUpdateSet((eb) => ({
        name: eb.ref('excluded.name'),
        ...(given.categoryId ? { category_id: eb.ref('excluded.category_id') } : {}),
        price_cents: eb.ref('excluded.price_cents'),
        weight_grams: eb.ref('excluded.weight_grams'),
        ...(given.imageUrl ? { image_url: eb.ref('excluded.image_url') } : {}),
        updated_at: eb.ref('excluded.updated_at'),
        version: eb('products.version', '+', 1),
      })),
    )
    .execute();
}
