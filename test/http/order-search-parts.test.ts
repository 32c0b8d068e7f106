import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { up as orderSearchWithoutId } from '../../src/store/migrations/0049_order_search_without_id.ts';
import { DIALECTS, loadCatalogue, newMerchant, useApp } from '../helpers.ts';
import { ADDRESS, ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { signedIn, staff, type Browser } from './console-client.ts';
import { member } from './manager-helpers.ts';

/**
 * How the order search reads a term's matches at scale (docs/decisions.md "Order search by text at
 * 1M orders", migration 0049): a part of an order id is matched as ranges of ids, the text (custom
 * order id, recipient) through the index of each database — on PostgreSQL for the term's rarest
 * trigrams, the whole term checked on the rows found — and the matches are read once per search.
 * The answers are the same as matching each order's text: these pin that down.
 */

/** The order ids a results page links to, in order, each once. */
const listed = (html: string, front: 'console' | 'manager') => [
  ...new Set([...html.matchAll(new RegExp(`href="/${front}/orders/(\\d+)"`, 'g'))].map((m) => m[1])),
];
const sorted = (xs: string[]) => [...xs].sort();
/** A list page's size on both front ends. */
const PAGE = 25;
/** The newest page of sorted ids (ids of one length sort as numbers do). */
const firstPage = (ids: string[]) => ids.slice(-PAGE);

for (const dialect of DIALECTS) {
  describe(`order search: parts of ids, rare trigrams, pages (${dialect})`, () => {
    const t = useApp(dialect);
    let operator: Browser;
    let manager: Browser;
    /** Every order placed: id, merchant (a: the manager's, b: another), custom id, recipient. */
    const placed: { id: string; merchant: 'a' | 'b'; custom: string; recipient: string }[] = [];
    let tokens: Record<'a' | 'b', string>;

    const page = async (b: Browser, front: 'console' | 'manager', query: string) => {
      const r = await b.get(`/${front}/orders?${query}`);
      assert.equal(r.statusCode, 200, `${front} ${query}: ${r.body.slice(0, 300)}`);
      return r.body;
    };
    const search = async (b: Browser, front: 'console' | 'manager', q: string) =>
      sorted(listed(await page(b, front, new URLSearchParams({ q }).toString()), front));
    /** The orders whose id, custom order id or recipient contains `q` (case-insensitively), as the search must find them. */
    const expected = (q: string, merchant?: 'a') =>
      sorted(
        placed
          .filter((o) => merchant === undefined || o.merchant === merchant)
          .filter((o) => [o.id, o.custom, o.recipient].some((s) => s.toLowerCase().includes(q.toLowerCase())))
          .map((o) => o.id),
      );
    const place = async (merchant: 'a' | 'b', custom: string, recipient: string) => {
      const o = await placeOrder(t, tokens[merchant], [{ sku: 'C', quantity: 1 }], { customOrderId: custom, orderAddress: { ...ADDRESS, recipient } });
      placed.push({ id: o.id, merchant, custom, recipient });
      return o.id as string;
    };

    // What every test searches: made before them, so none depends on another having run first.
    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      const a = await newMerchant(t, 'Parts Alpha');
      const b = await newMerchant(t, 'Parts Beta');
      tokens = { a: a.token, b: b.token };
      await place('a', 'PA-1', 'Anna Bell');
      await place('a', 'PA-2', 'Bell Anna');
      await place('b', 'PB-1', 'Annabell Smith');
      await place('b', 'PB-2', 'Anna Bell');
      await staff(t, 'support@example.com', 'support');
      operator = await signedIn(t, 'support@example.com');
      manager = await member(t, a.merchantId, 'viewer@alpha.example', 'viewer');
    });

    it('a part of an order id finds the orders whose id has it, and those whose custom id or recipient has it', async () => {
      const target = placed[1].id;
      // Another order whose custom id carries the same digits: found by its text, not its id.
      const part = target.slice(-7);
      await place('b', `REF-${part}`, 'Carol Digits');
      for (const q of [target.slice(-4), target.slice(-7), target.slice(2), target.slice(3, 10), target]) {
        // Newest first, a page of 25: orders other tests placed (in any order) share these digits.
        const found = await search(operator, 'console', q);
        assert.deepEqual(found, firstPage(expected(q)), `console q=${q}`);
        if (expected(q).length <= PAGE) assert.ok(found.includes(target), `console q=${q} finds ${target}`);
        assert.deepEqual(await search(manager, 'manager', q), firstPage(expected(q, 'a')), `manager q=${q}`);
      }
      const both = await search(operator, 'console', part);
      assert.ok(both.includes(placed.at(-1)?.id ?? ''), 'the order whose custom id has the digits');
      // The other merchant's order: not in the manager's answer, by its id or by its custom id.
      const theirs = placed.find((o) => o.merchant === 'b')?.id ?? '';
      assert.deepEqual(await search(manager, 'manager', theirs.slice(1)), firstPage(expected(theirs.slice(1), 'a')));
      assert.ok(!(await search(manager, 'manager', part)).includes(placed.at(-1)?.id ?? ''));
    });

    it('a term whose every trigram an order has still needs the whole term: "anna bell" is not "bell anna"', async () => {
      assert.deepEqual(await search(operator, 'console', 'anna bell'), expected('anna bell'));
      assert.equal(expected('anna bell').length, 2);
      assert.deepEqual(await search(operator, 'console', 'bell ann'), expected('bell ann'));
      assert.deepEqual(await search(operator, 'console', 'annabell'), expected('annabell'));
      assert.deepEqual(await search(manager, 'manager', 'anna bell'), expected('anna bell', 'a'));
      assert.deepEqual(await search(manager, 'manager', 'ANNA'), expected('anna', 'a'));
    });

    it('a term matching more than a page: counted, and walked by the Next link to its last match', async () => {
      for (let i = 0; i < 27; i++) await place('a', `PG-${i}`, `Paging Person ${i}`);
      for (const [b, front] of [
        [operator, 'console'],
        [manager, 'manager'],
      ] as const) {
        const first = await page(b, front, 'q=paging+person');
        assert.equal(listed(first, front).length, 25);
        assert.match(first, /1–25 of 27(?! or more)/, `${front}: the count`);
        const next = /<a rel="next" href="([^"]+)"/.exec(first);
        assert.ok(next, `${front}: a Next link`);
        const second = await page(b, front, next[1].replaceAll('&amp;', '&').split('?')[1]);
        assert.match(second, /26–27 of 27/);
        assert.deepEqual(sorted([...listed(first, front), ...listed(second, front)]), expected('paging person'), `${front}: every match once`);
      }
    });

    it('migration 0049 indexes the orders already there, and orders placed after it', async () => {
      const before = await place('a', 'MIG-1', 'Rebuilt Index');
      await orderSearchWithoutId({ db: t.store.db, dialect: t.store.dialect });
      assert.deepEqual(await search(operator, 'console', 'rebuilt ind'), [before]);
      const after = await place('a', 'MIG-2', 'Rebuilt Index Too');
      assert.deepEqual(await search(operator, 'console', 'rebuilt ind'), sorted([before, after]));
      assert.deepEqual(await search(operator, 'console', 'mig-'), sorted([before, after]));
    });
  });
}
