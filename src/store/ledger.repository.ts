import { sql, type Insertable, type Selectable, type SelectQueryBuilder } from 'kysely';
import { prepared, preparedForMerchant } from './prepared.ts';
import { accountKey, ACCOUNT_KINDS, type EntryType, type LinePlan, type SupplierAccountKind } from '../domain/ledger.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import { countUpTo, type Dialect, type Handle, type Trx } from './db.ts';
import type { Database, JournalEntriesTable, LedgerAccountsTable } from './schema.ts';
import type { MerchantScope } from './tenancy.ts';
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
      row(scope.merchantId, 'merchant', accountKey.merchant(scope.merchantId, environment)),
      ...SUPPLIER_KINDS.map((k) => row(0, k, accountKey.supplier(k, environment))),
    ])
    .onConflict((oc) => oc.column('account_key').doNothing())
    .execute();
}

/** The merchant's account of this environment, or undefined when no money has moved there yet. */
export async function merchantAccount(scope: MerchantScope, environment: StockistEnv): Promise<AccountRow | undefined> {
  return scope.selectFrom('ledger_accounts').selectAll().where('account_key', '=', accountKey.merchant(scope.merchantId, environment)).executeTakeFirst();
}

/**
 * The same, locked until the transaction ends: `FOR UPDATE` on PostgreSQL; on SQLite every
 * transaction begins IMMEDIATE (store/db.ts), so its writer lock already keeps other writers out.
 */
export async function lockMerchantAccount(scope: MerchantScope<Trx>, dialect: Dialect, environment: StockistEnv): Promise<AccountRow | undefined> {
  const q = scope.selectFrom('ledger_accounts').selectAll().where('account_key', '=', accountKey.merchant(scope.merchantId, environment));
  return (dialect === 'postgres' ? q.forUpdate() : q).executeTakeFirst();
}

/** One posting (SPEC §15): the merchant account's balance moved by its line, and the entry with both its lines. */
export interface Posting {
  /** The merchant account is the scope's merchant's in this environment. */
  environment: StockistEnv;
  /** A charge of an order: refused when a `prepaid` account cannot cover it. */
  checkCover: boolean;
  cause: string;
  type: EntryType;
  /** The entry's lines (domain/ledger.ts `entryLines`): the merchant's side and a supplier account's, summing to zero. */
  lines: LinePlan[];
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

/**
 * Posts an entry: moves the merchant account's balance by its line and writes the entry and its
 * two lines, in three statements (either database). The balance move is one statement, so the
 * check and the charge are one atomic step (SPEC §15): a charge of a `prepaid` account only
 * applies while `balance + creditLimit` still covers it. Undefined, with nothing written, when the
 * account does not exist yet or cannot cover the charge. A second entry with the same cause fails
 * on the unique constraint and rolls the whole transaction back, the cause's own change included.
 */
export async function post(scope: MerchantScope<Trx>, p: Posting, now: number): Promise<Posted | undefined> {
  const { merchant, supplierKey } = sidesOf(p);
  const account = await balanceMove.first(scope, accountKey.merchant(scope.merchantId, p.environment), merchant, now, p.checkCover);
  if (!account) return undefined;
  const entry = await entryInsert.first(handleOf(scope), {
    ...entryValues(p),
    environment: p.environment,
    amount_cents: merchant,
    merchant_id: account.merchant_id,
    account_id: account.id,
    balance_after_cents: account.balance_cents,
    currency: account.currency,
    created_at: now,
  });
  if (!entry) throw new Error('post: no entry row returned');
  await linesInsert.run(handleOf(scope), entry.id, account.id, merchant, supplierKey, -merchant);
  return { account, entryId: entry.id };
}

/**
 * The same posting as `post`, as one statement on PostgreSQL (writable CTEs): one round trip
 * instead of three, and the account row — locked by the UPDATE until the commit, so every posting
 * of the merchant waits for it — is held that much less (docs/performance.md, "What the ledger
 * costs an order"). `postOn` picks it there; the order's charge goes further and rides in the
 * stock decrement's statement (stocks.repository.ts `takeQtyCharging`).
 */
async function postInOneStatement(scope: MerchantScope<Trx>, p: Posting, now: number): Promise<Posted | undefined> {
  return postedOf(await postedInOneStatement.first(scope, postingArgs(scope, p), now));
}

/** The posting function for a dialect: one statement where the database can write through CTEs. */
export const postOn = (dialect: Dialect) => (dialect === 'postgres' ? postInOneStatement : post);

/** The merchant's side of the lines (the balance's move) and the supplier account's key; the lines must sum to zero. */
function sidesOf(p: Posting): { merchant: number; supplierKey: string } {
  const merchant = p.lines.find((l) => l.account === 'merchant');
  const supplier = p.lines.find((l) => l.account !== 'merchant');
  if (!merchant || !supplier || p.lines.length !== 2 || merchant.amountCents + supplier.amountCents !== 0)
    throw new Error(`post: the lines of ${p.cause} are not one merchant line and one supplier line summing to zero`);
  return { merchant: merchant.amountCents, supplierKey: accountKey.supplier(supplier.account as SupplierAccountKind, p.environment) };
}

/** The entry's own columns (the account's and the amount's come from the moved row and the merchant line). */
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
const balanceMove = preparedForMerchant((scope, key: string, deltaCents: number, now: number, checkCover: boolean) =>
  moveStatement(scope, key, deltaCents, now, checkCover),
);

function moveStatement(scope: MerchantScope, key: string, deltaCents: number, now: number, checkCover: boolean) {
  let q = scope
    .updateTable('ledger_accounts')
    .set({ balance_cents: sql<number>`balance_cents + ${deltaCents}`, updated_at: now })
    .where('account_key', '=', key);
  if (checkCover)
    q = q.where((eb) => eb.or([eb('billing_mode', '=', 'on_account'), eb(sql<number>`balance_cents + credit_limit_cents + ${deltaCents}`, '>=', 0)]));
  return q.returningAll();
}

const entryInsert = prepared((db, row: Insertable<JournalEntriesTable>) => db.insertInto('journal_entries').values(row).returning('id'));

// The supplier account is found by its key in the same statement.
const linesInsert = prepared((db, entryId: number, accountId: number, merchantCents: number, supplierKey: string, supplierCents: number) =>
  db.insertInto('journal_lines').values([
    { entry_id: entryId, account_id: accountId, amount_cents: merchantCents },
    { entry_id: entryId, account_id: db.selectFrom('ledger_accounts').select('id').where('account_key', '=', supplierKey), amount_cents: supplierCents },
  ]),
);

/** What a posting's CTEs need: the merchant account's key, the two sides and the entry's own columns. */
export interface PostingArgs {
  key: string;
  checkCover: boolean;
  merchantCents: number;
  supplierKey: string;
  entry: ReturnType<typeof entryValues>;
}

export function postingArgs(scope: MerchantScope, p: Posting): PostingArgs {
  const { merchant, supplierKey } = sidesOf(p);
  return { key: accountKey.merchant(scope.merchantId, p.environment), checkCover: p.checkCover, merchantCents: merchant, supplierKey, entry: entryValues(p) };
}

/**
 * PostgreSQL: the balance move, the entry and its lines as the CTEs `moved`, `entry` and `lines`
 * of one statement. The entry and the lines are selected from the moved row, so a refused or
 * missing account writes none of them. `cast` types the parameters (in a SELECT list they would be
 * text). A statement that includes them selects `moved.*` and `(select id from entry) as entry_id`
 * for `postedOf`.
 */
export function postingCtes(scope: MerchantScope, a: PostingArgs, now: number) {
  const e = a.entry;
  return sql`moved as (${moveStatement(scope, a.key, a.merchantCents, now, a.checkCover)}), entry as (
        insert into journal_entries (cause, merchant_id, environment, account_id, type, amount_cents, balance_after_cents, currency,
          order_id, refund_id, split_order_id, reference, description, created_at)
        select cast(${e.cause} as text), m.merchant_id, m.environment, m.id, cast(${e.type} as text), cast(${a.merchantCents} as bigint), m.balance_cents, m.currency,
          cast(${e.order_id} as bigint), cast(${e.refund_id} as bigint), cast(${e.split_order_id} as bigint), cast(${e.reference} as text),
          cast(${e.description} as text), cast(${now} as bigint)
        from moved m
        returning id, account_id, amount_cents
      ), lines as (
        insert into journal_lines (entry_id, account_id, amount_cents)
        select id, account_id, amount_cents from entry
        union all
        select id, (select id from ledger_accounts where account_key = ${a.supplierKey}), -amount_cents from entry
      )`;
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
export async function chargeOfOrder(trx: Handle, orderId: number): Promise<{ merchantId: number; environment: StockistEnv } | undefined> {
  const row = await trx.selectFrom('journal_entries').select(['merchant_id', 'environment']).where('cause', '=', `order:${orderId}`).executeTakeFirst();
  return row && { merchantId: row.merchant_id, environment: row.environment };
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
 * One page of an account's entries, newest first by (created_at, id): `after` is the last row of
 * the previous page (keyset) or null; `offset` serves numbered pages. Reads `limit` rows.
 */
export async function entriesPage(
  scope: MerchantScope,
  accountId: number,
  filter: EntryFilter,
  after: [number, number] | null,
  offset: number,
  limit: number,
): Promise<EntryRow[]> {
  let q = filtered(scope.selectFrom('journal_entries').selectAll().where('account_id', '=', accountId), filter);
  if (after !== null) q = q.where((eb) => eb.or([eb('created_at', '<', after[0]), eb.and([eb('created_at', '=', after[0]), eb('id', '<', after[1])])]));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
}

/** How many entries the filter matches, counting at most `cap` (SPEC §4.6: `total` costs no more than a bounded read). */
export async function countEntries(scope: MerchantScope, accountId: number, filter: EntryFilter, cap: number): Promise<number> {
  const inner = filtered(scope.selectFrom('journal_entries').select('journal_entries.id').where('account_id', '=', accountId), filter);
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
    .where('account_key', '=', accountKey.merchant(scope.merchantId, environment))
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

/** An account's entries in [start, end), oldest first, `limit` after the keyset `after` (or from the start). */
export async function entriesBetween(
  scope: MerchantScope,
  accountId: number,
  start: number,
  end: number,
  after: [number, number] | null,
  limit: number,
): Promise<EntryRow[]> {
  let q = scope.selectFrom('journal_entries').selectAll().where('account_id', '=', accountId).where('created_at', '>=', start).where('created_at', '<', end);
  if (after !== null) q = q.where((eb) => eb.or([eb('created_at', '>', after[0]), eb.and([eb('created_at', '=', after[0]), eb('id', '>', after[1])])]));
  return q.orderBy('created_at').orderBy('id').limit(limit).execute();
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
