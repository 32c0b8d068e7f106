/**
 * The order query's keyset cursor (SPEC §4.6). It names the last row a page returned by its sort
 * key, plus the query it belongs to, so a walk can continue from it however rows were inserted or
 * moved since: `oc1_` + base64url(JSON). Opaque to clients; anything else is refused.
 */
export interface OrderFilters {
  /** Parent or split ids, sorted, or null. */
  ids: number[] | null;
  createStart: number | null;
  createEnd: number | null;
  updateStart: number | null;
  updateEnd: number | null;
  /** The operator's merchant filter (null: every merchant, or a merchant's own query). */
  merchantId: number | null;
}

/** `created`: newest first by (createdAt, id) descending; `updated`: (updatedAt, id) ascending. */
export type OrderSortMode = 'created' | 'updated';

export interface OrderCursor {
  mode: OrderSortMode;
  /** The sort key of the last row returned: [time in ms, order id]. */
  after: [number, number];
  filters: OrderFilters;
  pageSize: number;
  /** The page number the cursor leads to (reported as `pageNumber`). */
  page: number;
}

/**
 * `total` counts the window's rows up to this many (SPEC §4.6: `total` must not cost more than
 * the page). A larger window reports exactly this number, meaning "at least"; its end is where
 * `nextCursor` is null. See docs/decisions.md, "Order paging".
 */
export const ORDER_TOTAL_CAP = 10_000;

const PREFIX = 'oc1_';
const FILTER_KEYS = ['ids', 'createStart', 'createEnd', 'updateStart', 'updateEnd', 'merchantId'] as const;

export const sortModeOf = (f: OrderFilters): OrderSortMode => (f.updateStart !== null || f.updateEnd !== null ? 'updated' : 'created');

export function encodeOrderCursor(c: OrderCursor): string {
  const body = { m: c.mode === 'created' ? 'c' : 'u', a: c.after, f: FILTER_KEYS.map((k) => c.filters[k]), s: c.pageSize, p: c.page };
  return PREFIX + Buffer.from(JSON.stringify(body)).toString('base64url');
}

const isTime = (v: unknown): v is number | null => v === null || Number.isSafeInteger(v);
const isId = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;

/** The cursor, or null when the text is not one this API issued (or was altered into nonsense). */
export function decodeOrderCursor(text: string): OrderCursor | null {
  if (!text.startsWith(PREFIX) || text.length > 4096) return null;
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(text.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const b = body as { m?: unknown; a?: unknown; f?: unknown; s?: unknown; p?: unknown } | null;
  if (typeof b !== 'object' || b === null || (b.m !== 'c' && b.m !== 'u')) return null;
  if (!Array.isArray(b.a) || b.a.length !== 2 || !Number.isSafeInteger(b.a[0]) || !isId(b.a[1])) return null;
  if (!Array.isArray(b.f) || b.f.length !== FILTER_KEYS.length) return null;
  const [ids, createStart, createEnd, updateStart, updateEnd, merchantId] = b.f as unknown[];
  if (ids !== null && (!Array.isArray(ids) || ids.length === 0 || ids.length > 1000 || !ids.every(isId))) return null;
  if (![createStart, createEnd, updateStart, updateEnd].every(isTime) || !(merchantId === null || isId(merchantId))) return null;
  if (!Number.isSafeInteger(b.s) || (b.s as number) < 1 || !Number.isSafeInteger(b.p) || (b.p as number) < 2) return null;
  const filters = { ids: ids as number[] | null, createStart, createEnd, updateStart, updateEnd, merchantId } as OrderFilters;
  const mode = b.m === 'c' ? 'created' : 'updated';
  if (sortModeOf(filters) !== mode) return null;
  return { mode, after: [b.a[0], b.a[1]], filters, pageSize: b.s as number, page: b.p as number };
}

/** Whether two filter sets select the same rows (a cursor continues only its own query). */
export function sameFilters(a: OrderFilters, b: OrderFilters): boolean {
  return FILTER_KEYS.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

/** True when the request named no filter at all (a cursor alone carries its query's filters). */
export const noFilters = (f: OrderFilters) => FILTER_KEYS.every((k) => f[k] === null);
