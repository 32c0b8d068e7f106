import { Type, type Static } from 'typebox';
import { Amount, CountryCode, IdString, IdText, Instant, IntegerLike, Nullable, OptStr, Page, SkuRef, StringEnum, PageQueryFields } from './common.ts';
import { REFUND_REASONS } from '../domain/refunds.ts';
import { REFUND_STATES, type RefundState } from '../domain/vocabulary.ts';

const OptId = () => Type.Optional(Type.Union([IntegerLike({ minimum: 1 }), Type.Null()], { description: 'an item id (digits)' }));
const OptQuantity = () => Type.Optional(Type.Union([IntegerLike({ minimum: 1 }), Type.Null()], { description: 'a positive integer' }));
const OptCountry = () => Type.Optional(Type.Union([CountryCode(), Type.Null()], { description: 'an ISO 3166-1 alpha-2 country code' }));
/** Empty means "not given" (the line is then named by itemId); otherwise compared in NFC like every SKU. */
const OptSku = () => Type.Optional(Type.Union([SkuRef(0), Type.Null()], { description: 'a SKU code of at most 64 characters' }));

export const RefundItemBody = Type.Object({ itemId: OptId(), skuCode: OptSku(), quantity: OptQuantity(), countryCode: OptCountry() });

/** Seed §2.5 (SPEC §5.1); one item's fields may also come flat at the top level. */
export const RefundBody = Type.Object({
  remark: OptStr(500),
  refundReason: OptStr(64),
  // SPEC §5.1: an empty list is refused, and so is anything but a list — `null` too (leave
  // orderItems out to refund the whole order; Hardening III).
  orderItems: Type.Optional(
    Type.Array(RefundItemBody, { minItems: 1, maxItems: 100, description: 'the lines to refund; leave it out (not null) to refund the whole order' }),
  ),
  itemId: OptId(),
  skuCode: OptSku(),
  quantity: OptQuantity(),
  countryCode: OptCountry(),
});
export type RefundBody = Static<typeof RefundBody>;

export const RefundPageQuery = Type.Object({
  ...PageQueryFields(250),
});
export type RefundPageQuery = Static<typeof RefundPageQuery>;

export const AdminRefundQuery = Type.Object({
  ...RefundPageQuery.properties,
  status: Type.Optional(Type.Unsafe<RefundState>({ type: 'string', enum: [...REFUND_STATES] })),
  manualReview: Type.Optional(
    Type.Boolean({ description: 'true: only refunds the worker parked after REFUND_MAX_ATTEMPTS failed attempts; false: only the others' }),
  ),
});
export type AdminRefundQuery = Static<typeof AdminRefundQuery>;

export const DecisionBody = Type.Object({ reason: OptStr(500) });
export const RefundNoParams = Type.Object({ refundNo: IdText('a refund number') });
export const ShipBody = Type.Object({ carrier: Type.String({ minLength: 1, maxLength: 64 }), trackingCode: Type.String({ minLength: 1, maxLength: 64 }) });
export type ShipBody = Static<typeof ShipBody>;
/** The operator's cancellation of a split order that has not shipped: why (kept in the audit log). */
export const CancelSplitBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500, description: 'why the split order is cancelled; kept in the audit log' }) },
  { additionalProperties: false },
);

/** `data` of a refund request: the refund number. */
export const RefundNo = IdString('the refund number');

/** SPEC §5.5 (`presentRefund`). */
export const RefundRecord = Type.Object({
  refundNo: IdString(),
  id: IdString('the order id (kkOrderId)'),
  remark: Nullable(Type.String()),
  refundReason: StringEnum(REFUND_REASONS),
  refundStatus: StringEnum(REFUND_STATES),
  failureReason: Nullable(Type.String({ description: 'set when refundStatus is refund_failed' })),
  amount: Amount("Σ unit amount × quantity, plus a split order's freight when all its items are refunded; an estimate until decided"),
  items: Type.Array(Type.Object({ itemId: IdString(), skuCode: Type.String(), quantity: Type.Integer(), countryCode: Type.String() })),
  createDate: Instant(),
  updateDate: Instant(),
});
export type RefundRecord = Static<typeof RefundRecord>;
export const RefundPage = Page(RefundRecord);
