import { notFound } from '../domain/errors.ts';
import type { Handle } from '../store/db.ts';
import { productsBySku } from '../store/products.repository.ts';
import { countProducts, ledgerOfProduct, searchProducts, stockByWarehouse, stockOfProducts } from '../store/stock-history.repository.ts';
import type { CsvExport } from '../domain/csv.ts';

/** Products per search page and ledger rows per history page in the console. */
export const CATALOG_PAGE_SIZE = 50;

/** The search's count stops here: the page says "10,000 or more" rather than count every product. */
const CATALOG_COUNT_CAP = 10_000;
/** Products read per round trip while an export streams. */
const EXPORT_BATCH = 500;

/** A page of products with the stock rows of each, per warehouse. */
async function withStock(db: Handle, page: Awaited<ReturnType<typeof searchProducts>>) {
  const stock = await stockOfProducts(
    db,
    page.map((p) => p.id),
  );
  const byProduct = new Map<number, { warehouseCode: string; qty: number }[]>();
  for (const s of stock) byProduct.set(s.productId, [...(byProduct.get(s.productId) ?? []), { warehouseCode: s.warehouseCode, qty: s.qty }]);
  return page.map((p) => {
    const stocks = byProduct.get(p.id) ?? [];
    return { ...p, stocks, totalQty: stocks.reduce((sum, s) => sum + s.qty, 0) };
  });
}

/**
 * The console's product search: SKU or name containing `text`, in SKU order, each with its stock
 * per warehouse; `nextAfter` continues the walk (keyset on the SKU); `counts` place the page in it.
 */
export async function searchCatalog(db: Handle, text: string, afterSku: string | null) {
  const [rows, about, shownBefore] = await Promise.all([
    searchProducts(db, text, afterSku, CATALOG_PAGE_SIZE + 1),
    countProducts(db, text, CATALOG_COUNT_CAP, null),
    afterSku === null ? 0 : countProducts(db, text, CATALOG_COUNT_CAP, afterSku),
  ]);
  const page = rows.slice(0, CATALOG_PAGE_SIZE);
  const list = await withStock(db, page);
  return {
    list,
    nextAfter: rows.length > CATALOG_PAGE_SIZE ? page.at(-1)!.sku : null,
    counts: { first: list.length ? shownBefore + 1 : 0, last: shownBefore + list.length, about, capped: about >= CATALOG_COUNT_CAP },
  };
}

const STOCK_CSV_COLUMNS = ['sku', 'name', 'price', 'warehouse', 'quantity'] as const;

/**
 * The product search as CSV: one row per product and warehouse it has stock in (one row with no
 * warehouse for a product without stock), in SKU order, read in keyset batches while the file is written.
 */
export function stockCsv(db: Handle, text: string, batch = EXPORT_BATCH): CsvExport {
  async function* rows() {
    let after: string | null = null;
    for (;;) {
      const page = await searchProducts(db, text, after, batch);
      for (const p of await withStock(db, page)) {
        const price = (p.priceCents / 100).toFixed(2);
        if (p.stocks.length === 0) yield { sku: p.sku, name: p.name, price, warehouse: null, quantity: 0 };
        for (const s of p.stocks) yield { sku: p.sku, name: p.name, price, warehouse: s.warehouseCode, quantity: s.qty };
      }
      if (page.length < batch) return;
      after = page[page.length - 1].sku;
    }
  }
  return { name: 'stock', columns: STOCK_CSV_COLUMNS, rows: rows() };
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
    product: {
      sku: product.sku,
      name: product.name,
      priceCents: product.price_cents,
      weightGrams: product.weight_grams,
      categoryId: product.category_id,
      imageUrl: product.image_url,
      options: product.options,
    },
    warehouses: warehouses.map((w) => ({ ...w, qty: w.qty ?? 0, hasRow: w.qty !== null })),
    history,
    nextBefore: ledger.length > CATALOG_PAGE_SIZE ? history.at(-1)!.id : null,
  };
}
