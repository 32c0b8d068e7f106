import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParams } from '../../../schemas/admin.ts';
import { AdminWebhookPatch, AdminWebhookQuery } from '../../../schemas/webhooks.ts';
import { listWebhooksForOperator, setWebhookStatus } from '../../../services/webhooks.service.ts';
import type { Store } from '../../../store/db.ts';

/** The operator's view of every merchant's webhook endpoints (SPEC §13): list, disable, re-enable. */
export const adminWebhookRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get('/webhooks', { schema: { querystring: AdminWebhookQuery } }, async (request) => listWebhooksForOperator(store.db, request.query));
  app.patch('/webhooks/:id', { schema: { params: IdParams, body: AdminWebhookPatch } }, async (request) =>
    setWebhookStatus(store.db, request.params.id, request.body),
  );
};
