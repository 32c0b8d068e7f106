import type { FastifyReply } from 'fastify';
import type { CsvExport } from '../domain/csv.ts';
import { csvStream } from '../present/csv.presenter.ts';

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
