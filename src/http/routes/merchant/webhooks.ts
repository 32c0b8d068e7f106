import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../../config.ts';
import type { HostResolver } from '../../../domain/webhook-url.ts';
import { DeliveryParams, DeliveryQuery, WebhookBody, WebhookIdParams } from '../../../schemas/webhooks.ts';
import { deleteWebhook, listDeliveries, listWebhooks, registerWebhook, retryDelivery, rotateSecret } from '../../../services/webhooks.service.ts';
import type { Store } from '../../../store/db.ts';
import { forMerchant } from '../../../store/tenancy.ts';

/** SPEC §13: a merchant's webhook endpoints and their delivery log (scope orders:read, from MERCHANT_ROUTES). */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config; resolve?: HostResolver }> = async (app, { store, config, resolve }) => {
  const { db } = store;
  const merchantOf = (request: { principal: { merchantId: number } | null }) => request.principal!.merchantId;

  app.post('/v1/webhooks', { schema: { body: WebhookBody } }, async (request) => registerWebhook({ db, config, resolve }, merchantOf(request), request.body));
  app.get('/v1/webhooks', async (request) => listWebhooks(forMerchant(db, merchantOf(request))));
  app.delete('/v1/webhooks/:id', { schema: { params: WebhookIdParams } }, async (request) => deleteWebhook(db, merchantOf(request), request.params.id));
  app.post('/v1/webhooks/:id/rotate-secret', { schema: { params: WebhookIdParams } }, async (request) => rotateSecret(db, merchantOf(request), request.params.id));
  app.get('/v1/webhooks/:id/deliveries', { schema: { params: WebhookIdParams, querystring: DeliveryQuery } }, async (request) =>
    listDeliveries(forMerchant(db, merchantOf(request)), request.params.id, request.query),
  );
  app.post('/v1/webhooks/:id/deliveries/:deliveryId/retry', { schema: { params: DeliveryParams } }, async (request) =>
    retryDelivery(db, merchantOf(request), request.params.id, request.params.deliveryId),
  );
};
