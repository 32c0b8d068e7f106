import { httpStatus } from '../../../http/errors.ts';
import { AppError, isRefusal } from '../../../domain/errors.ts';
import { formVersion } from '../../../domain/edit-versions.ts';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT } from '../../../domain/vocabulary.ts';
import { ManagerCsrfForm, ManagerDeliveryParams, ManagerIdParams, WebhookEditForm, WebhookForm, WebhookTestForm } from '../../../schemas/manager.ts';
import { parseDocument } from '../../../schemas/validate.ts';
import { WebhookBody } from '../../../schemas/webhooks.ts';
import { auditWrite } from '../../../services/merchant-team.service.ts';
import {
  deleteWebhook,
  deliveryLog,
  listWebhooks,
  registerWebhook,
  replaceWebhook,
  retryDelivery,
  rotateSecret,
  sendTestEvent,
  testEventChoices,
} from '../../../services/webhooks.service.ts';
import { presentWebhook, presentWebhookConflict, presentWebhookLog, presentWebhooks, type WebhookEditFields } from '../present-integrations.ts';
import { eventWords } from '../../shared/present.ts';
import { MANAGER_VIEWS, type ManagerViews } from '../views.ts';
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
    const canWrite = (request: Parameters<typeof user>[0]) => user(request).role !== 'viewer';
    /** The delivery log shows this many deliveries, newest first. */
    const LOG_ROWS = 50;
    const logOf = (request: Parameters<typeof user>[0], id: number) => deliveryLog(merchant(request), id, 1, LOG_ROWS);
    /**
     * The endpoint's page. `refused`: a refused edit's status, reasons and what was typed (the form
     * shows it instead of the endpoint's subscription).
     */
    const detail = async (
      request: Parameters<typeof user>[0],
      reply: Parameters<typeof page>[0],
      id: number,
      shown: string | null,
      refused: { status: number; reasons: string[]; form: WebhookEditFields } | null = null,
      testRefused: { status: number; reason: string } | null = null,
    ) => {
      const log = await logOf(request, id);
      // Only test events the merchant has data for are offered (a writer's form; a viewer has none).
      const testGaps = canWrite(request) ? await testEventChoices(deps, merchant(request), id) : null;
      return page(
        reply,
        refused?.status ?? testRefused?.status ?? 200,
        'webhook',
        presentWebhook(log, { environment: config.env, canWrite: canWrite(request), shown, refused, testGaps, testRefused: testRefused?.reason ?? null }),
      );
    };

    app.get('/webhooks', async (request, reply) => {
      const shown = await forms.take<{ id: string; secret: string }>(request, 'webhook-created');
      const endpoints = await listWebhooks(merchant(request));
      return page(reply, 200, 'webhooks', presentWebhooks(endpoints.list, { environment: config.env, canWrite: canWrite(request), shown }));
    });

    app.post('/webhooks', { schema: { body: WebhookForm } }, async (request, reply) => {
      const events = [request.body.events].flat();
      const created = await registerWebhook(
        deps,
        merchant(request),
        { url: request.body.url, events },
        null,
        request.id,
        now(),
        auditWrite(actor(request), 'webhook.create', now(), { url: request.body.url, events: events.join(' ') }),
      );
      // The signing secret is shown once, on the page the 303 leads to.
      await forms.flash(request, 'webhook-created', dataOf<{ id: string; secret: string }>(created));
      return reply.redirect(WEBHOOKS, 303);
    });

    app.get('/webhooks/:id', { schema: { params: ManagerIdParams } }, async (request, reply) => {
      const rotated = await forms.take<{ id: number; secret: string }>(request, 'webhook-secret');
      return detail(request, reply, request.params.id, rotated?.id === request.params.id ? rotated.secret : null);
    });

    // The log alone (htmx polls it every 5 s; without script, reloading the page does the same).
    // Rendered without page(): a poll must not take the one-time notice meant for the next page.
    app.get('/webhooks/:id/deliveries', { schema: { params: ManagerIdParams } }, async (request, reply) => {
      const log: ManagerViews['webhook-log'] = presentWebhookLog(await logOf(request, request.params.id), canWrite(request));
      return reply
        .code(200)
        .type('text/html; charset=utf-8')
        .header('Cache-Control', 'no-store')
        .view(MANAGER_VIEWS['webhook-log'].template, { ...log, csrf: user(request).csrfSecret });
    });

    // Edit: the API's PUT (the same schema and service); a refusal shows the form again with its reasons, nothing written.
    app.post('/webhooks/:id', { schema: { params: ManagerIdParams, body: WebhookEditForm } }, async (request, reply) => {
      const { id } = request.params;
      const events = request.body.events === undefined ? [] : [request.body.events].flat();
      const skuList = request.body.skuList ?? '';
      const skus = skuList.split(/[\s,]+/).filter((s) => s !== '');
      const form = { url: request.body.url, events, skuList, version: request.body.version ?? '' };
      try {
        const body = parseDocument<WebhookBody>(WebhookBody, {
          url: request.body.url,
          events,
          // No SKUs listed: every SKU (the API's null); a list only means something with stock.changed.
          skus: skus.length ? skus : null,
        });
        const check = formVersion(request.body.version);
        await replaceWebhook(
          deps,
          merchant(request),
          id,
          body,
          null,
          request.id,
          now(),
          auditWrite(actor(request), 'webhook.update', now(), {
            url: body.url,
            events: WEBHOOK_EVENT_TYPES.filter((e) => body.events.includes(e)).join(' '),
            skus: body.skus ? body.skus.length : null,
          }),
          check,
        );
      } catch (error) {
        // Another merchant's endpoint (or none) stays a 404 page; a refused field is the form again.
        if (!(error instanceof AppError) || error.kind === 'not_found' || !isRefusal(error)) throw error;
        // Saved meanwhile (another tab, another user): nothing written, both versions shown (docs/web.md, "Edit conflicts").
        if (error.kind === 'precondition_failed') {
          const stored = await logOf(request, id);
          return page(reply, 409, 'edit-conflict', presentWebhookConflict(form, stored.endpoint, stored.version));
        }
        const reasons = error.errors?.length ? error.errors.map((e) => `${e.field}: ${e.message}`) : [error.message];
        return detail(request, reply, id, null, { status: httpStatus(error), reasons, form });
      }
      await forms.flash(request, 'notice', { text: 'Endpoint saved: new deliveries follow its new URL and events.' });
      return reply.redirect(`${WEBHOOKS}/${id}`, 303);
    });

    app.post('/webhooks/:id/rotate-secret', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      const rotated = await rotateSecret(
        deps,
        merchant(request),
        request.params.id,
        null,
        request.id,
        now(),
        auditWrite(actor(request), 'webhook.rotate_secret', now()),
      );
      await forms.flash(request, 'webhook-secret', { id: request.params.id, secret: dataOf<{ secret: string }>(rotated).secret });
      return reply.redirect(`${WEBHOOKS}/${request.params.id}`, 303);
    });

    app.post('/webhooks/:id/test', { schema: { params: ManagerIdParams, body: WebhookTestForm } }, async (request, reply) => {
      const type = request.body.type ?? WEBHOOK_TEST_EVENT;
      try {
        await sendTestEvent(deps, merchant(request), request.params.id, type, auditWrite(actor(request), 'webhook.send_test', now(), { type }), now());
      } catch (error) {
        // No record to build the type's body from (or the endpoint is disabled): the page again, the reason by the form.
        if (!(error instanceof AppError) || error.kind !== 'conflict') throw error;
        return detail(request, reply, request.params.id, null, null, { status: httpStatus(error), reason: error.message });
      }
      await forms.flash(request, 'notice', { text: `A test event (${eventWords(type)}) is on its way: it appears in the delivery log below.` });
      return reply.redirect(`${WEBHOOKS}/${request.params.id}`, 303);
    });

    app.post('/webhooks/:id/delete', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      await deleteWebhook(merchant(request), request.params.id, auditWrite(actor(request), 'webhook.delete', now()));
      await forms.flash(request, 'notice', { text: 'Endpoint deleted.' });
      return reply.redirect(WEBHOOKS, 303);
    });

    app.post('/webhooks/:id/deliveries/:deliveryId/retry', { schema: { params: ManagerDeliveryParams, body: ManagerCsrfForm } }, async (request, reply) => {
      const { id, deliveryId } = request.params;
      await retryDelivery(deps, merchant(request), id, deliveryId, null, request.id, now(), auditWrite(actor(request), 'webhook.retry', now(), { deliveryId }));
      await forms.flash(request, 'notice', { text: `Delivery ${deliveryId} will be sent again: its attempt appears in the log below.` });
      return reply.redirect(`${WEBHOOKS}/${id}`, 303);
    });
  },
};
