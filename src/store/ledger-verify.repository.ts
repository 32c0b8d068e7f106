import { sql } from 'kysely';
import type { Handle } from './db.ts';

/**
 * The invariants of SPEC §15 as queries that return only what breaks them (at most `limit` rows
 * each), so `stockist ledger verify` holds nothing but the breaches in memory however large the
 * ledger: the database aggregates, the process reads the few rows that disagree.
 */

/** Entries whose lines do not sum to zero, or that do not have exactly two lines. */
export async function unbalancedEntries(db: Handle, limit: number) {
  const r = await sql<{ id: number; sum: number | string | null; lines: number | string }>`
    select e.id as id, sum(l.amount_cents) as sum, count(l.entry_id) as lines
    from journal_entries e left join journal_lines l on l.entry_id = e.id
    group by e.id
    having coalesce(sum(l.amount_cents), 0) <> 0 or count(l.entry_id) <> 2
    order by e.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => ({ id: Number(row.id), sum: Number(row.sum ?? 0), lines: Number(row.lines) }));
}

/** Entries whose merchant side disagrees with the entry's own amount or account. */
export async function misstatedEntries(db: Handle, limit: number) {
  const r = await sql<{ id: number }>`
    select e.id as id from journal_entries e
    where not exists (select 1 from journal_lines l where l.entry_id = e.id and l.account_id = e.account_id and l.amount_cents = e.amount_cents)
    order by e.id
    limit ${limit}`.execute(db);
  return r.rows.map((row) => Number(row.id));
}

/** Merchant accounts whose kept balance is not the sum of their lines (one grouped pass over the lines). */
export async function driftedBalances(db: Handle, limit: number) {
  const r = await sql<{ id: number; account_key: string; balance: number | string; lines: number | string | null }>`
    select a.id as id, a.account_key as account_key, a.balance_cents as balance, s.lines as lines
    from ledger_accounts a
    left join (select account_id, sum(amount_cents) as lines from journal_lines group by account_id) s on s.account_id = a.id
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

/** Counts for the report's summary line. */
export async function ledgerCounts(db: Handle) {
  const r = await sql<{ entries: number | string; accounts: number | string }>`
    select (select count(*) from journal_entries) as entries, (select count(*) from ledger_accounts) as accounts`.execute(db);
  return { entries: Number(r.rows[0].entries), accounts: Number(r.rows[0].accounts) };
}
