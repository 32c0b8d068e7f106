import { Type, type Static } from 'typebox';
import { SCOPES } from '../domain/scopes.ts';
import { WEBHOOK_DELIVERY_STATUSES } from '../domain/vocabulary.ts';
import { IdText, StringEnum } from './common.ts';

/**
 * The forms of the console's orders, merchants and webhooks pages (SPEC §14). Fields arrive
 * form-encoded, as strings; a search form sends its empty fields too, so those may be blank and
 * the service says which one is malformed.
 */

const Csrf = { _csrf: Type.Optional(Type.String({ maxLength: 128 })) };

export const OrderSearchQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 128 })),
  merchant: Type.Optional(Type.String({ maxLength: 32 })),
  status: Type.Optional(Type.String({ maxLength: 32 })),
  from: Type.Optional(Type.String({ maxLength: 32 })),
  to: Type.Optional(Type.String({ maxLength: 32 })),
  after: Type.Optional(Type.String({ maxLength: 40 })),
});

export const ConsoleIdParams = Type.Object({ id: IdText() });
export const ConsoleTokenParams = Type.Object({ id: IdText(), tokenId: IdText() });
export const ConsoleDeliveryParams = Type.Object({ id: IdText(), deliveryId: IdText() });

export const ShipForm = Type.Object({
  ...Csrf,
  carrier: Type.String({ minLength: 1, maxLength: 64 }),
  trackingCode: Type.String({ minLength: 1, maxLength: 64 }),
});

export const ActionForm = Type.Object(Csrf);

export const MerchantForm = Type.Object({ ...Csrf, name: Type.String({ minLength: 1, maxLength: 128 }) });

/** A checkbox per scope (none ticked: every scope); lifetime in days, blank: no expiry. */
export const TokenForm = Type.Object({
  ...Csrf,
  scopes: Type.Optional(Type.Union([StringEnum(SCOPES), Type.Array(StringEnum(SCOPES), { maxItems: SCOPES.length, uniqueItems: true })])),
  expiresInDays: Type.Optional(Type.String({ pattern: '^([1-9][0-9]{0,3})?$' })),
});
export type TokenForm = Static<typeof TokenForm>;

export const WebhookStatusForm = Type.Object({ ...Csrf, reason: Type.Optional(Type.String({ maxLength: 500 })) });

export const WebhookListQuery = Type.Object({
  merchant: Type.Optional(Type.String({ pattern: '^([0-9]{1,16})?$' })),
  status: Type.Optional(Type.String({ pattern: '^(active|disabled)?$' })),
  page: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })),
});

export const DeliveryLogQuery = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal(''), StringEnum(WEBHOOK_DELIVERY_STATUSES)])),
  page: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })),
});
