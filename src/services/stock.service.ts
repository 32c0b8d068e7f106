import { conflictState, validationFailed, type FieldError } from '../domain/errors.ts';
import { MAX_STOCK_QTY } from '../domain/money.ts';
import type { StockAdjustRow, StockSetRow } from '../schemas/admin.ts';
import { boundedSummaries, type Actor } from '../domain/audit.ts';
import { insertAudit } from '../store/audit.repository.ts';
import type { Db, Handle, Trx } from '../store/db.ts';
import { productsBySku } from '../store/products.repository.ts';
import { addQty, currentQty, setQty, type StockKey } from '../store/stocks.repository.ts';
import { warehousesByCode } from '../store/warehouses.repository.ts';

const at = (prefix: string, index: number, name: string) => `${prefix}[${index}].${name}`;

export interface StockResult {
  sku: string;
  warehouseCode: string;
  qty: number;
  delta: number;
}

/** Resolves sku/warehouse codes to row keys, reporting every unknown one with its field. */
async function resolveRows(db: Handle, rows: { sku: string; warehouseCode: string }[], prefix: string): Promise<StockKey[]> {
  const [products, warehouses] = await Promise.all([
    productsBySku(
      db,
      rows.map((r) => r.sku),
    ),
    warehousesByCode(
      db,
      rows.map((r) => r.warehouseCode),
    ),
  ]);
  const errors: FieldError[] = [];
  rows.forEach((r, i) => {
    if (!products.has(r.sku)) errors.push({ field: at(prefix, i, 'sku'), message: `unknown SKU ${r.sku}` });
    if (!warehouses.has(r.warehouseCode)) errors.push({ field: at(prefix, i, 'warehouseCode'), message: `unknown warehouse ${r.warehouseCode}` });
  });
  if (errors.length) throw validationFailed(errors);
  return rows.map((r) => ({ productId: products.get(r.sku)!.id, warehouseId: warehouses.get(r.warehouseCode)!.id }));
}

/** Sets absolute quantities (operator restock or count); each change is a ledger row. */
export async function setStocks(db: Trx, rows: StockSetRow[], prefix: string, now: number): Promise<StockResult[]> {
  const seen = new Map<string, number>();
  const duplicates: FieldError[] = [];
  rows.forEach((r, i) => {
    const key = `${r.sku}\u0000${r.warehouseCode}`;
    if (seen.has(key))
      duplicates.push({ field: at(prefix, i, 'sku'), message: `${r.sku} in ${r.warehouseCode} is already set by ${at(prefix, seen.get(key)!, 'sku')}` });
    else seen.set(key, i);
  });
  if (duplicates.length) throw validationFailed(duplicates);
  const keys = await resolveRows(db, rows, prefix);
  const out: StockResult[] = [];
  for (let i = 0; i < rows.length; i++) {
    const change = await setQty(db, keys[i], rows[i].qty, now);
    out.push({ sku: rows[i].sku, warehouseCode: rows[i].warehouseCode, qty: change.qtyAfter, delta: change.delta });
  }
  return out;
}

/**
 * Applies relative changes in order; any row that would go below zero, or above MAX_STOCK_QTY
 * (SPEC §4.4), refuses the whole request (409/40903, like a set that the state does not allow).
 * Rows are applied one by one and the refusal comes at the end, so it takes a transaction: the
 * refusal rolls back the rows already applied.
 */
async function adjustStocks(db: Trx, rows: StockAdjustRow[], prefix: string, now: number, reason: string | null): Promise<StockResult[]> {
  const keys = await resolveRows(db, rows, prefix);
  const out: StockResult[] = [];
  const refused: FieldError[] = [];
  for (let i = 0; i < rows.length; i++) {
    const { delta } = rows[i];
    const change = await addQty(db, keys[i], delta, { kind: delta > 0 ? 'restock' : 'adjustment', reason }, now, MAX_STOCK_QTY);
    if (!change) {
      const qty = await currentQty(db, keys[i]);
      const message = delta > 0 ? `would take stock above ${MAX_STOCK_QTY} (${qty} now)` : `would take stock below zero (${qty} available)`;
      refused.push({ field: at(prefix, i, 'delta'), message, sku: rows[i].sku, warehouseCode: rows[i].warehouseCode, qty, delta });
      continue;
    }
    out.push({ sku: rows[i].sku, warehouseCode: rows[i].warehouseCode, qty: change.qtyAfter, delta });
  }
  if (refused.length) {
    const why = refused.every((r) => (r.delta as number) > 0)
      ? `above ${MAX_STOCK_QTY}`
      : refused.every((r) => (r.delta as number) < 0)
        ? 'below zero'
        : `below zero or above ${MAX_STOCK_QTY}`;
    throw conflictState(`stock adjustment refused: it would take stock ${why}`, refused);
  }
  return out;
}

/** One audit row for a whole stock request: each SKU@warehouse with its quantity before and after (bounded). */
function stockAudit(action: 'stock.set' | 'stock.adjust', results: StockResult[]) {
  return {
    action,
    target: 'stock',
    ...boundedSummaries(results.map((r) => ({ key: `${r.sku}@${r.warehouseCode}`, before: r.qty - r.delta, after: r.qty }))),
  };
}

/** PUT /admin/v1/stocks (and the console): absolute quantities, audited in the same transaction. */
export async function setStockLevels(db: Db, actor: Actor, rows: StockSetRow[], now: number): Promise<StockResult[]> {
  return db.transaction().execute(async (trx) => {
    const results = await setStocks(trx, rows, 'items', now);
    await insertAudit(trx, actor, stockAudit('stock.set', results), now);
    return results;
  });
}

/**
 * POST /admin/v1/stocks/adjust (and the console): relative changes, all or nothing, audited in the
 * same transaction. The console requires a `reason`, kept in the audit row (who changed it and
 * why) and on each ledger row (the stock history shows why).
 */
export async function adjustStockLevels(db: Db, actor: Actor, rows: StockAdjustRow[], now: number, reason: string | null = null): Promise<StockResult[]> {
  return db.transaction().execute(async (trx) => {
    const results = await adjustStocks(trx, rows, 'items', now, reason);
    const entry = stockAudit('stock.adjust', results);
    await insertAudit(trx, actor, reason === null ? entry : { ...entry, after: { ...entry.after, reason } }, now);
    return results;
  });
}
