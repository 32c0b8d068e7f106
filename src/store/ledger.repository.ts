import { sql, type RawBuilder, type Selectable, type SelectQueryBuilder } from 'kysely';
import { prepared, preparedForMerchant } from './prepared.ts';
import { accountKey, ACCOUNT_KINDS, type EntryType, type SupplierAccountKind, type Transfer } from '../domain/ledger.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import { countUpTo, type Dialect, type Handle, type Trx } from './db.ts';
import type { Database, JournalEntriesTable, LedgerAccountsTable } from './schema.ts';
import type { MerchantScope } from './tenancy.ts';
import { merchantIdOf, ownedBy, type Owned } from './scope-mint.ts';
import { handleOf } from './scope-handle.ts';

export type AccountRow = Selectable<LedgerAccountsTable>;
export type EntryRow = Selectable<JournalEntriesTable>;

const SUPPLIER_KINDS = ACCOUNT_KINDS.filter((k): k is SupplierAccountKind => k !== 'merchant');

/**
 * Creates the merchant's account for this environment, and the supplier's accounts of that
 * environment, where they do not exist yet (each exactly once: `account_key` is unique).
 */
export async function ensureAccounts(scope: MerchantScope<Trx>, environment: StockistEnv, currency: string, now: number): Promise<void> {
  const row = (merchantId: number, kind: (typeof ACCOUNT_KINDS)[number], key: string) => ({
    account_key: key,
    merchant_id: merchantId,
    environment,
    kind,
    currency,
    balance_cents: 0,
    billing_mode: 'on_account' as const,
    credit_limit_cents: 0,
    low_balance_threshold_cents: null,
    created_at: now,
    updated_at: now,
  });
  await handleOf(scope)
    .insertInto('ledger_accounts')
    .values([
      row(merchantIdOf(scope), 'merchant', accountKey.merchant(merchantIdOf(scope), environment)),
      ...SUPPLIER_KINDS.map((k) => row(0, k, accountKey.supplier(k, environment))),
    ])
    .onConflict((oc) => oc.column('account_key').doNothing())
    .execute();
}

/**
 * The currency the database's money is in (issue 41 item 6): its ledger's (the newest entry's) or,
 * before the first entry, the newest order's (orders placed before the ledger); null while no money
 * has moved. One row each way, by primary key: cheap at start-up on any size of database.
 */
export async function moneyCurrency(db: Handle): Promise<string | null> {
  const entry = await db.selectFrom('journal_entries').select('currency').orderBy('id', 'desc').limit(1).executeTakeFirst();
  if (entry) return entry.currency;
  const order = await db.selectFrom('orders').select('currency_code').orderBy('id', 'desc').limit(1).executeTakeFirst();
  return order?.currency_code ?? null;
}

/**
 * Accounts opened before any money moved (terms set, nothing posted: every balance zero) take the
 * currency chosen now, so that no posting meets an account of another currency. Only for a
 * database whose `moneyCurrency` is null.
 */
export async function setAccountsCurrency(trx: Trx, currency: string): Promise<number> {
  const r = await trx.updateTable('ledger_accounts').set({ currency }).where('currency', '<>', currency).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** The merchant's account of this environment, or undefined when no money has moved there yet. */
export async function merchantAccount(scope: MerchantScope, environment: StockistEnv): Promise<AccountRow | undefined> {
  return scope
    .selectFrom('ledger_accounts')
    .selectAll()
    .where('account_key', '=', accountKey.merchant(merchantIdOf(scope), environment))
    .executeTakeFirst();
}

/**
 * The same, locked until the transaction ends: `FOR UPDATE` on PostgreSQL; on SQLite every
 * transaction begins IMMEDIATE (store/db.ts), so its writer lock already keeps other writers out.
 */
export async function lockMerchantAccount(scope: MerchantScope<Trx>, dialect: Dialect, environment: StockistEnv): Promise<AccountRow | undefined> {
  const q = scope
    .selectFrom('ledger_accounts')
    .selectAll()
    .where('account_key', '=', accountKey.merchant(merchantIdOf(scope), environment));
  return (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
}

/** One posting (SPEC §15): the merchant account's balance moved, and the entry that says so. */
export interface Posting {
  /** The merchant account is the scope's merchant's in this environment. */
  environment: StockistEnv;
  /** A charge of an order: refused when a `prepaid` account cannot cover it. */
  checkCover: boolean;
  cause: string;
  type: EntryType;
  /** The amount and the supplier account it moves against (domain/ledger.ts `transferOf`). */
  transfer: Transfer;
  orderId?: number | null;
  refundId?: number | null;
  splitOrderId?: number | null;
  reference?: string | null;
  description: string;
}

export interface Posted {
  /** The merchant account after its balance moved. */
  account: AccountRow;
  entryId: number;
}

/*
 * The one posting description (docs/decisions.md, "An entry that cannot be unbalanced"): two
 * statements, the balance move and the entry's insert, from which both databases' paths are made.
 *
 * - The move (`moveStatement`) changes the merchant account's row: its balance by the amount, its
 *   sequence `last_seq` by one, `last_posted_at` to now (never backwards). It is one UPDATE, so
 *   the prepaid check and the charge are one atomic step (SPEC §15), and the row stays locked
 *   until the commit: the sequence is the order in which postings changed the balance.
 * - The entry (`entryInsert`) is selected from the moved row — its `seq`, `balance_after`,
 *   currency, merchant and time are the row's — so a refused or missing account writes nothing,
 *   and `balance_after` is always the previous entry's plus the amount. The supplier account on
 *   the other side is taken only in the same currency: no posting mixes currencies (issue 41
 *   item 6); against an account of another one `counter_account_id` is null, the NOT NULL
 *   constraint refuses the row and the whole transaction rolls back. Start-up refuses a
 *   configuration whose currency is not the database's (`checkSupplierCurrency`), so only a
 *   database changed by hand gets there.
 *
 * SQLite runs the two in turn (the entry reads the moved row in the same transaction, whose
 * writer lock keeps every other posting out); PostgreSQL runs them as the CTEs of one statement.
 */
function moveStatement(scope: MerchantScope, a: Pick<PostingArgs, 'key' | 'merchantCents' | 'checkCover'>, now: number) {
  let q = scope
    .updateTable('ledger_accounts')
    .set({
      balance_cents: sql<number>`balance_cents + ${a.merchantCents}`,
      last_seq: sql<number>`last_seq + 1`,
      last_posted_at: sql<number>`case when last_posted_at > ${now} then last_posted_at else ${now} end`,
      updated_at: now,
    })
    .where('account_key', '=', a.key);
  if (a.checkCover)
    q = q.where((eb) => eb.or([eb('billing_mode', '=', 'on_account'), eb(sql<number>`balance_cents + credit_limit_cents + ${a.merchantCents}`, '>=', 0)]));
  return q.returningAll();
}

/** The entry, selected from `moved` (the moved account row: a CTE, or the row itself read after the move). `cast` types the parameters (in a SELECT list they would be text on PostgreSQL). */
function entryInsert(moved: RawBuilder<unknown>, a: PostingArgs) {
  const e = a.entry;
  return sql`insert into journal_entries (cause, merchant_id, environment, account_id, seq, counter_account_id, type, amount_cents,
      balance_after_cents, currency, order_id, refund_id, split_order_id, reference, description, created_at)
    select cast(${e.cause} as text), m.merchant_id, m.environment, m.id, m.last_seq,
      (select c.id from ledger_accounts c where c.account_key = ${a.supplierKey} and c.currency = m.currency), cast(${e.type} as text), cast(${a.merchantCents} as bigint),
      m.balance_cents, m.currency, cast(${e.order_id} as bigint), cast(${e.refund_id} as bigint), cast(${e.split_order_id} as bigint),
      cast(${e.reference} as text), cast(${e.description} as text), m.last_posted_at
    from ${moved} m
    returning id`;
}

/**
 * Posts an entry, in two statements (SQLite; `postOn` picks the one-statement form on PostgreSQL).
 * Undefined, with nothing written, when the account does not exist yet or cannot cover the charge.
 * A second entry with the same cause fails on the unique constraint and rolls the whole transaction
 * back, the cause's own change included.
 */
export async function post(scope: MerchantScope<Trx>, p: Posting, now: number): Promise<Posted | undefined> {
  const a = postingArgs(scope, p);
  const account = await balanceMove.first(scope, { key: a.key, merchantCents: a.merchantCents, checkCover: a.checkCover }, now);
  if (!account) return undefined;
  const entry = await entryAfterMove.first(handleOf(scope), a);
  if (!entry) throw new Error('post: no entry row returned');
  return { account, entryId: Number(entry.id) };
}

/**
 * The same posting as one statement on PostgreSQL (writable CTEs): one round trip instead of two,
 * and the account row — locked by the UPDATE until the commit, so every posting of the merchant
 * waits for it — is held that much less (docs/performance.md, "What the ledger costs an order").
 * The order's charge goes further and rides in the order's one statement
 * (order-placement.repository.ts `writeOrder`).
 */
async function postInOneStatement(scope: MerchantScope<Trx>, p: Posting, now: number): Promise<Posted | undefined> {
  return postedOf(await postedInOneStatement.first(scope, postingArgs(scope, p), now));
}

/** The posting function for a dialect: one statement where the database can write through CTEs. */
export const postOn = (dialect: Dialect) => (dialect === 'postgres' ? postInOneStatement : post);

/** The entry's own columns (the account's, the sequence's and the amount's come from the moved row and the transfer). */
const entryValues = (p: Posting) => ({
  cause: p.cause,
  type: p.type,
  order_id: p.orderId ?? null,
  refund_id: p.refundId ?? null,
  split_order_id: p.splitOrderId ?? null,
  reference: p.reference ?? null,
  description: p.description,
});

// On the order path: built and compiled once (store/prepared.ts). `checkCover` is shape: only a charge is checked.
const balanceMove = preparedForMerchant((scope, a: Pick<PostingArgs, 'key' | 'merchantCents' | 'checkCover'>, now: number) => moveStatement(scope, a, now));

// SQLite: the moved row, read back inside the transaction that moved it.
const entryAfterMove = prepared(
  (_db, a: PostingArgs) => sql<{ id: number }>`${entryInsert(sql`(select * from ledger_accounts where account_key = ${a.key})`, a)}`,
);

/** What a posting's statements need: the merchant account's key, the amount, the counter account's key and the entry's own columns. */
export interface PostingArgs {
  key: string;
  checkCover: boolean;
  merchantCents: number;
  supplierKey: string;
  entry: ReturnType<typeof entryValues>;
}

export function postingArgs(scope: MerchantScope, p: Posting): PostingArgs {
  return {
    key: accountKey.merchant(merchantIdOf(scope), p.environment),
    checkCover: p.checkCover,
    merchantCents: p.transfer.merchantCents,
    supplierKey: accountKey.supplier(p.transfer.counter, p.environment),
    entry: entryValues(p),
  };
}

/**
 * PostgreSQL: the posting as the CTEs `moved` and `entry` of one statement. A statement that
 * includes them selects `moved.*` and `(select id from entry) as entry_id` for `postedOf`.
 */
export function postingCtes(scope: MerchantScope, a: PostingArgs, now: number) {
  return sql`moved as (${moveStatement(scope, a, now)}), entry as (${entryInsert(sql`moved`, a)})`;
}

/** The moved account row and the entry's id, as a statement with `postingCtes` selects them; undefined when nothing was posted. */
export function postedOf(row: (AccountRow & { entry_id: number | string | null }) | undefined): Posted | undefined {
  if (!row || row.entry_id === null) return undefined;
  const { entry_id, ...account } = row;
  return { account, entryId: Number(entry_id) };
}

const postedInOneStatement = preparedForMerchant(
  (scope, a: PostingArgs, now: number) =>
    sql<AccountRow & { entry_id: number }>`with ${postingCtes(scope, a, now)} select moved.*, (select id from entry) as entry_id from moved`,
);

/** The entry of a cause (a repeated top-up answers the first one), within the merchant. */
export async function entryByCause(scope: MerchantScope, cause: string): Promise<EntryRow | undefined> {
  return scope.selectFrom('journal_entries').selectAll().where('cause', '=', cause).executeTakeFirst();
}

/** The account an order was charged to (a refund's credit goes back there), or undefined for an order placed before the ledger. */
export async function chargeOfOrder<H extends Handle>(
  trx: H,
  orderId: number,
): Promise<Owned<{ merchantId: number; environment: StockistEnv }, H> | undefined> {
  const row = await trx.selectFrom('journal_entries').select(['merchant_id', 'environment']).where('cause', '=', `order:${orderId}`).executeTakeFirst();
  return row && ownedBy(trx, row.merchant_id, { merchantId: row.merchant_id, environment: row.environment });
}

export interface EntryFilter {
  type: EntryType | null;
  createStart: number | null;
  createEnd: number | null;
}

/**
 * The filter's conditions. The type index leaves out order charges (migration 0035): a type other
 * than `order_charge` says so in the query, as a literal, so that both databases can prove the
 * partial index applies; the charges themselves are read through the account index.
 */
function filtered<O>(q: SelectQueryBuilder<Database, 'journal_entries', O>, filter: EntryFilter): SelectQueryBuilder<Database, 'journal_entries', O> {
  if (filter.type !== null) q = q.where('type', '=', filter.type);
  if (filter.type !== null && filter.type !== 'order_charge') q = q.where('type', '<>', sql.lit('order_charge'));
  if (filter.createStart !== null) q = q.where('created_at', '>=', filter.createStart);
  if (filter.createEnd !== null) q = q.where('created_at', '<=', filter.createEnd);
  return q;
}

/**
 * One page of an account's entries, newest first in the account's sequence (the order postings
 * changed its balance, so each row's `balance_after` is the next older row's plus its amount):
 * `afterSeq` is the last row of the previous page (keyset) or null; `offset` serves numbered
 * pages. Reads `limit` rows.
 */
export async function entriesPage(
  scope: MerchantScope,
  accountId: number,
  filter: EntryFilter,
  afterSeq: number | null,
  offset: number,
  limit: number,
): Promise<EntryRow[]> {
  let q = filtered(scope.selectFrom('journal_entries').selectAll().where('account_id', '=', accountId), filter);
  if (afterSeq !== null) q = q.where('seq', '<', afterSeq);
  return q.orderBy('seq', 'desc').limit(limit).offset(offset).execute();
}

/**
 * An account's entries after `afterSeq` in its sequence, oldest first: a sync that passes the last
 * `seq` it saw never misses a committed entry, since an entry's `seq` is taken under the account's
 * lock and a later posting can only take a higher one after this one commits.
 */
export async function entriesAfterSeq(scope: MerchantScope, accountId: number, filter: EntryFilter, afterSeq: number, limit: number): Promise<EntryRow[]> {
  return filtered(scope.selectFrom('journal_entries').selectAll().where('account_id', '=', accountId), filter)
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/** How many entries the filter matches, counting at most `cap` (SPEC §4.6: `total` costs no more than a bounded read). */
export async function countEntries(scope: MerchantScope, accountId: number, filter: EntryFilter, cap: number): Promise<number> {
  // `seq` rather than `id`: the sequence index holds it, so the count reads the index only.
  const inner = filtered(scope.selectFrom('journal_entries').select('journal_entries.seq').where('account_id', '=', accountId), filter);
  return countUpTo(handleOf(scope), inner, cap);
}

/** Sets an account's billing terms (the operator's PATCH). */
export async function updateTerms(
  scope: MerchantScope<Trx>,
  environment: StockistEnv,
  terms: Partial<Pick<AccountRow, 'billing_mode' | 'credit_limit_cents' | 'low_balance_threshold_cents'>>,
  now: number,
): Promise<AccountRow> {
  return scope
    .updateTable('ledger_accounts')
    .set((eb) => ({ ...terms, updated_at: now, terms_version: eb('terms_version', '+', 1) }))
    .where('account_key', '=', accountKey.merchant(merchantIdOf(scope), environment))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The sum of an account's entries before `before` (a statement's opening balance). */
export async function balanceBefore(scope: MerchantScope, accountId: number, before: number): Promise<number> {
  const row = await scope
    .selectFrom('journal_entries')
    .select((eb) => eb.fn.sum<number | string | null>('amount_cents').as('sum'))
    .where('account_id', '=', accountId)
    .where('created_at', '<', before)
    .executeTakeFirstOrThrow();
  return Number(row.sum ?? 0);
}

/**
 * An account's entries in [start, end), in its sequence (oldest first), `limit` after `afterSeq`
 * (0: from the start), up to `uptoSeq`: a statement stops where its summary was counted.
 */
export async function entriesBetween(
  scope: MerchantScope,
  accountId: number,
  window: { start: number; end: number; uptoSeq: number },
  afterSeq: number,
  limit: number,
): Promise<EntryRow[]> {
  return scope
    .selectFrom('journal_entries')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('created_at', '>=', window.start)
    .where('created_at', '<', window.end)
    .where('seq', '>', afterSeq)
    .where('seq', '<=', window.uptoSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/** The sums and counts by type of an account's entries in [start, end), up to `uptoSeq` (a statement's summary). */
export async function entryTotalsBetween(
  scope: MerchantScope,
  accountId: number,
  window: { start: number; end: number; uptoSeq: number },
): Promise<{ type: EntryType; sumCents: number; count: number }[]> {
  const rows = await scope
    .selectFrom('journal_entries')
    .select((eb) => ['type', eb.fn.sum<number | string>('amount_cents').as('sum'), eb.fn.countAll<number | string>().as('count')])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', window.start)
    .where('created_at', '<', window.end)
    .where('seq', '<=', window.uptoSeq)
    .groupBy('type')
    .execute();
  return rows.map((r) => ({ type: r.type, sumCents: Number(r.sum), count: Number(r.count) }));
}

/**
 * The supplier's money in one environment (the console dashboard): payments received (the top-ups,
 * the only entries against the cash account, read through each merchant account's type index —
 * one seek per merchant account; the query says a top-up is not a charge, which that partial
 * index leaves out),
 * what merchants owe (negative balances) and what they have paid in advance (positive balances).
 */
export async function supplierMoney(db: Handle, environment: StockistEnv) {
  const [received, balances] = await Promise.all([
    db
      .selectFrom('ledger_accounts as a')
      .innerJoin('journal_entries as e', (j) =>
        j
          .onRef('e.merchant_id', '=', 'a.merchant_id')
          .onRef('e.account_id', '=', 'a.id')
          .on('e.type', '=', 'top_up')
          .on('e.type', '<>', sql.lit('order_charge')),
      )
      .select((eb) => eb.fn.sum<number | string | null>('e.amount_cents').as('sum'))
      .where('a.kind', '=', 'merchant')
      .where('a.environment', '=', environment)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('ledger_accounts')
      .select((eb) => [
        eb.fn.sum<number | string | null>(sql`case when balance_cents < 0 then -balance_cents else 0 end`).as('owed'),
        eb.fn.sum<number | string | null>(sql`case when balance_cents > 0 then balance_cents else 0 end`).as('held'),
      ])
      .where('kind', '=', 'merchant')
      .where('environment', '=', environment)
      .executeTakeFirstOrThrow(),
  ]);
  return { receivedCents: Number(received.sum ?? 0), owedCents: Number(balances.owed ?? 0), heldCents: Number(balances.held ?? 0) };
}
