import { Type, type Static } from 'typebox';
import { BILLING_MODES, ENTRY_TYPES } from '../domain/ledger.ts';
import { ENVIRONMENTS } from '../domain/vocabulary.ts';
import { Amount, COERCE_KEYWORD, CURRENCY_CODE, IdString, Instant, MoneyInput, Nullable, PageQueryFields, StringEnum } from './common.ts';

/** SPEC §15: a merchant's account in one environment. */
export const AccountRecord = Type.Object({
  environment: StringEnum(ENVIRONMENTS),
  currency: Type.String({ description: CURRENCY_CODE }),
  balance: Amount('what the supplier holds for the merchant: negative when the merchant owes'),
  creditLimit: Amount('how far below zero a prepaid account may go'),
  available: Amount('balance + creditLimit: what a prepaid account can still be charged'),
  billingMode: StringEnum(BILLING_MODES, {
    description: '`on_account`: charged without limit; `prepaid`: an order needs `available` to cover it (else 42203)',
  }),
  lowBalanceThreshold: Nullable(Amount(), { description: '`balance.low` is sent when `available` falls below it' }),
});

export const TransactionRecord = Type.Object({
  id: IdString(),
  seq: Type.Integer({
    minimum: 1,
    description: "its place in the account's sequence (1, 2, 3, …): the order postings changed the balance; pass the last one you saw as `afterSeq` to sync",
  }),
  type: StringEnum(ENTRY_TYPES),
  amount: Amount('signed: negative for a charge, positive for a credit'),
  balanceAfter: Amount(),
  currency: Type.String({ description: CURRENCY_CODE }),
  orderId: Nullable(IdString()),
  refundNo: Nullable(IdString()),
  reference: Nullable(Type.String()),
  description: Type.String(),
  createDate: Instant(),
});

export const TransactionsPage = Type.Object({
  total: Type.Integer({ description: 'counted up to 10,000 (then exactly 10,000: "10,000 or more")' }),
  pageNumber: Type.Integer(),
  pageSize: Type.Integer(),
  list: Type.Array(TransactionRecord),
  nextCursor: Nullable(Type.String()),
});

export const TransactionsQuery = Type.Object({
  type: Type.Optional(StringEnum(ENTRY_TYPES)),
  createStartTime: Type.Optional(Type.String({ maxLength: 64 })),
  createEndTime: Type.Optional(Type.String({ maxLength: 64 })),
  ...PageQueryFields(250, { pageNumber: 'page by number (default 1); not with `cursor`', pageSize: 'default 20' }),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: 'continue a keyset walk: `nextCursor` of the previous page, unchanged' })),
  afterSeq: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      description: 'sync: the entries after this `seq`, oldest first (0: from the first); never skips a committed entry. Not with `cursor` or `pageNumber`',
    }),
  ),
});
export type TransactionsQuery = Static<typeof TransactionsQuery>;

const Environment = StringEnum(ENVIRONMENTS);

export const AccountEnvironmentQuery = Type.Object({ environment: Type.Optional(Environment) });
export const AdminTransactionsQuery = Type.Object({ ...TransactionsQuery.properties, environment: Type.Optional(Environment) });
export type AdminTransactionsQuery = Static<typeof AdminTransactionsQuery>;

/** A money amount that may be negative (an adjustment), as a number or a decimal string with at most two decimals. */
const SignedMoneyInput = () =>
  Type.Unsafe<number>({
    anyOf: [Type.Number(), Type.String({ pattern: '^-?[0-9]+(\\.[0-9]{1,2})?$' })],
    description: 'a signed amount with at most two decimals, as a number or a string ("-12.50")',
    [COERCE_KEYWORD]: 'signedCents',
  });

export const AccountPatchBody = Type.Object(
  {
    environment: Type.Optional(
      StringEnum(ENVIRONMENTS, { description: 'the `?environment=` query parameter (SPEC §15); accepted here too, and must agree with it' }),
    ),
    billingMode: Type.Optional(StringEnum(BILLING_MODES)),
    creditLimit: Type.Optional(MoneyInput()),
    lowBalanceThreshold: Type.Optional(Type.Union([MoneyInput(), Type.Null()])),
  },
  { additionalProperties: false },
);
export type AccountPatchBody = Static<typeof AccountPatchBody>;

export const TopUpBody = Type.Object(
  {
    environment: Environment,
    amount: MoneyInput(),
    reference: Type.String({ minLength: 1, maxLength: 128, description: "the payment's reference; a repeat with the same one posts nothing" }),
  },
  { additionalProperties: false },
);
export type TopUpBody = Static<typeof TopUpBody>;

export const AdjustmentBody = Type.Object(
  {
    environment: Environment,
    amount: SignedMoneyInput(),
    reason: Type.String({ minLength: 1, maxLength: 500, description: 'why; shown to the merchant' }),
  },
  { additionalProperties: false },
);
export type AdjustmentBody = Static<typeof AdjustmentBody>;

export const PostedEntry = Type.Object({ replayed: Type.Boolean(), transaction: TransactionRecord, account: AccountRecord });
