import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery } from 'kysely';
import { listAuditFiltered } from '../../src/store/audit.repository.ts';
import { countsPerDay, lowStockRows, refundWorkerCounts } from '../../src/store/dashboard.repository.ts';
import type { Db, Store } from '../../src/store/db.ts';
import { countEntries, entriesPage, supplierMoney } from '../../src/store/ledger.repository.ts';
import { findOrderByCustomId, ordersNamedBy } from '../../src/store/orders.repository.ts';
import { ledgerOfProduct } from '../../src/store/stock-history.repository.ts';
import { countSearchedRefunds, searchRefunds, type RefundSearch } from '../../src/store/refunds.repository.ts';
import { countTokensOfMerchant, tokensOfMerchant } from '../../src/store/merchants.repository.ts';
import { allMerchants } from '../../src/store/tenancy.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';
import { ClosedDayCounts } from '../../src/services/dashboard.service.ts';
import { DIALECTS, PG_SKIP, freshStore } from '../helpers.ts';

/**
 * Issue 16: the console's dashboard, history and audit queries must stay indexed ranges on the
 * big tables (the 1M-order bench data), never a scan of every row. Each query is captured as the
 * repository compiles it and explained: on SQLite every big table it reads must be a SEARCH (an
 * index range), never a SCAN; on PostgreSQL, with sequential scans discouraged, every read of a big
 * table must carry an index condition (the planner may still prefer a seq scan on tiny tables,
 * which says nothing about large ones; this says an index serves the query).
 */

const BIG_TABLES = ['orders', 'refunds', 'stock_ledger', 'audit_log', 'stocks', 'api_tokens'];

/** The store's handle with a plugin that records every query it compiles. */
function capturing(db: Db) {
  const queries: CompiledQuery[] = [];
  const handle = db.withPlugin({
    transformQuery: (args) => {
      queries.push(db.getExecutor().compileQuery(args.node, args.queryId));
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  return { handle, queries };
}

async function plan(store: Store, q: CompiledQuery): Promise<string> {
  if (store.dialect === 'sqlite') {
    const r = await store.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]));
    return r.rows.map((row) => row.detail).join('\n');
  }
  return store.db.transaction().execute(async (trx) => {
    await trx.executeQuery(CompiledQuery.raw('set local enable_seqscan = off'));
    const r = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]));
    return r.rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

function assertIndexed(dialect: string, what: string, text: string) {
  for (const table of BIG_TABLES) {
    if (dialect === 'sqlite') {
      assert.doesNotMatch(text, new RegExp(`\\bSCAN ${table}\\b`), `${what}: ${table} is scanned\n${text}`);
    } else {
      assert.doesNotMatch(text, new RegExp(`Seq Scan on ${table}\\b`), `${what}: ${table} is scanned\n${text}`);
    }
  }
  if (dialect === 'postgres') assert.match(text, /Index Cond/, `${what}: no index condition\n${text}`);
  else assert.match(text, /\bSEARCH\b/, `${what}: no index range\n${text}`);
}

const ANY_REFUND: RefundSearch = { status: null, merchantId: null, createStart: null, createEnd: null };

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`console queries are indexed ranges (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    let fresh: Awaited<ReturnType<typeof freshStore>>;
    before(async () => {
      fresh = await freshStore(dialect);
    });
    after(() => fresh.drop());

    const cases: [string, (db: Db) => Promise<unknown>][] = [
      ['orders per day', (db) => countsPerDay(db, 'orders', Date.now() - 30 * 86_400_000, Date.now())],
      ['refunds per day', (db) => countsPerDay(db, 'refunds', Date.now() - 30 * 86_400_000, Date.now())],
      ['low stock', (db) => lowStockRows(db, 5, 21)],
      ['refund worker', (db) => refundWorkerCounts(db, Date.now() - 2000, Date.now())],
      ['stock history', (db) => ledgerOfProduct(db, 42, null, 51)],
      ['stock history, next page', (db) => ledgerOfProduct(db, 42, 1000, 51)],
      ['audit by action', (db) => listAuditFiltered(db, { actor: null, action: 'stock.adjust', target: null }, null, 51)],
      ['audit by target', (db) => listAuditFiltered(db, { actor: null, action: null, target: 'stock' }, 500, 51)],
      // The custom id's indexes hold only orders that have one (migration 0035): both lookups still use them.
      ['order by custom id (merchant)', (db) => findOrderByCustomId(forMerchant(db, 7), 'PO-1')],
      ['order by custom id (operator search)', (db) => ordersNamedBy(allMerchants(db), 'PO-1', null)],
      ['audit by actor', (db) => listAuditFiltered(db, { actor: { kind: 'staff', id: '7000000000001' }, action: null, target: null }, null, 51)],
      // The console's list of all refunds and a merchant's tokens (issue 29, items 7 and 12; migration 0041).
      ['all refunds by status', (db) => searchRefunds(allMerchants(db), { ...ANY_REFUND, status: 'refund_failed' }, null, 51)],
      ['all refunds by merchant', (db) => searchRefunds(allMerchants(db), { ...ANY_REFUND, merchantId: 7 }, null, 51)],
      [
        'all refunds by merchant and status, next page',
        (db) => searchRefunds(allMerchants(db), { ...ANY_REFUND, merchantId: 7, status: 'pending_review' }, [Date.now(), 8e12], 51),
      ],
      ['all refunds, next page', (db) => searchRefunds(allMerchants(db), ANY_REFUND, [Date.now(), 8e12], 51)],
      ['all refunds by merchant, counted', (db) => countSearchedRefunds(db, { ...ANY_REFUND, merchantId: 7 }, 10_000, null)],
      ["a merchant's tokens, next page", (db) => tokensOfMerchant(forMerchant(db, 7), 9e12, 51)],
      ["a merchant's tokens, counted", (db) => countTokensOfMerchant(forMerchant(db, 7), 10_000, 9e12)],
    ];
    it('the dashboard reads a day that is over once, then only the days still open', async () => {
      const DAY = 86_400_000;
      const { handle, queries } = capturing(fresh.store.db);
      const closedDays = new ClosedDayCounts();
      const now = Date.UTC(2026, 10, 25, 12);
      const today = Math.floor(now / DAY);
      const since = () => Number(queries.at(-1)!.parameters[0]);
      const first = await closedDays.perDay(handle, 'orders', today - 29, today, now);
      assert.deepEqual(
        [...first.keys()],
        Array.from({ length: 30 }, (_, i) => today - 29 + i),
        'every day of the window, zero-filled',
      );
      assert.equal(since(), (today - 29) * DAY, 'the first view reads the whole window');
      await closedDays.perDay(handle, 'orders', today - 29, today, now + 1000);
      assert.equal(since(), today * DAY, 'the next reads only today');
      // A minute after midnight that day is over too: read once more (its final count), then kept.
      await closedDays.perDay(handle, 'orders', today - 28, today + 1, (today + 1) * DAY + 61_000);
      assert.equal(since(), today * DAY);
      await closedDays.perDay(handle, 'orders', today - 28, today + 1, (today + 1) * DAY + 62_000);
      assert.equal(since(), (today + 1) * DAY);
      // Within the first minute after midnight, yesterday may still get a late commit: it is read live.
      const fresh2 = new ClosedDayCounts();
      await fresh2.perDay(handle, 'refunds', today - 29, today, today * DAY + 30_000);
      await fresh2.perDay(handle, 'refunds', today - 29, today, today * DAY + 40_000);
      assert.equal(since(), (today - 1) * DAY);
    });

    it('stock history: one product index, read newest first without a sort on SQLite, on every page (migration 0036)', async () => {
      for (const before of [null, 1000]) {
        const { handle, queries } = capturing(fresh.store.db);
        await ledgerOfProduct(handle, 42, before, 51);
        const text = await plan(fresh.store, queries[0]);
        assert.match(text, /stock_ledger_product_time_idx/, text);
        // PostgreSQL plans an empty table by cost (a bitmap read and a sort of nothing); SQLite's plan is the shape.
        if (dialect === 'sqlite') assert.doesNotMatch(text, /TEMP B-TREE/, text);
      }
    });

    for (const [what, run] of cases) {
      it(what, async () => {
        const { handle, queries } = capturing(fresh.store.db);
        await run(handle);
        assert.ok(queries.length > 0);
        for (const q of queries) assertIndexed(dialect, what, await plan(fresh.store, q));
      });
    }
  });
}

/**
 * Issue 28: a merchant's transactions page and its capped `total` read only the entries index
 * (the scope's `merchant_id = ?` included), newest first without a sort: their cost does not grow
 * with the ledger (docs/performance.md, "Account reads at 1M entries").
 */
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`account transactions read one index (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    let fresh: Awaited<ReturnType<typeof freshStore>>;
    before(async () => {
      fresh = await freshStore(dialect);
    });
    after(() => fresh.drop());
    const noFilter = { type: null, createStart: null, createEnd: null };

    it('the page: the account index, newest first, no sort step', async () => {
      // Charges are read through the account index (the type index leaves them out, migration 0035).
      for (const filter of [noFilter, { ...noFilter, type: 'top_up' as const }, { ...noFilter, type: 'order_charge' as const }]) {
        const { handle, queries } = capturing(fresh.store.db);
        await entriesPage(forMerchant(handle, 7), 3, filter, 10, 0, 21);
        const text = await plan(fresh.store, queries[0]);
        const index = filter.type === 'top_up' ? 'journal_entries_account_type_idx' : 'journal_entries_account_seq_uq';
        assert.match(text, new RegExp(index), text);
        if (dialect === 'sqlite') assert.doesNotMatch(text, /TEMP B-TREE/, text);
        else assert.doesNotMatch(text, /\bSort\b/, text);
      }
    });

    it("the dashboard's money received: top-ups through the type index (which leaves out charges)", async () => {
      const { handle, queries } = capturing(fresh.store.db);
      await supplierMoney(handle, 'sandbox');
      const received = queries.find((q) => q.sql.includes('journal_entries'));
      assert.ok(received);
      const text = await plan(fresh.store, received);
      assert.match(text, /journal_entries_account_type_idx/, text);
    });

    it('the capped count: index only, no table row read', async () => {
      const { handle, queries } = capturing(fresh.store.db);
      await countEntries(forMerchant(handle, 7), 3, noFilter, 10_000);
      const text = await plan(fresh.store, queries[0]);
      if (dialect === 'sqlite') assert.match(text, /USING COVERING INDEX journal_entries_account_seq_uq/, text);
      else assert.match(text, /Index Only Scan using journal_entries_account_(seq_uq|type_idx)/, text);
    });
  });
}
