import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuditQuery } from '../../../schemas/audit.ts';
import { auditPage } from '../../../services/audit.service.ts';
import type { Store } from '../../../store/db.ts';

/** SPEC §14: the audit log, newest first, walked by `cursor` (`nextCursor` of the previous page). */
export const adminAuditRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get('/audit', { schema: { querystring: AuditQuery } }, async (request) =>
    auditPage(store.db, request.query.cursor ?? null, Number(request.query.limit ?? 50)),
  );
};
