import { centsToAmount } from '../domain/money.ts';
import { belowPrepaidFloor, floorBreachMessage, type LedgerBreach } from '../domain/ledger.ts';
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
 * `stockist ledger verify` (SPEC §15): every invariant over the whole database — entries sum to
 * zero, balances equal their lines, one charge per order and one credit per succeeded refund
 * (orders placed since the ledger began), cancellation credits only for cancelled split orders, no
 * prepaid account below its floor. One breach a line.
 */
export async function verifyLedger(db: Handle): Promise<LedgerReport> {
  const breaches: LedgerBreach[] = [];
  const add = (rule: LedgerBreach['rule'], message: string) => breaches.push({ rule, message });
  for (const e of await verify.unbalancedEntries(db, PER_RULE)) {
    add('entry_sum', `entry ${e.id}: its ${e.lines} line(s) sum to ${centsToAmount(e.sum)}, not 0 with two lines`);
  }
  for (const id of await verify.misstatedEntries(db, PER_RULE)) add('entry_lines', `entry ${id}: no line moves its account by its amount`);
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
  return { ...(await verify.ledgerCounts(db)), breaches };
}
