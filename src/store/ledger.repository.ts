import { sql, type Insertable, type Selectable } from 'kysely';
import { prepared, preparedForMerchant } from './prepared.ts';
import { accountKey, ACCOUNT_KINDS, type EntryType, type LinePlan, type SupplierAccountKind } from '../domain/ledger.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import type { Dialect, Handle, Trx } from './db.ts';
import type { JournalEntriesTable, LedgerAccountsTable } from './schema.ts';
import type { MerchantScope } from './tenancy.ts';

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
  await scope.handle
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

/**
 * Moves the merchant account's balance by `deltaCents` and answers the account after it — in one
 * statement, so the check and the charge are one atomic step (SPEC §15): a charge (negative delta)
 * of a `prepaid` account only applies while `balance + creditLimit` still covers it. Undefined when
 * the account does not exist or a prepaid account cannot cover the charge.
 */
export async function moveBalance(scope: MerchantScope<Trx>, environment: StockistEnv, deltaCents: number, now: number): Promise<AccountRow | undefined> {
  return balanceMove.first(scope, accountKey.merchant(scope.merchantId, environment), deltaCents, now, deltaCents < 0);
}

// On the order path: built and compiled once (store/prepared.ts). `charge` is shape: only a charge is checked.
const balanceMove = preparedForMerchant((scope, key: string, deltaCents: number, now: number, charge: boolean) => {
  let q = scope
    .updateTable('ledger_accounts')
    .set({ balance_cents: sql<number>`balance_cents + ${deltaCents}`, updated_at: now })
    .where('account_key', '=', key);
  if (charge) q = q.where((eb) => eb.or([eb('billing_mode', '=', 'on_account'), eb(sql<number>`balance_cents + credit_limit_cents + ${deltaCents}`, '>=', 0)]));
  return q.returningAll();
});

/** Moves the balance of an account already known by id (a credit to the account an order was charged to). */
export async function creditAccount(trx: Trx, accountId: number, deltaCents: number, now: number): Promise<AccountRow> {
  return trx
    .updateTable('ledger_accounts')
    .set({ balance_cents: sql<number>`balance_cents + ${deltaCents}`, updated_at: now })
    .where('id', '=', accountId)
    .where('kind', '=', 'merchant')
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface NewEntry {
  cause: string;
  type: EntryType;
  /** The merchant account after its balance moved by the merchant line. */
  account: AccountRow;
  /** The entry's lines (domain/ledger.ts `entryLines`): the merchant's side and a supplier account's. */
  lines: LinePlan[];
  orderId?: number | null;
  refundId?: number | null;
  splitOrderId?: number | null;
  reference?: string | null;
  description: string;
}

/**
 * Writes the entry and its two lines (the merchant's side and the supplier account's, summing to
 * zero). A second entry with the same cause fails on the unique constraint and rolls the whole
 * transaction back, the cause's own change included.
 */
export async function insertEntry(trx: Trx, e: NewEntry, now: number): Promise<EntryRow> {
  const merchantLine = e.lines.find((l) => l.account === 'merchant');
  if (!merchantLine || e.lines.reduce((sum, l) => sum + l.amountCents, 0) !== 0) throw new Error(`insertEntry: the lines of ${e.cause} do not balance`);
  const entry = await entryInsert.first(trx, {
    cause: e.cause,
    merchant_id: e.account.merchant_id,
    environment: e.account.environment,
    account_id: e.account.id,
    type: e.type,
    amount_cents: merchantLine.amountCents,
    balance_after_cents: e.account.balance_cents,
    currency: e.account.currency,
    order_id: e.orderId ?? null,
    refund_id: e.refundId ?? null,
    split_order_id: e.splitOrderId ?? null,
    reference: e.reference ?? null,
    description: e.description,
    created_at: now,
  });
  if (!entry) throw new Error('insertEntry: no row returned');
  await linesInsert.run(
    trx,
    entry.id,
    e.lines.map((l) =>
      l.account === 'merchant'
        ? { merchant: true, accountId: e.account.id, amountCents: l.amountCents }
        : { merchant: false, key: accountKey.supplier(l.account, e.account.environment), amountCents: l.amountCents },
    ),
  );
  return entry;
}

const entryInsert = prepared((db, row: Insertable<JournalEntriesTable>) => db.insertInto('journal_entries').values(row).returningAll());

type LineRow = { merchant: true; accountId: number; amountCents: number } | { merchant: false; key: string; amountCents: number };
// Which line is the merchant's is shape (a boolean): the supplier account is found by its key in the same statement.
const linesInsert = prepared((db, entryId: number, lines: LineRow[]) =>
  db.insertInto('journal_lines').values(
    lines.map((l) => ({
      entry_id: entryId,
      account_id: l.merchant ? l.accountId : db.selectFrom('ledger_accounts').select('id').where('account_key', '=', l.key),
      amount_cents: l.amountCents,
    })),
  ),
);

/** The entry of a cause (a repeated top-up answers the first one), within the merchant. */
export async function entryByCause(scope: MerchantScope, cause: string): Promise<EntryRow | undefined> {
  return scope.selectFrom('journal_entries').selectAll().where('cause', '=', cause).executeTakeFirst();
}

/** The account an order was charged to (a refund's credit goes back there), or undefined for an order placed before the ledger. */
export async function chargeOfOrder(trx: Handle, orderId: number): Promise<{ accountId: number; merchantId: number } | undefined> {
  const row = await trx.selectFrom('journal_entries').select(['account_id', 'merchant_id']).where('cause', '=', `order:${orderId}`).executeTakeFirst();
  return row && { accountId: row.account_id, merchantId: row.merchant_id };
}

export interface EntryFilter {
  type: EntryType | null;
  createStart: number | null;
  createEnd: number | null;
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
  let q = scope.selectFrom('journal_entries').selectAll().where('account_id', '=', accountId);
  if (filter.type !== null) q = q.where('type', '=', filter.type);
  if (filter.createStart !== null) q = q.where('created_at', '>=', filter.createStart);
  if (filter.createEnd !== null) q = q.where('created_at', '<=', filter.createEnd);
  if (after !== null) q = q.where((eb) => eb.or([eb('created_at', '<', after[0]), eb.and([eb('created_at', '=', after[0]), eb('id', '<', after[1])])]));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
}

/** How many entries the filter matches, counting at most `cap` (SPEC §4.6: `total` costs no more than a bounded read). */
export async function countEntries(scope: MerchantScope, accountId: number, filter: EntryFilter, cap: number): Promise<number> {
  let inner = scope.selectFrom('journal_entries').select('journal_entries.id').where('account_id', '=', accountId);
  if (filter.type !== null) inner = inner.where('type', '=', filter.type);
  if (filter.createStart !== null) inner = inner.where('created_at', '>=', filter.createStart);
  if (filter.createEnd !== null) inner = inner.where('created_at', '<=', filter.createEnd);
  const row = await scope.handle
    .selectFrom(inner.limit(cap).as('w'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
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
    .set({ ...terms, updated_at: now })
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
 * The supplier's money in one environment (the console dashboard): payments received (the cash
 * account's lines), what merchants owe (negative balances) and what they have paid in advance
 * (positive balances). Sums over the accounts and the cash account's lines only.
 */
export async function supplierMoney(db: Handle, environment: StockistEnv) {
  const [received, balances] = await Promise.all([
    db
      .selectFrom('journal_lines')
      .innerJoin('ledger_accounts', 'ledger_accounts.id', 'journal_lines.account_id')
      .select((eb) => eb.fn.sum<number | string | null>('journal_lines.amount_cents').as('sum'))
      .where('ledger_accounts.account_key', '=', accountKey.supplier('cash', environment))
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
  return { receivedCents: -Number(received.sum ?? 0), owedCents: Number(balances.owed ?? 0), heldCents: Number(balances.held ?? 0) };
}
