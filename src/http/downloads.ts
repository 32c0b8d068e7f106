import type { FastifyReply } from 'fastify';
import type { evidenceDownload } from '../services/claim-files.service.ts';

/** The download of an evidence file: an attachment, typed as stored, never rendered in the browser. */
export function sendEvidence(reply: FastifyReply, file: Awaited<ReturnType<typeof evidenceDownload>>) {
  return reply
    .header('content-type', file.contentType)
    .header('content-length', String(file.size))
    .header('content-disposition', `attachment; filename="${file.fileName}"`)
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('cache-control', 'private, no-store')
    .send(file.stream);
}
