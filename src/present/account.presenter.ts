import { centsToAmount } from '../domain/money.ts';
import { formatInstant } from '../domain/time.ts';
import type { AccountRow, EntryRow } from '../store/ledger.repository.ts';

/** SPEC §15: `{currency, balance, creditLimit, available, billingMode, lowBalanceThreshold}` (and the environment it is of). */
export const presentAccount = (a: AccountRow) => ({
  environment: a.environment,
  currency: a.currency,
  balance: centsToAmount(a.balance_cents),
  creditLimit: centsToAmount(a.credit_limit_cents),
  available: centsToAmount(a.balance_cents + a.credit_limit_cents),
  billingMode: a.billing_mode,
  lowBalanceThreshold: a.low_balance_threshold_cents === null ? null : centsToAmount(a.low_balance_threshold_cents),
});

/** SPEC §15: one transaction; absent links are null. */
export const presentTransaction = (e: EntryRow) => ({
  id: String(e.id),
  seq: e.seq,
  type: e.type,
  amount: centsToAmount(e.amount_cents),
  balanceAfter: centsToAmount(e.balance_after_cents),
  currency: e.currency,
  orderId: e.order_id === null ? null : String(e.order_id),
  refundNo: e.refund_id === null ? null : String(e.refund_id),
  reference: e.reference,
  description: e.description,
  createDate: formatInstant(e.created_at),
});
