import { sql, type Insertable, type RawBuilder, type Selectable, type Updateable } from 'kysely';
import type { Dialect, Handle, Trx } from './db.ts';
import type { StoredWebhookEventType, WebhookDeliveryStatus, WebhookEndpointStatus } from '../domain/vocabulary.ts';
import type { WebhookEndpointsTable } from './schema.ts';
import type { MerchantScope, ScopedOrderId, TenantScope } from './tenancy.ts';
import { merchantIdOf, forMerchant, ownedBy, resolvedOrderId, resolvedRefundId, resolvedSplitId } from './scope-mint.ts';
import { handleOf } from './scope-handle.ts';

export type EndpointRow = Selectable<WebhookEndpointsTable>;

/** The `order_id` of stock.changed events and deliveries: each endpoint's stock lane. */
export const STOCK_LANE = 0;
/** The `order_id` of money events (`balance.low`, SPEC §15): each endpoint's account lane, in posting order. */
export const ACCOUNT_LANE = -1;

// ---- Merchant side: always through the merchant's scope (docs/decisions.md, "Tenancy").

export async function insertEndpoint(scope: MerchantScope<Trx>, row: Omit<Insertable<WebhookEndpointsTable>, 'merchant_id'>): Promise<number> {
  return (await scope.insertInto('webhook_endpoints', row).returning('id').executeTakeFirstOrThrow()).id;
}

export const listEndpoints = (scope: MerchantScope) => scope.selectFrom('webhook_endpoints').selectAll().orderBy('id').execute();

export async function countEndpoints(scope: MerchantScope): Promise<number> {
  const r = await scope
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export const findEndpoint = (scope: MerchantScope, id: number) => scope.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();

export async function updateEndpoint(scope: MerchantScope<Trx>, id: number, changes: Updateable<WebhookEndpointsTable>): Promise<EndpointRow | undefined> {
  return scope.updateTable('webhook_endpoints').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
}

/**
 * PUT: the new subscription, with a new filter revision so a fan-out that read the old one cannot
 * commit, and a new settings version. `onlyAtVersions`: only while the endpoint is at one of these
 * versions (an optimistic save); undefined when it is not (nothing written) or not there.
 */
export async function replaceSubscription(
  scope: MerchantScope<Trx>,
  id: number,
  changes: Updateable<WebhookEndpointsTable>,
  onlyAtVersions: readonly number[] | null = null,
): Promise<EndpointRow | undefined> {
  let q = scope
    .updateTable('webhook_endpoints')
    .set((eb) => ({ ...changes, stock_filter_rev: eb('stock_filter_rev', '+', 1), version: eb('version', '+', 1) }))
    .where('id', '=', id);
  if (onlyAtVersions !== null) q = q.where('version', 'in', [...onlyAtVersions]);
  return q.returningAll().executeTakeFirst();
}

/** Removes the endpoint and its delivery log (events stay: other endpoints may share them). */
export async function deleteEndpoint(scope: MerchantScope<Trx>, id: number): Promise<boolean> {
  await scope.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
  const r = await scope.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) === 1;
}

/** Active endpoints and the events each wants; read inside the state change's transaction. */
export const activeEndpoints = (scope: MerchantScope) =>
  scope.selectFrom('webhook_endpoints').select(['id', 'events']).where('status', '=', 'active').orderBy('id').execute();

/** A delivery row due now, never attempted. */
const pendingDelivery = (d: { endpointId: number; eventId: number; orderId: number }, now: number, giveUpAt: number) => ({
  endpoint_id: d.endpointId,
  event_id: d.eventId,
  order_id: d.orderId,
  status: 'pending' as const,
  attempts: 0,
  next_attempt_at: now,
  give_up_at: giveUpAt,
  last_attempt_at: null,
  last_status_code: null,
  last_error: null,
  delivered_at: null,
  claimed_by: null,
  claimed_until: null,
  created_at: now,
  updated_at: now,
});

/** The outbox write: one event row and one pending delivery per subscribed endpoint. */
export async function insertEvent(
  scope: MerchantScope<Trx>,
  event: { type: StoredWebhookEventType; orderId: number; payload: string },
  endpointIds: number[],
  now: number,
  giveUpAt: number,
): Promise<number> {
  const { id } = await scope
    .insertInto('webhook_events', { type: event.type, order_id: event.orderId, payload: event.payload, created_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  await scope
    .insertInto(
      'webhook_deliveries',
      endpointIds.map((endpointId) => pendingDelivery({ endpointId, eventId: id, orderId: event.orderId }, now, giveUpAt)),
    )
    .execute();
  return id;
}

const deliveryColumns = [
  'webhook_deliveries.id as id',
  'webhook_deliveries.endpoint_id as endpointId',
  'webhook_deliveries.event_id as eventId',
  'webhook_deliveries.order_id as orderId',
  'webhook_deliveries.status as status',
  'webhook_deliveries.attempts as attempts',
  'webhook_deliveries.next_attempt_at as nextAttemptAt',
  'webhook_deliveries.last_attempt_at as lastAttemptAt',
  'webhook_deliveries.last_status_code as lastStatusCode',
  'webhook_deliveries.last_error as lastError',
  'webhook_deliveries.delivered_at as deliveredAt',
  'webhook_deliveries.created_at as createdAt',
  'webhook_deliveries.cursor_from as cursorFrom',
  'webhook_deliveries.cursor_to as cursorTo',
  'webhook_deliveries.last_response_body as lastResponseBody',
  'webhook_deliveries.last_duration_ms as lastDurationMs',
  'webhook_events.type as type',
] as const;

/** An endpoint's delivery log, newest first. */
export async function pageDeliveries(scope: MerchantScope, endpointId: number, status: WebhookDeliveryStatus | null, offset: number, limit: number) {
  let q = scope.selectFrom('webhook_deliveries').where('webhook_deliveries.endpoint_id', '=', endpointId);
  if (status !== null) q = q.where('webhook_deliveries.status', '=', status);
  const [count, rows] = await Promise.all([
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    q
      .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
      .select(deliveryColumns)
      .orderBy('webhook_deliveries.id', 'desc')
      .offset(offset)
      .limit(limit)
      .execute(),
  ]);
  return { total: Number(count.n), rows };
}
export type DeliveryView = Awaited<ReturnType<typeof pageDeliveries>>['rows'][number];

export const findDelivery = (scope: MerchantScope, endpointId: number, deliveryId: number) =>
  scope
    .selectFrom('webhook_deliveries')
    .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
    .select(deliveryColumns)
    .where('webhook_deliveries.endpoint_id', '=', endpointId)
    .where('webhook_deliveries.id', '=', deliveryId)
    .executeTakeFirst();

/** Makes a delivery due now with a fresh retry window (a redelivery keeps its webhook-id). */
export async function requeueDelivery(scope: MerchantScope<Trx>, deliveryId: number, now: number, giveUpAt: number): Promise<void> {
  await scope
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: now, give_up_at: giveUpAt, claimed_by: null, claimed_until: null, updated_at: now })
    .where('id', '=', deliveryId)
    .execute();
}

// ---- The delivery worker (all merchants).

/**
 * Claims up to `limit` due deliveries. A delivery is due when it is pending, its next attempt has
 * come, its endpoint is active, no live claim holds it, and no earlier delivery of the same lane
 * (endpoint and order) is still pending — that last rule is the ordering guarantee: a later event
 * waits while an earlier one is retrying. Ids within one order follow commit order because every
 * state change of an order first locks its split-order rows (see lockSplitOrders). The stock lane
 * (`order_id = 0`) is held back by a delivery that gave up (`failed`) too: its deliveries are
 * consecutive ranges of the change feed, and skipping one would leave a gap.
 * On PostgreSQL `FOR UPDATE SKIP LOCKED` lets workers claim disjoint batches. `stockLanes`
 * restricts the claim to those endpoints' stock lanes (the worker sending each lane's next delivery
 * right after the previous one; the rule above leaves at most one claimable per lane).
 */
export async function claimDueDeliveries(
  db: Trx,
  dialect: Dialect,
  worker: string,
  now: number,
  until: number,
  limit: number,
  stockLanes: readonly number[] | null = null,
): Promise<number[]> {
  let candidates = db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .select('d.id')
    .where('d.status', '=', 'pending')
    .where('d.next_attempt_at', '<=', now)
    .where('e.status', '=', 'active')
    .where((eb) => eb.or([eb('d.claimed_until', 'is', null), eb('d.claimed_until', '<', now)]))
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('webhook_deliveries as p')
            .select('p.id')
            .whereRef('p.endpoint_id', '=', 'd.endpoint_id')
            .whereRef('p.order_id', '=', 'd.order_id')
            .whereRef('p.id', '<', 'd.id')
            .where((w) => w.or([w('p.status', '=', 'pending'), w.and([w('p.order_id', '=', STOCK_LANE), w('p.status', '=', 'failed')])])),
        ),
      ),
    );
  if (stockLanes) candidates = candidates.where('d.endpoint_id', 'in', stockLanes).where('d.order_id', '=', STOCK_LANE);
  candidates = candidates.orderBy('d.next_attempt_at').orderBy('d.id').limit(limit);
  if (dialect === 'postgres') candidates = candidates.forUpdate(['d']).skipLocked();
  const rows = await db
    .updateTable('webhook_deliveries')
    .set({ claimed_by: worker, claimed_until: until })
    .where('id', 'in', candidates)
    .returning('id')
    .execute();
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/** What an attempt needs of each delivery and its endpoint (the bodies: `eventBodies`), for a claimed batch at once. */
export const deliveryJobs = (db: Handle, ids: readonly number[]) =>
  db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .innerJoin('webhook_events as ev', 'ev.id', 'd.event_id')
    .select([
      'd.id as id',
      'd.event_id as eventId',
      'd.endpoint_id as endpointId',
      'd.order_id as orderId',
      'd.attempts as attempts',
      'd.give_up_at as giveUpAt',
      'd.claimed_by as claimedBy',
      'e.url as url',
      'e.secret as secret',
      'e.previous_secret as previousSecret',
      'e.previous_secret_until as previousSecretUntil',
      'e.status as endpointStatus',
      'ev.stock_batch_id as stockBatchId',
    ])
    .where('d.id', 'in', ids)
    .orderBy('d.id')
    .execute();

/**
 * Events' bodies by event id: each its stock batch's (shared by every endpoint the batch went to)
 * or its own. Bodies never change once written, so the worker may keep them (its body cache).
 */
export const eventBodies = (db: Handle, eventIds: readonly number[]): Promise<Map<number, string>> => bodiesOf(db, null, eventIds);

/** `eventBodies` of the scope's merchant's events only: another merchant's event id reads nothing. */
export const eventBodiesIn = (scope: MerchantScope, eventIds: readonly number[]): Promise<Map<number, string>> =>
  bodiesOf(handleOf(scope), merchantIdOf(scope), eventIds);

async function bodiesOf(db: Handle, merchantId: number | null, eventIds: readonly number[]): Promise<Map<number, string>> {
  if (eventIds.length === 0) return new Map();
  let q = db
    .selectFrom('webhook_events as ev')
    .leftJoin('stock_batches as b', 'b.id', 'ev.stock_batch_id')
    .select((eb) => ['ev.id as id', eb.fn.coalesce('b.payload', 'ev.payload').as('payload')])
    .where('ev.id', 'in', eventIds);
  if (merchantId !== null) q = q.where('ev.merchant_id', '=', merchantId);
  const rows = await q.execute();
  return new Map(rows.map((r) => [r.id, r.payload]));
}
export type DeliveryJob = Awaited<ReturnType<typeof deliveryJobs>>[number];

/** Records one attempt, only if this worker still holds the claim; returns whether it did. */
export async function recordAttempt(
  db: Trx,
  id: number,
  worker: string,
  outcome: {
    status: WebhookDeliveryStatus;
    nextAttemptAt: number | null;
    statusCode: number | null;
    error: string | null;
    deliveredAt: number | null;
    responseBody: string | null;
    durationMs: number | null;
  },
  now: number,
): Promise<boolean> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: outcome.status,
      attempts: eb('attempts', '+', 1),
      next_attempt_at: outcome.nextAttemptAt,
      last_attempt_at: now,
      last_status_code: outcome.statusCode,
      last_error: outcome.error,
      last_response_body: outcome.responseBody,
      last_duration_ms: outcome.durationMs,
      delivered_at: outcome.deliveredAt,
      claimed_by: null,
      claimed_until: null,
      updated_at: now,
    }))
    .where('id', '=', id)
    .where('claimed_by', '=', worker)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** What one attempt's answer left for the log: the start of the response body (or null) and the time taken. */
export interface AttemptAnswer {
  id: number;
  responseBody: string | null;
  durationMs: number;
}

/** `case id when … then … end`: one value per delivery of a batch, in one statement. */
const byId = <T>(answers: readonly AttemptAnswer[], value: (a: AttemptAnswer) => RawBuilder<T>) =>
  sql<T>`case ${sql.ref('id')} ${sql.join(
    answers.map((a) => sql`when ${a.id} then ${value(a)}`),
    sql` `,
  )} else null end`;

/**
 * Records successful attempts in one statement (those this worker still holds; the others are left
 * alone); returns the deliveries it recorded with their endpoints. Each delivery's response body
 * and duration are set by a CASE on its id, so the batch stays one statement.
 */
export async function recordSuccesses(
  db: Trx,
  answers: readonly AttemptAnswer[],
  worker: string,
  statusCode: number,
  now: number,
): Promise<{ id: number; endpointId: number }[]> {
  if (answers.length === 0) return [];
  const ids = answers.map((a) => a.id);
  return db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'succeeded' as const,
      attempts: eb('attempts', '+', 1),
      next_attempt_at: null,
      last_attempt_at: now,
      last_status_code: statusCode,
      last_error: null,
      // Cast: PostgreSQL types a CASE of bare parameters as text.
      last_response_body: byId(answers, (a) => sql<string | null>`cast(${a.responseBody} as text)`),
      last_duration_ms: byId(answers, (a) => sql<number>`cast(${a.durationMs} as integer)`),
      delivered_at: now,
      claimed_by: null,
      claimed_until: null,
      updated_at: now,
    }))
    .where('id', 'in', ids)
    .where('claimed_by', '=', worker)
    .returning(['id', 'endpoint_id as endpointId'])
    .execute();
}

export async function releaseClaims(db: Trx, ids: readonly number[], worker: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('webhook_deliveries').set({ claimed_by: null, claimed_until: null }).where('id', 'in', ids).where('claimed_by', '=', worker).execute();
}

/** Ends the failure streaks of endpoints that took a delivery (a no-op for those not failing). */
export async function endpointsSucceeded(db: Trx, endpointIds: readonly number[]): Promise<void> {
  if (endpointIds.length === 0) return;
  await db.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', 'in', endpointIds).where('failing_since', 'is not', null).execute();
}

/** Notes a failure (the streak starting at `since` unless one is running); returns since when the endpoint has been failing. */
export async function endpointFailed(db: Trx, endpointId: number, since: number): Promise<number | null> {
  await db.updateTable('webhook_endpoints').set({ failing_since: since }).where('id', '=', endpointId).where('failing_since', 'is', null).execute();
  const row = await db.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', endpointId).executeTakeFirst();
  return row?.failing_since ?? null;
}

// ---- The operator (all merchants).

export async function listAllEndpoints(db: Handle, filter: { merchantId: number | null; status: WebhookEndpointStatus | null }, offset: number, limit: number) {
  let q = db.selectFrom('webhook_endpoints');
  if (filter.merchantId !== null) q = q.where('merchant_id', '=', filter.merchantId);
  if (filter.status !== null) q = q.where('status', '=', filter.status);
  const [count, rows] = await Promise.all([
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    q.selectAll().orderBy('id').offset(offset).limit(limit).execute(),
  ]);
  return { total: Number(count.n), rows };
}

/** Disables or re-enables an endpoint, bumping its settings version; `onlyAtVersions` as `replaceSubscription`'s. */
export async function setEndpointStatus(
  db: Trx,
  id: number,
  status: WebhookEndpointStatus,
  reason: string | null,
  now: number,
  onlyAtVersions: readonly number[] | null = null,
): Promise<EndpointRow | undefined> {
  let q = db
    .updateTable('webhook_endpoints')
    .set((eb) => ({
      ...(status === 'disabled'
        ? { status, disabled_reason: reason, disabled_at: now, updated_at: now }
        : { status, disabled_reason: null, disabled_at: null, failing_since: null, updated_at: now }),
      version: eb('version', '+', 1),
    }))
    .where('id', '=', id);
  if (onlyAtVersions !== null) q = q.where('version', 'in', [...onlyAtVersions]);
  return q.returningAll().executeTakeFirst();
}

/** Per-endpoint delivery counts for the operator's list. */
export async function deliveryCounts(db: Handle, endpointIds: number[]) {
  if (endpointIds.length === 0) return new Map<number, Record<WebhookDeliveryStatus, number>>();
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => ['endpoint_id', 'status', eb.fn.countAll<number>().as('n')])
    .where('endpoint_id', 'in', endpointIds)
    .groupBy(['endpoint_id', 'status'])
    .execute();
  const out = new Map<number, Record<WebhookDeliveryStatus, number>>();
  for (const r of rows) {
    const counts = out.get(r.endpoint_id) ?? { pending: 0, succeeded: 0, failed: 0 };
    counts[r.status] = Number(r.n);
    out.set(r.endpoint_id, counts);
  }
  return out;
}

// ---- stock.changed (the delivery worker's fan-out from the change feed).

export interface StockSubscription {
  id: number;
  merchantId: number;
  /** The endpoint's merchant's scope (over the handle the subscriptions were read with): its events and deliveries are written in it. */
  owner: MerchantScope;
  after: { seq: number; id: number };
  filterRev: number;
}

/**
 * Active endpoints subscribed to stock.changed whose next fan-out is due, leaving out those whose
 * stock lane is held up — a delivery that failed and waits for a retry (or gave up), or `maxOpen`
 * deliveries not sent yet: their changes stay in the feed and are coalesced once the lane moves.
 */
export async function dueStockSubscriptions(db: Handle, now: number, maxOpen: number, limit: number): Promise<StockSubscription[]> {
  const rows = await db
    .selectFrom('webhook_endpoints as e')
    .select(['e.id', 'e.merchant_id', 'e.stock_after_seq', 'e.stock_after_id', 'e.stock_filter_rev'])
    .where('e.status', '=', 'active')
    .where('e.stock_after_seq', 'is not', null)
    .where('e.stock_due_at', '<=', now)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('webhook_deliveries as d')
            .select('d.id')
            .whereRef('d.endpoint_id', '=', 'e.id')
            .where('d.order_id', '=', STOCK_LANE)
            .where((w) => w.or([w('d.status', '=', 'failed'), w.and([w('d.status', '=', 'pending'), w('d.attempts', '>', 0)])])),
        ),
      ),
    )
    .where((eb) =>
      eb(
        eb
          .selectFrom('webhook_deliveries as d')
          .select((c) => c.fn.countAll<number>().as('n'))
          .whereRef('d.endpoint_id', '=', 'e.id')
          .where('d.order_id', '=', STOCK_LANE)
          .where('d.status', '=', 'pending'),
        '<',
        maxOpen,
      ),
    )
    .orderBy('e.id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    merchantId: r.merchant_id,
    owner: forMerchant(db, r.merchant_id),
    after: { seq: Number(r.stock_after_seq), id: Number(r.stock_after_id) },
    filterRev: r.stock_filter_rev,
  }));
}

/** An endpoint's SKU list (JSON) and the revision it belongs to. */
export const stockFilter = (db: Handle, endpointId: number) =>
  db.selectFrom('webhook_endpoints').select(['skus', 'stock_filter_rev']).where('id', '=', endpointId).executeTakeFirst();

/**
 * PostgreSQL: locks the endpoints a fan-out moves, in id order, before it moves them group by group
 * (so concurrent fan-outs over overlapping endpoints cannot deadlock). SQLite has one writer.
 */
export async function lockEndpoints(db: Trx, dialect: Dialect, ids: readonly number[]): Promise<void> {
  if (dialect !== 'postgres' || ids.length === 0) return;
  await db.selectFrom('webhook_endpoints').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute();
}

/**
 * Moves endpoints' feed positions on, each only if nobody else has (another worker's fan-out) and
 * its SKU list is the one the caller read; returns the ids it moved. All of `subs` stand at `from`;
 * one statement per SKU-list revision among them (usually one). Taken first in the fan-out's
 * transaction, so concurrent fan-outs of one endpoint serialise here and the loser moves nothing.
 */
export async function advanceStockPositions(
  db: Trx,
  subs: readonly Pick<StockSubscription, 'id' | 'filterRev'>[],
  from: { seq: number; id: number },
  position: { seq: number; id: number },
  dueAt: number | null,
): Promise<Set<number>> {
  const byRev = new Map<number, number[]>();
  for (const sub of subs) byRev.set(sub.filterRev, [...(byRev.get(sub.filterRev) ?? []), sub.id]);
  const moved = new Set<number>();
  for (const [rev, ids] of byRev) {
    const rows = await db
      .updateTable('webhook_endpoints')
      .set({ stock_after_seq: position.seq, stock_after_id: position.id, ...(dueAt === null ? {} : { stock_due_at: dueAt }) })
      .where('id', 'in', ids)
      .where('status', '=', 'active')
      .where('stock_after_seq', '=', from.seq)
      .where('stock_after_id', '=', from.id)
      .where('stock_filter_rev', '=', rev)
      .returning('id')
      .execute();
    for (const r of rows) moved.add(r.id);
  }
  return moved;
}

/** A stock.changed body, stored once for every endpoint that gets it. */
export async function insertStockBatch(db: Trx, payload: string, now: number): Promise<number> {
  return (await db.insertInto('stock_batches').values({ payload, created_at: now }).returning('id').executeTakeFirstOrThrow()).id;
}

/**
 * The merchant's stock.changed events for batches (its endpoints that get a batch share its event,
 * and so its webhook-id), in one statement; returns their ids in the order of `stockBatchIds`.
 */
export async function insertStockEvents(scope: MerchantScope<Trx>, stockBatchIds: readonly number[], now: number): Promise<number[]> {
  const rows = await scope
    .insertInto(
      'webhook_events',
      stockBatchIds.map((id) => ({ type: 'stock.changed' as const, order_id: STOCK_LANE, payload: '', stock_batch_id: id, created_at: now })),
    )
    .returning(['id', 'stock_batch_id'])
    .execute();
  const byBatch = new Map(rows.map((r) => [Number(r.stock_batch_id), r.id]));
  return stockBatchIds.map((id) => byBatch.get(id)!);
}

/** Rows per INSERT: 17 values each, far below either database's limit on bound parameters. */
const DELIVERY_ROWS_PER_INSERT = 500;

/**
 * Endpoints' deliveries of stock events, with the feed range each covers, in as few statements as
 * the row limit allows. Ids follow the order of `deliveries`, and a lane is sent in id order: the
 * caller lists each endpoint's deliveries in feed order.
 */
export async function insertStockDeliveries(
  scope: MerchantScope<Trx>,
  deliveries: readonly { endpointId: number; eventId: number; cursorFrom: string; cursorTo: string }[],
  now: number,
  giveUpAt: number,
): Promise<void> {
  for (let i = 0; i < deliveries.length; i += DELIVERY_ROWS_PER_INSERT) {
    await scope
      .insertInto(
        'webhook_deliveries',
        deliveries.slice(i, i + DELIVERY_ROWS_PER_INSERT).map((d) => ({
          ...pendingDelivery({ ...d, orderId: STOCK_LANE }, now, giveUpAt),
          cursor_from: d.cursorFrom,
          cursor_to: d.cursorTo,
        })),
      )
      .execute();
  }
}

/** Re-enabling an endpoint: its stock deliveries that gave up are due again (they hold the lane; skipping them would leave a gap). */
export async function requeueFailedStockDeliveries(db: Trx, endpointId: number, now: number, giveUpAt: number): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: now, give_up_at: giveUpAt, claimed_by: null, claimed_until: null, updated_at: now })
    .where('endpoint_id', '=', endpointId)
    .where('order_id', '=', STOCK_LANE)
    .where('status', '=', 'failed')
    .execute();
}

/** The deliveries of one order's events to every endpoint of its merchant, newest first (the lane index, per endpoint). */
export async function deliveriesOfOrder(reader: TenantScope, merchantId: number, orderId: ScopedOrderId, limit: number) {
  return handleOf(reader)
    .selectFrom('webhook_endpoints')
    .innerJoin('webhook_deliveries', 'webhook_deliveries.endpoint_id', 'webhook_endpoints.id')
    .innerJoin('webhook_events', 'webhook_events.id', 'webhook_deliveries.event_id')
    .select([...deliveryColumns, 'webhook_endpoints.url as url'])
    .where('webhook_endpoints.merchant_id', '=', merchantId)
    .where('webhook_deliveries.order_id', '=', orderId)
    .orderBy('webhook_deliveries.id', 'desc')
    .limit(limit)
    .execute();
}

/** An endpoint by id, whichever merchant it belongs to (the operator's view). */
export async function findAnyEndpoint<H extends Handle>(db: H, id: number) {
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  return row && ownedBy(db, row.merchant_id, row);
}

/** An endpoint's status and why it is disabled (any merchant's: the operator's view). */
/** One endpoint of any merchant (the operator's read). */
export const endpointById = (db: Handle, id: number) => db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();

export async function endpointStatus(db: Handle, id: number) {
  return db.selectFrom('webhook_endpoints').select(['status', 'disabled_reason', 'version']).where('id', '=', id).executeTakeFirst();
}

// ---- Test events (the business manager's "send a test event").

/** The `order_id` of test events and deliveries: a lane of their own, so a test never waits behind (or holds up) a real event. */
export const TEST_LANE = -2;

/**
 * The merchant's newest records a test event of each type is built from (its real payload shape
 * filled with the merchant's own data): the latest order, split order, refund, and posting on the
 * account. Null where the merchant has none yet.
 */
export async function latestRecords(scope: MerchantScope, accountId: number | null) {
  const [order, split, refund, entry] = await Promise.all([
    scope.selectFrom('orders').select('id').orderBy('id', 'desc').limit(1).executeTakeFirst(),
    scope.selectFrom('split_orders').select(['id', 'order_id']).orderBy('id', 'desc').limit(1).executeTakeFirst(),
    scope.selectFrom('refunds').select('id').orderBy('id', 'desc').limit(1).executeTakeFirst(),
    accountId === null
      ? Promise.resolve(undefined)
      : scope.selectFrom('journal_entries').select('id').where('account_id', '=', accountId).orderBy('seq', 'desc').limit(1).executeTakeFirst(),
  ]);
  return {
    orderId: order?.id ?? null,
    split: split ? { id: resolvedSplitId(split.id), orderId: resolvedOrderId(split.order_id) } : null,
    refundId: refund ? resolvedRefundId(refund.id) : null,
    entryId: entry?.id ?? null,
  };
}
