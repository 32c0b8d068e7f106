import { pipeline, Readable } from 'node:stream';
import { stringify, type Stringifier } from 'csv-stringify';
import { spreadsheetSafe, type CsvExport } from '../domain/csv.ts';

/**
 * An export as a readable stream of CSV text (RFC 4180: CRLF, quotes where needed; written by
 * csv-stringify), pulling rows only as it is read, so memory stays bounded whatever the row count.
 * It starts with a UTF-8 byte order mark (csv-stringify's `bom`), so a spreadsheet reads it as
 * UTF-8, and every text cell goes through `spreadsheetSafe` (formula injection). What the front
 * ends' downloads send (web/csv.ts), `stockist ledger export` writes and the statement CSV is.
 * `onError`: the rows failed part-way (the stream then ends early).
 */
export function csvStream(file: Pick<CsvExport, 'columns' | 'rows'>, onError: (error: Error) => void): Stringifier {
  const csv = stringify({
    header: true,
    bom: true,
    columns: [...file.columns],
    record_delimiter: 'windows',
    // A line break of either kind inside a cell is quoted: csv-stringify quotes only the record
    // delimiter (CRLF), and a bare LF left unquoted starts a new row in a spreadsheet.
    quoted_match: /[\r\n]/,
    cast: { string: spreadsheetSafe },
  });
  pipeline(Readable.from(file.rows), csv, (error) => {
    if (error) onError(error);
  });
  return csv;
}
