import { sql } from 'kysely';
import { likeContaining, type Handle } from './db.ts';

/**
 * One SKU's ledger rows, newest first by (created_at, id), every warehouse: a keyset walk of
 * `stock_ledger_product_time_idx` (product_id, created_at, id), so rows written meanwhile never
 * shift a page and no sort is needed. `beforeId` continues a walk after that row of the product's
 * (an id that names none of its rows gives an empty page). The same index serves the stock
 * windows over a SKU list, so an order's ledger rows are written into one product index, not two
 * (migration 0036).
 */
export async function ledgerOfProduct(db: Handle, productId: number, beforeId: number | null, limit: number) {
  let q = db
    .selectFrom('stock_ledger')
    .innerJoin('warehouses', 'warehouses.id', 'stock_ledger.warehouse_id')
    .select([
      'stock_ledger.id as id',
      'warehouses.code as warehouseCode',
      'stock_ledger.delta as delta',
      'stock_ledger.qty_after as qtyAfter',
      'stock_ledger.kind as kind',
      'stock_ledger.order_id as orderId',
      'stock_ledger.refund_id as refundId',
      'stock_ledger.reason as reason',
      'stock_ledger.created_at as createdAt',
    ])
    .where('stock_ledger.product_id', '=', productId)
    .orderBy('stock_ledger.created_at', 'desc')
    .orderBy('stock_ledger.id', 'desc')
    .limit(limit);
  if (beforeId !== null)
    q = q.where(
      sql<boolean>`(stock_ledger.created_at, stock_ledger.id) < (select b.created_at, b.id from stock_ledger b where b.id = ${beforeId} and b.product_id = ${productId})`,
    );
  return q.execute();
}

/** A product's quantity in every warehouse (0 where it has no stock row yet), in warehouse code order. */
export async function stockByWarehouse(db: Handle, productId: number) {
  return db
    .selectFrom('warehouses')
    .leftJoin('stocks', (join) => join.onRef('stocks.warehouse_id', '=', 'warehouses.id').on('stocks.product_id', '=', productId))
    .select([
      'warehouses.code as warehouseCode',
      'warehouses.name as warehouseName',
      'warehouses.status as status',
      'stocks.qty as qty',
      'stocks.updated_at as updatedAt',
    ])
    .orderBy('warehouses.code')
    .execute();
}

/**
 * Products whose SKU or name contains `text` (case-insensitive), in SKU order after `afterSku`.
 * A scan of the products table (bounded by `limit`), never of orders or the ledger; an exact SKU
 * is found through its unique index first.
 */
export async function searchProducts(db: Handle, text: string, afterSku: string | null, limit: number) {
  let q = matchingProducts(db, text).select(['id', 'sku', 'name', 'price_cents as priceCents', 'weight_grams as weightGrams', 'updated_at as updatedAt']);
  if (afterSku !== null) q = q.where('sku', '>', afterSku);
  return q.orderBy('sku').limit(limit).execute();
}

function matchingProducts(db: Handle, text: string) {
  const q = db.selectFrom('products');
  if (text === '') return q;
  const pattern = likeContaining(text);
  return q.where((eb) =>
    eb.or([
      eb('sku', '=', text),
      // An explicit ESCAPE: SQLite's LIKE has no default escape character.
      sql<boolean>`lower(sku) like ${pattern} escape '\\'`,
      sql<boolean>`lower(name) like ${pattern} escape '\\'`,
    ]),
  );
}

/**
 * How many products the search matches, counting at most `cap` (the list says "about"); with
 * `upToSku`, only those up to and including that SKU (the rows the pages before this one showed).
 */
export async function countProducts(db: Handle, text: string, cap: number, upToSku: string | null): Promise<number> {
  let inner = matchingProducts(db, text).select('id');
  if (upToSku !== null) inner = inner.where('sku', '<=', upToSku);
  const row = await db
    .selectFrom(inner.limit(cap).as('w'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The stock rows of a page of products, for the search results (one query for the page). */
export async function stockOfProducts(db: Handle, productIds: number[]) {
  if (productIds.length === 0) return [];
  return db
    .selectFrom('stocks')
    .innerJoin('warehouses', 'warehouses.id', 'stocks.warehouse_id')
    .select(['stocks.product_id as productId', 'warehouses.code as warehouseCode', 'stocks.qty as qty'])
    .where('stocks.product_id', 'in', productIds)
    .orderBy('stocks.product_id')
    .orderBy('warehouses.code')
    .execute();
}
