import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BankMatch, SupplierBooks } from '../../src/services/books.service.ts';
import { presentBooks } from '../../src/web/console/present-books.ts';

// The console's Books page without its template (issue 41, 9): what presentBooks makes of the
// supplier's books and of a bank statement's match.

const NOW = Date.parse('2026-12-06T12:00:00Z');
const AT = Date.parse('2026-11-10T09:15:00Z');
const AT_TIME = '<time datetime="2026-11-10T09:15:00Z" title="2026-11-10 09:15:00 UTC">2026-11-10 09:15 UTC</time>';

const books = (accounts: SupplierBooks['accounts']): SupplierBooks => ({
  environment: 'production',
  accounts,
  merchants: { accounts: 2, balanceCents: 5362, owedCents: 1000, heldCents: 6362 },
});

describe('presentBooks', () => {
  it('lists the supplier accounts with what each records, the merchants in sum, and a total of zero', () => {
    const v = presentBooks(
      books([
        { kind: 'sales', accountKey: 'supplier:sales:production', currency: 'USD', balanceCents: 5420 },
        { kind: 'refunds', accountKey: 'supplier:refunds:production', currency: 'USD', balanceCents: -932 },
        { kind: 'cash', accountKey: 'supplier:cash:production', currency: 'USD', balanceCents: -10000 },
        { kind: 'adjustments', accountKey: 'supplier:adjustments:production', currency: 'USD', balanceCents: 150 },
      ]),
      NOW,
    );
    assert.equal(v.title, 'Books (production)');
    assert.deepEqual(
      v.accounts.rows.map((r) => [r.data?.value, r.cells[0], r.cells[3]]),
      [
        ['sales', 'Sales', '54.20 USD'],
        ['refunds', 'Refunds', '-9.32 USD'],
        ['cash', 'Cash', '-100.00 USD'],
        ['adjustments', 'Adjustments', '1.50 USD'],
        ['merchants', 'Merchants (2 accounts)', '53.62 USD'],
      ],
    );
    assert.equal(v.accounts.rows[4].cells[2], 'what merchants have paid in advance (63.62) less what they owe (10.00)');
    assert.equal(v.total, '0.00 USD');
    assert.deepEqual(
      v.environments.map((e) => [e.name, e.href, e.current]),
      [
        ['sandbox', '/console/books?environment=sandbox', false],
        ['production', '/console/books?environment=production', true],
      ],
    );
    assert.equal(v.exportThisMonth, '/console/books/journal.csv?environment=production&month=2026-12');
    assert.deepEqual(v.exportFields, { environment: 'production', month: '2026-12', from: '', to: '' });
    assert.deepEqual([v.refusal, v.result], [null, null]);
  });

  it('shows an empty state before any money moved', () => {
    const v = presentBooks(books([]), NOW);
    assert.deepEqual(v.accounts.rows, []);
    assert.match(v.accounts.empty?.text ?? '', /No money has moved in production yet/);
  });

  it('presents a match: the counts and sums, each list with its near miss, times as <time>', () => {
    const topUp = (entryId: number, reference: string, amountCents: number) => ({
      entryId,
      merchantId: 7,
      merchantName: 'Shop <7>',
      reference,
      amountCents,
      createdAt: AT,
    });
    const line = (n: number, reference: string, amountCents: number, day: string) => ({ line: n, reference, amountCents, day: Date.parse(`${day}T00:00:00Z`) });
    const match: BankMatch = {
      environment: 'production',
      period: { start: Date.parse('2026-11-01T00:00:00Z'), end: Date.parse('2026-12-01T00:00:00Z'), label: '2026-11', slug: '2026-11' },
      statementLines: 4,
      outgoing: 1,
      matched: [{ line: line(2, 'bank-1', 10000, '2026-11-11'), topUp: topUp(31, 'BANK-1', 10000) }],
      missing: [{ item: topUp(32, 'BANK-2', 2000), nearMiss: line(3, 'BANK-2', 2500, '2026-11-10') }],
      unexpected: [{ item: line(3, 'BANK-2', 2500, '2026-11-10'), nearMiss: topUp(32, 'BANK-2', 2000) }],
    };
    const v = presentBooks(books([]), NOW, { fields: { month: '2026-11', fileName: 'bank.csv' }, result: match });
    assert.deepEqual(v.matchFields, { environment: 'production', month: '2026-11', from: '', to: '', fileName: 'bank.csv' });
    const r = v.result!;
    assert.deepEqual(
      r.summary.map((f) => ('text' in f ? f.text : null)),
      ['production', '2026-11', '4 (1 outgoing, not compared)', '1 · 100.00', '1 · 20.00', '1 · 25.00'],
    );
    assert.deepEqual(r.matched.rows[0].cells, [
      '2',
      '2026-11-11',
      'bank-1',
      '100.00',
      { href: '/console/merchants/7', text: 'Shop <7>', data: { name: 'merchant', value: '7' } },
      { html: AT_TIME },
      '31',
    ]);
    assert.equal(r.missing.rows[0].cells[5], 'statement line 3 has this reference: 25.00 on 2026-11-10 (another amount)');
    assert.equal(r.unexpected.rows[0].cells[4], 'a top-up with this reference: 20.00 recorded 2026-11-10 for Shop <7> (another amount)');
  });
});
