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
