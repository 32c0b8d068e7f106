import { Type, type Static } from 'typebox';
import { IntegerLike, OrNull, Str } from './common.ts';

/** An optional string that may also be sent as null; bounds apply after trimming. */
const OptStr = (maxLength: number) =>
  Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()], { description: `a string of at most ${maxLength} characters` }));


/** Seed §2.3; `country` is a two-letter code (channels are matched by it). */
export const AddressBody = Type.Object({
  country: Type.String({ pattern: '^[A-Za-z]{2}$', description: 'a two-letter country code' }),
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
  sku: Str(64),
  quantity: IntegerLike({ minimum: 1 }),
  channelCode: OptStr(32),
  warehouseCode: OptStr(32),
  channelType: OptStr(16),
});

export const MAX_ORDER_LINES = 100;

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
  shipToCountry: Type.String({ pattern: '^[A-Za-z]{2}$', description: 'a two-letter country code' }),
  products: Type.Array(
    Type.Object({ sku: Str(64), quantity: IntegerLike({ minimum: 1 }), warehouseCode: OptStr(32) }),
    { minItems: 1, maxItems: MAX_ORDER_LINES },
  ),
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
  pageNumber: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 250 })),
});
export type OrderQuery = Static<typeof OrderQuery>;

export const AdminOrderQuery = Type.Object({ ...OrderQuery.properties, merchantId: Type.Optional(Type.String({ pattern: '^[0-9]{1,18}$' })) });
export type AdminOrderQuery = Static<typeof AdminOrderQuery>;

export const OrderIdParams = Type.Object({ id: Type.String({ maxLength: 40 }) });
