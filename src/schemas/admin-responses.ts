import { Type, type TSchema } from 'typebox';
import { ACTOR_KINDS, AUDIT_ACTIONS } from '../domain/audit.ts';
import { SCOPES } from '../domain/scopes.ts';
import { MERCHANT_STATUSES } from '../domain/vocabulary.ts';
import { Amount, IN_SUPPLIER_CURRENCY, IdString, Instant, MerchantResponses, Nullable, Page, StringEnum } from './common.ts';
import { RefundRecord } from './refunds.ts';
import { WebhookEndpoint } from './webhooks.ts';

/**
 * The operator API's responses (issue 16): what `/admin/v1` answers, as Fastify serialises it and
 * docs/openapi-admin.json documents it. Properties are listed in the order the presenters build
 * them, so the serialised bytes are what they were before these schemas existed.
 */

/** The operator API shares the merchant API's envelope: the data on 200, the error envelope otherwise. */
export const AdminResponses = <T extends TSchema>(data: T) => MerchantResponses(data);

const List = <T extends TSchema>(item: T) => Type.Object({ list: Type.Array(item) });

export const AdminWarehouse = Type.Object({
  warehouseId: Type.Integer(),
  warehouseCode: Type.String(),
  name: Type.String(),
  countryCode: Type.String(),
  countryName: Type.String(),
  status: Type.Integer({ description: '1 open, 0 closed (not offered to orders)' }),
  updateDate: Instant(),
});
export const AdminWarehouseList = List(AdminWarehouse);

export const AdminCategory = Type.Object({
  categoryId: Type.Integer(),
  name: Type.String(),
  parentId: Type.Integer({ description: '0 for a top-level category' }),
  imgUrl: Nullable(Type.String()),
  updateDate: Instant(),
});
export const AdminCategoryList = List(AdminCategory);

export const AdminProduct = Type.Object({
  sku: Type.String(),
  name: Type.String(),
  categoryId: Nullable(Type.Integer()),
  price: Amount(IN_SUPPLIER_CURRENCY),
  weightGrams: Type.Integer(),
  imageUrl: Nullable(Type.String()),
  options: Nullable(Type.Object({}, { additionalProperties: true, description: 'free-form product options, as sent' })),
  updateDate: Instant(),
});

const StockResult = Type.Object({
  sku: Type.String(),
  warehouseCode: Type.String(),
  qty: Type.Integer({ description: 'the quantity after the change' }),
  delta: Type.Integer({ description: 'the change made (0 when a set found the quantity already there)' }),
});
export const StockResults = Type.Object({ items: Type.Array(StockResult) });

export const AdminChannel = Type.Object({
  channelCode: Type.String(),
  name: Type.String(),
  channelType: Type.String(),
  warehouseCodes: Type.Array(Type.String()),
  countries: Type.Array(Type.String(), { description: '["*"] for every country' }),
  baseFee: Amount(IN_SUPPLIER_CURRENCY),
  perKgFee: Amount(IN_SUPPLIER_CURRENCY),
  deliveryDaysMin: Type.Integer(),
  deliveryDaysMax: Type.Integer(),
  carriers: Type.Array(Type.String(), { description: 'the carriers the ship form offers' }),
  trackingUrlTemplate: Type.Union([Type.String(), Type.Null()], { description: 'an https URL with {trackingNo}; null: no tracking links' }),
  updateDate: Instant(),
});
export const AdminChannelList = List(AdminChannel);

export const ImportCounts = Type.Object({
  warehouses: Type.Integer(),
  categories: Type.Integer(),
  products: Type.Integer(),
  stocks: Type.Integer(),
  channels: Type.Integer(),
});

export const NewMerchantRecord = Type.Object({
  merchantId: IdString(),
  name: Type.String(),
  status: StringEnum(MERCHANT_STATUSES),
  clientId: Type.String(),
  clientSecret: Type.String({ description: 'shown this once; only its hash is kept' }),
});

export const MerchantRecord = Type.Object({
  merchantId: IdString(),
  name: Type.String(),
  status: StringEnum(MERCHANT_STATUSES),
  clientId: Type.String(),
  createDate: Instant(),
  updateDate: Instant(),
});
export const MerchantList = List(MerchantRecord);

export const IssuedTokenRecord = Type.Object({
  tokenId: IdString(),
  merchantId: IdString(),
  accessToken: Type.String({ description: 'shown this once; only its hash is kept' }),
  scopes: Type.Array(StringEnum(SCOPES)),
  expiresAt: Nullable(Instant(), { description: 'null: no expiry' }),
});

export const RevokedToken = Type.Object({ tokenId: IdString(), revokedAt: Instant() });

export const OperatorRefundPage = Page(
  Type.Object({
    ...RefundRecord.properties,
    merchantId: IdString(),
    merchantName: Type.String({ description: "the merchant's name, as the console lists it" }),
    decidedBy: Nullable(StringEnum(['auto', 'operator'])),
    ageSeconds: Type.Integer(),
    overSla: Type.Boolean({ description: 'pending review for longer than REFUND_SLA_HOURS' }),
    attempts: Type.Integer({ description: "the worker's attempts at deciding it" }),
    lastError: Nullable(Type.String()),
    manualReview: Type.Boolean({ description: 'the worker gave up after REFUND_MAX_ATTEMPTS: it waits for approve or reject' }),
  }),
);

const DeliveryCounts = Type.Object({ pending: Type.Integer(), succeeded: Type.Integer(), failed: Type.Integer() });
export const OperatorWebhookPage = Page(Type.Object({ ...WebhookEndpoint.properties, merchantId: IdString(), deliveries: DeliveryCounts }));
export const OperatorWebhook = Type.Object({ ...WebhookEndpoint.properties, merchantId: IdString() });

const AuditSummarySchema = Nullable(
  Type.Object({}, { additionalProperties: Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), description: 'never a secret' }),
);
export const AuditPage = Type.Object({
  list: Type.Array(
    Type.Object({
      id: IdString(),
      actorKind: StringEnum(ACTOR_KINDS),
      actorId: Type.String({ description: 'staff: the staff id; admin_key: a fingerprint of the key; cli: the OS user; system: the job' }),
      action: StringEnum(AUDIT_ACTIONS),
      target: Type.String({ description: '`kind:id`, e.g. `refund:8000000000001`' }),
      before: AuditSummarySchema,
      after: AuditSummarySchema,
      requestId: Nullable(Type.String(), { description: 'null on the command line and for jobs' }),
      createdAt: Instant(),
    }),
  ),
  nextCursor: Nullable(Type.String({ description: 'pass as `cursor` for the next (older) page; null after the last row' })),
  hasMore: Type.Boolean(),
});
