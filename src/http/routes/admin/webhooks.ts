import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AdminResponses, OperatorWebhook, OperatorWebhookPage } from '../../../schemas/admin-responses.ts';
import { adminKeyActor } from '../../../domain/audit.ts';
import { IdParams, IfMatchHeaders } from '../../../schemas/admin.ts';
import { ifMatchCheck, withEtag } from '../../etag.ts';
import { AdminWebhookPatch, AdminWebhookQuery } from '../../../schemas/webhooks.ts';
import { listWebhooksForOperator, setWebhookStatus, webhookForOperator } from '../../../services/webhooks.service.ts';
import type { Store } from '../../../store/db.ts';

/** The operator's view of every merchant's webhook endpoints (SPEC §13): list, one (with its ETag), disable, re-enable (audited; If-Match). */
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
        headers: IfMatchHeaders,
        body: AdminWebhookPatch,
        response: AdminResponses(OperatorWebhook),
      },
    },
    async (request, reply) => {
      const { version, endpoint } = await setWebhookStatus(
        store.db,
        adminKeyActor(adminApiKey, request.id),
        request.params.id,
        request.body,
        Date.now(),
        ifMatchCheck(request.headers['if-match']),
      );
      return withEtag(reply, version, endpoint);
    },
  );
  app.get(
    '/webhooks/:id',
    {
      schema: {
        summary: 'One endpoint, with its ETag (for If-Match on its PATCH)',
        tags: ['Webhooks'],
        params: IdParams,
        response: AdminResponses(OperatorWebhook),
      },
    },
    async (request, reply) => {
      const { version, endpoint } = await webhookForOperator(store.db, request.params.id);
      return withEtag(reply, version, endpoint);
    },
  );
};
