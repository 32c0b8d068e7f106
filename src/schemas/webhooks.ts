import { Type, type Static } from 'typebox';
import { IntegerLike, Str, StringEnum } from './common.ts';
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
