import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { firstSeqsAtOrAfter, type SeqSearch } from '../../src/store/ledger-books.repository.ts';
import { DIALECTS, freshStore } from '../helpers.ts';

/**
 * The journal export's bisection (issue 41, 9): for every search of a batch, the first `seq` of the
 * account posted at or after a time, equal to the answer of a plain scan — with several entries at
 * one time, a gap in the sequence, an account with one entry and one with none in range.
 */
for (const dialect of DIALECTS) {
  describe(`the first seq at or after a time (${dialect})`, () => {
    it('agrees with a scan of the account for every time and starting point, in one batch', async (c) => {
      const { store, drop } = await freshStore(dialect);
      c.after(drop);
      const { db } = store;
      const account = async (merchantId: number, kind: 'merchant' | 'sales', key: string) =>
        (
          await db
            .insertInto('ledger_accounts')
            .values({
              account_key: key,
              merchant_id: merchantId,
              environment: 'production',
              kind,
              currency: 'USD',
              balance_cents: 0,
              billing_mode: 'on_account',
              credit_limit_cents: 0,
              low_balance_threshold_cents: null,
              created_at: 0,
              updated_at: 0,
            })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
      const sales = await account(0, 'sales', 'supplier:sales:production');
      // Times along each account's sequence (never going back); seq 5 of account A is missing (a gap).
      const layouts: Record<number, { seq: number; at: number }[]> = {
        1: [1, 2, 3, 4, 6, 7, 8, 9, 10].map((seq) => ({ seq, at: [0, 10, 10, 10, 20, 20, 30, 40, 40, 50][seq - 1] })),
        2: [{ seq: 1, at: 25 }],
        3: [1, 2, 3].map((seq) => ({ seq, at: 100 + seq })),
      };
      const accounts: SeqSearch['account'][] = [];
      for (const [merchant, entries] of Object.entries(layouts)) {
        const id = await account(Number(merchant), 'merchant', `merchant:${merchant}:production`);
        for (const e of entries)
          await db
            .insertInto('journal_entries')
            .values({
              cause: `t:${merchant}:${e.seq}`,
              merchant_id: Number(merchant),
              environment: 'production',
              account_id: id,
              seq: e.seq,
              counter_account_id: sales,
              type: 'order_charge',
              amount_cents: -1,
              balance_after_cents: -e.seq,
              currency: 'USD',
              description: 'x',
              created_at: e.at,
            })
            .execute();
        accounts.push({ id, merchant_id: Number(merchant), last_seq: Math.max(...entries.map((e) => e.seq)) });
      }
      // The answer splits the account's entries from `from` on: before it, posted before `at`; from it on, at or after.
      // Past a gap it may name the missing seq itself (the range read from there is the same).
      const splits = (merchant: number, at: number, from: number, answer: number) =>
        answer >= from &&
        answer <= accounts[merchant - 1].last_seq + 1 &&
        layouts[merchant].every((e) => e.seq < from || (e.seq < answer ? e.at < at : e.at >= at));
      const searches: SeqSearch[] = [];
      const cases: { merchant: number; at: number; from: number }[] = [];
      for (const merchant of [1, 2, 3])
        for (const at of [-1, 0, 5, 10, 11, 20, 25, 30, 45, 50, 51, 101, 103, 200])
          for (const from of [1, 3, 6]) {
            if (from > accounts[merchant - 1].last_seq + 1) continue;
            searches.push({ account: accounts[merchant - 1], at, from });
            cases.push({ merchant, at, from });
          }
      const answers = await firstSeqsAtOrAfter(db, searches);
      assert.equal(answers.length, cases.length);
      const wrong = cases.map((k, i) => ({ ...k, answer: answers[i] })).filter((k) => !splits(k.merchant, k.at, k.from, k.answer));
      assert.deepEqual(wrong, []);
      // Without a gap the answer is the first entry at or after the time, exactly.
      assert.deepEqual(
        cases.flatMap((k, i) => (k.merchant === 3 ? [answers[i]] : [])),
        cases.filter((k) => k.merchant === 3).map((k) => layouts[3].find((e) => e.seq >= k.from && e.at >= k.at)?.seq ?? 4),
      );
      assert.deepEqual(await firstSeqsAtOrAfter(db, []), []);
    });
  });
}
