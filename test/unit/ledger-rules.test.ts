import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  ENTRY_TYPES,
  canCover,
  monthWindow,
  statementRows,
  crossesBelow,
  decodeEntryCursor,
  encodeEntryCursor,
  entryLines,
  replayMismatch,
  formatSigned,
  merchantSide,
  operatorPostingProblem,
  parseAmount,
  prepaidFloorProblem,
  belowPrepaidFloor,
  statementPeriod,
} from '../../src/domain/ledger.ts';
import type { CsvCell } from '../../src/domain/csv.ts';
import { csvStream } from '../../src/present/csv.presenter.ts';

/** SPEC §15's pure rules (src/domain/ledger.ts). */
describe('ledger rules', () => {
  it('every entry has two lines that sum to zero, for every type and amount', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ENTRY_TYPES), fc.integer({ min: 1, max: 10_000_000_000 }), fc.boolean(), (type, amount, negative) => {
        const signed = type === 'adjustment' && negative ? -amount : amount;
        const lines = entryLines(type, signed);
        assert.equal(lines.length, 2);
        assert.equal(lines[0].amountCents + lines[1].amountCents, 0);
        assert.equal(lines[0].account, 'merchant');
      }),
    );
  });

  it('charges take from the merchant, credits and top-ups give to it', () => {
    assert.equal(merchantSide('order_charge', 500), -500);
    assert.equal(merchantSide('refund_credit', 500), 500);
    assert.equal(merchantSide('cancellation_credit', 500), 500);
    assert.equal(merchantSide('top_up', 500), 500);
    assert.equal(merchantSide('adjustment', -500), -500);
    assert.throws(() => merchantSide('order_charge', -1));
    assert.throws(() => merchantSide('adjustment', 0));
    assert.throws(() => merchantSide('top_up', 1.5));
    assert.deepEqual(entryLines('order_charge', 100), [
      { account: 'merchant', amountCents: -100 },
      { account: 'sales', amountCents: 100 },
    ]);
    assert.equal(entryLines('top_up', 1)[1].account, 'cash');
    assert.equal(entryLines('refund_credit', 1)[1].account, 'refunds');
    assert.equal(entryLines('adjustment', 1)[1].account, 'adjustments');
  });

  it('a prepaid account covers a charge only within balance + credit limit; on account always', () => {
    assert.equal(canCover({ balanceCents: 1000, billingMode: 'prepaid', creditLimitCents: 500 }, 1500), true);
    assert.equal(canCover({ balanceCents: 1000, billingMode: 'prepaid', creditLimitCents: 500 }, 1501), false);
    assert.equal(canCover({ balanceCents: -1_000_000, billingMode: 'on_account', creditLimitCents: 0 }, 1), true);
  });

  it('balance.low fires once per crossing below the threshold', () => {
    assert.equal(crossesBelow(1000, 1500, 900), true);
    assert.equal(crossesBelow(1000, 1000, 999), true);
    assert.equal(crossesBelow(1000, 900, 800), false, 'already below: no second event');
    assert.equal(crossesBelow(1000, 800, 1200), false, 'going up never fires');
    assert.equal(crossesBelow(null, 1500, -100), false, 'no threshold, no event');
  });

  it('holds the operator to the prepaid floor: adjustments, switches to prepaid and lower limits that would break it are refused', () => {
    const prepaid = { balanceCents: 2000, billingMode: 'prepaid' as const, creditLimitCents: 5000 };
    assert.equal(prepaidFloorProblem(prepaid, { amountCents: -7000 }), null, 'down to the floor exactly');
    const deep = prepaidFloorProblem(prepaid, { amountCents: -7001 })!;
    assert.equal(deep.field, 'amount');
    assert.equal(deep.balanceCents, -5001);
    assert.equal(deep.availableCents, -1);
    assert.match(deep.message, /from 20\.00 to -50\.01, below its floor of -50\.00 \(credit limit 50\.00\); at most 70\.00 can be taken/);
    assert.equal(prepaidFloorProblem({ ...prepaid, billingMode: 'on_account' }, { amountCents: -1_000_000 }), null, 'on account: no floor');
    const owing = { balanceCents: -5000, billingMode: 'on_account' as const, creditLimitCents: 0 };
    const toPrepaid = prepaidFloorProblem(owing, { billingMode: 'prepaid' })!;
    assert.equal(toPrepaid.field, 'billingMode');
    assert.equal(toPrepaid.requiredCreditLimitCents, 5000);
    assert.match(toPrepaid.message, /balance is -50\.00: prepaid needs a credit limit of at least 50\.00 \(it would be 0\.00\)/);
    assert.equal(prepaidFloorProblem(owing, { billingMode: 'prepaid', creditLimitCents: 5000 }), null, 'with a limit that covers the debt');
    assert.equal(prepaidFloorProblem(owing, { billingMode: 'prepaid', creditLimitCents: 4999 })?.field, 'creditLimit');
    const covered = { balanceCents: -5000, billingMode: 'prepaid' as const, creditLimitCents: 8000 };
    const lower = prepaidFloorProblem(covered, { creditLimitCents: 1000 })!;
    assert.equal(lower.field, 'creditLimit');
    assert.match(lower.message, /a credit limit of 10\.00 leaves this prepaid account's balance of -50\.00 below its floor of -10\.00; at least 50\.00/);
    assert.equal(prepaidFloorProblem(covered, { creditLimitCents: 5000 }), null);
    // An account already below its floor (an older version let it sink) may be credited, and its other terms changed.
    const sunk = { balanceCents: -9000, billingMode: 'prepaid' as const, creditLimitCents: 5000 };
    assert.equal(prepaidFloorProblem(sunk, { amountCents: 100 }), null);
    assert.equal(prepaidFloorProblem(sunk, {}), null);
    assert.equal(prepaidFloorProblem(sunk, { amountCents: -1 })?.field, 'amount', 'but not taken further down');
    assert.equal(prepaidFloorProblem(sunk, { creditLimitCents: 4000 })?.field, 'creditLimit');
    // Whatever is allowed leaves the account where verify finds no breach, or no further below.
    fc.assert(
      fc.property(
        fc.integer({ min: -100_000, max: 100_000 }),
        fc.constantFrom('prepaid' as const, 'on_account' as const),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: -100_000, max: 100_000 }),
        (balanceCents, billingMode, creditLimitCents, amountCents) => {
          const before = { balanceCents, billingMode, creditLimitCents };
          if (belowPrepaidFloor(before)) return;
          const after = { ...before, balanceCents: balanceCents + amountCents };
          assert.equal(prepaidFloorProblem(before, { amountCents }) === null, !belowPrepaidFloor(after));
        },
      ),
    );
  });

  it('bounds operator postings: top-ups above zero, adjustments not zero, amounts and balances within 10^10', () => {
    assert.equal(operatorPostingProblem('top_up', 100, 0), null);
    assert.equal(operatorPostingProblem('top_up', 0, 0)?.field, 'amount');
    assert.equal(operatorPostingProblem('top_up', -1, 0)?.field, 'amount');
    assert.equal(operatorPostingProblem('adjustment', 0, 0)?.field, 'amount');
    assert.equal(operatorPostingProblem('adjustment', -5, 0), null);
    assert.equal(operatorPostingProblem('top_up', 10_000_000_001, 0)?.field, 'amount');
    assert.equal(operatorPostingProblem('top_up', 1, 10_000_000_000)?.field, 'amount');
    assert.equal(operatorPostingProblem('adjustment', -1, -10_000_000_000)?.field, 'amount');
    assert.equal(operatorPostingProblem('top_up', 10_000_000_000, 0), null);
    // A debt orders on account took past the bound may always be paid down.
    assert.equal(operatorPostingProblem('top_up', 100, -20_000_000_000), null);
    assert.equal(operatorPostingProblem('adjustment', 100, -20_000_000_000), null);
    assert.equal(operatorPostingProblem('adjustment', -100, -20_000_000_000)?.field, 'amount', 'not deeper');
    assert.equal(operatorPostingProblem('top_up', 10_000_000_001, -20_000_000_000)?.field, 'amount', 'one amount stays bounded');
  });

  it('parses and formats amounts as operators type them', () => {
    assert.equal(parseAmount('12.50', false), 1250);
    assert.equal(parseAmount('12.5', false), 1250);
    assert.equal(parseAmount('3', false), 300);
    assert.equal(parseAmount('-3.01', true), -301);
    assert.equal(parseAmount('-3.01', false), null);
    assert.equal(parseAmount('1.005', false), null);
    assert.equal(parseAmount('ten', false), null);
    assert.equal(parseAmount('', false), null);
    assert.equal(formatSigned(-1250), '-12.50');
    assert.equal(formatSigned(5), '0.05');
    fc.assert(fc.property(fc.integer({ min: -10_000_000_000, max: 10_000_000_000 }), (c) => assert.equal(parseAmount(formatSigned(c), true), c)));
  });

  it('writes CSV fields that spreadsheets read as data, never as formulas (the statement CSV’s writer)', async () => {
    const cells: CsvCell[] = ['-12.50', 1000000000001, null, '=HYPERLINK("x")', '@SUM(A1)', '-1+1', 'a,b', 'line\nbreak'];
    const csv = csvStream(
      {
        columns: ['cell'],
        rows: (async function* () {
          for (const cell of cells) yield { cell };
        })(),
      },
      (error) => assert.fail(error),
    );
    let text = '';
    for await (const chunk of csv) text += String(chunk);
    assert.deepEqual(text.split('\r\n'), [
      '\uFEFFcell',
      '-12.50',
      '1000000000001',
      '',
      `"'=HYPERLINK(""x"")"`,
      "'@SUM(A1)",
      "'-1+1",
      '"a,b"',
      '"line\nbreak"',
      '',
    ]);
  });

  it('a monthly window is the UTC month; a statement runs its balance from the opening', () => {
    assert.deepEqual(monthWindow('2026-11'), { start: Date.UTC(2026, 10, 1), end: Date.UTC(2026, 11, 1) });
    assert.deepEqual(monthWindow('2026-12'), { start: Date.UTC(2026, 11, 1), end: Date.UTC(2027, 0, 1) });
    assert.equal(monthWindow('2026-13'), null);
    assert.equal(monthWindow('26-11'), null);
    const line = (amountCents: number) => ({
      id: 1,
      createdAt: 0,
      type: 'top_up' as const,
      amountCents,
      description: '',
      orderId: null,
      refundId: null,
      reference: null,
    });
    assert.deepEqual(
      [...statementRows(1000, [line(500), line(-1200)])].map((r) => r.balanceCents),
      [1500, 300],
    );
  });

  it('a statement period closes on the month’s last day, today while it runs, and a month not begun has none', () => {
    const november = monthWindow('2026-11')!;
    assert.deepEqual(statementPeriod(november, Date.UTC(2026, 11, 6, 9)), { first: '2026-11-01', closing: '2026-11-30' });
    assert.deepEqual(statementPeriod(november, Date.UTC(2026, 10, 17, 23, 59)), { first: '2026-11-01', closing: '2026-11-17' });
    assert.deepEqual(statementPeriod(november, november.start), { first: '2026-11-01', closing: '2026-11-01' });
    assert.equal(statementPeriod(november, november.start - 1), null);
    assert.deepEqual(statementPeriod(monthWindow('2028-02')!, Date.UTC(2030, 0, 1)), { first: '2028-02-01', closing: '2028-02-29' });
  });

  it('a transactions cursor round-trips and anything else is refused', () => {
    const c = {
      afterSeq: 42,
      type: 'top_up' as const,
      createStart: null,
      createEnd: 1_800_000_000_999,
      pageSize: 20,
      page: 3,
    };
    assert.deepEqual(decodeEntryCursor(encodeEntryCursor(c)), c);
    assert.equal(decodeEntryCursor('nope'), null);
    assert.equal(decodeEntryCursor('tc2_!!!'), null);
    const cursor = (body: object) => `tc2_${Buffer.from(JSON.stringify(body)).toString('base64url')}`;
    assert.equal(decodeEntryCursor(cursor({ a: 1, t: 'bribe', s: null, e: null, z: 20, p: 2 })), null);
    assert.equal(decodeEntryCursor(cursor({ a: 1, t: null, s: null, e: null, z: 251, p: 2 })), null);
    assert.equal(decodeEntryCursor(cursor({ a: 0, t: null, s: null, e: null, z: 20, p: 2 })), null, 'a sequence starts at 1');
    // A cursor of the walk by (created_at, id) that came before the sequence: refused, the client starts over.
    assert.equal(decodeEntryCursor(`tc1_${Buffer.from(JSON.stringify({ a: [1, 2], t: null, s: null, e: null, z: 20, p: 2 })).toString('base64url')}`), null);
  });

  it('a replay is the same posting only when every field is the same', () => {
    const stored = {
      type: 'adjustment' as const,
      amountCents: -1250,
      currency: 'USD',
      environment: 'sandbox' as const,
      reference: null,
      description: 'Adjustment: fee',
    };
    assert.equal(replayMismatch(stored, { ...stored }), null);
    assert.equal(replayMismatch(stored, { ...stored, amountCents: -1300 }), 'amountCents');
    assert.equal(replayMismatch(stored, { ...stored, description: 'Adjustment: other' }), 'description');
    assert.equal(replayMismatch(stored, { ...stored, currency: 'EUR' }), 'currency');
    assert.equal(replayMismatch(stored, { ...stored, type: 'top_up' }), 'type');
    assert.equal(replayMismatch(stored, { ...stored, reference: 'r' }), 'reference');
    assert.equal(replayMismatch(stored, { ...stored, description: 'adjustment: FEE' }), 'description', 'an adjustment reason keeps its case');
  });

  it('a top-up replay names its payment whatever the reference’s letter case, but not another amount', () => {
    const stored = {
      type: 'top_up' as const,
      amountCents: 5000,
      currency: 'USD',
      environment: 'production' as const,
      reference: 'BANK-X',
      description: 'Payment received: BANK-X',
    };
    const again = { ...stored, reference: 'bank-x', description: 'Payment received: bank-x' };
    assert.equal(replayMismatch(stored, again, ['reference', 'description']), null);
    assert.equal(replayMismatch(stored, again), 'reference', 'compared as typed unless asked');
    assert.equal(replayMismatch(stored, { ...again, amountCents: 6000 }, ['reference', 'description']), 'amountCents');
  });
});
