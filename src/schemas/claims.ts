import { Type, type Static } from 'typebox';
import { CLAIM_REASONS, CLAIM_RESOLUTIONS, CLAIM_STATUSES, EVIDENCE_TYPES, MAX_CLAIM_EVIDENCE, MAX_CLAIM_LINES } from '../domain/claims.ts';
import { Amount, IdLike, IdString, IdText, Instant, IntegerLike, Nullable, OptStr, PageQueryFields, SkuRef, Str, StringEnum } from './common.ts';

/** SPEC §18: `POST /openapi/v1/claims`. */
export const OpenClaimBody = Type.Object({
  orderId: Type.Unsafe<number>({ ...IdLike(), description: 'the split order id (`splitOrders[].id` of the order) whose parcel the claim is about' }),
  reason: StringEnum(CLAIM_REASONS),
  resolution: StringEnum(CLAIM_RESOLUTIONS, {
    description: '`refund`: credit the account; `reship`: send the lines again in a replacement order, charged nothing',
  }),
  items: Type.Array(Type.Object({ sku: SkuRef(), quantity: IntegerLike({ minimum: 1, maximum: 1_000_000_000 }) }), {
    minItems: 1,
    maxItems: MAX_CLAIM_LINES,
    description: 'the SKUs of the split order and how many of each are claimed; each SKU once',
  }),
  description: OptStr(2000),
  evidence: Type.Optional(
    Type.Array(Type.Unsafe<number>({ ...IdLike(), description: 'a `fileId` from `POST /openapi/v1/claims/files`' }), {
      maxItems: MAX_CLAIM_EVIDENCE,
      description: `at most ${MAX_CLAIM_EVIDENCE} files, each uploaded by this merchant and on no other claim`,
    }),
  ),
});
export type OpenClaimBody = Static<typeof OpenClaimBody>;

export const ClaimReturnBody = Type.Object({ carrier: Str(64), trackingCode: Str(64) });
export type ClaimReturnBody = Static<typeof ClaimReturnBody>;

export const ClaimNoParams = Type.Object({ claimNo: IdText('a claim number') });
export const FileIdParams = Type.Object({ fileId: IdText('an evidence file id') });

/** `data` of an evidence upload. */
export const UploadedEvidence = Type.Object({
  fileId: IdString(),
  size: Type.Integer({ description: 'bytes' }),
  contentType: StringEnum(EVIDENCE_TYPES, { description: 'as read from the bytes (the declared type must agree)' }),
});

export const ClaimListQuery = Type.Object({
  status: Type.Optional(StringEnum(CLAIM_STATUSES)),
  orderId: Type.Optional(IdText('only the claims on this split order (or on any split order of this kkOrderId)')),
  createStartTime: Type.Optional(Type.String({ maxLength: 64 })),
  createEndTime: Type.Optional(Type.String({ maxLength: 64 })),
  ...PageQueryFields(250, { pageNumber: 'page by number (default 1); not with `cursor`', pageSize: 'default 20' }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'continue a keyset walk: `nextCursor` of the previous page, unchanged' })),
});
export type ClaimListQuery = Static<typeof ClaimListQuery>;

export const AdminClaimQuery = Type.Object({
  status: Type.Optional(StringEnum(CLAIM_STATUSES)),
  ...PageQueryFields(250),
});
export type AdminClaimQuery = Static<typeof AdminClaimQuery>;

export const ApproveClaimBody = Type.Object({
  returnRequired: Type.Optional(
    Type.Boolean({ description: 'true: the goods come back first (`awaiting_return`); the claim resolves when they are received' }),
  ),
  note: OptStr(500),
});
export type ApproveClaimBody = Static<typeof ApproveClaimBody>;

export const RejectClaimBody = Type.Object({
  reason: Type.String({ minLength: 1, maxLength: 500, description: 'why; the merchant sees it as `decisionReason`' }),
});
export type RejectClaimBody = Static<typeof RejectClaimBody>;

export const ReceiveClaimBody = Type.Object({ warehouseCode: Str(32) });
export type ReceiveClaimBody = Static<typeof ReceiveClaimBody>;

export const ClaimResolutionBody = Type.Object({ resolution: StringEnum(CLAIM_RESOLUTIONS) });
export type ClaimResolutionBody = Static<typeof ClaimResolutionBody>;

/** SPEC §18 (`presentClaim`). */
export const ClaimRecord = Type.Object({
  claimNo: IdString(),
  orderId: IdString('the split order id'),
  parentOrderId: IdString('the order (kkOrderId) the split order belongs to'),
  status: StringEnum(CLAIM_STATUSES),
  reason: StringEnum(CLAIM_REASONS),
  resolution: StringEnum(CLAIM_RESOLUTIONS),
  items: Type.Array(Type.Object({ sku: Type.String(), quantity: Type.Integer() })),
  description: Nullable(Type.String()),
  evidence: Type.Array(IdString('a fileId')),
  amount: Nullable(Amount('the credit, once credited')),
  replacementOrderId: Nullable(IdString('the replacement order (kkOrderId), once reshipped')),
  returnRequired: Type.Boolean(),
  returnTracking: Nullable(Type.Object({ carrier: Type.String(), trackingCode: Type.String() })),
  decisionReason: Nullable(Type.String({ description: "the rejection's reason, the approval's note, or why a reshipment could not be made" })),
  createDate: Instant(),
  updateDate: Instant(),
});
export type ClaimRecord = Static<typeof ClaimRecord>;

export const OpenedClaim = Type.Object({ claimNo: IdString(), status: Type.Literal('open') });

export const ClaimPage = Type.Object({
  total: Type.Integer({ description: 'counted up to 10,000 (then exactly 10,000: "10,000 or more")' }),
  pageNumber: Type.Integer(),
  pageSize: Type.Integer(),
  list: Type.Array(ClaimRecord),
  nextCursor: Nullable(Type.String()),
});

/** The operator's queue: each claim with its merchant and whether it is past CLAIM_SLA_HOURS. */
export const AdminClaimRecord = Type.Object({
  ...ClaimRecord.properties,
  merchantId: IdString(),
  ageSeconds: Type.Integer(),
  overSla: Type.Boolean({ description: 'open for longer than CLAIM_SLA_HOURS' }),
});
export type AdminClaimRecord = Static<typeof AdminClaimRecord>;

export const AdminClaimPage = Type.Object({ total: Type.Integer(), pageNumber: Type.Integer(), pageSize: Type.Integer(), list: Type.Array(AdminClaimRecord) });
