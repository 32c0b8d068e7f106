import { notFound } from '../domain/errors.ts';
import type { Handle } from '../store/db.ts';
import { productsBySku } from '../store/products.repository.ts';
import { ledgerOfProduct, searchProducts, stockByWarehouse, stockOfProducts } from '../store/stock-history.repository.ts';

/** Products per search page and ledger rows per history page in the console. */
export const CATALOG_PAGE_SIZE = 50;

/**
 * The console's product search: SKU or name containing `text`, in SKU order, each with its stock
 * per warehouse; `nextAfter` continues the walk (keyset on the SKU).
 */
export async function searchCatalog(db: Handle, text: string, afterSku: string | null) {
  const rows = await searchProducts(db, text, afterSku, CATALOG_PAGE_SIZE + 1);
  const page = rows.slice(0, CATALOG_PAGE_SIZE);
  const stock = await stockOfProducts(
    db,
    page.map((p) => p.id),
  );
  const byProduct = new Map<number, { warehouseCode: string; qty: number }[]>();
  for (const s of stock) byProduct.set(s.productId, [...(byProduct.get(s.productId) ?? []), { warehouseCode: s.warehouseCode, qty: s.qty }]);
  return {
    list: page.map((p) => {
      const stocks = byProduct.get(p.id) ?? [];
      return { ...p, stocks, totalQty: stocks.reduce((sum, s) => sum + s.qty, 0) };
    }),
    nextAfter: rows.length > CATALOG_PAGE_SIZE ? page.at(-1)!.sku : null,
  };
}

/**
 * One SKU as the console shows it: the product, its quantity in every warehouse and a page of its
 * ledger, newest first; `nextBefore` continues the history (keyset on the ledger id).
 */
export async function productStock(db: Handle, sku: string, beforeId: number | null) {
  const product = (await productsBySku(db, [sku])).get(sku);
  if (!product) throw notFound(`product ${sku}`);
  const [warehouses, ledger] = await Promise.all([stockByWarehouse(db, product.id), ledgerOfProduct(db, product.id, beforeId, CATALOG_PAGE_SIZE + 1)]);
  const history = ledger.slice(0, CATALOG_PAGE_SIZE);
  return {
    product: { sku: product.sku, name: product.name, priceCents: product.price_cents, weightGrams: product.weight_grams },
    warehouses: warehouses.map((w) => ({ ...w, qty: w.qty ?? 0, hasRow: w.qty !== null })),
    history,
    nextBefore: ledger.length > CATALOG_PAGE_SIZE ? history.at(-1)!.id : null,
  };
}
