import { Type, type Static } from 'typebox';
import { MAX_CHANNEL_CARRIERS } from '../domain/channels.ts';
import { MAX_STOCK_QTY } from '../domain/money.ts';
import { SCOPES } from '../domain/scopes.ts';
import { MERCHANT_STATUSES } from '../domain/vocabulary.ts';
import { CountryCode, CountryOrAny, IdLike, IdText, IntegerLike, MoneyInput, NewSku, SkuRef, Str, StringEnum, WebUrlInput } from './common.ts';

export const WarehouseBody = Type.Object({
  warehouseCode: Str(32),
  name: Str(128),
  countryCode: CountryCode(),
  countryName: Type.Optional(Str(64)),
  status: Type.Optional(IntegerLike({ minimum: 0, maximum: 1 })),
});
export type WarehouseBody = Static<typeof WarehouseBody>;

export const CategoryBody = Type.Object({
  categoryId: IdLike(),
  name: Str(128),
  parentId: IntegerLike({ minimum: 0 }),
  imgUrl: Type.Optional(WebUrlInput(1024)),
});
export type CategoryBody = Static<typeof CategoryBody>;

export const ProductBody = Type.Object({
  sku: NewSku(),
  name: Str(255),
  categoryId: Type.Optional(Type.Union([IdLike(), Type.Null()])),
  price: MoneyInput(),
  weightGrams: IntegerLike({ minimum: 0, maximum: 1_000_000_000 }),
  imageUrl: Type.Optional(WebUrlInput(1024)),
  options: Type.Optional(Type.Union([Type.Record(Type.String({ maxLength: 64 }), Type.Unknown()), Type.Null()])),
});
export type ProductBody = Static<typeof ProductBody>;

export const StockSetRow = Type.Object({ sku: SkuRef(), warehouseCode: Str(32), qty: IntegerLike({ minimum: 0, maximum: MAX_STOCK_QTY }) });
export type StockSetRow = Static<typeof StockSetRow>;
export const StockAdjustRow = Type.Object({
  sku: SkuRef(),
  warehouseCode: Str(32),
  delta: IntegerLike({ minimum: -MAX_STOCK_QTY, maximum: MAX_STOCK_QTY }),
});
export type StockAdjustRow = Static<typeof StockAdjustRow>;

export const StockSetBody = Type.Object({ items: Type.Array(StockSetRow, { minItems: 1, maxItems: 1000 }) });
export const StockAdjustBody = Type.Object({ items: Type.Array(StockAdjustRow, { minItems: 1, maxItems: 1000 }) });

export const ChannelBody = Type.Object({
  channelCode: Str(32),
  name: Str(128),
  channelType: Str(16),
  warehouseCodes: Type.Array(Str(32), { minItems: 1, maxItems: 100 }),
  countries: Type.Array(CountryOrAny(), { minItems: 1, maxItems: 300 }),
  baseFee: MoneyInput(),
  perKgFee: MoneyInput(),
  deliveryDaysMin: IntegerLike({ minimum: 0, maximum: 365 }),
  deliveryDaysMax: IntegerLike({ minimum: 0, maximum: 365 }),
  carriers: Type.Optional(
    Type.Array(Str(64), {
      maxItems: MAX_CHANNEL_CARRIERS,
      description: 'the carriers the ship form offers for this channel; omitted: the channel keeps the ones it has',
    }),
  ),
  trackingUrlTemplate: Type.Optional(
    Type.Union([Str(1024, 0), Type.Null()], {
      description: 'an https URL with {trackingNo} where the tracking number goes; "" or null: no tracking links; omitted: unchanged',
    }),
  ),
});
export type ChannelBody = Static<typeof ChannelBody>;

const MAX_IMPORT = 10_000;
export const ImportBody = Type.Object({
  warehouses: Type.Optional(Type.Array(WarehouseBody, { maxItems: MAX_IMPORT })),
  categories: Type.Optional(Type.Array(CategoryBody, { maxItems: MAX_IMPORT })),
  products: Type.Optional(Type.Array(ProductBody, { maxItems: MAX_IMPORT })),
  stocks: Type.Optional(Type.Array(StockSetRow, { maxItems: MAX_IMPORT })),
  channels: Type.Optional(Type.Array(ChannelBody, { maxItems: MAX_IMPORT })),
});
export type ImportBody = Static<typeof ImportBody>;

export { SCOPES, type Scope } from '../domain/scopes.ts';

export const MerchantBody = Type.Object({ name: Str(128) });
export const MerchantPatchBody = Type.Object({ status: StringEnum(MERCHANT_STATUSES) });
export const TokenBody = Type.Object({
  scopes: Type.Optional(Type.Array(StringEnum(SCOPES), { minItems: 1, uniqueItems: true })),
  expiresInSeconds: Type.Optional(IntegerLike({ minimum: 60, maximum: 315_360_000 })),
});
export type TokenBody = Static<typeof TokenBody>;

export const IdParams = Type.Object({ id: IdText() });

/** The optional `If-Match` request header, in a route's `headers` schema (and so in the OpenAPI document). */
export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      maxLength: 1000,
      description:
        'The resource’s ETag from a GET (or `*`: it must exist). Another version is answered 412 (code 41200) and nothing is written; without it the write applies whatever the version.',
    }),
  ),
});

export const TokenIdParams = Type.Object({ tokenId: IdText() });
export const AdminSkuParams = Type.Object({ sku: SkuRef() });
export const AdminCodeParams = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) });
