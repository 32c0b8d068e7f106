import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fulfillmentStatusOf, orderStatusOf, refundStatusOf } from '../../src/domain/order-status.ts';
import { normalizeRefundReason, planRefund, refundAmountCents, type RefundableItem } from '../../src/domain/refunds.ts';
import { AppError } from '../../src/domain/errors.ts';

const item = (id: number, sku: string, split: number, country: string, quantity: number, refunded = 0, pending = 0, shipped = false): RefundableItem & { splitFreightCents: number } => ({
  id, sku, splitOrderId: split, countryCode: country, quantity, refunded, pending, splitShipped: shipped, unitCents: 100 * id, splitFreightCents: 1000 * split,
});
const code = (fn: () => unknown) => {
  try {
    fn();
    return null;
  } catch (e) {
    return (e as AppError).code;
  }
};
const E = (x: Partial<{ itemId: number; skuCode: string; countryCode: string; quantity: number }>) => ({ itemId: null, skuCode: null, countryCode: null, quantity: null, ...x });

describe('planRefund (SPEC §5.1)', () => {
  const items = [item(1, 'A', 1, 'CN', 3), item(2, 'A', 2, 'US', 2, 1), item(3, 'B', 1, 'CN', 1, 0, 1)];

  it('refunds the whole order without entries: all that remains', () => {
    assert.deepEqual(planRefund(items, null), [{ itemId: 1, quantity: 3 }, { itemId: 2, quantity: 1 }]);
    assert.equal(code(() => planRefund([item(1, 'A', 1, 'CN', 1, 1)], null)), 40902);
    assert.equal(code(() => planRefund([item(1, 'A', 1, 'CN', 1, 0, 0, true), item(2, 'B', 2, 'CN', 1)], null)), 40901);
  });
  it('names lines by itemId or by skuCode with countryCode', () => {
    assert.deepEqual(planRefund(items, [E({ itemId: 2 })]), [{ itemId: 2, quantity: 1 }]);
    assert.deepEqual(planRefund(items, [E({ skuCode: 'A', countryCode: 'CN', quantity: 2 })]), [{ itemId: 1, quantity: 2 }]);
    assert.equal(code(() => planRefund(items, [E({ skuCode: 'A' })])), 40000);
    assert.equal(code(() => planRefund(items, [E({ itemId: 1, countryCode: 'US' })])), 40000);
    assert.equal(code(() => planRefund(items, [E({ itemId: 1, skuCode: 'B' })])), 40000);
  });
  it('counts refunded and pending against what is left', () => {
    assert.equal(code(() => planRefund(items, [E({ itemId: 3 })])), 40902);
    assert.equal(code(() => planRefund(items, [E({ itemId: 2, quantity: 2 })])), 40902);
    assert.equal(code(() => planRefund(items, [E({ itemId: 1, quantity: 2 }), E({ itemId: 1, quantity: 2 })])), 40902);
    assert.deepEqual(planRefund(items, [E({ itemId: 1, quantity: 1 }), E({ itemId: 1 })]), [{ itemId: 1, quantity: 3 }]);
  });
  it('reports input errors before state refusals', () => {
    const shipped = [item(1, 'A', 1, 'CN', 1, 0, 0, true)];
    assert.equal(code(() => planRefund(shipped, [E({ itemId: 1 }), E({ itemId: 9 })])), 40000);
    assert.equal(code(() => planRefund(shipped, [E({ itemId: 1 })])), 40901);
  });
});

describe('refund amounts (SPEC §5.2)', () => {
  it('adds a split order’s freight only when the refund completes it', () => {
    const items = [item(1, 'A', 1, 'CN', 2), item(2, 'B', 1, 'CN', 1)];
    assert.equal(refundAmountCents(items, [{ itemId: 1, quantity: 2 }], false), 100 * 2);
    assert.equal(refundAmountCents(items, [{ itemId: 1, quantity: 2 }, { itemId: 2, quantity: 1 }], false), 200 + 200 + 1000);
    const partly = [item(1, 'A', 1, 'CN', 2, 2), item(2, 'B', 1, 'CN', 1)];
    assert.equal(refundAmountCents(partly, [{ itemId: 2, quantity: 1 }], false), 200 + 1000);
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
    assert.equal(orderStatusOf([{ quantity: 1, refunded: 0, pending: 0 }, { quantity: 1, refunded: 1, pending: 0 }], ['completed', 'cancelled']), 'completed');
    assert.equal(orderStatusOf([{ quantity: 1, refunded: 0, pending: 0 }], ['shipped']), 'processing');
  });
  it('matches refund reasons case-insensitively', () => {
    assert.equal(normalizeRefundReason(undefined), 'Other');
    assert.equal(normalizeRefundReason('incorrect address information'), 'Incorrect Address Information');
    assert.equal(normalizeRefundReason('bored'), null);
  });
});
