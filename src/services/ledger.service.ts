import { checkVersion, type VersionCheck } from '../domain/edit-versions.ts';
import { AppError, conflictState, fieldError, notFound } from '../domain/errors.ts';
import type { Actor } from '../domain/audit.ts';
import { centsToAmount } from '../domain/money.ts';
import type { CsvCell, CsvExport } from '../domain/csv.ts';
import {
  availableCents,
  causeOf,
  crossesBelow,
  replayMismatch,
  transferOf,
  decodeEntryCursor,
  encodeEntryCursor,
  formatSigned,
  merchantSide,
  operatorPostingProblem,
  prepaidFloorProblem,
  type AccountChange,
  type BillingMode,
  type FloorRefusal,
  type EntryType,
} from '../domain/ledger.ts';
import { timeWindow } from '../domain/time.ts';
import { presentTransaction } from '../present/account.presenter.ts';
import type { TransactionsQuery } from '../schemas/account.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import { auditIn } from '../store/audit.repository.ts';
import type { Db, Dialect, Trx } from '../store/db.ts';
import {
  chargeOfOrder,
  countEntries,
  entriesAfterSeq,
  entriesPage,
  ensureAccounts,
  entryByCause,
  lockMerchantAccount,
  merchantAccount,
  post,
  postOn,
  updateTerms,
  type Posted,
  type Posting,
  type AccountRow,
  type EntryFilter,
  type EntryRow,
} from '../store/ledger.repository.ts';
import { topUpByReferenceIgnoringCase } from '../store/ledger-references.repository.ts';
import { merchantOfScope } from '../store/merchants.repository.ts';
import { transactionIn, type MerchantScope } from '../store/tenancy.ts';
import { isUniqueViolation } from '../store/faults.ts';
import { emitBalanceLow } from './webhook-events.service.ts';

/** Which account a server's postings go to: the merchant's in this server's environment, in the supplier's currency. */
export interface LedgerSettings {
  env: StockistEnv;
  supplierCurrency: string;
}

/** 422/42203 (SPEC §15): a prepaid account cannot cover the order; nothing is reserved, charged or stored. */
const insufficientFunds = (requiredCents: number, availableCentsNow: number) =>
  new AppError(
    'unprocessable',
    42203,
    `insufficient funds: the order needs ${centsToAmount(requiredCents)} and the account has ${centsToAmount(availableCentsNow)} available`,
    [
      {
        field: 'account',
        message: 'the prepaid account cannot cover the order',
        required: centsToAmount(requiredCents),
        available: centsToAmount(availableCentsNow),
      },
    ],
  );

/**
 * 409/40903 (SPEC §15, docs/decisions.md "The prepaid floor binds the operator too"): the
 * operator's change would leave a prepaid account below −creditLimit; nothing is written. The
 * message carries the numbers (the CLI prints only it), and so does the field error.
 */
const belowFloor = (r: FloorRefusal) =>
  conflictState(r.message, [
    {
      field: r.field,
      message: 'would leave the prepaid account below its floor (balance + creditLimit must stay at or above 0)',
      balance: centsToAmount(r.balanceCents),
      creditLimit: centsToAmount(r.creditLimitCents),
      available: centsToAmount(r.availableCents),
      ...(r.amountCents === null ? {} : { amount: centsToAmount(r.amountCents) }),
      requiredCreditLimit: centsToAmount(r.requiredCreditLimitCents),
    },
  ]);

/** The prepaid floor's verdict on an operator's change to a locked account: throws 409/40903 when it refuses. */
function checkPrepaidFloor(account: AccountRow, change: AccountChange): void {
  const refusal = prepaidFloorProblem(terms(account), change);
  if (refusal) throw belowFloor(refusal);
}

/** Posts the entry, creating the accounts on first use; undefined only when a prepaid account cannot cover a charge. */
async function postOpening(scope: MerchantScope<Trx>, dialect: Dialect, ledger: LedgerSettings, p: Posting, now: number): Promise<Posted | undefined> {
  const posted = await postOn(dialect)(scope, p, now);
  if (posted) return posted;
  // Not moved: the account is missing or cannot cover the charge — or, on PostgreSQL, another
  // server's first posting created it after this statement looked. Open it where it is missing and
  // ask once more: the move itself is what decides whether a prepaid account covers the charge.
  if (!(await merchantAccount(scope, p.environment))) await ensureAccounts(scope, p.environment, ledger.supplierCurrency, now);
  return postOn(dialect)(scope, p, now);
}

/**
 * The order's charge (SPEC §15), the last write of the order's transaction: the check and the
 * charge are one statement, so N concurrent orders against a prepaid balance that covers k of
 * them leave exactly k charged, and a refusal (42203) rolls back everything the order wrote —
 * nothing reserved, nothing stored. Last, because the account row stays locked until the commit
 * and every order of the merchant waits for it (its stock rows were locked first, as everywhere).
 */
export async function chargeOrder(
  scope: MerchantScope<Trx>,
  dialect: Dialect,
  ledger: LedgerSettings,
  orderId: number,
  finalCents: number,
  now: number,
  /** The charge when the stock decrement's statement already posted it (PostgreSQL, `orderChargePosting`). */
  alreadyPosted?: Posted,
): Promise<number> {
  const posted = alreadyPosted ?? (await postOpening(scope, dialect, ledger, orderChargePosting(ledger, orderId, finalCents), now));
  if (!posted) {
    const current = (await merchantAccount(scope, ledger.env))!;
    throw insufficientFunds(finalCents, availableCents(terms(current)));
  }
  await noticeLowBalance(scope, posted.account, merchantSide('order_charge', finalCents), posted.entryId, now);
  return posted.entryId;
}

/** The order's charge as a posting (SPEC §15 `order_charge`): checked against a prepaid account's cover. */
export const orderChargePosting = (ledger: LedgerSettings, orderId: number, finalCents: number): Posting => ({
  environment: ledger.env,
  checkCover: true,
  cause: causeOf.orderCharge(orderId),
  type: 'order_charge',
  transfer: transferOf('order_charge', finalCents),
  orderId,
  description: `Order ${orderId}`,
});

/** `balance.low` when this posting took `available` from at or above the threshold to below it (once per crossing). */
async function noticeLowBalance(scope: MerchantScope<Trx>, after: AccountRow, movedCents: number, entryId: number, now: number): Promise<void> {
  const availableAfter = availableCents(terms(after));
  if (crossesBelow(after.low_balance_threshold_cents, availableAfter - movedCents, availableAfter)) await emitBalanceLow(scope, after, entryId, now);
}

/**
 * A credit back to the account an order was charged to (found by the charge's cause), in the
 * transaction of what causes it. An order placed before the ledger existed was never charged, so
 * nothing is credited for it (docs/money.md): null.
 */
async function creditChargedAccount(
  trx: Trx,
  orderId: number,
  credit: Pick<Posting, 'cause' | 'type' | 'refundId' | 'splitOrderId' | 'reference' | 'description'>,
  amountCents: number,
  now: number,
): Promise<number | null> {
  const charge = await chargeOfOrder(trx, orderId);
  if (!charge) return null;
  const posting = { ...credit, environment: charge.environment, checkCover: false, transfer: transferOf(credit.type, amountCents), orderId };
  const posted = await post(charge.owner, posting, now);
  if (!posted) throw new Error(`${credit.cause}: the account order ${orderId} was charged to is gone`);
  return posted.entryId;
}

/** A succeeded refund's credit (SPEC §15 `refund_credit`), in the decision's transaction. */
export const creditRefund = (trx: Trx, refundId: number, orderId: number, amountCents: number, now: number) =>
  creditChargedAccount(
    trx,
    orderId,
    { cause: causeOf.refundCredit(refundId), type: 'refund_credit', refundId, description: `Refund ${refundId} of order ${orderId}` },
    amountCents,
    now,
  );

/** The credit of a split order the operator cancelled before it shipped (SPEC §15 `cancellation_credit`), in the cancellation's transaction. */
export const creditCancellation = (trx: Trx, splitOrderId: number, orderId: number, amountCents: number, now: number) =>
  creditChargedAccount(
    trx,
    orderId,
    {
      cause: causeOf.cancellationCredit(splitOrderId),
      type: 'cancellation_credit',
      splitOrderId,
      description: `Split order ${splitOrderId} of order ${orderId} cancelled`,
    },
    amountCents,
    now,
  );

/**
 * A claim's credit (SPEC §18 `claim_credit`), in the decision's transaction: unique per claim by its
 * cause, so a claim is credited once whatever runs twice. Its reference is the claim number.
 */
export const creditClaim = (trx: Trx, claimId: number, orderId: number, splitOrderId: number, amountCents: number, now: number) =>
  creditChargedAccount(
    trx,
    orderId,
    {
      cause: causeOf.claimCredit(claimId),
      type: 'claim_credit',
      splitOrderId,
      reference: String(claimId),
      description: `Claim ${claimId} on split order ${splitOrderId} of order ${orderId}`,
    },
    amountCents,
    now,
  );

const terms = (a: AccountRow) => ({ balanceCents: a.balance_cents, billingMode: a.billing_mode, creditLimitCents: a.credit_limit_cents });

/** What a merchant account looks like before any money moved in it (nothing is written to read it). */
function unopened(merchantId: number, ledger: LedgerSettings, environment: StockistEnv): AccountRow {
  return {
    id: 0,
    account_key: '',
    merchant_id: merchantId,
    environment,
    kind: 'merchant',
    currency: ledger.supplierCurrency,
    balance_cents: 0,
    billing_mode: 'on_account',
    credit_limit_cents: 0,
    low_balance_threshold_cents: null,
    // As the row opening it will have: a terms form read before the account opened is not stale.
    terms_version: 1,
    last_seq: 0,
    last_posted_at: 0,
    created_at: 0,
    updated_at: 0,
  };
}

/** The merchant's account in one environment (GET /openapi/v1/account, the operator's GET). */
export async function accountOf(scope: MerchantScope, ledger: LedgerSettings, environment: StockistEnv = ledger.env): Promise<AccountRow> {
  return (await merchantAccount(scope, environment)) ?? unopened(scope.merchantId, ledger, environment);
}

async function merchantOr404(scope: MerchantScope): Promise<void> {
  if (!(await merchantOfScope(scope))) throw notFound('merchant');
}

/** The operator's view of a merchant's account (404 for an unknown merchant). */
export async function accountForOperator(merchant: MerchantScope, ledger: LedgerSettings, environment: StockistEnv): Promise<AccountRow> {
  await merchantOr404(merchant);
  return accountOf(merchant, ledger, environment);
}

export interface TermsChange {
  billingMode?: BillingMode;
  creditLimitCents?: number;
  lowBalanceThresholdCents?: number | null;
}

/**
 * PATCH /admin/v1/merchants/{id}/account: billing mode, credit limit, low-balance threshold; audited
 * with the change. `check`: the terms version the change was made against (the console's form,
 * If-Match); checked on the locked row, so of two changes made against one version only the first
 * is written (412).
 */
export async function changeTerms(
  merchant: MerchantScope<Db>,
  dialect: Dialect,
  ledger: LedgerSettings,
  actor: Actor,
  environment: StockistEnv,
  change: TermsChange,
  now: number,
  check?: VersionCheck,
) {
  await merchantOr404(merchant);
  return transactionIn(merchant, async (scope) => {
    const { merchantId } = scope;
    await ensureAccounts(scope, environment, ledger.supplierCurrency, now);
    const before = (await lockMerchantAccount(scope, dialect, environment))!;
    checkVersion(check, `the ${environment} account's terms`, before.terms_version);
    checkPrepaidFloor(before, { billingMode: change.billingMode, creditLimitCents: change.creditLimitCents });
    const after = await updateTerms(
      scope,
      environment,
      {
        ...(change.billingMode !== undefined ? { billing_mode: change.billingMode } : {}),
        ...(change.creditLimitCents !== undefined ? { credit_limit_cents: change.creditLimitCents } : {}),
        ...(change.lowBalanceThresholdCents !== undefined ? { low_balance_threshold_cents: change.lowBalanceThresholdCents } : {}),
      },
      now,
    );
    await auditIn(
      scope,
      actor,
      {
        action: 'account.update',
        target: `merchant:${merchantId}`,
        before: {
          environment,
          billingMode: before.billing_mode,
          creditLimit: before.credit_limit_cents,
          lowBalanceThreshold: before.low_balance_threshold_cents,
        },
        after: { environment, billingMode: after.billing_mode, creditLimit: after.credit_limit_cents, lowBalanceThreshold: after.low_balance_threshold_cents },
      },
      now,
    );
    return after;
  });
}

export interface OperatorPosting {
  type: 'top_up' | 'adjustment';
  environment: StockistEnv;
  amountCents: number;
  /** top_up: the operator's reference (idempotent on it); adjustment: the reason. */
  text: string;
  /** adjustment: what makes a repeat the same adjustment (an Idempotency-Key, or a fresh one). */
  key?: string;
}

/** The entry an operator posting asks for, field by field: what a replay is compared on. */
function operatorFields(p: OperatorPosting, currency: string) {
  return {
    type: p.type,
    amountCents: merchantSide(p.type, p.amountCents),
    currency,
    environment: p.environment,
    reference: p.type === 'top_up' ? p.text : null,
    description: p.type === 'top_up' ? `Payment received: ${p.text}` : `Adjustment: ${p.text}`,
  };
}

/**
 * POST …/account/top-ups and …/account/adjustments (SPEC §15): a payment received or a signed
 * correction, posted with its audit row in one transaction. A top-up repeated with the same
 * `reference`, whatever its letter case, answers the first one and posts nothing (`replayed`);
 * differing in any field (another amount, another reason under the same Idempotency-Key) it is 409.
 */
export async function postByOperator(merchant: MerchantScope<Db>, dialect: Dialect, ledger: LedgerSettings, actor: Actor, p: OperatorPosting, now: number) {
  await merchantOr404(merchant);
  const attempt = () =>
    transactionIn(merchant, async (scope) => {
      const { merchantId } = scope;
      await ensureAccounts(scope, p.environment, ledger.supplierCurrency, now);
      const account = (await lockMerchantAccount(scope, dialect, p.environment))!;
      const cause = p.type === 'top_up' ? causeOf.topUp(account.id, p.text) : causeOf.adjustment(account.id, p.key ?? crypto.randomUUID());
      // A top-up recorded before references were folded (its cause keeps the case as typed) is found by its reference.
      const existing = (await entryByCause(scope, cause)) ?? (p.type === 'top_up' ? await topUpByReferenceIgnoringCase(scope, account.id, p.text) : undefined);
      // The account as it stands: a repeat moves nothing.
      if (existing) return { entry: existing, replayed: true, account };
      const problem = operatorPostingProblem(p.type, p.amountCents, account.balance_cents);
      if (problem) throw fieldError(problem.field, problem.message);
      const amount = merchantSide(p.type, p.amountCents);
      checkPrepaidFloor(account, { amountCents: amount });
      const posted = await post(
        scope,
        {
          environment: p.environment,
          checkCover: false,
          cause,
          type: p.type,
          transfer: transferOf(p.type, p.amountCents),
          reference: operatorFields(p, account.currency).reference,
          description: operatorFields(p, account.currency).description,
        },
        now,
      );
      // The account exists and is locked: only a broken promise gets here.
      if (!posted) throw new Error(`postByOperator: account ${account.id} did not move`);
      const moved = posted.account;
      const entry = (await entryByCause(scope, cause))!;
      await noticeLowBalance(scope, moved, amount, entry.id, now);
      await auditIn(
        scope,
        actor,
        {
          action: p.type === 'top_up' ? 'account.top_up' : 'account.adjust',
          target: `merchant:${merchantId}`,
          before: { environment: p.environment, balance: account.balance_cents },
          after: {
            environment: p.environment,
            balance: moved.balance_cents,
            entryId: entry.id,
            amount,
            ...(p.type === 'top_up' ? { reference: p.text } : { reason: p.text }),
          },
        },
        now,
      );
      return { entry, replayed: false, account: moved };
    });
  let result: { entry: EntryRow; replayed: boolean; account: AccountRow };
  try {
    result = await attempt();
  } catch (error) {
    // Two identical top-ups at once: the second's entry met the first's cause; answer the first.
    if (!isUniqueViolation(error)) throw error;
    result = await attempt();
  }
  // A repeat names the first posting; differing in anything (amount, reason, …) it is a different request under the same name.
  if (result.replayed) {
    const e = result.entry;
    const requested = operatorFields(p, result.account.currency);
    const differs = replayMismatch(
      { type: e.type, amountCents: e.amount_cents, currency: e.currency, environment: e.environment, reference: e.reference, description: e.description },
      requested,
      p.type === 'top_up' ? ['reference', 'description'] : [],
    );
    if (differs !== null) {
      const [field, name] = p.type === 'top_up' ? ['reference', `reference ${p.text}`] : ['Idempotency-Key', 'this Idempotency-Key'];
      const what = differs === 'amountCents' ? 'amount' : differs === 'description' ? (p.type === 'top_up' ? 'reference' : 'reason') : differs;
      throw new AppError(
        'conflict',
        40900,
        `${name} was already used for a ${e.type.replace('_', '-')} of ${centsToAmount(e.amount_cents)}${differs === 'amountCents' ? '' : ` with another ${what}`}`,
        [{ field, message: `already used for a different ${what}` }],
      );
    }
  }
  return result;
}

export type { EntryType };

/** SPEC §15 paging (§4.6): newest first in the account's sequence; numbered pages or a keyset walk by `cursor`. */
const TRANSACTIONS_PAGE_SIZE = 20;
const TRANSACTIONS_TOTAL_CAP = 10_000;

export async function transactionsOf(scope: MerchantScope, environment: StockistEnv, q: TransactionsQuery) {
  if (q.afterSeq !== undefined) return transactionsAfterSeq(scope, environment, q, q.afterSeq);
  const fromCursor = q.cursor === undefined ? null : decodeEntryCursor(q.cursor);
  if (q.cursor !== undefined && fromCursor === null)
    throw fieldError('cursor', 'is not a cursor this API issued: pass nextCursor of the previous page unchanged');
  if (fromCursor !== null && q.pageNumber !== undefined) throw fieldError('pageNumber', 'cannot be combined with cursor');
  const window = timeWindow(['createStartTime', q.createStartTime], ['createEndTime', q.createEndTime]);
  const filter: EntryFilter = { type: q.type ?? null, createStart: window.start, createEnd: window.end };
  if (fromCursor !== null) {
    const given = (name: string, a: unknown, b: unknown, sent: boolean) => {
      if (sent && a !== b) throw fieldError(name, 'differs from the walk the cursor continues: leave it out or repeat it');
    };
    given('type', filter.type, fromCursor.type, q.type !== undefined);
    given('createStartTime', filter.createStart, fromCursor.createStart, q.createStartTime !== undefined);
    given('createEndTime', filter.createEnd, fromCursor.createEnd, q.createEndTime !== undefined);
    given('pageSize', q.pageSize, fromCursor.pageSize, q.pageSize !== undefined);
    Object.assign(filter, { type: fromCursor.type, createStart: fromCursor.createStart, createEnd: fromCursor.createEnd });
  }
  const pageSize = fromCursor?.pageSize ?? q.pageSize ?? TRANSACTIONS_PAGE_SIZE;
  const pageNumber = fromCursor?.page ?? q.pageNumber ?? 1;
  const account = await merchantAccount(scope, environment);
  if (!account) return { total: 0, pageNumber, pageSize, list: [], nextCursor: null };
  const rows = await entriesPage(scope, account.id, filter, fromCursor?.afterSeq ?? null, fromCursor ? 0 : (pageNumber - 1) * pageSize, pageSize + 1);
  const list = rows.slice(0, pageSize);
  const last = list[list.length - 1];
  const nextCursor =
    rows.length > pageSize
      ? encodeEntryCursor({
          afterSeq: last.seq,
          type: filter.type,
          createStart: filter.createStart,
          createEnd: filter.createEnd,
          pageSize,
          page: pageNumber + 1,
        })
      : null;
  const total = await countEntries(scope, account.id, filter, TRANSACTIONS_TOTAL_CAP);
  return { total, pageNumber, pageSize, list: list.map(presentTransaction), nextCursor };
}

/**
 * `?afterSeq=`: the account's entries after that place in its sequence, oldest first, one page.
 * A sync that passes the last `seq` it saw never misses a committed entry (a time window can: an
 * entry is stamped before it commits, so a window that ended meanwhile may already have been
 * read); the next call's `afterSeq` is the last row's `seq`, and an empty list means caught up.
 */
async function transactionsAfterSeq(scope: MerchantScope, environment: StockistEnv, q: TransactionsQuery, afterSeq: number) {
  if (q.cursor !== undefined) throw fieldError('afterSeq', 'cannot be combined with cursor');
  if (q.pageNumber !== undefined) throw fieldError('afterSeq', 'cannot be combined with pageNumber: pass the last seq you saw instead');
  const window = timeWindow(['createStartTime', q.createStartTime], ['createEndTime', q.createEndTime]);
  const filter: EntryFilter = { type: q.type ?? null, createStart: window.start, createEnd: window.end };
  const pageSize = q.pageSize ?? TRANSACTIONS_PAGE_SIZE;
  const account = await merchantAccount(scope, environment);
  if (!account) return { total: 0, pageNumber: 1, pageSize, list: [], nextCursor: null };
  const rows = await entriesAfterSeq(scope, account.id, filter, afterSeq, pageSize);
  const total = await countEntries(scope, account.id, filter, TRANSACTIONS_TOTAL_CAP);
  return { total, pageNumber: 1, pageSize, list: rows.map(presentTransaction), nextCursor: null };
}

/** The operator's transactions of a merchant's account (404 for an unknown merchant). */
export async function transactionsForOperator(merchant: MerchantScope, environment: StockistEnv, q: TransactionsQuery) {
  await merchantOr404(merchant);
  return transactionsOf(merchant, environment, q);
}

/** Entries read per round trip while a transactions export streams. */
const EXPORT_BATCH = 500;

const TRANSACTION_CSV_COLUMNS = ['id', 'at', 'type', 'description', 'order_id', 'refund_no', 'reference', 'amount', 'balance_after', 'currency'] as const;

/**
 * Every transaction of the merchant's account in `environment`, newest first in its sequence (as the lists show
 * them), as CSV rows read in keyset batches while the file is written.
 */
export function transactionsCsv(scope: MerchantScope, environment: StockistEnv, batch = EXPORT_BATCH): CsvExport {
  const filter: EntryFilter = { type: null, createStart: null, createEnd: null };
  async function* rows() {
    const account = await merchantAccount(scope, environment);
    if (!account) return;
    let afterSeq: number | null = null;
    for (;;) {
      const page = await entriesPage(scope, account.id, filter, afterSeq, 0, batch);
      for (const e of page) {
        const t = presentTransaction(e);
        yield {
          id: t.id,
          at: t.createDate,
          type: t.type,
          description: t.description,
          order_id: t.orderId,
          refund_no: t.refundNo,
          reference: t.reference,
          amount: formatSigned(e.amount_cents),
          balance_after: formatSigned(e.balance_after_cents),
          currency: t.currency,
        } satisfies Record<(typeof TRANSACTION_CSV_COLUMNS)[number], CsvCell>;
      }
      if (page.length < batch) return;
      afterSeq = page[page.length - 1].seq;
    }
  }
  return { name: `transactions-${environment}`, columns: TRANSACTION_CSV_COLUMNS, rows: rows() };
}

/** The operator's export of a merchant's transactions (404 for an unknown merchant, before the download starts). */
export async function transactionsCsvForOperator(merchant: MerchantScope, environment: StockistEnv): Promise<CsvExport> {
  await merchantOr404(merchant);
  const file = transactionsCsv(merchant, environment);
  return { ...file, name: `transactions-${merchant.merchantId}-${environment}` };
}
