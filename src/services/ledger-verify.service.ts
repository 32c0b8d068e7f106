import { centsToAmount } from '../domain/money.ts';
import { belowPrepaidFloor, counterAccountOf, ENTRY_TYPES, floorBreachMessage, type LedgerBreach } from '../domain/ledger.ts';
import type { Handle } from '../store/db.ts';
import * as verify from '../store/ledger-verify.repository.ts';

/** At most this many breaches of each rule are listed (the count of the rest is not kept: fix these first). */
const PER_RULE = 1000;

export interface LedgerReport {
  entries: number;
  accounts: number;
  breaches: LedgerBreach[];
}

/**
 * `stockist ledger verify` (SPEC §15): every invariant over the whole database — each account's
 * entries form a chain in their sequence (seq 1, 2, 3, …; each `balance_after` the previous one
 * plus its amount; times never going back; the newest at the account's balance), entries agree
 * with their accounts, balances equal their lines, one charge per order and one credit per
 * succeeded refund (orders placed since the ledger began), an order's refunded amount is what was
 * credited for it, nothing moved for an order before the ledger, cancellation credits only for
 * cancelled split orders, one credit of its amount per credited claim and none without one (SPEC §18),
 * no prepaid account below its floor. One breach a line. An entry's lines
 * sum to zero by construction (migration 0044): there is no row that could say otherwise.
 */
export async function verifyLedger(db: Handle): Promise<LedgerReport> {
  const breaches: LedgerBreach[] = [];
  const add = (rule: LedgerBreach['rule'], message: string) => breaches.push({ rule, message });
  for (const b of await verify.chainBreaks(db, PER_RULE)) {
    const at = `account ${b.key}: entry ${b.id} (seq ${b.seq})`;
    if (b.seq !== (b.prevSeq ?? 0) + 1) add('entry_chain', `${at} follows seq ${b.prevSeq ?? 0}: the sequence skips or repeats`);
    const expected = (b.prevBalance ?? 0) + b.amount;
    if (b.balanceAfter !== expected) {
      add(
        'entry_chain',
        `${at}: balanceAfter ${centsToAmount(b.balanceAfter)}, but the previous ${centsToAmount(b.prevBalance ?? 0)} plus its amount ${centsToAmount(b.amount)} is ${centsToAmount(expected)}`,
      );
    }
    if (b.prevCreatedAt !== null && b.createdAt < b.prevCreatedAt) {
      add('entry_chain', `${at}: created ${new Date(b.createdAt).toISOString()}, before the entry before it (${new Date(b.prevCreatedAt).toISOString()})`);
    }
  }
  for (const a of await verify.chainHeadsOff(db, PER_RULE)) {
    if (a.seq !== a.lastSeq) add('entry_chain', `account ${a.key}: its newest entry is seq ${a.seq}, the account says ${a.lastSeq}`);
    if (a.balanceAfter !== a.balance) {
      add('entry_chain', `account ${a.key}: balance ${centsToAmount(a.balance)} but its newest entry's balanceAfter is ${centsToAmount(a.balanceAfter)}`);
    }
  }
  const counterKinds = ENTRY_TYPES.map((type): [string, string] => [type, counterAccountOf(type)]);
  for (const e of await verify.misfiledEntries(db, counterKinds, PER_RULE)) {
    const at = `entry ${e.id}`;
    if (e.merchantId !== e.accountMerchantId) add('entry_account', `${at}: merchant ${e.merchantId}, its account is merchant ${e.accountMerchantId}'s`);
    if (e.environment !== e.accountEnvironment) add('entry_account', `${at}: environment ${e.environment}, its account's is ${e.accountEnvironment}`);
    if (e.currency !== e.accountCurrency) add('entry_account', `${at}: currency ${e.currency}, its account's is ${e.accountCurrency}`);
    if (e.accountKind !== 'merchant') add('entry_account', `${at}: moves a ${e.accountKind} account as a merchant's`);
    if (e.counterCurrency !== e.currency) add('entry_account', `${at}: a ${e.currency} ${e.type} against the ${e.counterKind} account in ${e.counterCurrency}`);
    if (e.counterKind !== e.expectedKind || e.counterEnvironment !== e.environment) {
      add(
        'entry_account',
        `${at}: a ${e.type} against the ${e.counterEnvironment} ${e.counterKind} account, not the ${e.environment} ${e.expectedKind ?? '?'} account`,
      );
    }
  }
  for (const a of await verify.driftedBalances(db, PER_RULE)) {
    add('account_balance', `account ${a.key}: balance ${centsToAmount(a.balance)} but its lines sum to ${centsToAmount(a.lines)}`);
  }
  // The query reads only prepaid accounts below the floor; the rule itself is the domain's, the one the operator's changes are held to.
  for (const a of await verify.prepaidBelowFloor(db, PER_RULE)) {
    const account = { balanceCents: a.balance, billingMode: 'prepaid' as const, creditLimitCents: a.creditLimit };
    if (belowPrepaidFloor(account)) add('prepaid_floor', floorBreachMessage(a.key, account));
  }
  const before = await verify.ordersBeforeLedger(db);
  for (const o of await verify.ordersWithoutOneCharge(db, before, PER_RULE)) {
    add(
      'order_charge',
      o.charges === 1
        ? `order ${o.id}: charged ${centsToAmount(o.charged)}, its final amount is ${centsToAmount(o.final)}`
        : `order ${o.id}: ${o.charges} charges, expected exactly 1`,
    );
  }
  for (const e of await verify.chargesWithoutOrder(db, PER_RULE)) add('order_charge', `entry ${e.id}: charges order ${e.orderId}, which does not exist`);
  for (const r of await verify.refundsWithoutOneCredit(db, before, PER_RULE)) {
    add(
      'refund_credit',
      r.credits === 1
        ? `refund ${r.id}: credited ${centsToAmount(r.credited)}, its amount is ${centsToAmount(r.amount)}`
        : `refund ${r.id}: ${r.credits} credits, expected exactly 1`,
    );
  }
  for (const e of await verify.creditsWithoutSucceededRefund(db, PER_RULE)) {
    add('refund_credit', `entry ${e.id}: credits refund ${e.refundId}, which did not succeed`);
  }
  for (const e of await verify.cancellationsWithoutCancelledSplit(db, PER_RULE)) {
    add('cancellation_credit', `entry ${e.id}: credits the cancellation of split order ${e.splitOrderId}, which is not a cancelled split of its order`);
  }
  for (const c of await verify.claimsWithoutOneCredit(db, before, PER_RULE)) {
    add(
      'claim_credit',
      c.credits === 1
        ? `claim ${c.id}: credited ${centsToAmount(c.credited)}, its amount is ${centsToAmount(c.amount ?? 0)}`
        : `claim ${c.id}: ${c.credits} credits, expected exactly 1`,
    );
  }
  for (const e of await verify.claimCreditsWithoutCreditedClaim(db, PER_RULE)) {
    add('claim_credit', `entry ${e.id}: a claim credit (${e.cause}) without a credited claim of its order behind it`);
  }
  for (const o of await verify.ordersRefundedOtherwise(db, before, PER_RULE)) {
    add(
      'order_refunded',
      `order ${o.id}: refundedAmount ${centsToAmount(o.refunded)}, but its refund and cancellation credits sum to ${centsToAmount(o.credited)}`,
    );
  }
  for (const e of await verify.entriesBeforeLedger(db, before, PER_RULE)) {
    add('ledger_start', `entry ${e.id}: moves money for order ${e.orderId}, which the ledger says was placed before it began (orders_before_ledger ${before})`);
  }
  return { ...(await verify.ledgerCounts(db)), breaches };
}
