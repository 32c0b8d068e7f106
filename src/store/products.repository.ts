import type { Selectable } from 'kysely';
import type { Handle } from './db.ts';
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

export async function upsertProduct(db: Handle, p: ProductInput, now: number): Promise<Product> {
  const values = {
    name: p.name,
    category_id: p.categoryId,
    price_cents: p.priceCents,
    weight_grams: p.weightGrams,
    image_url: p.imageUrl,
    options: p.options === undefined || p.options === null ? null : JSON.stringify(p.options),
  };
  return db
    .insertInto('products')
    .values({ sku: p.sku, ...values, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('sku').doUpdateSet({ ...values, updated_at: now }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** sku → product, for the SKUs that exist. */
export async function productsBySku(db: Handle, skus: string[]): Promise<Map<string, Product>> {
  if (skus.length === 0) return new Map();
  const rows = await db.selectFrom('products').selectAll().where('sku', 'in', [...new Set(skus)]).execute();
  return new Map(rows.map((r) => [r.sku, r]));
}
