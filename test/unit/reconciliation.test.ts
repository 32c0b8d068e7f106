import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { entryLines } from '../../src/domain/ledger.ts';
import { debitAndCredit, matchTopUps, periodOf, supplierBalances, type RecordedTopUp, type StatementLine } from '../../src/domain/reconciliation.ts';
import { readBankStatement } from '../../src/services/books.service.ts';

/** Issue 41, 9: the supplier's books — periods, debit and credit, the supplier balances, and matching top-ups with a bank statement. */

const NOW = Date.UTC(2026, 11, 6, 12);
const day = (text: string) => Date.parse(`${text}T00:00:00Z`);

describe('the period of an export or a match', () => {
  it('is a UTC month, or from and to days with both ends included', () => {
    assert.deepEqual(periodOf({ month: '2026-11' }, NOW), { start: day('2026-11-01'), end: day('2026-12-01'), label: '2026-11', slug: '2026-11' });
    assert.deepEqual(periodOf({ month: '2026-02', from: '', to: '' }, NOW).end, day('2026-03-01'));
    assert.deepEqual(periodOf({ from: '2026-11-03', to: '2026-11-09' }, NOW), {
      start: day('2026-11-03'),
      end: day('2026-11-10'),
      label: '2026-11-03 to 2026-11-09',
      slug: '2026-11-03_2026-11-09',
    });
    assert.equal(periodOf({ from: '2026-12-06', to: '2026-12-06' }, NOW).label, '2026-12-06', 'a day, today included');
    assert.equal(periodOf({ month: '2026-12' }, NOW).label, '2026-12', 'the month running');
  });

  it('refuses what is not one, or what has not begun, naming the field', () => {
    const refused = (input: Record<string, string>, field: string, reason: RegExp) =>
      assert.throws(
        () => periodOf(input, NOW),
        (e: { field?: string; reason?: string }) => e.field === field && reason.test(e.reason ?? ''),
      );
    refused({}, 'month', /give a month/);
    refused({ month: '2026-13' }, 'month', /YYYY-MM/);
    refused({ month: '1999-12' }, 'month', /YYYY-MM/);
    refused({ month: '2027-01' }, 'month', /has not begun/);
    refused({ month: '2026-11', from: '2026-11-01' }, 'month', /not both/);
    refused({ from: '2026-11-31', to: '2026-12-01' }, 'from', /YYYY-MM-DD/);
    refused({ from: '2026-11-01' }, 'to', /YYYY-MM-DD/);
    refused({ from: '2026-11-05', to: '2026-11-04' }, 'to', /before from/);
    refused({ from: '2025-01-01', to: '2026-12-01' }, 'to', /at most 367 days/);
    refused({ from: '2026-12-07', to: '2026-12-08' }, 'from', /has not begun/);
  });
});

describe('an entry in the books', () => {
  it('debits the account whose balance falls and credits the one whose balance rises, by the amount moved', () => {
    for (const [type, cents] of [
      ['order_charge', 5420],
      ['refund_credit', 932],
      ['cancellation_credit', 100],
      ['top_up', 10000],
      ['adjustment', -150],
      ['adjustment', 300],
    ] as const) {
      const [merchant, counter] = entryLines(type, cents);
      const { debit, credit, amountCents } = debitAndCredit(merchant.amountCents, 'merchant', counter.account);
      const lineOf = (name: string) => (name === 'merchant' ? merchant : counter);
      assert.ok(lineOf(debit).amountCents < 0 && lineOf(credit).amountCents > 0, `${type} ${cents}`);
      assert.equal(amountCents, Math.abs(cents), `${type} ${cents}`);
    }
    assert.deepEqual(debitAndCredit(-5420, 'merchant:7:production', 'supplier:sales:production'), {
      debit: 'merchant:7:production',
      credit: 'supplier:sales:production',
      amountCents: 5420,
    });
    assert.deepEqual(debitAndCredit(10000, 'merchant:7:production', 'supplier:cash:production').debit, 'supplier:cash:production');
  });
});

describe("the supplier's balances", () => {
  it('are the worked example of docs/money.md, the charges read from the merchants’ balances', () => {
    // Top-up 100.00, order 54.20, refund 9.32, fee 1.50: the merchant holds 53.62.
    const balances = supplierBalances(5362, { top_up: 10000, refund_credit: 932, adjustment: -150 });
    assert.deepEqual(Object.fromEntries(balances), { sales: 5420, refunds: -932, cash: -10000, adjustments: 150, claims: 0 });
    assert.equal(
      [...balances.values()].reduce((a, b) => a + b, 5362),
      0,
      'with the merchants, they sum to zero',
    );
  });

  it('take a split cancellation off sales, and are zero with no money', () => {
    assert.deepEqual(Object.fromEntries(supplierBalances(-4000, { cancellation_credit: 1000 })), {
      sales: 4000,
      refunds: 0,
      cash: 0,
      adjustments: 0,
      claims: 0,
    });
    assert.deepEqual(Object.fromEntries(supplierBalances(0, {})), { sales: 0, refunds: 0, cash: 0, adjustments: 0, claims: 0 });
  });

  it('take a claim credit off the claims account (claims after shipment)', () => {
    // Order 54.20 charged, then 12.00 credited for a claim: the merchant is at -42.20.
    assert.deepEqual(Object.fromEntries(supplierBalances(-4220, { claim_credit: 1200 })), { sales: 5420, refunds: 0, cash: 0, adjustments: 0, claims: -1200 });
  });
});

describe('matching top-ups with a bank statement', () => {
  const period = { start: day('2026-11-01'), end: day('2026-12-01') };
  const topUp = (entryId: number, reference: string, amountCents: number, at: string): RecordedTopUp => ({
    entryId,
    merchantId: 1,
    merchantName: 'Shop',
    reference,
    amountCents,
    createdAt: Date.parse(at),
  });
  const line = (n: number, reference: string, amountCents: number, date: string): StatementLine => ({ line: n, reference, amountCents, day: day(date) });

  it('matches equal references ignoring case, equal amounts, within three days', () => {
    const r = matchTopUps(
      [line(2, 'bank-1', 1000, '2026-11-04'), line(3, 'BANK-2', 500, '2026-11-10'), line(4, 'BANK-3', 700, '2026-11-20')],
      [topUp(1, 'BANK-1', 1000, '2026-11-01T23:59:59Z'), topUp(2, 'BANK-2', 500, '2026-11-07T08:00:00Z'), topUp(3, 'BANK-3', 700, '2026-11-23T23:59:59Z')],
      period,
    );
    assert.deepEqual(
      r.matched.map((m) => [m.line.line, m.topUp.entryId]),
      [
        [2, 1],
        [3, 2],
        [4, 3],
      ],
    );
    assert.deepEqual([r.missing, r.unexpected], [[], []]);
  });

  it('leaves a top-up four days away, another amount or another reference unmatched, naming the near miss (missing in the order recorded)', () => {
    const r = matchTopUps(
      [line(2, 'BANK-1', 1000, '2026-11-10'), line(3, 'BANK-2', 600, '2026-11-10'), line(4, 'BANK-X', 800, '2026-11-10')],
      [topUp(1, 'BANK-1', 1000, '2026-11-14T00:00:00Z'), topUp(2, 'BANK-2', 500, '2026-11-10T00:00:00Z'), topUp(3, 'BANK-Y', 800, '2026-11-10T00:00:00Z')],
      period,
    );
    assert.deepEqual(r.matched, []);
    assert.deepEqual(
      r.unexpected.map((u) => [u.item.line, u.nearMiss?.entryId ?? null]),
      [
        [2, 1],
        [3, 2],
        [4, null],
      ],
    );
    assert.deepEqual(
      r.missing.map((m) => [m.item.entryId, m.nearMiss?.line ?? null]),
      [
        [2, 3],
        [3, null],
        [1, 2],
      ],
    );
  });

  it('matches each side once: two payments with one reference take the two top-ups nearest in time', () => {
    const r = matchTopUps(
      [line(2, 'REF', 1000, '2026-11-10'), line(3, 'REF', 1000, '2026-11-11'), line(4, 'REF', 1000, '2026-11-12')],
      [topUp(7, 'REF', 1000, '2026-11-11T09:00:00Z'), topUp(8, 'ref', 1000, '2026-11-10T09:00:00Z')],
      period,
    );
    assert.deepEqual(
      r.matched.map((m) => [m.line.line, m.topUp.entryId]),
      [
        [2, 8],
        [3, 7],
      ],
    );
    assert.deepEqual(
      r.unexpected.map((u) => u.item.line),
      [4],
    );
    assert.deepEqual(r.missing, []);
  });

  it('uses top-ups just outside the period for lines near its edges, and reports as missing only those inside it', () => {
    const r = matchTopUps(
      [line(2, 'EDGE', 1000, '2026-11-01')],
      [topUp(1, 'EDGE', 1000, '2026-10-30T12:00:00Z'), topUp(2, 'BEFORE', 300, '2026-10-31T12:00:00Z'), topUp(3, 'AFTER', 300, '2026-12-01T00:00:00Z')],
      period,
    );
    assert.deepEqual(
      r.matched.map((m) => m.topUp.entryId),
      [1],
    );
    assert.deepEqual(r.missing, [], 'BEFORE and AFTER were recorded outside the period');
  });
});

describe('reading a bank statement', () => {
  it('takes the three columns in any order and case, amounts with thousands separators, days or instants, and skips outgoing lines', () => {
    const s = readBankStatement(
      '\uFEFFDate,Amount,Reference,Note\r\n2026-11-03,"1,250.00",BANK-1,x\r\n2026-11-04T23:30:00-02:00,12.5, BANK-2 ,\r\n\r\n2026-11-05,-3.00,FEE,\r\n2026-11-05,0,ZERO,\r\n',
    );
    assert.equal(s.outgoing, 2);
    assert.deepEqual(s.lines, [
      { line: 2, reference: 'BANK-1', amountCents: 125000, day: day('2026-11-03') },
      { line: 3, reference: 'BANK-2', amountCents: 1250, day: day('2026-11-05') },
    ]);
  });

  it('refuses the whole file when any line is wrong, naming every line (the first 20)', () => {
    const lines = Array.from({ length: 25 }, (_, i) => `REF-${i},abc,2026-11-01`);
    assert.throws(
      () => readBankStatement(`reference,amount,date\n${lines.join('\n')}`),
      (e: { message: string; errors: { message: string }[] }) =>
        /has 25 problems \(the first 20 are listed\)/.test(e.message) &&
        e.errors.length === 20 &&
        e.errors[0].message === 'line 2: "abc" is not an amount such as 250.00',
    );
    assert.throws(() => readBankStatement('reference,amount,date\nX,1.001,2026-11-01'), /1 problem/);
    assert.throws(() => readBankStatement('reference;amount;date\nX;1,50;2026-11-01'), /separates its columns with ";" or tabs/);
    assert.throws(() => readBankStatement(`reference,amount,date\n${'X,1.00,2026-11-01\n'.repeat(20_001)}`), /more than 20,000 lines/);
  });
});
