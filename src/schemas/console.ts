import { Type, type Static } from 'typebox';
import { AUDIT_ACTIONS } from '../domain/audit.ts';
import { STAFF_ROLES } from '../domain/staff.ts';
import { IdText, SkuRef, Str, StringEnum } from './common.ts';

/** Console forms arrive form-encoded; every field is a string (SPEC §1 Text holds, and trims them). */
export const SignInForm = Type.Object({
  email: Type.String({ maxLength: 254 }),
  password: Type.String({ maxLength: 256 }),
});
export type SignInForm = Static<typeof SignInForm>;

/**
 * The sign-in page after a write that ended the session (no session is left to carry a notice):
 * `reset=1` after a password reset link was used, `everywhere=1` after "sign out everywhere".
 * The business manager's sign-in page takes the same.
 */
export const SignInQuery = Type.Object({ reset: Type.Optional(Type.Literal('1')), everywhere: Type.Optional(Type.Literal('1')) });

/** Every state-changing form carries the session's synchronizer token (or sends it as X-CSRF-Token). */
export const CsrfForm = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 128 })) });
export type CsrfForm = Static<typeof CsrfForm>;

/** Changing one's own password: the current one, and the new one twice (Hardening III, 5). */
export const ChangePasswordForm = Type.Object({
  _csrf: Type.Optional(Type.String({ maxLength: 128 })),
  current: Type.String({ maxLength: 256 }),
  password: Type.String({ maxLength: 256 }),
  confirm: Type.String({ maxLength: 256 }),
});

/** A staff password reset link (issue 32, 5): the link's token, and the new password twice (no session, so no CSRF token). */
export const ResetLinkParams = Type.Object({ token: Type.String({ maxLength: 64 }) });
export const ResetPasswordForm = Type.Object({
  username: Type.Optional(Type.String({ maxLength: 254 })),
  password: Type.String({ maxLength: 256 }),
  confirm: Type.String({ maxLength: 256 }),
});

export const RefundDecisionForm = Type.Object({
  _csrf: Type.Optional(Type.String({ maxLength: 128 })),
  reason: Type.Optional(Type.String({ maxLength: 500 })),
});
export type RefundDecisionForm = Static<typeof RefundDecisionForm>;

export const ConsoleRefundParams = Type.Object({ refundNo: IdText('a refund number') });

// ---- Claims after shipment (SPEC §18): the queue's filters and the decisions' forms.

export const ConsoleClaimQuery = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 32 })),
  merchant: Type.Optional(Type.String({ maxLength: 32 })),
  reason: Type.Optional(Type.String({ maxLength: 32 })),
  page: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })),
});
export type ConsoleClaimQuery = Static<typeof ConsoleClaimQuery>;

export const ConsoleClaimParams = Type.Object({ claimNo: IdText('a claim number') });
export const ConsoleClaimFileParams = Type.Object({ fileId: IdText('an evidence file id') });

/** Approve (with or without the return), reject, received, resolution: one form shape, each route reads its field. */
export const ClaimDecisionForm = Type.Object({
  _csrf: Type.Optional(Type.String({ maxLength: 128 })),
  note: Type.Optional(Type.String({ maxLength: 500 })),
  reason: Type.Optional(Type.String({ maxLength: 500 })),
  warehouseCode: Type.Optional(Type.String({ maxLength: 32 })),
  resolution: Type.Optional(Type.String({ maxLength: 16 })),
});
export type ClaimDecisionForm = Static<typeof ClaimDecisionForm>;

export const ConsolePageQuery = Type.Object({ page: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })) });
export type ConsolePageQuery = Static<typeof ConsolePageQuery>;

// ---- Catalogue, stock, import, staff and audit pages (issue 16).

export const ProductSearchQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: 100 })),
  /** The last SKU of the previous page (keyset). */
  after: Type.Optional(SkuRef()),
});
export type ProductSearchQuery = Static<typeof ProductSearchQuery>;

export const ConsoleSkuParams = Type.Object({ sku: SkuRef() });

/** A ledger page continues below this ledger row id. */
export const StockHistoryQuery = Type.Object({ before: Type.Optional(IdText('a ledger row id')) });

/**
 * One relative change of one SKU in one warehouse; the reason goes into the audit log and onto the
 * ledger row. The change is text as typed (`+20`, `-5`): domain/stock-adjustment.ts reads it, so
 * a mistyped one comes back on the form with what to type.
 */
export const StockAdjustForm = Type.Object({
  _csrf: Type.Optional(Type.String({ maxLength: 128 })),
  warehouseCode: Str(32),
  delta: Type.String({ maxLength: 32 }),
  reason: Str(500),
});
export type StockAdjustForm = Static<typeof StockAdjustForm>;

/**
 * An import upload: the file's text in a form field (console.js fills it from the file picker;
 * without script it is pasted), and the file's name, whose extension says JSON or CSV.
 */
export const ImportForm = Type.Object({
  _csrf: Type.Optional(Type.String({ maxLength: 128 })),
  fileName: Type.String({ minLength: 5, maxLength: 200, pattern: '^[^/\\\\]+\\.(csv|json|CSV|JSON)$' }),
  fileText: Type.String({ minLength: 1 }),
});
export type ImportForm = Static<typeof ImportForm>;

export const ImportJobParams = Type.Object({ jobId: Type.String({ pattern: '^[A-Za-z0-9]{24}$' }) });
export const ImportPreviewParams = Type.Object({ previewId: Type.String({ pattern: '^[A-Za-z0-9]{24}$' }) });
/** Which CSV template to download: products (the default) or stocks. */
export const ImportTemplateQuery = Type.Object({ kind: Type.Optional(StringEnum(['products', 'stocks'] as const)) });

export const StaffParams = Type.Object({ staffId: IdText('a staff id') });

export const StaffCreateForm = Type.Object({
  _csrf: Type.Optional(Type.String({ maxLength: 128 })),
  email: Type.String({ maxLength: 254 }),
  role: StringEnum(STAFF_ROLES),
});
export type StaffCreateForm = Static<typeof StaffCreateForm>;

export const StaffRoleForm = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 128 })), role: StringEnum(STAFF_ROLES) });
export type StaffRoleForm = Static<typeof StaffRoleForm>;

/** The audit page's filters (empty = any) and keyset position. */
export const AuditQuery = Type.Object({
  /** `kind:id`, as the page shows it: `staff:7000000000001`, `admin_key:key_…`, `cli:root`. */
  actor: Type.Optional(Type.String({ maxLength: 200 })),
  action: Type.Optional(Type.Union([Type.Literal(''), StringEnum(AUDIT_ACTIONS)])),
  target: Type.Optional(Type.String({ maxLength: 300 })),
  cursor: Type.Optional(Type.String({ maxLength: 32 })),
});
export type AuditQuery = Static<typeof AuditQuery>;

// ---- Catalogue forms: product, warehouse and logistics channel (issue 29, 9–10).
// Every field arrives as typed; the page builds the operator API's body from them and checks it
// with the API's own schema (ProductBody, WarehouseBody, ChannelBody), so both follow one rule.

const Field = (maxLength: number) => Type.Optional(Type.String({ maxLength }));

export const ProductForm = Type.Object({
  _csrf: Type.Optional(Type.String({ maxLength: 128 })),
  /** The version the edit form was read at (docs/web.md, "Edit conflicts"); none on a create form. */
  version: Field(16),
  sku: Field(200),
  name: Field(1000),
  categoryId: Field(32),
  price: Field(32),
  weightGrams: Field(32),
  imageUrl: Field(2048),
  /** A JSON object (the product's options and variants as the catalogue keeps them), or empty. */
  optionsJson: Field(20_000),
});
export type ProductForm = Static<typeof ProductForm>;

export const WarehouseForm = Type.Object({
  _csrf: Type.Optional(Type.String({ maxLength: 128 })),
  /** The version the edit form was read at (docs/web.md, "Edit conflicts"); none on a create form. */
  version: Field(16),
  warehouseCode: Field(200),
  name: Field(1000),
  countryCode: Field(16),
  countryName: Field(200),
  status: Field(8),
});
export type WarehouseForm = Static<typeof WarehouseForm>;

export const ChannelForm = Type.Object({
  _csrf: Type.Optional(Type.String({ maxLength: 128 })),
  /** The version the edit form was read at (docs/web.md, "Edit conflicts"); none on a create form. */
  version: Field(16),
  channelCode: Field(200),
  name: Field(1000),
  channelType: Field(32),
  /** One checkbox per warehouse: absent, one code, or several. */
  warehouseCodes: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 200 })])),
  /** Country codes separated by commas or spaces, or `*`. */
  countries: Field(2000),
  baseFee: Field(32),
  perKgFee: Field(32),
  deliveryDaysMin: Field(16),
  deliveryDaysMax: Field(16),
  /** One carrier a line. */
  carrierList: Field(4000),
  trackingUrlTemplate: Field(2048),
});
export type ChannelForm = Static<typeof ChannelForm>;

export const WarehouseCodeParams = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) });
export const ChannelCodeParams = Type.Object({ code: Type.String({ minLength: 1, maxLength: 64 }) });
