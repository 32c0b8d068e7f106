import { sql } from 'kysely';
import type { EntryType, SupplierAccountKind } from '../domain/ledger.ts';
import type { StockistEnv } from '../domain/vocabulary.ts';
import type { Handle } from './db.ts';
import type { AccountRow, EntryRow } from './ledger.repository.ts';

/**
 * The supplier's books across every merchant (the console's Books page, `stockist ledger export`;
 * issue 41, 9): the supplier accounts, the journal of a period, the top-ups to match against the
 * bank. Operator reads over all merchants, like `stockist ledger verify`'s: they take the bare
 * handle, and write nothing.
 *
 * No index orders the journal by time across merchants, and none is added: every order would pay
 * for it (docs/performance.md, issue 28's budget). A period is read account by account instead,
 * through each account's sequence index: an account's entries are in time order along its `seq`
 * (`last_posted_at` keeps times from going back; `ledger verify` checks it), so the period's first
 * and last `seq` are found by bisecting the sequence, and its entries are read as one range of it.
 */

/** The supplier accounts of an environment (sales, refunds, cash, adjustments; claims once that kind exists). */
export async function supplierAccounts(db: Handle, environment: StockistEnv): Promise<AccountRow[]> {
  return db.selectFrom('ledger_accounts').selectAll().where('kind', '<>', 'merchant').where('environment', '=', environment).orderBy('id').execute();
}

/** The merchant accounts of an environment in sum: their kept balances, what is owed and what is held, and how many. */
export async function merchantTotals(db: Handle, environment: StockistEnv) {
  const row = await db
    .selectFrom('ledger_accounts')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('accounts'),
      eb.fn.sum<number | string | null>('balance_cents').as('balance'),
      eb.fn.sum<number | string | null>(sql`case when balance_cents < 0 then -balance_cents else 0 end`).as('owed'),
      eb.fn.sum<number | string | null>(sql`case when balance_cents > 0 then balance_cents else 0 end`).as('held'),
    ])
    .where('kind', '=', 'merchant')
    .where('environment', '=', environment)
    .executeTakeFirstOrThrow();
  return { accounts: Number(row.accounts), balanceCents: Number(row.balance ?? 0), owedCents: Number(row.owed ?? 0), heldCents: Number(row.held ?? 0) };
}

/**
 * The sum of the merchant side of every entry type but order charges, in an environment: read
 * through each merchant account's type index (migration 0044), which leaves the charges out — the
 * query says so as a literal, so both databases use it — so the cost grows with top-ups, refunds
 * and adjustments, not with orders.
 */
export async function nonChargeSums(db: Handle, environment: StockistEnv): Promise<Partial<Record<EntryType, number>>> {
  const rows = await db
    .selectFrom('ledger_accounts as a')
    .innerJoin('journal_entries as e', (j) =>
      j.onRef('e.merchant_id', '=', 'a.merchant_id').onRef('e.account_id', '=', 'a.id').on('e.type', '<>', sql.lit('order_charge')),
    )
    .select((eb) => ['e.type as type', eb.fn.sum<number | string>('e.amount_cents').as('sum')])
    .where('a.kind', '=', 'merchant')
    .where('a.environment', '=', environment)
    .groupBy('e.type')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.type, Number(r.sum)]));
}

/** A merchant account as the journal export walks them, with the merchant's name. */
export interface BooksAccount {
  id: number;
  merchant_id: number;
  account_key: string;
  last_seq: number;
  last_posted_at: number;
  merchant_name: string;
}

/** The merchant accounts of an environment by id, `limit` after `afterId` (keyset). */
export async function merchantAccountsAfter(db: Handle, environment: StockistEnv, afterId: number, limit: number): Promise<BooksAccount[]> {
  return db
    .selectFrom('ledger_accounts as a')
    .innerJoin('merchants as m', 'm.id', 'a.merchant_id')
    .select(['a.id', 'a.merchant_id', 'a.account_key', 'a.last_seq', 'a.last_posted_at', 'm.name as merchant_name'])
    .where('a.kind', '=', 'merchant')
    .where('a.environment', '=', environment)
    .where('a.id', '>', afterId)
    .orderBy('a.id')
    .limit(limit)
    .execute();
}

/** One bisection of `firstSeqsAtOrAfter`: an account, the time sought, and a `seq` known to be at or before the answer. */
export interface SeqSearch {
  account: Pick<BooksAccount, 'id' | 'merchant_id' | 'last_seq'>;
  at: number;
  from: number;
}

/**
 * For each search, the first `seq` of its account whose entry was posted at or after `at`
 * (`last_seq + 1` when none was) — past a gap in the sequence, possibly the missing `seq` before it,
 * which bounds the same range — searching from `from` on: a bisection of the account's sequence, since times never go back
 * along it. The searches step together — each step is one statement that seeks, for every search
 * still open, the first entry at or after the middle of its range — so a batch of accounts costs
 * about log2(entries) round trips, not that many per account. A step lands on the first entry at
 * or after its `seq`, so a gap (an entry removed behind the ledger's back) cannot mislead it.
 */
export async function firstSeqsAtOrAfter(db: Handle, searches: readonly SeqSearch[]): Promise<number[]> {
  const lo = searches.map((s) => s.from);
  const hi = searches.map((s) => s.account.last_seq + 1);
  for (;;) {
    const open = searches.map((_, i) => i).filter((i) => lo[i] < hi[i]);
    if (open.length === 0) return lo;
    const probes = open.map((i) => {
      const { id, merchant_id } = searches[i].account;
      return sql`select cast(${i} as bigint) as i, cast(${merchant_id} as bigint) as merchant_id, cast(${id} as bigint) as account_id, cast(${Math.floor((lo[i] + hi[i]) / 2)} as bigint) as mid`;
    });
    const first = (column: 'seq' | 'created_at') =>
      sql`(select e.${sql.ref(column)} from journal_entries e where e.merchant_id = p.merchant_id and e.account_id = p.account_id and e.seq >= p.mid order by e.seq limit 1)`;
    const { rows } = await sql<{ i: number; mid: number; seq: number | null; created_at: number | null }>`
      select p.i as i, p.mid as mid, ${first('seq')} as seq, ${first('created_at')} as created_at
      from (${sql.join(probes, sql` union all `)}) p`.execute(db);
    for (const r of rows) {
      const i = Number(r.i);
      if (r.seq === null || r.created_at === null || Number(r.created_at) >= searches[i].at || Number(r.seq) >= hi[i]) hi[i] = Number(r.mid);
      else lo[i] = Number(r.seq) + 1;
    }
  }
}

/** The account's entries with `fromSeq ≤ seq < toSeq`, oldest first, at most `limit`. */
export async function entriesInSeqRange(
  db: Handle,
  account: Pick<BooksAccount, 'id' | 'merchant_id'>,
  fromSeq: number,
  toSeq: number,
  limit: number,
): Promise<EntryRow[]> {
  return db
    .selectFrom('journal_entries')
    .selectAll()
    .where('merchant_id', '=', account.merchant_id)
    .where('account_id', '=', account.id)
    .where('seq', '>=', fromSeq)
    .where('seq', '<', toSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/** Account ids → keys and kinds of the supplier accounts (the other side of every entry). */
export async function supplierAccountKeys(db: Handle): Promise<Map<number, { key: string; kind: SupplierAccountKind }>> {
  const rows = await db.selectFrom('ledger_accounts').select(['id', 'account_key', 'kind']).where('kind', '<>', 'merchant').execute();
  return new Map(rows.map((r) => [r.id, { key: r.account_key, kind: r.kind as SupplierAccountKind }]));
}

/**
 * The top-ups of an environment recorded in [start, end), every merchant's, with its name: through
 * each merchant account's type index, as `nonChargeSums`.
 */
export async function topUpsBetween(db: Handle, environment: StockistEnv, start: number, end: number) {
  return db
    .selectFrom('ledger_accounts as a')
    .innerJoin('journal_entries as e', (j) =>
      j.onRef('e.merchant_id', '=', 'a.merchant_id').onRef('e.account_id', '=', 'a.id').on('e.type', '=', 'top_up').on('e.type', '<>', sql.lit('order_charge')),
    )
    .innerJoin('merchants as m', 'm.id', 'a.merchant_id')
    .select(['e.id', 'e.merchant_id', 'm.name as merchant_name', 'e.reference', 'e.amount_cents', 'e.created_at'])
    .where('a.kind', '=', 'merchant')
    .where('a.environment', '=', environment)
    .where('e.created_at', '>=', start)
    .where('e.created_at', '<', end)
    .orderBy('e.created_at')
    .orderBy('e.id')
    .execute();
}
