import { pipeline, Readable } from 'node:stream';
import { stringify, type Stringifier } from 'csv-stringify';
import type { FastifyReply } from 'fastify';
import { spreadsheetSafe, type CsvExport } from '../domain/csv.ts';

/**
 * Sends an export as a CSV download (RFC 4180: CRLF, quotes where needed; written by csv-stringify),
 * streamed: rows are pulled from the export's keyset reads only as fast as the client takes them,
 * so memory stays bounded whatever the row count. Every text cell goes through `spreadsheetSafe`
 * (formula injection). It starts with a UTF-8 byte order mark (csv-stringify's `bom`), so a
 * spreadsheet reads it as UTF-8. The file is named after the export and the UTC day: `orders-2026-11-25.csv`.
 * A failure after the first bytes can only cut the download short (the status line is gone); the
 * services check filters before the first row, so a bad query is still a 400 page.
 */
export function sendCsv(reply: FastifyReply, file: CsvExport, now: number): FastifyReply {
  const csv = csvStream(file, (error) => reply.log.error({ err: error }, `CSV export ${file.name} stopped`));
  const day = new Date(now).toISOString().slice(0, 10);
  return reply.type('text/csv; charset=utf-8').header('Content-Disposition', `attachment; filename="${file.name}-${day}.csv"`).send(csv);
}

/**
 * The export as a readable stream of CSV text, as `sendCsv` sends it (the byte order mark, CRLF,
 * `spreadsheetSafe` cells), pulling rows only as it is read: also what `stockist ledger export`
 * writes. `onError`: the rows failed part-way (the stream then ends early).
 */
export function csvStream(file: CsvExport, onError: (error: Error) => void): Stringifier {
  const csv = stringify({
    header: true,
    bom: true,
    columns: [...file.columns],
    record_delimiter: 'windows',
    cast: { string: spreadsheetSafe },
  });
  pipeline(Readable.from(file.rows), csv, (error) => {
    if (error) onError(error);
  });
  return csv;
}
