import type { Config } from '../config.ts';
import { conflictState, fieldError, notFound } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import { RETRY_WINDOW_MS } from '../domain/webhook-schedule.ts';
import { newWebhookSecret, webhookId } from '../domain/webhook-signature.ts';
import { parseWebhookUrl, resolveWebhookTarget, systemResolver, UnsafeWebhookUrl, type HostResolver } from '../domain/webhook-url.ts';
import type { AdminWebhookPatch, AdminWebhookQuery, DeliveryQuery, WebhookBody } from '../schemas/webhooks.ts';
import { WEBHOOK_EVENT_TYPES } from '../schemas/webhooks.ts';
import type { Db, Handle } from '../store/db.ts';
import { forMerchant, type MerchantScope } from '../store/tenancy.ts';
import * as webhooks from '../store/webhooks.repository.ts';

/** Endpoints per merchant: enough for staging + production receivers, few enough to bound fan-out. */
export const MAX_ENDPOINTS = 16;
/** After a rotation the old secret keeps signing (a second signature) this long, so receivers can switch over. */
export const ROTATION_GRACE_MS = 24 * 3600 * 1000;

export interface WebhookDeps {
  db: Db;
  config: Pick<Config, 'env'>;
  resolve?: HostResolver;
}

export function presentEndpoint(e: webhooks.EndpointRow) {
  return {
    id: String(e.id),
    url: e.url,
    events: JSON.parse(e.events) as string[],
    status: e.status,
    disabledReason: e.disabled_reason,
    disabledAt: formatInstant(e.disabled_at),
    failingSince: formatInstant(e.failing_since),
    createdAt: formatInstant(e.created_at),
    updatedAt: formatInstant(e.updated_at),
  };
}

export function presentDelivery(d: webhooks.DeliveryView) {
  return {
    id: String(d.id),
    webhookId: webhookId(d.eventId),
    eventId: String(d.eventId),
    type: d.type,
    orderId: String(d.orderId),
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

const idOf = (raw: string) => Number(raw);

async function ownEndpoint(scope: MerchantScope, rawId: string) {
  const endpoint = await webhooks.findEndpoint(scope, idOf(rawId));
  if (!endpoint) throw notFound('webhook');
  return endpoint;
}

/** POST /v1/webhooks: checks the URL (after DNS, SPEC §13) and shows the secret this once. */
export async function registerWebhook(deps: WebhookDeps, merchantId: number, body: WebhookBody, now = Date.now()) {
  let url: URL;
  try {
    url = parseWebhookUrl(body.url, deps.config.env);
    await resolveWebhookTarget(url, deps.config.env, deps.resolve ?? systemResolver);
  } catch (error) {
    if (error instanceof UnsafeWebhookUrl) throw fieldError('url', error.message);
    throw error;
  }
  // Listed in the canonical order, each once, whatever the request's order and repeats.
  const events = WEBHOOK_EVENT_TYPES.filter((t) => body.events.includes(t));
  const secret = newWebhookSecret();
  return deps.db.transaction().execute(async (trx) => {
    const scope = forMerchant(trx, merchantId);
    if ((await webhooks.countEndpoints(scope)) >= MAX_ENDPOINTS) throw conflictState(`a merchant may register at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
    const id = await webhooks.insertEndpoint(scope, {
      url: url.href,
      events: JSON.stringify(events),
      secret,
      previous_secret: null,
      previous_secret_until: null,
      status: 'active',
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      created_at: now,
      updated_at: now,
    });
    return { ...presentEndpoint((await webhooks.findEndpoint(scope, id))!), secret };
  });
}

export async function listWebhooks(scope: MerchantScope) {
  return { list: (await webhooks.listEndpoints(scope)).map(presentEndpoint) };
}

/** DELETE /v1/webhooks/{id}: the endpoint and its delivery log; nothing more is sent to it. */
export async function deleteWebhook(db: Db, merchantId: number, rawId: string) {
  return db.transaction().execute(async (trx) => {
    const scope = forMerchant(trx, merchantId);
    const endpoint = await ownEndpoint(scope, rawId);
    await webhooks.deleteEndpoint(scope, endpoint.id);
    return { id: String(endpoint.id), deleted: true };
  });
}

/**
 * POST /v1/webhooks/{id}/rotate-secret: a new secret, shown once. The previous one keeps signing
 * beside it (two `v1,` signatures) for ROTATION_GRACE_MS; rotating again within that time drops
 * the oldest at once.
 */
export async function rotateSecret(db: Db, merchantId: number, rawId: string, now = Date.now()) {
  return db.transaction().execute(async (trx) => {
    const scope = forMerchant(trx, merchantId);
    const endpoint = await ownEndpoint(scope, rawId);
    const secret = newWebhookSecret();
    const until = now + ROTATION_GRACE_MS;
    await webhooks.updateEndpoint(scope, endpoint.id, { secret, previous_secret: endpoint.secret, previous_secret_until: until, updated_at: now });
    return { id: String(endpoint.id), secret, previousSecretExpiresAt: formatInstant(until) };
  });
}

/** GET /v1/webhooks/{id}/deliveries: the endpoint's delivery log, newest first. */
export async function listDeliveries(scope: MerchantScope, rawId: string, q: DeliveryQuery) {
  const endpoint = await ownEndpoint(scope, rawId);
  const pageNumber = q.pageNumber ?? 1;
  const pageSize = q.pageSize ?? 20;
  const page = await webhooks.pageDeliveries(scope, endpoint.id, q.status ?? null, (pageNumber - 1) * pageSize, pageSize);
  return { total: page.total, pageNumber, pageSize, list: page.rows.map(presentDelivery) };
}

/**
 * POST /v1/webhooks/{id}/deliveries/{deliveryId}/retry: due now, with a fresh 24 h retry window,
 * the same `webhook-id` (a redelivery of a delivered event too). Refused while the endpoint is
 * disabled: nothing would be sent.
 */
export async function retryDelivery(db: Db, merchantId: number, rawId: string, rawDeliveryId: string, now = Date.now()) {
  return db.transaction().execute(async (trx) => {
    const scope = forMerchant(trx, merchantId);
    const endpoint = await ownEndpoint(scope, rawId);
    const delivery = await webhooks.findDelivery(scope, endpoint.id, idOf(rawDeliveryId));
    if (!delivery) throw notFound('delivery');
    if (endpoint.status !== 'active') throw conflictState(`webhook ${endpoint.id} is disabled (${endpoint.disabled_reason ?? 'by the operator'}); it must be active to retry`);
    await webhooks.requeueDelivery(scope, delivery.id, now, now + RETRY_WINDOW_MS);
    return presentDelivery((await webhooks.findDelivery(scope, endpoint.id, delivery.id))!);
  });
}

// ---- Operator.

export async function listWebhooksForOperator(db: Handle, q: AdminWebhookQuery) {
  const pageNumber = q.pageNumber ?? 1;
  const pageSize = q.pageSize ?? 50;
  const page = await webhooks.listAllEndpoints(db, { merchantId: q.merchantId ?? null, status: q.status ?? null }, (pageNumber - 1) * pageSize, pageSize);
  const counts = await webhooks.deliveryCounts(db, page.rows.map((r) => r.id));
  return {
    total: page.total,
    pageNumber,
    pageSize,
    list: page.rows.map((r) => ({ ...presentEndpoint(r), merchantId: String(r.merchant_id), deliveries: counts.get(r.id) ?? { pending: 0, succeeded: 0, failed: 0 } })),
  };
}

/** PATCH /admin/v1/webhooks/{id}: disable (deliveries wait, nothing is sent) or re-enable (the failure clock restarts). */
export async function setWebhookStatus(db: Handle, rawId: string, body: AdminWebhookPatch, now = Date.now()) {
  const row = await webhooks.setEndpointStatus(db, idOf(rawId), body.status, body.reason || 'disabled by the operator', now);
  if (!row) throw notFound('webhook');
  return { ...presentEndpoint(row), merchantId: String(row.merchant_id) };
}
