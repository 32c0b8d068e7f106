import { Type, type Static } from 'typebox';
import { SCOPES } from '../domain/scopes.ts';
import { ENVIRONMENTS, WEBHOOK_DELIVERY_STATUSES } from '../domain/vocabulary.ts';
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

/** The console's refund list (GET /console/refunds/all and its CSV): every field may be blank. */
export const RefundListQuery = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 32 })),
  merchant: Type.Optional(Type.String({ maxLength: 32 })),
  from: Type.Optional(Type.String({ maxLength: 32 })),
  to: Type.Optional(Type.String({ maxLength: 32 })),
  after: Type.Optional(Type.String({ maxLength: 40 })),
});

/** The console's merchant page: where its token and client lists stand (ids its links gave; blank: the first page). */
export const MerchantPageQuery = Type.Object({
  tokensBefore: Type.Optional(Type.String({ maxLength: 20 })),
  clientsAfter: Type.Optional(Type.String({ maxLength: 20 })),
});

export const ConsoleIdParams = Type.Object({ id: IdText() });
export const ConsoleTokenParams = Type.Object({ id: IdText(), tokenId: IdText() });
export const ConsoleDeliveryParams = Type.Object({ id: IdText(), deliveryId: IdText() });
export const ConsoleMemberParams = Type.Object({ id: IdText(), userId: IdText() });
export const ConsoleInvitationParams = Type.Object({ id: IdText(), invitationId: IdText() });

export const ShipForm = Type.Object({
  ...Csrf,
  carrier: Type.String({ minLength: 1, maxLength: 64 }),
  trackingCode: Type.String({ minLength: 1, maxLength: 64 }),
});

export const ActionForm = Type.Object(Csrf);

/** The internal note on an order (empty: remove it); the service holds it to its length. */
export const OrderNoteForm = Type.Object({ ...Csrf, note: Type.String({ maxLength: 10_000 }) });

export const CancelSplitForm = Type.Object({ ...Csrf, reason: Type.String({ minLength: 1, maxLength: 500 }) });

/** `confirmDuplicate`: ticked when the console warned that another merchant has this name and the operator creates it anyway. */
export const MerchantForm = Type.Object({
  ...Csrf,
  name: Type.String({ minLength: 1, maxLength: 128 }),
  confirmDuplicate: Type.Optional(Type.Literal('yes')),
});

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

/** SPEC §15 money forms on the merchant page; amounts arrive as typed ("12.50", "-3"). */
const Environment = StringEnum(['sandbox', 'production'] as const);
const AmountText = (signed: boolean) =>
  Type.String({ minLength: 1, maxLength: 24, pattern: signed ? '^\\s*[+-]?[0-9]{1,16}(\\.[0-9]{1,2})?\\s*$' : '^\\s*[0-9]{1,16}(\\.[0-9]{1,2})?\\s*$' });

export const TopUpForm = Type.Object({
  ...Csrf,
  environment: Environment,
  amount: AmountText(false),
  reference: Type.String({ minLength: 1, maxLength: 128 }),
});
export type TopUpForm = Static<typeof TopUpForm>;

/** `formKey`: one random key per rendered form, so a double click or a resubmission posts once. */
export const AdjustmentForm = Type.Object({
  ...Csrf,
  environment: Environment,
  amount: AmountText(true),
  reason: Type.String({ minLength: 1, maxLength: 500 }),
  formKey: Type.String({ minLength: 16, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' }),
});
export type AdjustmentForm = Static<typeof AdjustmentForm>;

export const AccountTermsForm = Type.Object({
  ...Csrf,
  environment: Environment,
  billingMode: StringEnum(['on_account', 'prepaid'] as const),
  creditLimit: AmountText(false),
  lowBalanceThreshold: Type.Optional(Type.Union([Type.Literal(''), AmountText(false)])),
  /** The terms version the form was read at (docs/web.md, "Edit conflicts"). */
  version: Type.Optional(Type.String({ maxLength: 16 })),
});
export type AccountTermsForm = Static<typeof AccountTermsForm>;

export const TransactionsPageQuery = Type.Object({ environment: Type.Optional(Environment), cursor: Type.Optional(Type.String({ maxLength: 1024 })) });

/**
 * The Books page (issue 41, 9): its environment, and the period of the journal export — a month,
 * or from and to days; blank fields are sent by the form and mean "not given" (the service says
 * which one is malformed or missing).
 */
const Period = {
  month: Type.Optional(Type.String({ maxLength: 16 })),
  from: Type.Optional(Type.String({ maxLength: 16 })),
  to: Type.Optional(Type.String({ maxLength: 16 })),
};
export const BooksQuery = Type.Object({ environment: Type.Optional(StringEnum(ENVIRONMENTS)) });
export const JournalQuery = Type.Object({ environment: Type.Optional(StringEnum(ENVIRONMENTS)), ...Period });
export type JournalQuery = Static<typeof JournalQuery>;

/** A bank statement to match: the period, and the file's text in a form field (as the import's: docs/decisions.md, "Console import uploads"). */
export const BankMatchForm = Type.Object({
  ...Csrf,
  environment: Type.Optional(StringEnum(ENVIRONMENTS)),
  ...Period,
  fileName: Type.Optional(Type.String({ maxLength: 200 })),
  fileText: Type.Optional(Type.String()),
});
export type BankMatchForm = Static<typeof BankMatchForm>;
