import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, PG_SKIP, freshStore } from '../helpers.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { ensureAccounts } from '../../src/store/ledger.repository.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';

/**
 * Migration 0044 over a journal written before it (docs/decisions.md, "The account's sequence" and
 * "An entry that cannot be unbalanced"): every entry carried over with its two lines, numbered per
 * account in the order the lists showed them, its balanceAfter the running balance in that order;
 * balances unchanged; `ledger verify` passes.
 */
type Store = Awaited<ReturnType<typeof freshStore>>['store'];

async function accountIds(store: Store, merchantId: number) {
  await store.db.transaction().execute((trx) => ensureAccounts(forMerchant(trx, merchantId), 'sandbox', 'USD', 1));
  const id = async (key: string) =>
    Number((await store.db.selectFrom('ledger_accounts').select('id').where('account_key', '=', key).executeTakeFirstOrThrow()).id);
  return {
    merchant: await id(`merchant:${merchantId}:sandbox`),
    adjustments: await id('supplier:adjustments:sandbox'),
    cash: await id('supplier:cash:sandbox'),
  };
}

/** Posts as the code before 0044 did: the entry (with the balance its posting saw), its two lines, the balance. */
async function postOld(
  store: Store,
  merchantId: number,
  account: number,
  counter: number,
  cents: number,
  balanceAfter: number,
  createdAt: number,
  cause: string,
) {
  await store.db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: number }>`insert into journal_entries (cause, merchant_id, environment, account_id, type, amount_cents,
        balance_after_cents, currency, description, created_at)
      values (${cause}, ${merchantId}, 'sandbox', ${account}, ${cents > 0 ? 'top_up' : 'adjustment'}, ${cents}, ${balanceAfter}, 'USD', ${cause}, ${createdAt})
      returning id`.execute(trx);
    const id = Number(rows[0].id);
    await sql`insert into journal_lines (entry_id, account_id, amount_cents) values (${id}, ${account}, ${cents}), (${id}, ${counter}, ${-cents})`.execute(trx);
    await sql`update ledger_accounts set balance_cents = balance_cents + ${cents} where id = ${account}`.execute(trx);
  });
}

const linesOf = async (store: Store) =>
  (
    await sql<{
      entry_id: number;
      account_id: number;
      amount_cents: number;
    }>`select entry_id, account_id, amount_cents from journal_lines order by entry_id, account_id`.execute(store.db)
  ).rows.map((r) => [Number(r.entry_id), Number(r.account_id), Number(r.amount_cents)]);
const balancesOf = async (store: Store) =>
  (await store.db.selectFrom('ledger_accounts').select(['account_key', 'balance_cents']).orderBy('id').execute()).map((r) => [
    r.account_key,
    Number(r.balance_cents),
  ]);

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`migration 0044: the account's sequence, entries that cannot be unbalanced (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('carries a journal written before it over: lines and balances unchanged, entries numbered in list order, the chain holds, verify passes', async (t) => {
      const db = await freshStore(dialect, { upTo: '0042_backups' });
      t.after(() => db.drop());
      const a = await accountIds(db.store, 7);
      const b = await accountIds(db.store, 8);
      // Merchant 7's postings as two servers wrote them: committed (and given balances) in one order, stamped with times in another.
      await postOld(db.store, 7, a.merchant, a.cash, 1000, 1000, 10, 'top_up:1');
      await postOld(db.store, 7, a.merchant, a.adjustments, -300, 700, 30, 'adjustment:1');
      await postOld(db.store, 7, a.merchant, a.adjustments, -200, 500, 20, 'adjustment:2');
      await postOld(db.store, 8, b.merchant, b.adjustments, -90, -90, 25, 'adjustment:3');
      await postOld(db.store, 7, a.merchant, a.cash, 50, 550, 40, 'top_up:2');
      const [linesBefore, balancesBefore] = [await linesOf(db.store), await balancesOf(db.store)];
      const { rows: sums } = await sql<{ bad: number | string }>`select count(*) as bad from (
          select entry_id from journal_lines group by entry_id having sum(amount_cents) <> 0) u`.execute(db.store.db);
      assert.equal(Number(sums[0].bad), 0, 'balanced before');

      assert.ok((await migrateToLatest(db.store)).includes('0044_ledger_sequence'));

      assert.deepEqual(await linesOf(db.store), linesBefore, 'every line, read from its entry');
      assert.deepEqual(await balancesOf(db.store), balancesBefore);
      const entries = await db.store.db
        .selectFrom('journal_entries')
        .select(['cause', 'seq', 'balance_after_cents', 'account_id', 'counter_account_id'])
        .orderBy('account_id')
        .orderBy('seq')
        .execute();
      assert.deepEqual(
        entries.map((e) => [e.cause, Number(e.seq), Number(e.balance_after_cents)]),
        [
          ['top_up:1', 1, 1000],
          ['adjustment:2', 2, 800],
          ['adjustment:1', 3, 500],
          ['top_up:2', 4, 550],
          ['adjustment:3', 1, -90],
        ],
      );
      assert.deepEqual(
        entries.map((e) => Number(e.counter_account_id)),
        [a.cash, a.adjustments, a.adjustments, a.cash, b.adjustments],
      );
      const accounts = await db.store.db
        .selectFrom('ledger_accounts')
        .select(['id', 'last_seq', 'last_posted_at'])
        .where('kind', '=', 'merchant')
        .orderBy('id')
        .execute();
      assert.deepEqual(
        accounts.map((r) => [Number(r.id), Number(r.last_seq), Number(r.last_posted_at)]),
        [
          [a.merchant, 4, 40],
          [b.merchant, 1, 25],
        ],
      );
      assert.deepEqual((await verifyLedger(db.store.db)).breaches, []);
      // Ids go on after the carried-over ones.
      const { rows } = await sql<{ id: number }>`insert into journal_entries (cause, merchant_id, environment, account_id, seq, counter_account_id, type,
          amount_cents, balance_after_cents, currency, description, created_at)
        values ('top_up:3', 7, 'sandbox', ${a.merchant}, 5, ${a.cash}, 'top_up', 1, 551, 'USD', 'x', 50) returning id`.execute(db.store.db);
      assert.ok(Number(rows[0].id) > Math.max(...linesBefore.map((l) => l[0])));
    });

    it('stops, changing nothing, at an entry whose lines cannot be carried over as one balanced entry', async (t) => {
      const db = await freshStore(dialect, { upTo: '0042_backups' });
      t.after(() => db.drop());
      const a = await accountIds(db.store, 7);
      await postOld(db.store, 7, a.merchant, a.cash, 1000, 1000, 10, 'top_up:1');
      await postOld(db.store, 7, a.merchant, a.adjustments, -300, 700, 30, 'adjustment:1');
      const broken = Number((await sql<{ id: number }>`select max(id) as id from journal_entries`.execute(db.store.db)).rows[0].id);
      await sql`update journal_lines set amount_cents = 299 where entry_id = ${broken} and account_id = ${a.adjustments}`.execute(db.store.db);
      await assert.rejects(migrateToLatest(db.store), new RegExp(`journal entries ${broken} do not have one line of their amount`));
      const columns =
        dialect === 'sqlite' ? (await sql<{ name: string }>`pragma table_info(journal_entries)`.execute(db.store.db)).rows.map((r) => r.name) : [];
      if (dialect === 'sqlite') assert.ok(!columns.includes('seq'), 'the table is as it was');
      assert.equal(Number((await sql<{ n: number }>`select count(*) as n from journal_lines`.execute(db.store.db)).rows[0].n), 4);
    });
  });
}
