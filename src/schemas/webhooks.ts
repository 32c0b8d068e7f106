import { Type, type Static } from 'typebox';
import { IntegerLike, Page, Str, StringEnum } from './common.ts';
import { MAX_WEBHOOK_URL_LENGTH } from '../domain/webhook-url.ts';
import type { WebhookEventType as StoredEventType } from '../store/schema.ts';

/** SPEC §13: the events a merchant can subscribe to. */
export const WEBHOOK_EVENT_TYPES = ['refund.succeeded', 'refund.failed', 'split_order.shipped', 'split_order.delivered', 'order.cancelled'] as const satisfies readonly StoredEventType[];
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WebhookBody = Type.Object({
  url: Str(MAX_WEBHOOK_URL_LENGTH),
  events: Type.Array(StringEnum(WEBHOOK_EVENT_TYPES), { minItems: 1, maxItems: 20 }),
});
export type WebhookBody = Static<typeof WebhookBody>;

const NumericId = () => Type.String({ pattern: '^[0-9]{1,18}$', description: 'a numeric id' });
export const WebhookIdParams = Type.Object({ id: NumericId() });
export const DeliveryParams = Type.Object({ id: NumericId(), deliveryId: NumericId() });

const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export const DeliveryQuery = Type.Object({
  pageNumber: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 250 })),
  status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
});
export type DeliveryQuery = Static<typeof DeliveryQuery>;

const ENDPOINT_STATUSES = ['active', 'disabled'] as const;
export const AdminWebhookQuery = Type.Object({
  pageNumber: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 250 })),
  merchantId: Type.Optional(IntegerLike({ minimum: 1 })),
  status: Type.Optional(StringEnum(ENDPOINT_STATUSES)),
});
export type AdminWebhookQuery = Static<typeof AdminWebhookQuery>;

export const AdminWebhookPatch = Type.Object({
  status: StringEnum(ENDPOINT_STATUSES),
  reason: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
});
export type AdminWebhookPatch = Static<typeof AdminWebhookPatch>;

const Instant = () => Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

/** A merchant's endpoint as listed (never with its secret). */
export const WebhookEndpoint = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  status: StringEnum(ENDPOINT_STATUSES),
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
  orderId: Type.String(),
  status: StringEnum(DELIVERY_STATUSES),
  attempts: Type.Integer(),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()]),
  lastAttemptAt: Instant(),
  nextAttemptAt: Instant(),
  deliveredAt: Instant(),
  createdAt: Instant(),
});
export const WebhookDeliveryPage = Page(WebhookDelivery);
