import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fulfillmentStatusOf, orderStatusOf, refundStatusOf } from '../../src/domain/order-status.ts';
import {
  cancellationCents,
  decideRefund,
  isShippedSplit,
  normalizeRefundReason,
  planRefund,
  refundAmountCents,
  type RefundableItem,
} from '../../src/domain/refunds.ts';
import type { AppError } from '../../src/domain/errors.ts';

const item = (
  id: number,
  sku: string,
  split: number,
  country: string,
  quantity: number,
  refunded = 0,
  pending = 0,
  shipped = false,
): RefundableItem & { splitFreightCents: number } => ({
  id,
  sku,
  splitOrderId: split,
  countryCode: country,
  quantity,
  refunded,
  pending,
  splitShipped: shipped,
  unitCents: 100 * id,
  splitFreightCents: 1000 * split,
});
const code = (fn: () => unknown) => {
  try {
    fn();
    return null;
  } catch (e) {
    return (e as AppError).code;
  }
};
const E = (x: Partial<{ itemId: number; skuCode: string; countryCode: string; quantity: number }>) => ({
  itemId: null,
  skuCode: null,
  countryCode: null,
  quantity: null,
  ...x,
});

describe('planRefund (SPEC §5.1)', () => {
  const items = [item(1, 'A', 1, 'CN', 3), item(2, 'A', 2, 'US', 2, 1), item(3, 'B', 1, 'CN', 1, 0, 1)];

  it('refunds the whole order without entries: all that remains', () => {
    assert.deepEqual(planRefund(items, null), [
      { itemId: 1, quantity: 3 },
      { itemId: 2, quantity: 1 },
    ]);
    assert.equal(
      code(() => planRefund([item(1, 'A', 1, 'CN', 1, 1)], null)),
      40902,
    );
    assert.equal(
      code(() => planRefund([item(1, 'A', 1, 'CN', 1, 0, 0, true), item(2, 'B', 2, 'CN', 1)], null)),
      40901,
    );
  });
  it('names lines by itemId or by skuCode with countryCode', () => {
    assert.deepEqual(planRefund(items, [E({ itemId: 2 })]), [{ itemId: 2, quantity: 1 }]);
    assert.deepEqual(planRefund(items, [E({ skuCode: 'A', countryCode: 'CN', quantity: 2 })]), [{ itemId: 1, quantity: 2 }]);
    assert.equal(
      code(() => planRefund(items, [E({ skuCode: 'A' })])),
      40000,
    );
    assert.equal(
      code(() => planRefund(items, [E({ itemId: 1, countryCode: 'US' })])),
      40000,
    );
    assert.equal(
      code(() => planRefund(items, [E({ itemId: 1, skuCode: 'B' })])),
      40000,
    );
  });
  it('counts refunded and pending against what is left', () => {
    assert.equal(
      code(() => planRefund(items, [E({ itemId: 3 })])),
      40902,
    );
    assert.equal(
      code(() => planRefund(items, [E({ itemId: 2, quantity: 2 })])),
      40902,
    );
    assert.equal(
      code(() => planRefund(items, [E({ itemId: 1, quantity: 2 }), E({ itemId: 1, quantity: 2 })])),
      40902,
    );
    assert.deepEqual(planRefund(items, [E({ itemId: 1, quantity: 1 }), E({ itemId: 1 })]), [{ itemId: 1, quantity: 3 }]);
  });
  it('reports input errors before state refusals', () => {
    const shipped = [item(1, 'A', 1, 'CN', 1, 0, 0, true)];
    assert.equal(
      code(() => planRefund(shipped, [E({ itemId: 1 }), E({ itemId: 9 })])),
      40000,
    );
    assert.equal(
      code(() => planRefund(shipped, [E({ itemId: 1 })])),
      40901,
    );
  });
});

describe('refund amounts (SPEC §5.2)', () => {
  it('adds a split order’s freight only when the refund completes it', () => {
    const items = [item(1, 'A', 1, 'CN', 2), item(2, 'B', 1, 'CN', 1)];
    assert.equal(refundAmountCents(items, [{ itemId: 1, quantity: 2 }], false), 100 * 2);
    assert.equal(
      refundAmountCents(
        items,
        [
          { itemId: 1, quantity: 2 },
          { itemId: 2, quantity: 1 },
        ],
        false,
      ),
      200 + 200 + 1000,
    );
    const partly = [item(1, 'A', 1, 'CN', 2, 2), item(2, 'B', 1, 'CN', 1)];
    assert.equal(refundAmountCents(partly, [{ itemId: 2, quantity: 1 }], false), 200 + 1000);
  });
});

describe('cancellation credit (SPEC §15 cancellation_credit)', () => {
  it('is every unit not yet refunded at its unit amount, and the split’s freight', () => {
    assert.equal(
      cancellationCents(
        [
          { unitCents: 932, left: 2 },
          { unitCents: 450, left: 0 },
        ],
        275,
      ),
      932 * 2 + 275,
    );
    assert.equal(cancellationCents([], 300), 300, 'a split whose units were all refunded would have been cancelled already; its freight alone');
  });
});

describe('order statuses', () => {
  it('derives fulfilment over the splits that still ship', () => {
    assert.equal(fulfillmentStatusOf(['waiting_to_ship', 'waiting_to_ship'], 'waiting_to_ship'), 'waiting_to_ship');
    assert.equal(fulfillmentStatusOf(['shipped', 'waiting_to_ship'], 'waiting_to_ship'), 'partially_shipped');
    assert.equal(fulfillmentStatusOf(['shipped', 'cancelled'], 'waiting_to_ship'), 'fully_shipped');
    assert.equal(fulfillmentStatusOf(['completed', 'shipped'], 'waiting_to_ship'), 'fully_shipped');
    assert.equal(fulfillmentStatusOf(['completed', 'cancelled'], 'fully_shipped'), 'completed');
    assert.equal(fulfillmentStatusOf(['cancelled'], 'waiting_to_ship'), 'waiting_to_ship');
  });
  it('derives refund and order status', () => {
    assert.equal(refundStatusOf([{ quantity: 2, refunded: 0, pending: 0 }]), null);
    assert.equal(refundStatusOf([{ quantity: 2, refunded: 1, pending: 1 }]), 'refunding');
    assert.equal(refundStatusOf([{ quantity: 2, refunded: 1, pending: 0 }]), 'partial_refund');
    assert.equal(refundStatusOf([{ quantity: 2, refunded: 2, pending: 0 }]), 'refunded');
    assert.equal(orderStatusOf([{ quantity: 1, refunded: 1, pending: 0 }], ['cancelled']), 'cancel');
    assert.equal(
      orderStatusOf(
        [
          { quantity: 1, refunded: 0, pending: 0 },
          { quantity: 1, refunded: 1, pending: 0 },
        ],
        ['completed', 'cancelled'],
      ),
      'completed',
    );
    assert.equal(orderStatusOf([{ quantity: 1, refunded: 0, pending: 0 }], ['shipped']), 'processing');
  });
  it('matches refund reasons case-insensitively', () => {
    assert.equal(normalizeRefundReason(undefined), 'Other');
    assert.equal(normalizeRefundReason('incorrect address information'), 'Incorrect Address Information');
    assert.equal(normalizeRefundReason('bored'), null);
  });
});

describe('decideRefund (SPEC §5.2)', () => {
  // Split 1 (freight 1000): items 1 (3 × 100, product 11) and 3 (1 × 300, product 13); split 2 (freight 2000): item 2 (2 × 200, product 12).
  const decidable = (id: number, split: number, quantity: number, refunded: number, pending: number) => ({
    ...item(id, `S${id}`, split, 'CN', quantity, refunded, pending),
    productId: 10 + id,
    warehouseId: 100 * split,
  });
  const items = () => [decidable(3, 1, 1, 0, 1), decidable(1, 1, 3, 0, 3), decidable(2, 2, 2, 1, 1)];
  const lines = [
    { itemId: 3, quantity: 1, splitOrderId: 1 },
    { itemId: 1, quantity: 3, splitOrderId: 1 },
  ];
  const waiting = new Map([
    [1, 'waiting_to_ship'],
    [2, 'waiting_to_ship'],
  ]);

  it('approves: pays the items plus the freight of each split it leaves fully refunded, returns stock in product order, cancels those splits', () => {
    const outcome = decideRefund({ approve: true }, lines, items(), waiting, 999);
    assert.equal(outcome.state, 'refund_successfully');
    assert.equal(outcome.failureReason, null);
    assert.equal(outcome.amountCents, 300 + 300 + 1000);
    assert.deepEqual(outcome.returns, [
      { itemId: 1, quantity: 3, productId: 11, warehouseId: 100 },
      { itemId: 3, quantity: 1, productId: 13, warehouseId: 100 },
    ]);
    assert.deepEqual(outcome.releases, []);
    assert.deepEqual(outcome.cancelledSplits, [1]);
  });

  it('approves part of a split without cancelling it or charging its freight', () => {
    const outcome = decideRefund({ approve: true }, [{ itemId: 1, quantity: 2, splitOrderId: 1 }], items(), waiting, 0);
    assert.equal(outcome.amountCents, 200);
    assert.deepEqual(outcome.cancelledSplits, []);
  });

  it('refuses by the decider: releases the reserved quantities and keeps the reserved amount', () => {
    const outcome = decideRefund({ approve: false, reason: 'not eligible' }, lines, items(), waiting, 999);
    assert.deepEqual(outcome, {
      state: 'refund_failed',
      failureReason: 'not eligible',
      amountCents: 999,
      returns: [],
      releases: [
        { itemId: 3, quantity: 1 },
        { itemId: 1, quantity: 3 },
      ],
      cancelledSplits: [],
    });
  });

  it('fails an approval when a targeted split order shipped in the meantime', () => {
    const outcome = decideRefund({ approve: true }, lines, items(), new Map([[1, 'shipped']]), 999);
    assert.equal(outcome.state, 'refund_failed');
    assert.equal(outcome.failureReason, 'split order 1 shipped before the refund was decided');
    assert.equal(outcome.returns.length, 0);
    assert.equal(outcome.releases.length, 2);
  });

  it('fails an approval when a targeted split order was delivered (completed) in the meantime', () => {
    const outcome = decideRefund({ approve: true }, lines, items(), new Map([[1, 'completed']]), 999);
    assert.equal(outcome.state, 'refund_failed');
    assert.equal(outcome.returns.length, 0);
  });

  it('counts a split as shipped once it has shipped or been delivered, never before or when cancelled', () => {
    assert.deepEqual(['waiting_to_ship', 'shipped', 'completed', 'cancelled', undefined].map(isShippedSplit), [false, true, true, false, false]);
  });
});
