import { WEBHOOK_EVENT_TYPES } from '../../../domain/vocabulary.ts';
import { ManagerCsrfForm, ManagerDeliveryParams, ManagerIdParams, WebhookForm } from '../../../schemas/manager.ts';
import { auditWrite } from '../../../services/merchant-users.service.ts';
import {
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  registerWebhook,
  retryDelivery,
  rotateSecret,
  sendTestEvent,
} from '../../../services/webhooks.service.ts';
import type { ManagerPage } from './context.ts';

const WEBHOOKS = '/manager/webhooks';

/** The `data` of a stored response (the services answer in the merchant API's envelope). */
const dataOf = <T>(response: { body: unknown }) => (response.body as { data: T }).data;

/**
 * Page 3, Webhooks: endpoints and their events, secret rotation, the delivery log with response
 * codes, retry, and a test event. The same services as the merchant API's /v1/webhooks.
 */
export const webhooksPage: ManagerPage = {
  nav: [{ href: WEBHOOKS, label: 'Webhooks', permission: 'webhooks:read' }],
  routes: async (app, { config, store, now, page, forms, user, actor, merchant, resolveHost }) => {
    const { db } = store;
    const deps = { db, dialect: store.dialect, keysInFlight: store.keysInFlight, config, resolve: resolveHost };
    const list = async (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], status: number, extra: Record<string, unknown>) => {
      const me = user(request);
      const endpoints = await listWebhooks(merchant(request));
      return page(reply, status, 'webhooks', {
        title: 'Webhooks',
        endpoints: endpoints.list,
        events: WEBHOOK_EVENT_TYPES,
        canWrite: me.role !== 'viewer',
        shown: null,
        error: null,
        ...extra,
      });
    };
    const detail = async (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], rawId: string, shown: string | null) => {
      const me = user(request);
      const scope = merchant(request);
      const deliveries = await listDeliveries(scope, Number(rawId), { pageNumber: 1, pageSize: 50 });
      const endpoint = (await listWebhooks(scope)).list.find((e) => e.id === rawId)!;
      return page(reply, 200, 'webhook', { title: `Webhook ${endpoint.id}`, endpoint, deliveries, canWrite: me.role !== 'viewer', shown });
    };

    app.get('/webhooks', async (request, reply) => list(request, reply, 200, { shown: await forms.take(request, 'webhook-created') }));

    app.post('/webhooks', { schema: { body: WebhookForm } }, async (request, reply) => {
      const events = [request.body.events].flat();
      const created = await registerWebhook(
        deps,
        merchant(request),
        { url: request.body.url, events },
        null,
        request.id,
        now(),
        auditWrite(actor(request), merchant(request), 'webhook.create', now(), { url: request.body.url, events: events.join(' ') }),
      );
      // The signing secret is shown once, on the page the 303 leads to.
      await forms.flash(request, 'webhook-created', dataOf<{ id: string; secret: string }>(created));
      return reply.redirect(WEBHOOKS, 303);
    });

    app.get('/webhooks/:id', { schema: { params: ManagerIdParams } }, async (request, reply) => {
      const rotated = await forms.take<{ id: string; secret: string }>(request, 'webhook-secret');
      return detail(request, reply, request.params.id, rotated?.id === request.params.id ? rotated.secret : null);
    });

    app.post('/webhooks/:id/rotate-secret', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      const rotated = await rotateSecret(
        deps,
        merchant(request),
        Number(request.params.id),
        null,
        request.id,
        now(),
        auditWrite(actor(request), merchant(request), 'webhook.rotate_secret', now()),
      );
      await forms.flash(request, 'webhook-secret', { id: request.params.id, secret: dataOf<{ secret: string }>(rotated).secret });
      return reply.redirect(`${WEBHOOKS}/${request.params.id}`, 303);
    });

    app.post('/webhooks/:id/test', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      await sendTestEvent(merchant(request), Number(request.params.id), auditWrite(actor(request), merchant(request), 'webhook.send_test', now()), now());
      return reply.redirect(`${WEBHOOKS}/${request.params.id}`, 303);
    });

    app.post('/webhooks/:id/delete', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      await deleteWebhook(merchant(request), Number(request.params.id), auditWrite(actor(request), merchant(request), 'webhook.delete', now()));
      return reply.redirect(WEBHOOKS, 303);
    });

    app.post('/webhooks/:id/deliveries/:deliveryId/retry', { schema: { params: ManagerDeliveryParams, body: ManagerCsrfForm } }, async (request, reply) => {
      const { id, deliveryId } = request.params;
      await retryDelivery(
        deps,
        merchant(request),
        Number(id),
        Number(deliveryId),
        null,
        request.id,
        now(),
        auditWrite(actor(request), merchant(request), 'webhook.retry', now(), { deliveryId }),
      );
      return reply.redirect(`${WEBHOOKS}/${id}`, 303);
    });
  },
};
