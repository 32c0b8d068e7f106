import { MAX_STOCK_QTY } from './money.ts';

const EXAMPLE = 'a whole number such as +20 or -5';

/**
 * The change typed into the console's adjust form (issue 29, item 11): a whole number with an
 * optional sign, `+20`, `-5` or `20`; anything else (`+`, `2.5`, `abc`), 0, or more than
 * MAX_STOCK_QTY either way is refused with what to type instead.
 */
export function parseStockChange(text: string): { delta: number } | { problem: string } {
  const typed = text.trim();
  if (typed === '') return { problem: `the change is missing: give ${EXAMPLE}` };
  const m = /^([+-]?)(\d{1,10})$/.exec(typed);
  if (!m) return { problem: `“${typed}” is not a change of stock: give ${EXAMPLE}` };
  const size = Number(m[2]);
  if (size === 0) return { problem: `a change of 0 changes nothing: give ${EXAMPLE}` };
  if (size > MAX_STOCK_QTY) return { problem: `the change may be at most ${MAX_STOCK_QTY} either way` };
  return { delta: m[1] === '-' ? -size : size };
}
