import { fieldError, validationFailed } from '../domain/errors.ts';
import { canonicalSku } from '../domain/text.ts';
import { timeWindow } from '../domain/time.ts';
import type { StockPage, StockQuery, StockRecord } from '../schemas/stock.ts';
import type { Handle, Store } from '../store/db.ts';
import { productsBySku } from '../store/products.repository.ts';
import { changedProductsPage, stockOfSkus } from '../store/stocks.repository.ts';
import { warehousesByCode } from '../store/warehouses.repository.ts';
import { STOCK_TOTAL_CAP, pageOffset, pageWindow } from '../domain/paging.ts';

const MAX_STOCK_SKUS = 30;
const DEFAULT_PAGE_SIZE = 30;

/** `"A,,B,A"` → `["A","B"]`: empty entries and repeats dropped, first occurrence order kept; NFC like every SKU. */
export function parseSkuList(text: string | undefined): string[] {
  if (text === undefined) return [];
  return [
    ...new Set(
      text
        .split(',')
        .map((s) => canonicalSku(s.trim()))
        .filter((s) => s !== ''),
    ),
  ];
}

/** SPEC §6.1: by SKU list, by change window, or both. */
export async function queryStocks(store: Store, q: StockQuery): Promise<StockPage> {
  const { db } = store;
  const skus = parseSkuList(q.skus);
  if (skus.length > MAX_STOCK_SKUS)
    throw fieldError('skus', `at most ${MAX_STOCK_SKUS} distinct SKUs per request (got ${skus.length})`, { limit: MAX_STOCK_SKUS });
  const { start, end } = timeWindow(['dateStartTime', q.dateStartTime], ['dateEndTime', q.dateEndTime]);
  const byTime = start !== null || end !== null;
  if (skus.length === 0 && !byTime) {
    throw validationFailed([{ field: 'skus', message: 'give skus, dateStartTime or dateEndTime' }], 'give at least one of skus, dateStartTime, dateEndTime');
  }
  if (byTime && skus.length === 0 && q.pageNumber === undefined)
    throw fieldError('pageNumber', 'is required (and greater than 0) when querying by update time');
  const { pageNumber, pageSize, offset } = pageWindow(q, DEFAULT_PAGE_SIZE);

  let warehouseId: number | null = null;
  if (q.warehouseCode !== undefined && q.warehouseCode.trim() !== '') {
    const w = (await warehousesByCode(db, [q.warehouseCode.trim()])).get(q.warehouseCode.trim());
    // An unknown warehouse holds nothing: an empty result, like an unknown SKU.
    if (!w) return { total: 0, pageNumber, pageSize, list: [] };
    warehouseId = w.id;
  }

  if (!byTime) return stockBySkuList(db, skus, warehouseId, pageNumber, pageSize);

  const productIds = skus.length > 0 ? [...(await productsBySku(db, skus)).values()].map((p) => p.id) : null;
  const { rows, total } = await changedProductsPage(db, store.dialect, {
    start,
    end,
    warehouseId,
    productIds,
    offset,
    limit: pageSize,
    totalCap: STOCK_TOTAL_CAP,
  });
  return { total, pageNumber, pageSize, list: rows.map((p) => ({ sku: p.sku, warehouseStockList: p.stock })) };
}

/** The hot path (SPEC §6.1 by SKUs): one query, records in request order, unknown SKUs absent. */
async function stockBySkuList(db: Handle, skus: string[], warehouseId: number | null, pageNumber: number, pageSize: number): Promise<StockPage> {
  const rows = await stockOfSkus(db, skus, warehouseId);
  const bySku = new Map<string, StockRecord['warehouseStockList']>();
  for (const r of rows) {
    let list = bySku.get(r.sku);
    if (!list) bySku.set(r.sku, (list = []));
    if (r.qty !== null) list.push({ qty: r.qty, warehouseCode: r.warehouseCode!, countryCode: r.countryCode! });
  }
  const known = skus.filter((s) => bySku.has(s));
  const list = known.slice(pageOffset(pageNumber, pageSize), pageOffset(pageNumber + 1, pageSize)).map((sku) => ({ sku, warehouseStockList: bySku.get(sku)! }));
  return { total: known.length, pageNumber, pageSize, list };
}
