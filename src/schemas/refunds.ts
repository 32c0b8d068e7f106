import { Type, type Static } from 'typebox';
import { Amount, IdString, Instant, IntegerLike, Nullable, OptStr, OrNull, Page, StringEnum } from './common.ts';
import { REFUND_REASONS } from '../domain/refunds.ts';

const OptId = () => Type.Optional(Type.Union([IntegerLike({ minimum: 1 }), Type.Null()], { description: 'an item id (digits)' }));
const OptQuantity = () => Type.Optional(Type.Union([IntegerLike({ minimum: 1 }), Type.Null()], { description: 'a positive integer' }));
const OptCountry = () => Type.Optional(Type.Union([Type.String({ pattern: '^[A-Za-z]{2}$' }), Type.Null()], { description: 'a two-letter country code' }));

export const RefundItemBody = Type.Object({ itemId: OptId(), skuCode: OptStr(64), quantity: OptQuantity(), countryCode: OptCountry() });

/** Seed §2.5 (SPEC §5.1); one item's fields may also come flat at the top level. */
export const RefundBody = Type.Object({
  remark: OptStr(500),
  refundReason: OptStr(64),
  orderItems: Type.Optional(OrNull(Type.Array(RefundItemBody, { maxItems: 100 }))),
  itemId: OptId(),
  skuCode: OptStr(64),
  quantity: OptQuantity(),
  countryCode: OptCountry(),
});
export type RefundBody = Static<typeof RefundBody>;

export const RefundPageQuery = Type.Object({
  pageNumber: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 250 })),
});
export type RefundPageQuery = Static<typeof RefundPageQuery>;

export const AdminRefundQuery = Type.Object({
  ...RefundPageQuery.properties,
  status: Type.Optional(Type.Unsafe<'pending_review' | 'refund_successfully' | 'refund_failed'>({ type: 'string', enum: ['pending_review', 'refund_successfully', 'refund_failed'] })),
});
export type AdminRefundQuery = Static<typeof AdminRefundQuery>;

export const DecisionBody = Type.Object({ reason: OptStr(500) });
export const RefundNoParams = Type.Object({ refundNo: Type.String({ pattern: '^[0-9]{1,18}$', description: 'a refund number' }) });
export const ShipBody = Type.Object({ carrier: Type.String({ minLength: 1, maxLength: 64 }), trackingCode: Type.String({ minLength: 1, maxLength: 64 }) });
export type ShipBody = Static<typeof ShipBody>;

/** `data` of a refund request: the refund number. */
export const RefundNo = IdString('the refund number');

export const REFUND_STATES = ['pending_review', 'refund_successfully', 'refund_failed'] as const;

/** SPEC §5.5 (`presentRefund`). */
export const RefundRecord = Type.Object({
  refundNo: IdString(),
  id: IdString('the order id (kkOrderId)'),
  remark: Nullable(Type.String()),
  refundReason: StringEnum(REFUND_REASONS),
  refundStatus: StringEnum(REFUND_STATES),
  failureReason: Nullable(Type.String({ description: 'set when refundStatus is refund_failed' })),
  amount: Amount('Σ unit amount × quantity, plus a split order\'s freight when all its items are refunded; an estimate until decided'),
  items: Type.Array(Type.Object({ itemId: IdString(), skuCode: Type.String(), quantity: Type.Integer(), countryCode: Type.String() })),
  createDate: Instant(),
  updateDate: Instant(),
});
export type RefundRecord = Static<typeof RefundRecord>;
export const RefundPage = Page(RefundRecord);
