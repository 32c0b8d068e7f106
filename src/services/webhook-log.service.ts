import type { Actor } from '../domain/audit.ts';
import { conflictState, notFound } from '../domain/errors.ts';
import type { WebhookDeliveryStatus } from '../domain/vocabulary.ts';
import { RETRY_WINDOW_MS } from '../domain/webhook-schedule.ts';
import { presentDelivery, presentEndpoint } from '../present/webhook.presenter.ts';
import { insertAudit } from '../store/audit.repository.ts';
import type { Db, Handle } from '../store/db.ts';
import * as webhooks from '../store/webhooks.repository.ts';
import { within } from '../store/tenancy.ts';

async function anyEndpoint(db: Handle, id: number) {
  const endpoint = await webhooks.findAnyEndpoint(db, id);
  if (!endpoint) throw notFound('webhook');
  return endpoint;
}

/** An endpoint (any merchant's) with one page of its delivery log, newest first. */
export async function endpointLogForOperator(db: Handle, id: number, status: WebhookDeliveryStatus | null, pageNumber: number, pageSize: number) {
  const endpoint = await anyEndpoint(db, id);
  const page = await webhooks.pageDeliveries(endpoint.owner, endpoint.id, status, (pageNumber - 1) * pageSize, pageSize);
  return {
    endpoint: { ...presentEndpoint(endpoint), merchantId: String(endpoint.merchant_id) },
    total: page.total,
    pageNumber,
    pageSize,
    deliveries: page.rows.map(presentDelivery),
  };
}

/**
 * The operator's retry of a delivery, as the merchant's own retry does it (due now, a fresh 24 h
 * window, the same `webhook-id`), audited with it. Refused (409) while the endpoint is disabled.
 */
export async function retryDeliveryForOperator(db: Db, actor: Actor, id: number, deliveryId: number, now: number) {
  return db.transaction().execute(async (trx) => {
    const endpoint = await anyEndpoint(trx, id);
    const scope = within(endpoint.owner, trx);
    const delivery = await webhooks.findDelivery(scope, endpoint.id, deliveryId);
    if (!delivery) throw notFound('delivery');
    if (endpoint.status !== 'active')
      throw conflictState(`webhook ${endpoint.id} is disabled (${endpoint.disabled_reason ?? 'by the operator'}); enable it to retry`);
    await webhooks.requeueDelivery(scope, delivery.id, now, now + RETRY_WINDOW_MS);
    await insertAudit(
      trx,
      actor,
      {
        action: 'webhook.retry',
        target: `webhook_delivery:${delivery.id}`,
        before: { webhookId: endpoint.id, merchantId: endpoint.merchant_id, status: delivery.status, attempts: delivery.attempts },
        after: { webhookId: endpoint.id, merchantId: endpoint.merchant_id, status: 'pending', attempts: delivery.attempts },
      },
      now,
    );
    return delivery.id;
  });
}
