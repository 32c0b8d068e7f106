import {
  ActionForm,
  ConsoleDeliveryParams,
  ConsoleIdParams,
  DeliveryLogQuery,
  WebhookListQuery,
  WebhookStatusForm,
} from '../../../schemas/console-operations.ts';
import { lookupId } from '../../../domain/ids.ts';
import { endpointLogForOperator, retryDeliveryForOperator } from '../../../services/webhook-log.service.ts';
import { listWebhooksForOperator, setWebhookStatus } from '../../../services/webhooks.service.ts';
import { merchantNamesById } from '../../../services/merchants.service.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentWebhook, presentWebhooks } from '../present-admin.ts';
import type { ConsolePage } from './context.ts';

const WEBHOOKS = `${CONSOLE_PREFIX}/webhooks`;
const ENDPOINTS_PER_PAGE = 50;
const DELIVERIES_PER_PAGE = 50;

/** Webhooks (SPEC §13–14): every merchant's endpoints, each one's delivery log, retry, disable and enable. */
export const webhooksPage: ConsolePage = {
  nav: [{ href: WEBHOOKS, label: 'Webhooks', permission: 'webhooks:manage' }],
  routes: async (app, { store, now, page, actor, forms }) => {
    const { db } = store;

    app.get('/webhooks', { schema: { querystring: WebhookListQuery } }, async (request, reply) => {
      const { merchant, status, page: pageText } = request.query;
      const endpoints = await listWebhooksForOperator(db, {
        merchantId: merchant ? lookupId(merchant) : undefined,
        status: status === 'active' || status === 'disabled' ? status : undefined,
        pageNumber: Number(pageText ?? 1),
        pageSize: ENDPOINTS_PER_PAGE,
      });
      const names = await merchantNamesById(
        db,
        endpoints.list.map((w) => Number(w.merchantId)),
      );
      const list = endpoints.list.map((w) => ({ ...w, merchantName: names.get(Number(w.merchantId)) ?? '' }));
      return page(reply, 200, 'webhooks', presentWebhooks({ ...endpoints, list }, { merchant: merchant ?? '', status: status ?? '' }));
    });

    app.get('/webhooks/:id', { schema: { params: ConsoleIdParams, querystring: DeliveryLogQuery } }, async (request, reply) => {
      const status = request.query.status || null;
      const log = await endpointLogForOperator(db, request.params.id, status, Number(request.query.page ?? 1), DELIVERIES_PER_PAGE);
      const names = await merchantNamesById(db, [Number(log.endpoint.merchantId)]);
      return page(reply, 200, 'webhook', presentWebhook(log, names.get(Number(log.endpoint.merchantId)) ?? '', status ?? ''));
    });

    app.post('/webhooks/:id/disable', { schema: { params: ConsoleIdParams, body: WebhookStatusForm } }, async (request, reply) => {
      await setWebhookStatus(db, actor(request), request.params.id, { status: 'disabled', reason: request.body.reason || null }, now());
      await forms.flash(request, 'notice', { text: 'Endpoint disabled: nothing is delivered to it until it is enabled again.' });
      return reply.redirect(`${WEBHOOKS}/${request.params.id}`, 303);
    });

    app.post('/webhooks/:id/enable', { schema: { params: ConsoleIdParams, body: ActionForm } }, async (request, reply) => {
      await setWebhookStatus(db, actor(request), request.params.id, { status: 'active' }, now());
      await forms.flash(request, 'notice', { text: 'Endpoint enabled.' });
      return reply.redirect(`${WEBHOOKS}/${request.params.id}`, 303);
    });

    app.post('/webhooks/:id/deliveries/:deliveryId/retry', { schema: { params: ConsoleDeliveryParams, body: ActionForm } }, async (request, reply) => {
      await retryDeliveryForOperator(db, actor(request), request.params.id, request.params.deliveryId, now());
      await forms.flash(request, 'notice', { text: `Delivery ${request.params.deliveryId} will be sent again: its attempt appears in the log below.` });
      return reply.redirect(`${WEBHOOKS}/${request.params.id}`, 303);
    });
  },
};
