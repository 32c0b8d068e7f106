import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, loadCatalogue, newMerchant, useApp } from '../helpers.ts';
import { ADDRESS, ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { signedIn, staff, type Browser } from './console-client.ts';
import { member } from './manager-helpers.ts';

/**
 * The order search's text match (Front ends III item 8): a term finds orders by a part of the
 * order id, the custom order id or the recipient, and (the console) by a part of the merchant's
 * name; case-insensitively, `%`, `_` and `\` taken literally, on both databases; a merchant's
 * search never finds another merchant's order.
 */

/** The order ids a results page links to, in order, each once. */
const listed = (html: string, front: 'console' | 'manager') => [
  ...new Set([...html.matchAll(new RegExp(`href="/${front}/orders/(\\d+)"`, 'g'))].map((m) => m[1])),
];

for (const dialect of DIALECTS) {
  describe(`order search by text (${dialect})`, () => {
    const t = useApp(dialect);
    let operator: Browser;
    let manager: Browser;
    const ids: Record<'a' | 'b' | 'c' | 'd', string> = { a: '', b: '', c: '', d: '' };

    const search = async (b: Browser, front: 'console' | 'manager', q: string) => {
      const r = await b.get(`/${front}/orders?${new URLSearchParams({ q })}`);
      assert.equal(r.statusCode, 200, `${front} q=${JSON.stringify(q)}: ${r.body.slice(0, 300)}`);
      return listed(r.body, front).sort();
    };
    const console_ = (q: string) => search(operator, 'console', q);
    const own = (q: string) => search(manager, 'manager', q);
    const sorted = (...xs: string[]) => [...xs].sort();

    // The orders searched for, placed once before any test: every test only searches, so each runs alone.
    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      const acme = await newMerchant(t, 'Acme Widgets');
      const harbor = await newMerchant(t, 'Blue Harbor Trading');
      const at = (recipient: string) => ({ orderAddress: { ...ADDRESS, recipient } });
      ids.a = (await placeOrder(t, acme.token, [{ sku: 'C', quantity: 1 }], { customOrderId: 'PO-77%OFF', ...at('Marta Kowalska') })).id;
      ids.b = (await placeOrder(t, acme.token, [{ sku: 'C', quantity: 1 }], { customOrderId: 'ORDER-5_1', ...at('Bob Stone') })).id;
      ids.c = (await placeOrder(t, acme.token, [{ sku: 'C', quantity: 1 }], { customOrderId: 'ORDER-5X1-77-OFF', ...at('Bob Stone') })).id;
      // Another merchant's order with the same custom id and recipient as the first.
      ids.d = (await placeOrder(t, harbor.token, [{ sku: 'C', quantity: 1 }], { customOrderId: 'PO-77%OFF', ...at('Marta Kowalska') })).id;
      await staff(t, 'support@example.com', 'support');
      operator = await signedIn(t, 'support@example.com');
      manager = await member(t, acme.merchantId, 'viewer@acme.example', 'viewer');
    });

    it('finds a part of a custom order id, case-insensitively, with % and _ taken literally', async () => {
      assert.deepEqual(await console_('order-5'), sorted(ids.b, ids.c));
      assert.deepEqual(await console_('OrDeR-5'), sorted(ids.b, ids.c));
      assert.deepEqual(await console_('5_1'), [ids.b], '_ is not "any character" (ORDER-5X1… would match)');
      assert.deepEqual(await console_('77%off'), sorted(ids.a, ids.d), '% is not "anything" (ORDER-5X1-77-OFF would match)');
      assert.deepEqual(await console_('%%%'), []);
      assert.deepEqual(await console_('___'), []);
      assert.deepEqual(await console_('\\\\\\'), []);
    });

    it('finds a part of the recipient and of the order id', async () => {
      assert.deepEqual(await console_('KOWALSKA'), sorted(ids.a, ids.d));
      assert.deepEqual(await console_('bob st'), sorted(ids.b, ids.c));
      const part = ids.a.slice(1);
      const found = await console_(part);
      assert.ok(found.includes(ids.a), `${part} finds ${ids.a}`);
      for (const id of found) assert.ok(id.includes(part), `${id} contains ${part}`);
      // The exact id, split id and custom id still find their order, short or not.
      assert.deepEqual(await console_(ids.b), [ids.b]);
    });

    it('the console finds a part of a merchant name; the manager does not match merchant names', async () => {
      assert.deepEqual(await console_('harbor'), [ids.d]);
      assert.deepEqual(await console_('ACME WID'), sorted(ids.a, ids.b, ids.c));
      assert.deepEqual(await own('acme'), []);
    });

    it('a merchant’s search never finds another merchant’s order', async () => {
      assert.deepEqual(await own('kowalska'), [ids.a]);
      assert.deepEqual(await own('PO-77%OFF'), [ids.a], 'the exact custom id of both merchants');
      assert.deepEqual(await own('harbor'), []);
      assert.deepEqual(await own(ids.d), [], 'the other merchant’s order id');
      assert.deepEqual(await own(ids.d.slice(1)).then((found) => found.filter((id) => id === ids.d)), []);
      assert.deepEqual(await own('77%off'), [ids.a]);
    });

    it('a term of one or two characters matches exact ids only', async () => {
      assert.deepEqual(await console_('bo'), []);
      assert.deepEqual(await console_('7'), []);
    });

    it('odd input is a page, never a 5xx', async () => {
      for (const q of [
        '"',
        '""',
        '"bob',
        'bob"',
        "'",
        '*',
        'bob*',
        'NEAR(bob stone)',
        'a OR b',
        '^bob',
        '-',
        '\\',
        '%',
        '_',
        '%_\\',
        '😀😀😀',
        'ß'.repeat(128),
        ' '.repeat(5),
      ]) {
        for (const b of [operator, manager]) {
          const front = b === operator ? 'console' : 'manager';
          const r = await b.get(`/${front}/orders?${new URLSearchParams({ q })}`);
          assert.ok(r.statusCode < 500, `${front} q=${JSON.stringify(q)}: ${r.statusCode}`);
        }
      }
      assert.deepEqual(await console_('"bob'), []);
      assert.deepEqual(await console_('bob"'), []);
    });
  });
}
