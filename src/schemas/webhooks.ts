import { AccountRecord } from './account.ts';
import { Type, type Static } from 'typebox';
import { IdText, LookupId, Nullable, OrNull, Page, Str, StringEnum, PageQueryFields } from './common.ts';
import { MAX_WEBHOOK_URL_LENGTH } from '../domain/webhook-url.ts';
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_ENDPOINT_STATUSES, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../domain/vocabulary.ts';
import { OrderRecord } from './orders.ts';
import { RefundRecord } from './refunds.ts';
import { ClaimRecord } from './claims.ts';

/** SKUs one endpoint may follow by stock.changed. */
const MAX_WEBHOOK_SKUS = 10_000;

export const WebhookBody = Type.Object({
  url: Str(MAX_WEBHOOK_URL_LENGTH),
  events: Type.Array(StringEnum(WEBHOOK_EVENT_TYPES), { minItems: 1, maxItems: 20 }),
  skus: Type.Optional(
    OrNull(
      Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: '^[^,\\s]+$' }), {
        minItems: 1,
        maxItems: MAX_WEBHOOK_SKUS,
        description: `stock.changed only: the SKUs to follow (at most ${MAX_WEBHOOK_SKUS.toLocaleString('en')}; repeats ignored). Absent or null: every SKU.`,
      }),
    ),
  ),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        "stock.changed only: deliver the changes after this change-feed cursor (a `nextCursor` of `GET /v1/product/stocks/changes`, or a delivery's `cursor`), " +
        'to switch from polling to push without a gap or a repeat. Default when registering: `now`; when replacing: where the endpoint stands.',
    }),
  ),
});
export type WebhookBody = Static<typeof WebhookBody>;

const NumericId = () => LookupId({ pattern: '^[0-9]{1,18}$', description: 'a numeric id' });
export const WebhookIdParams = Type.Object({ id: NumericId() });
export const DeliveryParams = Type.Object({ id: NumericId(), deliveryId: NumericId() });

export const DeliveryQuery = Type.Object({
  ...PageQueryFields(250),
  status: Type.Optional(StringEnum(WEBHOOK_DELIVERY_STATUSES)),
});
export type DeliveryQuery = Static<typeof DeliveryQuery>;

export const AdminWebhookQuery = Type.Object({
  ...PageQueryFields(250),
  merchantId: Type.Optional(IdText('a merchant id')),
  status: Type.Optional(StringEnum(WEBHOOK_ENDPOINT_STATUSES)),
});
export type AdminWebhookQuery = Static<typeof AdminWebhookQuery>;

export const AdminWebhookPatch = Type.Object({
  status: StringEnum(WEBHOOK_ENDPOINT_STATUSES),
  reason: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
});
export type AdminWebhookPatch = Static<typeof AdminWebhookPatch>;

const Instant = () => Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

/** A merchant's endpoint as listed (never with its secret). */
export const WebhookEndpoint = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  skus: Nullable(Type.Array(Type.String()), { description: 'stock.changed: the SKUs followed; null = every SKU' }),
  status: StringEnum(WEBHOOK_ENDPOINT_STATUSES),
  disabledReason: Type.Union([Type.String(), Type.Null()]),
  disabledAt: Instant(),
  failingSince: Instant(),
  createdAt: Instant(),
  updatedAt: Instant(),
});
/** The answer to registration: the endpoint and its signing secret, shown this once. */
export const WebhookCreated = Type.Object({ ...WebhookEndpoint.properties, secret: Type.String({ pattern: '^whsec_' }) });
export const WebhookList = Type.Object({ list: Type.Array(WebhookEndpoint) });
export const WebhookDeleted = Type.Object({ id: Type.String(), deleted: Type.Boolean() });
export const WebhookSecret = Type.Object({ id: Type.String(), secret: Type.String({ pattern: '^whsec_' }), previousSecretExpiresAt: Instant() });
export const WebhookDelivery = Type.Object({
  id: Type.String(),
  webhookId: Type.String({ description: 'the `webhook-id` header value, the same on every attempt' }),
  eventId: Type.String(),
  type: Type.String(),
  orderId: Nullable(Type.String(), { description: 'the order the event is about; null for stock.changed' }),
  cursorFrom: Nullable(Type.String(), {
    description: 'stock.changed: the change-feed range the delivery covers is (cursorFrom, cursorTo]; null for other events',
  }),
  cursorTo: Nullable(Type.String(), { description: 'stock.changed: the `cursor` the delivery carries; null for other events' }),
  status: StringEnum(WEBHOOK_DELIVERY_STATUSES),
  attempts: Type.Integer(),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()], {
    description: "the last attempt's HTTP status; from a loopback address (sandbox) 200 for any 2xx and null for any failure; null when no answer came",
  }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description:
      "why the last attempt failed: the status and the start of the receiver's answer, or the network error (public addresses); one sentence for every failure at a loopback address (sandbox: refused, cut off, timed out or not 2xx are not told apart); or the refusal",
  }),
  lastAttemptAt: Instant(),
  nextAttemptAt: Instant(),
  deliveredAt: Instant(),
  createdAt: Instant(),
});
export const WebhookDeliveryPage = Page(WebhookDelivery);

// ---- Event bodies (`{type, timestamp, data}`), as the receiver gets them (the document's `webhooks`).

const EventTime = () => Type.String({ format: 'date-time', description: 'when the event was committed (ISO 8601 UTC, seconds)' });
/** Present (true) only on a test event the business manager sent: real shape, the merchant's latest records, nothing new to act on. */
const TestMark = () =>
  Type.Optional(
    Type.Literal(true, {
      description:
        'present, and true, only on a test event sent from the business manager: the body has this type’s real shape, filled from your latest records, and reports nothing new — acknowledge it and act on nothing',
    }),
  );

export const StockChangedEntry = Type.Object({
  sku: Type.String(),
  warehouseCode: Type.String(),
  qty: Type.Integer({ description: 'the quantity available to sell after the latest change to this SKU in this warehouse' }),
  updateDate: Type.String({ format: 'date-time', description: 'when that change was committed' }),
});
const StockChangedData = Type.Object({
  changes: Type.Array(StockChangedEntry, { maxItems: 500, description: 'each (sku, warehouseCode) once, with its latest quantity, in change-feed order' }),
  cursor: Type.String({ description: 'the change-feed cursor after the last change included: `GET /v1/product/stocks/changes?cursor=` continues from here' }),
});
export const StockChangedEvent = Type.Object({ type: Type.Literal('stock.changed'), timestamp: EventTime(), data: StockChangedData, test: TestMark() });
export type StockChangedEvent = Static<typeof StockChangedEvent>;

export const RefundEvent = Type.Object({
  type: StringEnum(['refund.succeeded', 'refund.failed'] as const),
  timestamp: EventTime(),
  test: TestMark(),
  data: Type.Object({ orderId: Type.String(), refundNo: Type.String(), refund: RefundRecord }),
});
export const SplitOrderEvent = Type.Object({
  type: StringEnum(['split_order.shipped', 'split_order.delivered'] as const),
  timestamp: EventTime(),
  test: TestMark(),
  data: Type.Object({ orderId: Type.String(), splitOrderId: Type.String(), order: OrderRecord }),
});
export const OrderCancelledEvent = Type.Object({
  type: Type.Literal('order.cancelled'),
  timestamp: EventTime(),
  test: TestMark(),
  data: Type.Object({ orderId: Type.String(), order: OrderRecord }),
});

/** SPEC §15: the account's `available` fell below its `lowBalanceThreshold` (once per crossing). */
export const BalanceLowEvent = Type.Object({
  type: Type.Literal('balance.low'),
  timestamp: EventTime(),
  test: TestMark(),
  data: Type.Object({ account: AccountRecord, transactionId: Type.String({ description: 'the transaction that took it below' }) }),
});

/** SPEC §18: a claim was decided (approved, rejected) or resolved (credited, reshipped). */
export const ClaimEvent = Type.Object({
  type: StringEnum(['claim.approved', 'claim.rejected', 'claim.credited', 'claim.reshipped'] as const),
  timestamp: EventTime(),
  test: TestMark(),
  data: Type.Object({ claimNo: Type.String(), orderId: Type.String({ description: 'the split order id' }), claim: ClaimRecord }),
});

/** The body schema of each event type. */
export const WEBHOOK_EVENT_BODIES = {
  'refund.succeeded': RefundEvent,
  'refund.failed': RefundEvent,
  'split_order.shipped': SplitOrderEvent,
  'split_order.delivered': SplitOrderEvent,
  'order.cancelled': OrderCancelledEvent,
  'stock.changed': StockChangedEvent,
  'balance.low': BalanceLowEvent,
  'claim.approved': ClaimEvent,
  'claim.rejected': ClaimEvent,
  'claim.credited': ClaimEvent,
  'claim.reshipped': ClaimEvent,
} as const satisfies Record<WebhookEventType, unknown>;
