import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sendStored } from '../../envelope.ts';
import type { Config } from '../../../config.ts';
import type { HostResolver } from '../../../domain/webhook-url.ts';
import { MerchantResponses } from '../../../schemas/common.ts';
import { IdempotencyHeaders } from '../../../schemas/orders.ts';
import {
  DeliveryParams,
  DeliveryQuery,
  WebhookBody,
  WebhookCreated,
  WebhookDeleted,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookIdParams,
  WebhookList,
  WebhookSecret,
} from '../../../schemas/webhooks.ts';
import {
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  registerWebhook,
  replaceWebhook,
  retryDelivery,
  rotateSecret,
} from '../../../services/webhooks.service.ts';
import type { Db, Store } from '../../../store/db.ts';
import type { MerchantScope } from '../../../store/tenancy.ts';

const WEBHOOKS = ['Webhooks'];

/** SPEC §13: a merchant's webhook endpoints and their delivery log (scope orders:read, from MERCHANT_ROUTES). */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config; resolve?: HostResolver }> = async (app, { store, config, resolve }) => {
  const { db } = store;
  const deps = { db, dialect: store.dialect, keysInFlight: store.keysInFlight, config, resolve };
  const idempotencyKey = (request: { headers: { 'idempotency-key'?: string } }) => request.headers['idempotency-key'] ?? null;
  const REPLAYS = 'Re-sending the same request with the same `Idempotency-Key` replays the first answer (`Idempotent-Replayed: true`).';
  const merchantOf = (request: { merchant: MerchantScope<Db> | null }) => request.merchant!;

  app.post(
    '/v1/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        summary: 'Register a webhook endpoint',
        description: `Events are signed per Standard Webhooks with the returned \`secret\` (\`whsec_…\`), shown only here. ${REPLAYS}`,
        tags: WEBHOOKS,
        body: WebhookBody,
        headers: IdempotencyHeaders,
        // The handler sends a pre-built (replayable) envelope, so this describes the envelope.
        response: MerchantResponses(WebhookCreated),
      },
      config: { envelope: false },
    },
    async (request, reply) => sendStored(reply, await registerWebhook(deps, merchantOf(request), request.body, idempotencyKey(request), request.id)),
  );
  app.get(
    '/v1/webhooks',
    { schema: { operationId: 'listWebhooks', summary: 'List webhook endpoints (without secrets)', tags: WEBHOOKS, response: MerchantResponses(WebhookList) } },
    async (request) => listWebhooks(merchantOf(request)),
  );
  app.put(
    '/v1/webhooks/:id',
    {
      schema: {
        operationId: 'replaceWebhook',
        summary: "Replace an endpoint's subscription",
        description:
          'Replaces `url`, `events` and `skus` (the secret stays). For stock.changed the new SKU list applies to every change not yet delivered; ' +
          '`cursor` moves the endpoint in the change feed, otherwise it continues where it stands. ' +
          'Re-sending the same request with the same `Idempotency-Key` replays the first answer (`Idempotent-Replayed: true`).',
        tags: WEBHOOKS,
        params: WebhookIdParams,
        body: WebhookBody,
        headers: IdempotencyHeaders,
        // The handler sends a pre-built (replayable) envelope, so this describes the envelope.
        response: MerchantResponses(WebhookEndpoint),
      },
      config: { envelope: false },
    },
    async (request, reply) =>
      sendStored(reply, await replaceWebhook(deps, merchantOf(request), request.params.id, request.body, idempotencyKey(request), request.id)),
  );
  app.delete(
    '/v1/webhooks/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint',
        tags: WEBHOOKS,
        params: WebhookIdParams,
        response: MerchantResponses(WebhookDeleted),
      },
    },
    async (request) => deleteWebhook(merchantOf(request), request.params.id),
  );
  app.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: "Rotate an endpoint's signing secret",
        description: `The previous secret keeps signing beside the new one until \`previousSecretExpiresAt\`. ${REPLAYS}`,
        tags: WEBHOOKS,
        params: WebhookIdParams,
        headers: IdempotencyHeaders,
        response: MerchantResponses(WebhookSecret),
      },
      config: { envelope: false },
    },
    async (request, reply) => sendStored(reply, await rotateSecret(deps, merchantOf(request), request.params.id, idempotencyKey(request), request.id)),
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
    async (request) => listDeliveries(merchantOf(request), request.params.id, request.query),
  );
  app.post(
    '/v1/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Deliver an event again now (same webhook-id)',
        description: REPLAYS,
        tags: WEBHOOKS,
        params: DeliveryParams,
        headers: IdempotencyHeaders,
        response: MerchantResponses(WebhookDelivery),
      },
      config: { envelope: false },
    },
    async (request, reply) =>
      sendStored(reply, await retryDelivery(deps, merchantOf(request), request.params.id, request.params.deliveryId, idempotencyKey(request), request.id)),
  );
};
