import { sql } from 'kysely';
import type { Handle } from './db.ts';

/**
 * The invariants of SPEC §15 as queries that return only what breaks them (at most `limit` rows
 * each), so `stockist ledger verify` holds nothing but the breaches in memory however large the
 * ledger: the database aggregates, the process reads the few rows that disagree.
 */

/**
 * Breaks of the accounts' chains, in sequence order (migration 0044): an entry whose `seq` is not
 * the one before it plus one (a gap: an entry removed; the first is 1), whose `balance_after` is
 * not the previous entry's plus its amount, or whose time is before the previous entry's.
 */
export async function chainBreaks(db: Handle, limit: number) {
  const r = await sql<{
    id: number;
    account_key: string;
    seq: number | string;
    prev_seq: number | string | null;
    amount: number | string;
    balance_after: number | string;
    prev_balance: number | string | null;
    created_at: number | string;
    prev_created_at: number | string | null;
  }>`
    select c.id as id, a.account_key as account_key, c.seq as seq, c.prev_seq as prev_seq, c.amount_cents as amount,
      c.balance_after_cents as balance_after, c.prev_balance as prev_balance, c.created_at as created_at, c.prev_created_at as prev_created_at
    from (
      select e.id, e.account_id, e.seq, e.amount_cents, e.balance_after_cents, e.created_at,
        lag(e.seq) over w as prev_seq, lag(e.balance_after_cents) over w as prev_balance, lag(e.created_at) over w as prev_created_at
      from journal_entries e
      window w as (partition by e.account_id order by e.seq)
    ) c join ledger_accounts a on a.id = c.account_id
    where c.seq <> coalesce(c.prev_seq, 0) + 1
      or c.balance_after_cents <> coalesce(c.prev_balance, 0) + c.amount_cents
      or c.created_at < c.prev_created_at
    order by c.account_id, c.seq
    limit ${limit}`.execute(db);
  const n = (v: number | string | null) => (v === null ? null : Number(v));
  return r.rows.map((row) => ({
    id: Number(row.id),
    key: row.account_key,
    seq: Number(row.seq),
    prevSeq: n(row.prev_seq),
    amount: Number(row.amount),
    balanceAfter: Number(row.balance_after),
    prevBalance: n(row.prev_balance),
    createdAt: Number(row.created_at),
    prevCreatedAt: n(row.prev_created_at),
  }));
}

/** Merchant accounts whose newest entry disagrees with the account: its `seq` is not `last_seq`, or its `balance_after` is not the balance. */
export async function chainHeadsOff(db: Handle, limit: number) {
  const r = await sql<{
    account_key: string;
    balance: number | string;
    last_seq: number | string;
    seq: number | string | null;
    balance_after: number | string | null;
  }>`
    select a.account_key as account_key, a.balance_cents as balance, a.last_seq as last_seq, m.seq as seq, h.balance_after_cents as balance_after
    from ledger_accounts a
    left join (select account_id, max(seq) as seq from journal_entries group by account_id) m on m.account_id = a.id
    left join journal_entries h on h.account_id = a.id and h.seq = m.seq
    where a.kind = 'merchant' and (coalesce(m.seq, 0) <> a.last_seq or coalesce(h.balance_after_cents, 0) <> a.balance_cents)
    order by a.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({
    key: row.account_key,
    balance: Number(row.balance),
    lastSeq: Number(row.last_seq),
    seq: row.seq === null ? 0 : Number(row.seq),
    balanceAfter: row.balance_after === null ? 0 : Number(row.balance_after),
  }));
}

/**
 * Entries that disagree with their accounts: the merchant, environment or currency is not its
 * account's, the account is not a merchant's, or the account on the other side is not the supplier
 * account of the entry's type in its environment and currency (no posting mixes currencies). `counterKinds` is each type's supplier account.
 */
export async function misfiledEntries(db: Handle, counterKinds: [string, string][], limit: number) {
  const expected = sql.join(
    counterKinds.map(([type, kind]) => sql`when ${type} then ${kind}`),
    sql` `,
  );
  const r = await sql<{
    id: number;
    type: string;
    merchant_id: number | string;
    account_merchant: number | string;
    environment: string;
    account_environment: string;
    currency: string;
    account_currency: string;
    account_kind: string;
    counter_kind: string;
    counter_environment: string;
    counter_currency: string;
    expected_kind: string | null;
  }>`
    select e.id as id, e.type as type, e.merchant_id as merchant_id, a.merchant_id as account_merchant, e.environment as environment,
      a.environment as account_environment, e.currency as currency, a.currency as account_currency, a.kind as account_kind,
      c.kind as counter_kind, c.environment as counter_environment, c.currency as counter_currency, case e.type ${expected} end as expected_kind
    from journal_entries e
    join ledger_accounts a on a.id = e.account_id
    join ledger_accounts c on c.id = e.counter_account_id
    where e.merchant_id <> a.merchant_id or e.environment <> a.environment or e.currency <> a.currency or a.kind <> 'merchant'
      or c.environment <> e.environment or c.currency <> e.currency or c.kind <> coalesce(case e.type ${expected} end, '')
    order by e.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({
    id: Number(row.id),
    type: row.type,
    merchantId: Number(row.merchant_id),
    accountMerchantId: Number(row.account_merchant),
    environment: row.environment,
    accountEnvironment: row.account_environment,
    currency: row.currency,
    accountCurrency: row.account_currency,
    accountKind: row.account_kind,
    counterKind: row.counter_kind,
    counterEnvironment: row.counter_environment,
    counterCurrency: row.counter_currency,
    expectedKind: row.expected_kind,
  }));
}

/**
 * Merchant accounts whose kept balance is not the sum of their lines — the merchant sides of their
 * entries (one grouped pass over the entries).
 */
export async function driftedBalances(db: Handle, limit: number) {
  const r = await sql<{ id: number; account_key: string; balance: number | string; lines: number | string | null }>`
    select a.id as id, a.account_key as account_key, a.balance_cents as balance, s.lines as lines
    from ledger_accounts a
    left join (select account_id, sum(amount_cents) as lines from journal_entries group by account_id) s on s.account_id = a.id
    where a.kind = 'merchant' and a.balance_cents <> coalesce(s.lines, 0)
    order by a.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ id: Number(row.id), key: row.account_key, balance: Number(row.balance), lines: Number(row.lines ?? 0) }));
}

/** Prepaid accounts below −creditLimit. */
export async function prepaidBelowFloor(db: Handle, limit: number) {
  const r = await sql<{ account_key: string; balance: number | string; credit_limit: number | string }>`
    select account_key, balance_cents as balance, credit_limit_cents as credit_limit from ledger_accounts
    where kind = 'merchant' and billing_mode = 'prepaid' and balance_cents + credit_limit_cents < 0
    order by id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ key: row.account_key, balance: Number(row.balance), creditLimit: Number(row.credit_limit) }));
}

/** The id up to which orders predate the ledger (migration 0027). */
export async function ordersBeforeLedger(db: Handle): Promise<number> {
  const row = await db.selectFrom('ledger_meta').select('value').where('name', '=', 'orders_before_ledger').executeTakeFirst();
  return Number(row?.value ?? 0);
}

/** Orders placed since the ledger without exactly one charge of their final amount. */
export async function ordersWithoutOneCharge(db: Handle, afterOrderId: number, limit: number) {
  const r = await sql<{ id: number; charges: number | string; charged: number | string | null; final: number | string }>`
    select o.id as id, count(e.id) as charges, -sum(e.amount_cents) as charged,
      o.subtotal_cents + o.freight_cents - o.coupon_cents as final
    from orders o left join journal_entries e on e.order_id = o.id and e.type = 'order_charge'
    where o.id > ${afterOrderId}
    group by o.id, o.subtotal_cents, o.freight_cents, o.coupon_cents
    having count(e.id) <> 1 or -sum(e.amount_cents) <> o.subtotal_cents + o.freight_cents - o.coupon_cents
    order by o.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ id: Number(row.id), charges: Number(row.charges), charged: Number(row.charged ?? 0), final: Number(row.final) }));
}

/** Charges whose order does not exist (a charge posted without its cause). */
export async function chargesWithoutOrder(db: Handle, limit: number) {
  const r = await sql<{ id: number; order_id: number | null }>`
    select e.id as id, e.order_id as order_id from journal_entries e
    where e.type = 'order_charge' and not exists (select 1 from orders o where o.id = e.order_id)
    order by e.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ id: Number(row.id), orderId: row.order_id === null ? null : Number(row.order_id) }));
}

/** Succeeded refunds of orders placed since the ledger without exactly one credit of their amount. */
export async function refundsWithoutOneCredit(db: Handle, afterOrderId: number, limit: number) {
  const r = await sql<{ id: number; credits: number | string; credited: number | string | null; amount: number | string }>`
    select r.id as id, count(e.id) as credits, sum(e.amount_cents) as credited, r.amount_cents as amount
    from refunds r left join journal_entries e on e.refund_id = r.id and e.type = 'refund_credit'
    where r.status = 'refund_successfully' and r.order_id > ${afterOrderId}
    group by r.id, r.amount_cents
    having count(e.id) <> 1 or sum(e.amount_cents) <> r.amount_cents
    order by r.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ id: Number(row.id), credits: Number(row.credits), credited: Number(row.credited ?? 0), amount: Number(row.amount) }));
}

/** Credits whose refund did not succeed (a credit posted without its cause). */
export async function creditsWithoutSucceededRefund(db: Handle, limit: number) {
  const r = await sql<{ id: number; refund_id: number | null }>`
    select e.id as id, e.refund_id as refund_id from journal_entries e
    where e.type = 'refund_credit' and not exists (select 1 from refunds r where r.id = e.refund_id and r.status = 'refund_successfully')
    order by e.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ id: Number(row.id), refundId: row.refund_id === null ? null : Number(row.refund_id) }));
}

/** Cancellation credits whose split order is not cancelled (a credit posted without its cause), or that credit another order's split. */
export async function cancellationsWithoutCancelledSplit(db: Handle, limit: number) {
  const r = await sql<{ id: number; split_order_id: number | null }>`
    select e.id as id, e.split_order_id as split_order_id from journal_entries e
    where e.type = 'cancellation_credit'
      and not exists (select 1 from split_orders s where s.id = e.split_order_id and s.order_id = e.order_id and s.status = 'cancelled')
    order by e.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ id: Number(row.id), splitOrderId: row.split_order_id === null ? null : Number(row.split_order_id) }));
}

/**
 * Credited claims (SPEC §18) of orders placed since the ledger without exactly one `claim_credit` of
 * their amount: found by the credit's cause, `claim:<claimNo>` (unique, so more than one cannot
 * exist; none, or another amount, can).
 */
export async function claimsWithoutOneCredit(db: Handle, afterOrderId: number, limit: number) {
  const r = await sql<{ id: number; amount: number | string | null; credits: number | string; credited: number | string | null }>`
    select c.id as id, c.amount_cents as amount, count(e.id) as credits, sum(e.amount_cents) as credited
    from claims c
    left join journal_entries e on e.cause = 'claim:' || cast(c.id as text)
    where c.status = 'credited' and c.order_id > ${afterOrderId}
    group by c.id, c.amount_cents
    having count(e.id) <> 1 or sum(e.amount_cents) <> c.amount_cents
    order by c.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({
    id: Number(row.id),
    amount: row.amount === null ? null : Number(row.amount),
    credits: Number(row.credits),
    credited: Number(row.credited ?? 0),
  }));
}

/** `claim_credit` entries without a credited claim behind them (a credit posted without its cause). */
export async function claimCreditsWithoutCreditedClaim(db: Handle, limit: number) {
  const r = await sql<{ id: number; cause: string }>`
    select e.id as id, e.cause as cause from journal_entries e
    left join claims c on c.status = 'credited' and e.cause = 'claim:' || cast(c.id as text) and c.order_id = e.order_id
    where e.type = 'claim_credit' and c.id is null
    order by e.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ id: Number(row.id), cause: row.cause }));
}

/**
 * Orders placed since the ledger whose `refundedAmount` is not what was credited for them: the
 * sum of their refund and cancellation credits (both grow the order's refunded amount in the
 * credit's transaction).
 */
export async function ordersRefundedOtherwise(db: Handle, afterOrderId: number, limit: number) {
  const r = await sql<{ id: number; refunded: number | string; credited: number | string | null }>`
    select o.id as id, o.refunded_cents as refunded, c.credited as credited
    from orders o
    left join (
      select order_id, sum(amount_cents) as credited from journal_entries
      where type in ('refund_credit', 'cancellation_credit') and order_id > ${afterOrderId}
      group by order_id
    ) c on c.order_id = o.id
    where o.id > ${afterOrderId} and o.refunded_cents <> coalesce(c.credited, 0)
    order by o.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ id: Number(row.id), refunded: Number(row.refunded), credited: Number(row.credited ?? 0) }));
}

/** Entries for orders the ledger says predate it (`orders_before_ledger`): such an order was never charged, so nothing moves for it. */
export async function entriesBeforeLedger(db: Handle, beforeOrderId: number, limit: number) {
  const r = await sql<{ id: number; order_id: number | string }>`
    select e.id as id, e.order_id as order_id from journal_entries e
    where e.order_id is not null and e.order_id <= ${beforeOrderId}
    order by e.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ id: Number(row.id), orderId: Number(row.order_id) }));
}

/** Counts for the report's summary line. */
export async function ledgerCounts(db: Handle) {
  const r = await sql<{ entries: number | string; accounts: number | string }>`
    select (select count(*) from journal_entries) as entries, (select count(*) from ledger_accounts) as accounts`.execute(db);
  return { entries: Number(r.rows[0].entries), accounts: Number(r.rows[0].accounts) };
}
