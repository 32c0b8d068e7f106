import { Type, type Static } from 'typebox';
import {
  Amount,
  CURRENCY_CODE,
  CountryCode,
  IdString,
  IdText,
  LookupId,
  Page,
  Instant,
  IntegerLike,
  Nullable,
  OptStr,
  OrNull,
  SkuRef,
  Str,
  StringEnum,
  PageQueryFields,
} from './common.ts';
import { CHANNEL_TYPES } from '../domain/channels.ts';
import { FULFILLMENT_STATUSES, ORDER_STATUSES, SPLIT_ORDER_STATUSES } from '../domain/vocabulary.ts';
import { ORDER_TOTAL_CAP } from '../domain/order-cursor.ts';

/** Seed §2.3; `country` is a two-letter code (channels are matched by it). */
export const AddressBody = Type.Object({
  country: CountryCode(),
  phone: Str(64),
  recipient: Str(32),
  province: Str(32),
  street1: OptStr(64),
  street2: OptStr(64),
  city: OptStr(64),
  zip: OptStr(32),
  ioss: OptStr(32),
  vat: OptStr(32),
});
export type AddressBody = Static<typeof AddressBody>;

/** Seed §2.2. */
export const OrderItemBody = Type.Object({
  sku: SkuRef(),
  quantity: IntegerLike({ minimum: 1 }),
  channelCode: OptStr(32),
  warehouseCode: OptStr(32),
  channelType: OptStr(16),
});

const MAX_ORDER_LINES = 100;

/** Seed §2.4 (SPEC §4.1). Unknown fields are ignored. */
export const CreateOrderBody = Type.Object({
  orderAddress: Type.Optional(OrNull(AddressBody)),
  orderAddresses: Type.Optional(OrNull(AddressBody)),
  orderItemsList: Type.Array(OrderItemBody, { minItems: 1, maxItems: MAX_ORDER_LINES }),
  remark: OptStr(1000),
  salePlatform: OptStr(32),
  channelCode: OptStr(32),
  customOrderId: OptStr(64),
  channelType: OptStr(16),
});
export type CreateOrderBody = Static<typeof CreateOrderBody>;

export const QuoteBody = Type.Object({
  shipToCountry: CountryCode(),
  products: Type.Array(Type.Object({ sku: SkuRef(), quantity: IntegerLike({ minimum: 1 }), warehouseCode: OptStr(32) }), {
    minItems: 1,
    maxItems: MAX_ORDER_LINES,
  }),
});
export type QuoteBody = Static<typeof QuoteBody>;

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
});

export const OrderQuery = Type.Object({
  ids: Type.Optional(Type.String({ maxLength: 4000 })),
  createStartTime: Type.Optional(Type.String({ maxLength: 64 })),
  createEndTime: Type.Optional(Type.String({ maxLength: 64 })),
  updateStartTime: Type.Optional(Type.String({ maxLength: 64 })),
  updateEndTime: Type.Optional(Type.String({ maxLength: 64 })),
  ...PageQueryFields(250, {
    pageNumber: 'page by number (default 1); not with `cursor`',
    pageSize: 'default 10 (or the page size of the walk the cursor continues)',
  }),
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 4096,
      description:
        'continue a keyset walk: pass `nextCursor` of the previous page unchanged (opaque). The filters may be left out (the cursor carries them) or repeated (they must match); `pageNumber` is refused.',
    }),
  ),
});
export type OrderQuery = Static<typeof OrderQuery>;

export const AdminOrderQuery = Type.Object({ ...OrderQuery.properties, merchantId: Type.Optional(IdText('a merchant id')) });
export type AdminOrderQuery = Static<typeof AdminOrderQuery>;

export const OrderIdParams = Type.Object({ id: LookupId({ maxLength: 40 }) });

/** `data` of a created order: the parent order id (`kkOrderId`). */
export const OrderId = IdString('the parent order id (kkOrderId)');

const ChannelTypeName = StringEnum(CHANNEL_TYPES);

/** POST /v2/order/orders/channel: one entry per (warehouse group, serving channel). */
export const ChannelQuote = Type.Object({
  channelCode: Type.String(),
  channelNameEn: Type.String(),
  channelType: ChannelTypeName,
  warehouseCode: Type.String(),
  estimatedFreight: Amount(),
  estimatedFreightCurrency: Type.String({ description: CURRENCY_CODE }),
  deliveryTime: Type.String({ description: 'e.g. "6~10 Business Days"' }),
});
export const ChannelQuoteList = Type.Array(ChannelQuote);

/** POST /v2/order/orders/automaticSplit/channel: one entry per channel type serving every group. */
export const ChannelTypeQuote = Type.Object({
  channelType: ChannelTypeName,
  estimatedFreight: Amount('summed over the warehouse groups'),
  estimatedFreightCurrency: Type.String({ description: CURRENCY_CODE }),
  deliveryTime: Type.String({ description: 'the slowest group, e.g. "6~10 Business Days"' }),
});
export const ChannelTypeQuoteList = Type.Array(ChannelTypeQuote);

const REFUND_STATUSES = ['refunding', 'partial_refund', 'refunded'] as const;

export const OrderItemRecord = Type.Object({
  id: IdString(),
  itemId: IdString('the same as id; refunds name lines by it'),
  skuCode: Type.String(),
  productName: Type.String(),
  imageUrl: Nullable(Type.String()),
  amount: Amount('unit price'),
  productNum: Type.Integer({ description: 'quantity ordered' }),
  total: Amount(),
  refundedQuantity: Type.Integer(),
  fulfillmentStatus: StringEnum(SPLIT_ORDER_STATUSES, { description: "the status of the line's split order" }),
  refundStatus: Nullable(StringEnum(REFUND_STATUSES)),
  countryCode: Type.String({ description: "the warehouse's country" }),
  warehouseCode: Type.String(),
  splitOrderId: IdString(),
});

export const SplitOrderRecord = Type.Object({
  id: IdString(),
  warehouseCode: Type.String(),
  warehouseId: Type.Integer(),
  countryCode: Type.String(),
  channelCode: Type.String(),
  channelType: Type.String(),
  status: StringEnum(SPLIT_ORDER_STATUSES),
  freightAmount: Amount(),
  itemIds: Type.Array(IdString()),
  carrier: Nullable(Type.String()),
  trackingCode: Nullable(Type.String()),
  shippedDate: Nullable(Instant()),
  deliveredDate: Nullable(Instant()),
});

export const FulfillmentRecord = Type.Object({
  id: IdString(),
  packId: IdString(),
  status: StringEnum(['shipped', 'completed'] as const),
  carrier: Nullable(Type.String()),
  trackingCode: Nullable(Type.String()),
  deliveryTime: Nullable(Instant('when it was delivered')),
  items: Type.Array(Type.Object({ itemId: IdString(), skuCode: Type.String(), quantity: Type.Integer() })),
});

/** The order record of SPEC §4.6 (`presentOrder`). */
export const OrderRecord = Type.Object({
  id: IdString('kkOrderId'),
  customOrderId: Nullable(Type.String()),
  salePlatform: Nullable(Type.String()),
  status: StringEnum(ORDER_STATUSES),
  financialStatus: StringEnum(['paid'] as const),
  fulfillmentStatus: StringEnum(FULFILLMENT_STATUSES),
  refundStatus: Nullable(StringEnum(REFUND_STATUSES)),
  purchaseDate: Nullable(Instant()),
  payDate: Nullable(Instant()),
  completedDate: Nullable(Instant()),
  cancelDate: Nullable(Instant()),
  refundDate: Nullable(Instant()),
  currencyCode: Type.String({ description: CURRENCY_CODE }),
  subTotalAmount: Amount(),
  freightAmount: Amount(),
  couponAmount: Amount(),
  promotionAmount: Amount(),
  finalAmount: Amount('subTotalAmount + freightAmount − couponAmount'),
  refundedAmount: Amount(),
  refundableAmount: Amount('finalAmount − refundedAmount'),
  remark: Nullable(Type.String()),
  channelType: Nullable(Type.String()),
  shippingAddress: Type.Object(
    {
      country: Type.String(),
      phone: Type.String(),
      recipient: Type.String(),
      province: Type.String(),
      street1: Nullable(Type.String()),
      street2: Nullable(Type.String()),
      city: Nullable(Type.String()),
      zip: Nullable(Type.String()),
      ioss: Nullable(Type.String()),
      vat: Nullable(Type.String()),
    },
    { additionalProperties: true },
  ),
  orderItems: Type.Array(OrderItemRecord),
  splitOrders: Type.Array(SplitOrderRecord),
  fulfillments: Type.Array(FulfillmentRecord),
  createDate: Instant(),
  updateDate: Instant(),
});
export type OrderRecord = Static<typeof OrderRecord>;
const cap = ORDER_TOTAL_CAP.toLocaleString('en-US');
/** A page of orders (SPEC §4.6): `total` is counted up to ORDER_TOTAL_CAP; `nextCursor` continues the walk. */
export const OrderPage = Type.Object({
  ...Page(OrderRecord).properties,
  total: Type.Integer({ description: `rows in the window, counted up to ${cap}: a larger window reports ${cap} ("at least")` }),
  nextCursor: Nullable(Type.String({ description: 'pass as `cursor` for the next page; null after the last row' })),
});
