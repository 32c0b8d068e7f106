import { createHash } from 'node:crypto';
import { buildCategoryTree, subtreeIds } from '../domain/categories.ts';
import { timeWindow } from '../domain/time.ts';
import { presentCatalogProduct } from '../present/catalog.presenter.ts';
import type { CategoryTree, ProductPage, ProductsQuery, WarehouseList } from '../schemas/catalog.ts';
import { listCategories } from '../store/categories.repository.ts';
import type { Handle } from '../store/db.ts';
import { productsPage } from '../store/products.repository.ts';
import { listWarehouses } from '../store/warehouses.repository.ts';
import { pageWindow } from '../domain/paging.ts';

const DEFAULT_PAGE_SIZE = 30;

/**
 * The tree and its entity tag. The tag hashes the representation itself, so any change a client
 * could see (a rename, a move, a new category) changes it, and nothing else does.
 */
export async function categoryTree(db: Handle): Promise<{ tree: CategoryTree; etag: string }> {
  const rows = await listCategories(db);
  const tree = { list: buildCategoryTree(rows.map((c) => ({ id: c.id, name: c.name, parentId: c.parent_id, imgUrl: c.img_url }))) };
  const etag = `"${createHash('sha256').update(JSON.stringify(tree)).digest('base64url').slice(0, 27)}"`;
  return { tree, etag };
}

/** RFC 9110 §13.1.2: weak comparison, a list of tags or `*`. */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const strip = (t: string) => t.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((t) => t.trim() === '*' || strip(t) === strip(etag));
}

/** Every warehouse's row (the operator API's list). */
export const everyWarehouse = (db: Handle) => listWarehouses(db);

/** Every category's row, flat (the operator API's list). */
export const everyCategory = (db: Handle) => listCategories(db);

export async function warehouseList(db: Handle): Promise<WarehouseList> {
  const rows = await listWarehouses(db);
  return {
    list: rows.map((w) => ({
      warehouseId: w.id,
      warehouseCode: w.code,
      warehouseNameExt: w.name,
      countryCode: w.country_code,
      countryCn: w.country_name,
      status: w.status,
    })),
  };
}

export async function productCatalogue(db: Handle, q: ProductsQuery): Promise<ProductPage> {
  const { start, end } = timeWindow(['updateStartTime', q.updateStartTime], ['updateEndTime', q.updateEndTime]);
  const { pageNumber, pageSize, offset } = pageWindow(q, DEFAULT_PAGE_SIZE);
  let categoryIds: number[] | null = null;
  if (q.categoryId !== undefined) {
    const all = await listCategories(db);
    categoryIds = subtreeIds(
      all.map((c) => ({ id: c.id, parentId: c.parent_id })),
      q.categoryId,
    );
  }
  const page = await productsPage(db, { categoryIds, start, end, offset, limit: pageSize });
  return {
    total: page.total,
    pageNumber,
    pageSize,
    list: page.rows.map(presentCatalogProduct),
  };
}
