/** Where a page of a list stands: its first and last row (1-based) and how many match, counted up to a cap. */
export interface ListCounts {
  first: number;
  last: number;
  about: number;
  /** The count stopped at its cap: there may be more. */
  capped: boolean;
}

const number = (n: number) => n.toLocaleString('en-US');

/** "26–50 of 1,234", or "26–50 of 10,000 or more" when the count stopped at its cap; "" for an empty page. */
export function countsText(c: ListCounts): string {
  if (c.last === 0) return '';
  return `${number(c.first)}–${number(c.last)} of ${number(c.about)}${c.capped ? ' or more' : ''}`;
}
