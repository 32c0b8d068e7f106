import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CLAIM_ACTION_ACTOR,
  CLAIM_ACTIONS,
  CLAIM_STATUSES,
  claimableQuantity,
  claimCreditCents,
  claimStateRefusal,
  claimTransition,
  coversWholeSplit,
  holdsQuantity,
  isResolved,
  linesBySku,
  planClaimLines,
  statesAllowing,
  withinClaimWindow,
  evidenceTypeOf,
  type ClaimableItem,
  type ClaimAction,
  type ClaimStatus,
} from '../../src/domain/claims.ts';
import type { AppError } from '../../src/domain/errors.ts';

/** The state machine as issue 40 draws it, written out a second time: every pair not listed is refused. */
const EXPECTED: Record<string, ClaimStatus> = {
  'open approve': 'approved',
  'open reject': 'rejected',
  'open cancel': 'cancelled',
  'approved require_return': 'awaiting_return',
  'approved credit': 'credited',
  'approved reship': 'reshipped',
  'approved switch_resolution': 'approved',
  'awaiting_return post_return': 'awaiting_return',
  'awaiting_return receive': 'received',
  'awaiting_return switch_resolution': 'awaiting_return',
  'received credit': 'credited',
  'received reship': 'reshipped',
  'received switch_resolution': 'received',
};

describe('claim state machine (every state × every action)', () => {
  for (const status of CLAIM_STATUSES) {
    for (const action of CLAIM_ACTIONS) {
      const expected = EXPECTED[`${status} ${action}`] ?? null;
      it(`${status} + ${action} → ${expected ?? 'refused'}`, () => {
        assert.equal(claimTransition(status, action), expected);
        if (expected === null) {
          const refusal = claimStateRefusal(status, action);
          assert.equal(refusal.code, 40903);
          assert.equal(refusal.kind, 'conflict');
          assert.deepEqual(refusal.errors?.[0].allowed, statesAllowing(action));
        }
      });
    }
  }

  it('the ends are final: rejected, cancelled, credited and reshipped allow nothing', () => {
    for (const end of ['rejected', 'cancelled', 'credited', 'reshipped'] as const) {
      assert.deepEqual(
        CLAIM_ACTIONS.filter((a) => claimTransition(end, a) !== null),
        [],
      );
    }
  });

  it('a claim is credited or reshipped only from approved or received', () => {
    assert.deepEqual(statesAllowing('credit'), ['approved', 'received']);
    assert.deepEqual(statesAllowing('reship'), ['approved', 'received']);
  });

  it('the merchant cancels and posts the return; the operator does everything else', () => {
    const byMerchant = CLAIM_ACTIONS.filter((a: ClaimAction) => CLAIM_ACTION_ACTOR[a] === 'merchant');
    assert.deepEqual(byMerchant, ['cancel', 'post_return']);
  });

  it('rejected and cancelled claims give their quantities back; resolved ones are final', () => {
    assert.deepEqual(
      CLAIM_STATUSES.filter((s) => !holdsQuantity(s)),
      ['rejected', 'cancelled'],
    );
    assert.deepEqual(CLAIM_STATUSES.filter(isResolved), ['credited', 'reshipped']);
  });
});

const item = (itemId: number, sku: string, quantity: number, unitCents: number, refunded = 0, claimed = 0): ClaimableItem => ({
  itemId,
  sku,
  quantity,
  unitCents,
  refunded,
  claimed,
});

const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (e) {
    return e as AppError;
  }
  throw new Error('expected a refusal');
};

describe('claimable quantity', () => {
  it('is shipped − refunded − claimed, never below zero', () => {
    assert.equal(claimableQuantity({ quantity: 5, refunded: 1, claimed: 2 }), 2);
    assert.equal(claimableQuantity({ quantity: 5, refunded: 0, claimed: 0 }), 5);
    assert.equal(claimableQuantity({ quantity: 5, refunded: 3, claimed: 3 }), 0);
  });

  it('takes a SKU on several lines in item order, each within what it has left', () => {
    const items = [item(12, 'A', 2, 500, 0, 1), item(11, 'A', 3, 400, 1)];
    assert.deepEqual(planClaimLines(items, [{ sku: 'A', quantity: 3 }]), [
      { itemId: 11, sku: 'A', quantity: 2, unitCents: 400 },
      { itemId: 12, sku: 'A', quantity: 1, unitCents: 500 },
    ]);
  });

  it('refuses more than is claimable with 42204 naming items[i].quantity and the claimable count', () => {
    const e = refusal(() =>
      planClaimLines(
        [item(1, 'A', 2, 100, 0, 1), item(2, 'B', 1, 100)],
        [
          { sku: 'B', quantity: 1 },
          { sku: 'A', quantity: 2 },
        ],
      ),
    );
    assert.equal(e.code, 42204);
    assert.deepEqual(
      e.errors?.map((f) => [f.field, f.claimable]),
      [['items[1].quantity', 1]],
    );
  });

  it('refuses a SKU not in the split and a SKU named twice (400, with the field path) before quantities', () => {
    const e = refusal(() =>
      planClaimLines(
        [item(1, 'A', 1, 100)],
        [
          { sku: 'A', quantity: 9 },
          { sku: 'Z', quantity: 1 },
          { sku: 'A', quantity: 1 },
        ],
      ),
    );
    assert.equal(e.code, 40000);
    assert.deepEqual(
      e.errors?.map((f) => f.field),
      ['items[1].sku', 'items[2].sku'],
    );
  });
});

describe('claim credit', () => {
  it('is unit price × quantity, in minor units', () => {
    assert.equal(
      claimCreditCents(
        [
          { quantity: 2, unitCents: 1999 },
          { quantity: 1, unitCents: 1 },
        ],
        { wholeNotReceived: false, freightCents: 700 },
      ),
      3999,
    );
  });

  it("adds the split's freight only for a whole not_received", () => {
    const lines = [{ quantity: 1, unitCents: 1000 }];
    assert.equal(claimCreditCents(lines, { wholeNotReceived: true, freightCents: 735 }), 1735);
    assert.equal(claimCreditCents(lines, { wholeNotReceived: false, freightCents: 735 }), 1000);
  });

  it('a claim is whole when it takes every shipped unit and no other claim holds any', () => {
    const items = [item(1, 'A', 2, 100, 1), item(2, 'B', 1, 100)];
    assert.equal(
      coversWholeSplit(items, [
        { itemId: 1, quantity: 1 },
        { itemId: 2, quantity: 1 },
      ]),
      true,
    );
    assert.equal(coversWholeSplit(items, [{ itemId: 1, quantity: 1 }]), false);
    const claimedBefore = [item(1, 'A', 2, 100, 0, 1), item(2, 'B', 1, 100)];
    assert.equal(
      coversWholeSplit(claimedBefore, [
        { itemId: 1, quantity: 1 },
        { itemId: 2, quantity: 1 },
      ]),
      false,
    );
  });

  it('shows lines by SKU in the order first named', () => {
    assert.deepEqual(
      linesBySku([
        { sku: 'B', quantity: 1 },
        { sku: 'A', quantity: 2 },
        { sku: 'B', quantity: 3 },
      ]),
      [
        { sku: 'B', quantity: 4 },
        { sku: 'A', quantity: 2 },
      ],
    );
  });
});

describe('claim window', () => {
  const day = 86_400_000;
  it('is open for the window days after shipment and closed after', () => {
    assert.equal(withinClaimWindow(0, 60 * day, 60), true);
    assert.equal(withinClaimWindow(0, 60 * day + 1, 60), false);
  });
});

describe('evidence type from the bytes', () => {
  const bytes = (...b: (number | string)[]) => Buffer.concat(b.map((x) => (typeof x === 'string' ? Buffer.from(x, 'latin1') : Buffer.from([x]))));
  it('knows JPEG, PNG, WebP and PDF by their magic numbers', () => {
    assert.equal(evidenceTypeOf(bytes(0xff, 0xd8, 0xff, 0xe0, 0, 0x10)), 'image/jpeg');
    assert.equal(evidenceTypeOf(bytes(0x89, 'PNG\r\n', 0x1a, '\n', 0, 0, 0, 13)), 'image/png');
    assert.equal(evidenceTypeOf(bytes('RIFF', 0x24, 0, 0, 0, 'WEBPVP8 ')), 'image/webp');
    assert.equal(evidenceTypeOf(bytes('%PDF-1.4\n')), 'application/pdf');
  });
  it('knows nothing else, whatever it claims to be', () => {
    for (const other of [
      bytes('<svg xmlns="http://www.w3.org/2000/svg">'),
      bytes('<!DOCTYPE html>'),
      bytes('GIF89a'),
      bytes('RIFF', 0, 0, 0, 0, 'WAVE'),
      bytes(0xff, 0xd8),
      bytes('MZ'),
    ]) {
      assert.equal(evidenceTypeOf(other), null);
    }
  });
});
