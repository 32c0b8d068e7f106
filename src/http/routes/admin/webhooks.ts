import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AdminResponses, OperatorWebhook, OperatorWebhookPage } from '../../../schemas/admin-responses.ts';
import { adminKeyActor } from '../../../domain/audit.ts';
import { IdParams } from '../../../schemas/admin.ts';
import { AdminWebhookPatch, AdminWebhookQuery } from '../../../schemas/webhooks.ts';
import { listWebhooksForOperator, setWebhookStatus } from '../../../services/webhooks.service.ts';
import type { Store } from '../../../store/db.ts';

/** The operator's view of every merchant's webhook endpoints (SPEC §13): list, disable, re-enable (audited). */
export const adminWebhookRoutes: FastifyPluginAsyncTypebox<{ store: Store; adminApiKey: string }> = async (app, { store, adminApiKey }) => {
  app.get(
    '/webhooks',
    {
      schema: {
        summary: "Every merchant's webhook endpoints with delivery counts",
        tags: ['Webhooks'],
        querystring: AdminWebhookQuery,
        response: AdminResponses(OperatorWebhookPage),
      },
    },
    async (request) => listWebhooksForOperator(store.db, request.query),
  );
  app.patch(
    '/webhooks/:id',
    {
      schema: {
        summary: 'Disable or re-enable an endpoint',
        tags: ['Webhooks'],
        params: IdParams,
        body: AdminWebhookPatch,
        response: AdminResponses(OperatorWebhook),
      },
    },
    async (request) => setWebhookStatus(store.db, adminKeyActor(adminApiKey, request.id), Number(request.params.id), request.body),
  );
};
