import { Type, type Static } from 'typebox';
import { MERCHANT_ROLES } from '../domain/merchant-users.ts';
import { SCOPES } from '../domain/scopes.ts';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT } from '../domain/vocabulary.ts';
import { IdString, IdText, Instant, Str, StringEnum } from './common.ts';

// ---- Operator API: POST /admin/v1/merchants/{id}/users.

export const InviteUserBody = Type.Object({
  email: Str(254, 3),
  role: StringEnum(MERCHANT_ROLES, { description: 'admin: everything incl. the team; developer: credentials, webhooks, read orders; viewer: read only' }),
});
export type InviteUserBody = Static<typeof InviteUserBody>;

export const InvitationCreated = Type.Object({
  invitationId: IdString(),
  merchantId: IdString(),
  email: Type.String(),
  role: StringEnum(MERCHANT_ROLES),
  invitationUrl: Type.String({ description: 'the one-time link (shown once; only its hash is stored)' }),
  expiresAt: Instant('72 hours after the invitation'),
});

/** An open invitation, as the operator API lists it (never its link: only the link's hash is stored). */
const OpenInvitation = Type.Object({
  invitationId: IdString(),
  merchantId: IdString(),
  email: Type.String(),
  role: StringEnum(MERCHANT_ROLES),
  createdBy: Type.String({ description: 'who invited: `<actor kind>:<id>`' }),
  createdAt: Instant(),
  expiresAt: Instant(),
});

export const OpenInvitationList = Type.Object({ list: Type.Array(OpenInvitation) });

export const RevokedInvitation = Type.Object({ invitationId: IdString(), email: Type.String(), revokedAt: Instant() });

export const InvitationIdParams = Type.Object({ id: IdText(), invitationId: IdText() });

// ---- Business manager forms (form-encoded; every field a string, trimmed by SPEC §1 Text).

const Csrf = { _csrf: Type.Optional(Type.String({ maxLength: 128 })) };

export const ManagerCsrfForm = Type.Object(Csrf);

/** `merchant`: the business chosen when the email and password open accounts at several (Hardening III, 6). */
export const ManagerSignInForm = Type.Object({
  email: Type.String({ maxLength: 254 }),
  password: Type.String({ maxLength: 256 }),
  merchant: Type.Optional(IdText()),
});

/** The sign-in code step: a 6-digit TOTP code or a recovery code (`abcd-efgh-jkmn-pqrs`, spaces allowed). */
export const CodeForm = Type.Object({ ...Csrf, code: Type.String({ maxLength: 32 }) });

/** New recovery codes: the current password or a current TOTP code, in one field (issue 29, 13). */
export const RecoveryCodesForm = Type.Object({ ...Csrf, proof: Type.String({ maxLength: 256 }) });

/** Turning two-factor on or off: the current password and a code (Hardening III). */
export const TwoFactorForm = Type.Object({ ...Csrf, password: Type.String({ maxLength: 256 }), code: Type.String({ maxLength: 16 }) });

export const PasswordForm = Type.Object({ password: Type.String({ maxLength: 256 }), confirm: Type.String({ maxLength: 256 }) });

export const InvitationParams = Type.Object({ token: Type.String({ maxLength: 64 }) });

/** Changing one's own password: the current one, and the new one twice (Hardening III, 5). */
export const ChangePasswordForm = Type.Object({
  ...Csrf,
  current: Type.String({ maxLength: 256 }),
  password: Type.String({ maxLength: 256 }),
  confirm: Type.String({ maxLength: 256 }),
});

/** Operator API: a password reset link for the account an address has at this merchant. */
export const PasswordResetBody = Type.Object({ email: Str(254, 3) });

export const PasswordResetCreated = Type.Object({
  merchantId: IdString(),
  email: Type.String(),
  resetUrl: Type.String({ description: 'the one-time link (shown once; only its hash is stored); using it ends every session of the account' }),
  expiresAt: Instant('24 hours after the link was made'),
});

export const ClientForm = Type.Object({ ...Csrf, name: Str(80) });

/** `graceHours`: how long the replaced secret keeps working, 0–24 (checked by domain/oauth.ts, `rotationGraceHours`). */
export const RotateClientForm = Type.Object({ ...Csrf, graceHours: Type.Optional(Type.String({ maxLength: 8 })) });

/**
 * `scopes` repeats (one field per ticked box): a string or a list of them. None ticked reaches the
 * page, which refuses it with its reason (domain/scopes.ts, `tickedScopes`).
 */
export const PersonalTokenForm = Type.Object({
  ...Csrf,
  name: Str(80),
  scopes: Type.Optional(Type.Union([StringEnum(SCOPES), Type.Array(StringEnum(SCOPES), { maxItems: SCOPES.length })])),
  expiresInDays: Type.Optional(Type.String({ pattern: '^(|[1-9][0-9]{0,2})$', description: 'empty: never' })),
});
export type PersonalTokenForm = Static<typeof PersonalTokenForm>;

export const WebhookForm = Type.Object({
  ...Csrf,
  url: Str(2048),
  events: Type.Union([StringEnum(WEBHOOK_EVENT_TYPES), Type.Array(StringEnum(WEBHOOK_EVENT_TYPES), { minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length })]),
});

/**
 * The endpoint's edit form: loose on purpose — the fields become the API's PUT body and are held
 * to its schema (WebhookBody) and its service's rules, so a refusal comes back with its reasons on
 * the form. `skuList`: one SKU a line (or separated by commas or spaces); empty = every SKU.
 */
export const WebhookEditForm = Type.Object({
  ...Csrf,
  url: Type.String({ maxLength: 4096 }),
  events: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 64 })])),
  skuList: Type.Optional(Type.String({ maxLength: 800_000 })),
  /** The endpoint's settings version the form was read at (docs/web.md, "Edit conflicts"). */
  version: Type.Optional(Type.String({ maxLength: 16 })),
});

/** "Send a test event" of a chosen type (webhook.test: a ping). */
export const WebhookTestForm = Type.Object({
  ...Csrf,
  type: Type.Optional(StringEnum([WEBHOOK_TEST_EVENT, ...WEBHOOK_EVENT_TYPES] as const)),
});

export const InviteForm = Type.Object({ ...Csrf, email: Str(254, 3), role: StringEnum(MERCHANT_ROLES) });

export const RoleForm = Type.Object({ ...Csrf, role: StringEnum(MERCHANT_ROLES) });

export const RequireTwoFactorForm = Type.Object({ ...Csrf, required: StringEnum(['on', 'off'] as const) });

export const ManagerIdParams = Type.Object({ id: IdText() });
export const ManagerDeliveryParams = Type.Object({ id: IdText(), deliveryId: IdText() });

/** The order search form: every field may be blank; the service checks each (a 400 names the field). */
export const ManagerOrderQuery = Type.Object({
  q: Type.Optional(
    Type.String({ maxLength: 128, description: 'an order, split-order or custom order id; 3+ characters also match part of one or of the recipient' }),
  ),
  status: Type.Optional(Type.String({ maxLength: 16 })),
  from: Type.Optional(Type.String({ maxLength: 10 })),
  to: Type.Optional(Type.String({ maxLength: 10 })),
  after: Type.Optional(Type.String({ maxLength: 40 })),
});
export type ManagerOrderQuery = Static<typeof ManagerOrderQuery>;

export const ManagerAuditQuery = Type.Object({ before: Type.Optional(IdText()) });

/** The Balance page: a transactions walk continues from `cursor` (the previous page's last row). */
export const BalanceQuery = Type.Object({ cursor: Type.Optional(Type.String({ maxLength: 1024 })) });

/** A monthly statement (SPEC §15): `month` as YYYY-MM (UTC), as CSV or PDF. */
export const StatementQuery = Type.Object({
  month: Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$' }),
  format: Type.Union([Type.Literal('csv'), Type.Literal('pdf')]),
});

// ---- Claims after shipment (SPEC §18) in the business manager.

/** The claims list's filters: every field may be blank; the service checks each (a 400 names the field). */
export const ManagerClaimQuery = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 32 })),
  order: Type.Optional(Type.String({ maxLength: 32, description: 'an order or split order id' })),
  from: Type.Optional(Type.String({ maxLength: 10 })),
  to: Type.Optional(Type.String({ maxLength: 10 })),
  page: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,5}$' })),
});
export type ManagerClaimQuery = Static<typeof ManagerClaimQuery>;

export const ManagerClaimParams = Type.Object({ claimNo: IdText('a claim number') });
export const ManagerClaimFileParams = Type.Object({ fileId: IdText('an evidence file id') });

/** A field that repeats (one per line of the form): a string or a list of them. */
const Repeated = (maxLength: number) => Type.Optional(Type.Union([Type.String({ maxLength }), Type.Array(Type.String({ maxLength }), { maxItems: 100 })]));

/**
 * The claim form (urlencoded, or multipart with its files): loose on purpose — the fields become
 * the API's body and are held to its schema (OpenClaimBody) and its service's rules, so a refusal
 * comes back with its reasons on the form. `sku` and `quantity` repeat, one pair per line of the
 * split order; `evidence` repeats, one per file uploaded already (by the page's script, or by an
 * earlier submission refused).
 */
export const ManagerOpenClaimForm = Type.Object({
  ...Csrf,
  sku: Repeated(64),
  quantity: Repeated(16),
  reason: Type.Optional(Type.String({ maxLength: 32 })),
  resolution: Type.Optional(Type.String({ maxLength: 32 })),
  description: Type.Optional(Type.String({ maxLength: 8000 })),
  evidence: Repeated(20),
});
export type ManagerOpenClaimForm = Static<typeof ManagerOpenClaimForm>;

/** The return's carrier and tracking code (the API's ClaimReturnBody, checked by it). */
export const ManagerClaimReturnForm = Type.Object({
  ...Csrf,
  carrier: Type.String({ maxLength: 200 }),
  trackingCode: Type.String({ maxLength: 200 }),
});
