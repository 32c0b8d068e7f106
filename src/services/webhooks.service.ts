import { checkVersion, staleVersion, versionsOf, type VersionCheck } from '../domain/edit-versions.ts';
import type { Config } from '../config.ts';
import type { Actor } from '../domain/audit.ts';
import { conflictState, fieldError, notFound } from '../domain/errors.ts';
import { comparePos, type FeedPos } from '../domain/stock-batches.ts';
import { formatInstant } from '../domain/time.ts';
import { RETRY_WINDOW_MS } from '../domain/webhook-schedule.ts';
import { newWebhookSecret } from '../domain/webhook-signature.ts';
import { loopbackAllowed, parseWebhookUrl, UnsafeWebhookUrl, type HostResolver } from '../domain/webhook-url.ts';
import { resolveWebhookTarget, systemResolver } from './webhook-target.service.ts';
import { presentDelivery, presentEndpoint } from '../present/webhook.presenter.ts';
import type { AdminWebhookPatch, AdminWebhookQuery, DeliveryQuery, WebhookBody } from '../schemas/webhooks.ts';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT, type WebhookEventType } from '../domain/vocabulary.ts';
import { testEventData, testEventGaps } from './webhook-events.service.ts';
import { insertAudit } from '../store/audit.repository.ts';
import type { Db, Handle, Trx } from '../store/db.ts';
import { feedHead } from '../store/stock-feed.repository.ts';
import { transactionIn, within, type MerchantScope } from '../store/tenancy.ts';
import * as webhooks from '../store/webhooks.repository.ts';
import { runIdempotent, type KeyStore, type StoredResponse } from './idempotency.service.ts';
import { decodeCursor } from './stock-feed.service.ts';
import { pageWindow } from '../domain/paging.ts';

/** Endpoints per merchant: enough for staging + production receivers, few enough to bound fan-out. */
const MAX_ENDPOINTS = 16;
/** After a rotation the old secret keeps signing (a second signature) this long, so receivers can switch over. */
const ROTATION_GRACE_MS = 24 * 3600 * 1000;

/**
 * Writes the audit row of a change made from the business manager, inside the change's
 * transaction (SPEC §14); `target` names the endpoint. The merchant API passes none.
 */
export type AuditWrite = (scope: MerchantScope<Trx>, target: string) => Promise<void>;

export interface WebhookDeps extends KeyStore {
  config: Pick<Config, 'env'> & Partial<Pick<Config, 'sandboxLoopbackWebhooks'>>;
  resolve?: HostResolver;
}

async function ownEndpoint(scope: MerchantScope, id: number) {
  const endpoint = await webhooks.findEndpoint(scope, id);
  if (!endpoint) throw notFound('webhook');
  return endpoint;
}

async function checkedUrl(deps: WebhookDeps, raw: string): Promise<URL> {
  try {
    const url = parseWebhookUrl(raw, deps.config.env);
    await resolveWebhookTarget(url, deps.config.env, deps.resolve ?? systemResolver, loopbackAllowed(deps.config.env, deps.config.sandboxLoopbackWebhooks));
    return url;
  } catch (error) {
    if (error instanceof UnsafeWebhookUrl) throw fieldError('url', error.message);
    throw error;
  }
}

/** The subscription a body asks for: events in canonical order, and the stock.changed options checked. */
function subscription(body: WebhookBody) {
  // Listed in the canonical order, each once, whatever the request's order and repeats.
  const events = WEBHOOK_EVENT_TYPES.filter((t) => body.events.includes(t));
  const stock = events.includes('stock.changed');
  const skus = body.skus ? [...new Set(body.skus.map((s) => s.normalize('NFC')))] : null;
  const cursor = body.cursor ?? null;
  if (!stock && skus) throw fieldError('skus', 'applies to stock.changed only: add it to events, or leave skus out');
  if (!stock && cursor !== null) throw fieldError('cursor', 'applies to stock.changed only: add it to events, or leave cursor out');
  return { events, stock, skus, cursor };
}

/** Where a stock.changed subscription starts: after `cursor` (`now` = the feed's head). */
async function feedPosition(deps: WebhookDeps, cursor: string | null): Promise<FeedPos> {
  const head = await feedHead(deps.db, deps.dialect);
  if (cursor === null || cursor === 'now') return head;
  const position = decodeCursor(cursor);
  if (!position)
    throw fieldError('cursor', 'is not a cursor of the change feed (a nextCursor of GET /v1/product/stocks/changes, a delivery\'s cursor, or "now")');
  if (comparePos(position, head) > 0) throw fieldError('cursor', 'is ahead of the change feed');
  return position;
}

const stockColumns = (position: FeedPos | null) =>
  position === null
    ? { stock_after_seq: null, stock_after_id: null, stock_due_at: null }
    : { stock_after_seq: position.seq, stock_after_id: position.id, stock_due_at: 0 };

/**
 * POST /v1/webhooks: checks the URL (after DNS, SPEC §13) and shows the secret this once (and to
 * a replay of the same request under its Idempotency-Key, as the key's stored response).
 */
export async function registerWebhook(
  deps: WebhookDeps,
  merchant: MerchantScope,
  body: WebhookBody,
  idempotencyKey: string | null,
  requestId: string,
  now = Date.now(),
  audit?: AuditWrite,
): Promise<StoredResponse> {
  const { events, stock, skus, cursor } = subscription(body);
  const url = await checkedUrl(deps, body.url);
  // Read before the endpoint commits: a change not yet visible here gets a later position, so it is delivered.
  const position = stock ? await feedPosition(deps, cursor) : null;
  const secret = newWebhookSecret();
  return runIdempotent(
    deps,
    { merchantId: merchant.merchantId, key: idempotencyKey, request: { route: 'webhooks.create', url: url.href, events, skus, cursor }, requestId },
    async (trx) => {
      const scope = within(merchant, trx);
      if ((await webhooks.countEndpoints(scope)) >= MAX_ENDPOINTS)
        throw conflictState(`a merchant may register at most ${MAX_ENDPOINTS} webhook endpoints; delete one first`);
      const id = await webhooks.insertEndpoint(scope, {
        url: url.href,
        events: JSON.stringify(events),
        skus: skus === null ? null : JSON.stringify(skus),
        ...stockColumns(position),
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
      await audit?.(scope, `webhook:${id}`);
      return { ...presentEndpoint((await webhooks.findEndpoint(scope, id))!), secret };
    },
    (data) => ({ data }),
  );
}

/**
 * PUT /v1/webhooks/{id}: replaces the subscription (url, events, skus) and keeps the secret.
 * stock.changed: a new SKU list applies to every change not yet delivered; `cursor` moves the
 * endpoint in the feed; without it the endpoint stays where it is (or starts now, when stock.changed
 * is new to it). Deliveries already made keep their contents. Honours Idempotency-Key.
 */
export async function replaceWebhook(
  deps: WebhookDeps,
  merchant: MerchantScope,
  id: number,
  body: WebhookBody,
  idempotencyKey: string | null,
  requestId: string,
  now = Date.now(),
  audit?: AuditWrite,
  /** The settings version the edit was made against (the business manager's form); another: 412, nothing written. */
  check?: VersionCheck,
): Promise<StoredResponse> {
  const { events, stock, skus, cursor } = subscription(body);
  const current = await webhooks.findEndpoint(merchant, id);
  // The URL is checked again only when it changes (every attempt checks it anyway).
  const url = current && current.url === body.url ? new URL(current.url) : await checkedUrl(deps, body.url);
  const position = stock ? await feedPosition(deps, cursor) : null;
  return runIdempotent(
    deps,
    {
      merchantId: merchant.merchantId,
      key: idempotencyKey,
      request: { route: 'webhooks.replace', id: String(id), url: url.href, events, skus, cursor },
      requestId,
    },
    async (trx) => {
      const scope = within(merchant, trx);
      const endpoint = await ownEndpoint(scope, id);
      checkVersion(check, `webhook endpoint ${endpoint.id}`, endpoint.version);
      const subscribed = endpoint.stock_after_seq !== null;
      const moved = stock && (cursor !== null || !subscribed) ? stockColumns(position) : stock ? {} : stockColumns(null);
      const row = await webhooks.replaceSubscription(
        scope,
        endpoint.id,
        {
          url: url.href,
          events: JSON.stringify(events),
          skus: skus === null ? null : JSON.stringify(skus),
          ...moved,
          updated_at: now,
        },
        versionsOf(check),
      );
      // Another save between the read and this write (its row lock held us): refused, not overwritten.
      if (!row) throw staleVersion(`webhook endpoint ${endpoint.id}`, (await webhooks.findEndpoint(scope, endpoint.id))?.version ?? null);
      await audit?.(scope, `webhook:${endpoint.id}`);
      return presentEndpoint(row);
    },
    (data) => ({ data }),
  );
}

export async function listWebhooks(scope: MerchantScope) {
  return { list: (await webhooks.listEndpoints(scope)).map(presentEndpoint) };
}

/** DELETE /v1/webhooks/{id}: the endpoint and its delivery log; nothing more is sent to it. */
export async function deleteWebhook(merchant: MerchantScope<Db>, id: number, audit?: AuditWrite) {
  return transactionIn(merchant, async (scope) => {
    const endpoint = await ownEndpoint(scope, id);
    await webhooks.deleteEndpoint(scope, endpoint.id);
    await audit?.(scope, `webhook:${endpoint.id}`);
    return { id: String(endpoint.id), deleted: true };
  });
}

/**
 * POST /v1/webhooks/{id}/rotate-secret: a new secret, shown once. The previous one keeps signing
 * beside it (two `v1,` signatures) for ROTATION_GRACE_MS; rotating again within that time drops
 * the oldest at once.
 */
export async function rotateSecret(
  keyStore: KeyStore,
  merchant: MerchantScope,
  id: number,
  idempotencyKey: string | null,
  requestId: string,
  now = Date.now(),
  audit?: AuditWrite,
): Promise<StoredResponse> {
  return runIdempotent(
    keyStore,
    { merchantId: merchant.merchantId, key: idempotencyKey, request: { route: 'webhooks.rotate-secret', id: String(id) }, requestId },
    async (trx) => {
      const scope = within(merchant, trx);
      const endpoint = await ownEndpoint(scope, id);
      const secret = newWebhookSecret();
      const until = now + ROTATION_GRACE_MS;
      await webhooks.updateEndpoint(scope, endpoint.id, { secret, previous_secret: endpoint.secret, previous_secret_until: until, updated_at: now });
      await audit?.(scope, `webhook:${endpoint.id}`);
      return { id: String(endpoint.id), secret, previousSecretExpiresAt: formatInstant(until) };
    },
    (data) => ({ data }),
  );
}

/** GET /v1/webhooks/{id}/deliveries: the endpoint's delivery log, newest first. */
export async function listDeliveries(scope: MerchantScope, id: number, q: DeliveryQuery) {
  const endpoint = await ownEndpoint(scope, id);
  const { pageNumber, pageSize, offset } = pageWindow(q, 20);
  const page = await webhooks.pageDeliveries(scope, endpoint.id, q.status ?? null, offset, pageSize);
  return { total: page.total, pageNumber, pageSize, list: page.rows.map(presentDelivery) };
}

/**
 * POST /v1/webhooks/{id}/deliveries/{deliveryId}/retry: due now, with a fresh 24 h retry window,
 * the same `webhook-id` (a redelivery of a delivered event too). Refused while the endpoint is
 * disabled: nothing would be sent.
 */
export async function retryDelivery(
  keyStore: KeyStore,
  merchant: MerchantScope,
  id: number,
  deliveryId: number,
  idempotencyKey: string | null,
  requestId: string,
  now = Date.now(),
  audit?: AuditWrite,
): Promise<StoredResponse> {
  return runIdempotent(
    keyStore,
    {
      merchantId: merchant.merchantId,
      key: idempotencyKey,
      request: { route: 'webhooks.retry-delivery', id: String(id), deliveryId: String(deliveryId) },
      requestId,
    },
    async (trx) => {
      const scope = within(merchant, trx);
      const endpoint = await ownEndpoint(scope, id);
      const delivery = await webhooks.findDelivery(scope, endpoint.id, deliveryId);
      if (!delivery) throw notFound('delivery');
      if (endpoint.status !== 'active')
        throw conflictState(`webhook ${endpoint.id} is disabled (${endpoint.disabled_reason ?? 'by the operator'}); it must be active to retry`);
      await webhooks.requeueDelivery(scope, delivery.id, now, now + RETRY_WINDOW_MS);
      await audit?.(scope, `webhook:${endpoint.id}`);
      return presentDelivery((await webhooks.findDelivery(scope, endpoint.id, delivery.id))!);
    },
    (data) => ({ data }),
  );
}

/** What the business manager's "send a test event" may send: a plain ping, or any subscribable type. */
export type TestEventType = WebhookEventType | typeof WEBHOOK_TEST_EVENT;

/**
 * The business manager's "send a test event" to this endpoint only, through the outbox like any
 * other (signed, logged, retried), whatever the endpoint subscribes to. `webhook.test` is a ping;
 * any other type carries that type's real body (`testEventData`: the merchant's latest record of
 * the kind) marked `"test": true`. Test deliveries have a lane of their own (TEST_LANE).
 */
export async function sendTestEvent(
  deps: Pick<WebhookDeps, 'dialect' | 'config'>,
  merchant: MerchantScope<Db>,
  id: number,
  type: TestEventType,
  audit: AuditWrite,
  now = Date.now(),
) {
  return transactionIn(merchant, async (scope) => {
    const endpoint = await ownEndpoint(scope, id);
    if (endpoint.status !== 'active') throw conflictState(`webhook ${endpoint.id} is disabled; it must be active to receive a test event`);
    const data =
      type === WEBHOOK_TEST_EVENT
        ? { webhookId: String(endpoint.id), message: 'A test event sent from the business manager.' }
        : await testEventData(scope, deps.dialect, deps.config.env, type, endpoint.skus === null ? null : (JSON.parse(endpoint.skus) as string[]));
    const body = type === WEBHOOK_TEST_EVENT ? { type, timestamp: formatInstant(now), data } : { type, timestamp: formatInstant(now), test: true, data };
    const eventId = await webhooks.insertEvent(
      scope,
      { type, orderId: webhooks.TEST_LANE, payload: JSON.stringify(body) },
      [endpoint.id],
      now,
      now + RETRY_WINDOW_MS,
    );
    await audit(scope, `webhook:${endpoint.id}`);
    return { eventId };
  });
}

/** The endpoint's test events that can be sent now, and why the others cannot (webhook-events.service.ts `testEventGaps`). */
export async function testEventChoices(deps: Pick<WebhookDeps, 'dialect' | 'config'>, scope: MerchantScope, id: number) {
  const endpoint = await ownEndpoint(scope, id);
  return testEventGaps(scope, deps.dialect, deps.config.env, endpoint.skus === null ? null : (JSON.parse(endpoint.skus) as string[]));
}

/**
 * The business manager's delivery log: one page of the endpoint's deliveries, newest first, each
 * with the exact body sent (its event's), what the last attempt's answer left (status, first 2 KB
 * of the body from a public receiver, time taken), and whether it was a test.
 */
export async function deliveryLog(scope: MerchantScope, id: number, pageNumber: number, pageSize: number) {
  const endpoint = await ownEndpoint(scope, id);
  const page = await webhooks.pageDeliveries(scope, endpoint.id, null, (pageNumber - 1) * pageSize, pageSize);
  const bodies = await webhooks.eventBodiesIn(scope, [...new Set(page.rows.map((r) => r.eventId))]);
  return {
    endpoint: presentEndpoint(endpoint),
    /** Its settings version: the edit form's hidden `version`. */
    version: endpoint.version,
    total: page.total,
    list: page.rows.map((r) => ({
      ...presentDelivery(r),
      test: r.orderId === webhooks.TEST_LANE,
      requestBody: bodies.get(r.eventId) ?? '',
      responseBody: r.lastResponseBody,
      durationMs: r.lastDurationMs,
    })),
  };
}

// ---- Operator.

export async function listWebhooksForOperator(db: Handle, q: AdminWebhookQuery) {
  const { pageNumber, pageSize, offset } = pageWindow(q, 50);
  const page = await webhooks.listAllEndpoints(db, { merchantId: q.merchantId ?? null, status: q.status ?? null }, offset, pageSize);
  const counts = await webhooks.deliveryCounts(
    db,
    page.rows.map((r) => r.id),
  );
  return {
    total: page.total,
    pageNumber,
    pageSize,
    list: page.rows.map((r) => ({
      ...presentEndpoint(r),
      merchantId: String(r.merchant_id),
      deliveries: counts.get(r.id) ?? { pending: 0, succeeded: 0, failed: 0 },
    })),
  };
}

/**
 * PATCH /admin/v1/webhooks/{id}: disable (deliveries wait, nothing is sent) or re-enable (the
 * failure clock restarts). `check`: If-Match's versions; another version: 412, nothing written.
 */
export async function setWebhookStatus(db: Db, actor: Actor, id: number, body: AdminWebhookPatch, now = Date.now(), check?: VersionCheck) {
  return db.transaction().execute(async (trx) => {
    const before = await webhooks.endpointStatus(trx, id);
    if (!before) throw notFound('webhook');
    checkVersion(check, `webhook endpoint ${id}`, before.version);
    const row = await webhooks.setEndpointStatus(trx, id, body.status, body.reason || 'disabled by the operator', now, versionsOf(check));
    if (!row) throw staleVersion(`webhook endpoint ${id}`, (await webhooks.endpointStatus(trx, id))?.version ?? null);
    const entry = {
      target: `webhook:${row.id}`,
      before: { merchantId: row.merchant_id, status: before.status, reason: before.disabled_reason },
      after: { merchantId: row.merchant_id, status: row.status, reason: row.disabled_reason },
    };
    await insertAudit(trx, actor, { action: body.status === 'active' ? 'webhook.enable' : 'webhook.disable', ...entry }, now);
    // Its stock deliveries that gave up hold the stock lane (no gaps): re-enabling sends them again.
    if (body.status === 'active') await webhooks.requeueFailedStockDeliveries(trx, row.id, now, now + RETRY_WINDOW_MS);
    return { version: row.version, endpoint: { ...presentEndpoint(row), merchantId: String(row.merchant_id) } };
  });
}

/** GET /admin/v1/webhooks/{id}: one endpoint of any merchant and its settings version (its ETag), or 404. */
export async function webhookForOperator(db: Handle, id: number) {
  const row = await webhooks.endpointById(db, id);
  if (!row) throw notFound('webhook');
  return { version: row.version, endpoint: { ...presentEndpoint(row), merchantId: String(row.merchant_id) } };
}
