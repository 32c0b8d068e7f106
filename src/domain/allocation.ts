/** One requested order line, in request order. */
export interface LineRequest {
  index: number;
  sku: string;
  quantity: number;
  warehouseCode?: string | null;
}

/** A warehouse's sellable quantity of one SKU. */
export interface StockAvailability {
  warehouseId: number;
  warehouseCode: string;
  countryCode: string;
  enabled: boolean;
  qty: number;
}

export interface Piece {
  lineIndex: number;
  sku: string;
  warehouseId: number;
  warehouseCode: string;
  quantity: number;
}

export interface ShortLine {
  lineIndex: number;
  sku: string;
  requested: number;
  /** What was still available to this line after the lines before it took theirs. */
  available: number;
}

export type Allocation = { ok: true; pieces: Piece[] } | { ok: false; short: ShortLine[] };

export interface AllocationContext {
  destinationCountry: string;
  defaultWarehouse: string;
}

/**
 * SPEC §4.2 ranking for the warehouses a line may draw from: the destination country's
 * warehouses first, then the default warehouse, then more available stock, then code.
 */
export function rankWarehouses(candidates: StockAvailability[], ctx: AllocationContext): StockAvailability[] {
  const rank = (w: StockAvailability) => [w.countryCode === ctx.destinationCountry ? 0 : 1, w.warehouseCode === ctx.defaultWarehouse ? 0 : 1] as const;
  return [...candidates].sort((a, b) => {
    const [ac, ad] = rank(a);
    const [bc, bd] = rank(b);
    return ac - bc || ad - bd || b.qty - a.qty || (a.warehouseCode < b.warehouseCode ? -1 : a.warehouseCode > b.warehouseCode ? 1 : 0);
  });
}

/**
 * Allocates every line, in request order, against what is left after the lines before it (so
 * several lines of one SKU count together). A line that names a warehouse able to cover it is
 * served there whole; otherwise it takes as much as possible from each ranked warehouse in turn,
 * and may be split across warehouses. Either every line is covered or nothing is allocated.
 */
export function allocateLines(lines: LineRequest[], stock: Map<string, StockAvailability[]>, ctx: AllocationContext): Allocation {
  const remaining = new Map<string, StockAvailability[]>();
  for (const [sku, rows] of stock)
    remaining.set(
      sku,
      rows.filter((r) => r.enabled && r.qty > 0).map((r) => ({ ...r })),
    );
  const pieces: Piece[] = [];
  const short: ShortLine[] = [];
  for (const line of lines) {
    const rows = remaining.get(line.sku) ?? [];
    const available = rows.reduce((sum, r) => sum + r.qty, 0);
    if (available < line.quantity) {
      short.push({ lineIndex: line.index, sku: line.sku, requested: line.quantity, available });
      // Later lines of the same SKU see the stock this line could not use.
      continue;
    }
    const named = line.warehouseCode ? rows.find((r) => r.warehouseCode === line.warehouseCode && r.qty >= line.quantity) : undefined;
    const order = named ? [named] : rankWarehouses(rows, ctx);
    let needed = line.quantity;
    for (const w of order) {
      if (needed === 0) break;
      const take = Math.min(needed, w.qty);
      if (take === 0) continue;
      w.qty -= take;
      needed -= take;
      pieces.push({ lineIndex: line.index, sku: line.sku, warehouseId: w.warehouseId, warehouseCode: w.warehouseCode, quantity: take });
    }
  }
  return short.length ? { ok: false, short } : { ok: true, pieces };
}

/** Pieces grouped by warehouse, in the order the warehouses were first used: one split order each. */
export function groupByWarehouse(pieces: Piece[]): { warehouseId: number; warehouseCode: string; pieces: Piece[] }[] {
  const groups = new Map<number, { warehouseId: number; warehouseCode: string; pieces: Piece[] }>();
  for (const p of pieces) {
    let g = groups.get(p.warehouseId);
    if (!g) groups.set(p.warehouseId, (g = { warehouseId: p.warehouseId, warehouseCode: p.warehouseCode, pieces: [] }));
    g.pieces.push(p);
  }
  return [...groups.values()];
}
