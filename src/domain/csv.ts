/**
 * A CSV cell a spreadsheet opens safely (OWASP, "CSV Injection"): text starting with =, +, -, @,
 * tab or carriage return — or the full-width ＝ ＋ － ＠ some spreadsheets read as the same — would
 * be run as a formula, so it gets a leading ' and is shown as typed. A plain number ("-12.50") is
 * left as it is, so amounts stay numbers.
 */
export function spreadsheetSafe(text: string): string {
  return /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(text) && !/^-?\d+(\.\d+)?$/.test(text) ? `'${text}` : text;
}

/**
 * The UTF-8 byte order mark every CSV download starts with: without it Excel reads a file as the
 * system's legacy code page and shows "Café" as "CafÃ©"; with it every spreadsheet reads UTF-8,
 * and CSV readers (ours included: csv-parse `bom: true`) skip it.
 */
export const UTF8_BOM = '\uFEFF';

/** A cell of an export: text, a number, or empty. */
export type CsvCell = string | number | null;

/**
 * A list as a CSV file: its header row and its rows, read from the store in keyset batches while
 * the file is written (services build one, web/csv.ts streams it), so memory stays bounded however
 * many rows match.
 */
export interface CsvExport {
  /** The file's name without the date and extension: `orders`, `audit-log`. */
  name: string;
  columns: readonly string[];
  rows: AsyncIterable<Record<string, CsvCell>>;
}
