import type { Static } from 'typebox';
import { formatInstant } from '../domain/time.ts';
import { webhookId } from '../domain/webhook-signature.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../schemas/webhooks.ts';
import type { DeliveryView, EndpointRow } from '../store/webhooks.repository.ts';

/** An endpoint as listed (never with its secret). */
export function presentEndpoint(e: EndpointRow): Static<typeof WebhookEndpoint> {
  return {
    id: String(e.id),
    url: e.url,
    events: JSON.parse(e.events) as string[],
    skus: e.skus === null ? null : (JSON.parse(e.skus) as string[]),
    status: e.status,
    disabledReason: e.disabled_reason,
    disabledAt: formatInstant(e.disabled_at),
    failingSince: formatInstant(e.failing_since),
    createdAt: formatInstant(e.created_at),
    updatedAt: formatInstant(e.updated_at),
  };
}

/** One delivery of an event to an endpoint, with its attempts so far. */
export function presentDelivery(d: DeliveryView): Static<typeof WebhookDelivery> {
  return {
    id: String(d.id),
    webhookId: webhookId(d.eventId),
    eventId: String(d.eventId),
    type: d.type,
    // stock.changed and webhook.test are about no order (stored as 0).
    // Lanes without an order (stock 0, account −1) show none.
    orderId: d.orderId <= 0 ? null : String(d.orderId),
    cursorFrom: d.cursorFrom,
    cursorTo: d.cursorTo,
    status: d.status,
    attempts: d.attempts,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    lastAttemptAt: formatInstant(d.lastAttemptAt),
    nextAttemptAt: d.status === 'pending' ? formatInstant(d.nextAttemptAt) : null,
    deliveredAt: formatInstant(d.deliveredAt),
    createdAt: formatInstant(d.createdAt),
  };
}
