/** Numbered pages (SPEC §1): page numbers start at 1; `offset` is the first row the page shows. */
export interface PageWindow {
  pageNumber: number;
  pageSize: number;
  offset: number;
}

export const pageOffset = (pageNumber: number, pageSize: number) => (pageNumber - 1) * pageSize;

/** The page a query asks for, with the list's default size when it names none. */
export function pageWindow(q: { pageNumber?: number; pageSize?: number }, defaultSize: number): PageWindow {
  const pageNumber = q.pageNumber ?? 1;
  const pageSize = q.pageSize ?? defaultSize;
  return { pageNumber, pageSize, offset: pageOffset(pageNumber, pageSize) };
}

/**
 * `total` of a stock time window counts the window's SKUs when it holds at most this many
 * changes (ledger rows), and reports exactly this number otherwise: "10,000 or more changes — walk
 * until a short or empty page". Counting reads at most this many rows, however long the window
 * (SPEC §11; docs/decisions.md, "Stable stock pages"). A SKU-list query (at most 30 SKUs) is always
 * counted exactly.
 */
export const STOCK_TOTAL_CAP = 10_000;
