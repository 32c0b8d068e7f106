import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../../config.ts';
import type { HostResolver } from '../../../domain/webhook-url.ts';
import { MerchantResponses } from '../../../schemas/common.ts';
import {
  DeliveryParams,
  DeliveryQuery,
  WebhookBody,
  WebhookCreated,
  WebhookDeleted,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookIdParams,
  WebhookList,
  WebhookSecret,
} from '../../../schemas/webhooks.ts';
import { deleteWebhook, listDeliveries, listWebhooks, registerWebhook, retryDelivery, rotateSecret } from '../../../services/webhooks.service.ts';
import type { Store } from '../../../store/db.ts';
import { forMerchant } from '../../../store/tenancy.ts';

const WEBHOOKS = ['Webhooks'];

/** SPEC §13: a merchant's webhook endpoints and their delivery log (scope orders:read, from MERCHANT_ROUTES). */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config; resolve?: HostResolver }> = async (app, { store, config, resolve }) => {
  const { db } = store;
  const merchantOf = (request: { principal: { merchantId: number } | null }) => request.principal!.merchantId;

  app.post(
    '/v1/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        summary: 'Register a webhook endpoint',
        description: 'Events are signed per Standard Webhooks with the returned `secret` (`whsec_…`), shown only here.',
        tags: WEBHOOKS,
        body: WebhookBody,
        response: MerchantResponses(WebhookCreated),
      },
    },
    async (request) => registerWebhook({ db, config, resolve }, merchantOf(request), request.body),
  );
  app.get(
    '/v1/webhooks',
    { schema: { operationId: 'listWebhooks', summary: 'List webhook endpoints (without secrets)', tags: WEBHOOKS, response: MerchantResponses(WebhookList) } },
    async (request) => listWebhooks(forMerchant(db, merchantOf(request))),
  );
  app.delete(
    '/v1/webhooks/:id',
    { schema: { operationId: 'deleteWebhook', summary: 'Delete a webhook endpoint', tags: WEBHOOKS, params: WebhookIdParams, response: MerchantResponses(WebhookDeleted) } },
    async (request) => deleteWebhook(db, merchantOf(request), request.params.id),
  );
  app.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: "Rotate an endpoint's signing secret",
        description: 'The previous secret keeps signing beside the new one until `previousSecretExpiresAt`.',
        tags: WEBHOOKS,
        params: WebhookIdParams,
        response: MerchantResponses(WebhookSecret),
      },
    },
    async (request) => rotateSecret(db, merchantOf(request), request.params.id),
  );
  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "An endpoint's delivery log",
        tags: WEBHOOKS,
        params: WebhookIdParams,
        querystring: DeliveryQuery,
        response: MerchantResponses(WebhookDeliveryPage),
      },
    },
    async (request) => listDeliveries(forMerchant(db, merchantOf(request)), request.params.id, request.query),
  );
  app.post(
    '/v1/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Deliver an event again now (same webhook-id)',
        tags: WEBHOOKS,
        params: DeliveryParams,
        response: MerchantResponses(WebhookDelivery),
      },
    },
    async (request) => retryDelivery(db, merchantOf(request), request.params.id, request.params.deliveryId),
  );
};
