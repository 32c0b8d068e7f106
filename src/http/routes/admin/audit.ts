import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AdminResponses, AuditPage } from '../../../schemas/admin-responses.ts';
import { AuditQuery } from '../../../schemas/audit.ts';
import { auditPage } from '../../../services/audit.service.ts';
import type { Store } from '../../../store/db.ts';

/** SPEC §14: the audit log, newest first, walked by `cursor` (`nextCursor` of the previous page). */
export const adminAuditRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get(
    '/audit',
    {
      schema: {
        summary: 'The audit log, newest first (keyset paging by cursor)',
        tags: ['Audit'],
        querystring: AuditQuery,
        response: AdminResponses(AuditPage),
      },
    },
    async (request) => auditPage(store.db, request.query.cursor ?? null, Number(request.query.limit ?? 50)),
  );
};
