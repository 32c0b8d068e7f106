import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeOrderCursor,
  encodeOrderCursor,
  noFilters,
  sameFilters,
  sortModeOf,
  type OrderCursor,
  type OrderFilters,
} from '../../src/domain/order-cursor.ts';

const NONE: OrderFilters = { ids: null, createStart: null, createEnd: null, updateStart: null, updateEnd: null, merchantId: null };

describe('order cursor (SPEC §4.6)', () => {
  it('round-trips and stays opaque', () => {
    const c: OrderCursor = {
      mode: 'updated',
      after: [1_700_000_000_123, 1_000_000_000_042],
      filters: { ...NONE, ids: [1, 5], updateStart: 0, merchantId: 7 },
      pageSize: 25,
      page: 3,
    };
    const text = encodeOrderCursor(c);
    assert.match(text, /^oc1_[A-Za-z0-9_-]+$/);
    assert.deepEqual(decodeOrderCursor(text), c);
  });
  it('refuses what it did not issue', () => {
    const ok = { m: 'c', a: [5, 9], f: [null, null, null, null, null, null], s: 10, p: 2 };
    const enc = (body: unknown) => `oc1_${Buffer.from(JSON.stringify(body)).toString('base64url')}`;
    assert.ok(decodeOrderCursor(enc(ok)));
    for (const bad of [
      { ...ok, m: 'x' },
      { ...ok, m: 'u' }, // the filters have no update window: the order would not match
      { ...ok, a: [5] },
      { ...ok, a: [5, 0] },
      { ...ok, a: ['5', 9] },
      { ...ok, f: [[], null, null, null, null, null] },
      { ...ok, f: [null, null, null, null, null] },
      { ...ok, f: [null, 1.5, null, null, null, null] },
      { ...ok, s: 0 },
      { ...ok, p: 1 },
      null,
    ]) {
      assert.equal(decodeOrderCursor(enc(bad)), null, JSON.stringify(bad));
    }
    for (const text of ['', 'oc1_', 'oc1_!!!', 'sc1_abc', `oc1_${'A'.repeat(5000)}`]) assert.equal(decodeOrderCursor(text), null, text);
  });
  it('compares filters and picks the sort order from them', () => {
    assert.equal(sameFilters({ ...NONE, ids: [1, 2] }, { ...NONE, ids: [1, 2] }), true);
    assert.equal(sameFilters({ ...NONE, ids: [1, 2] }, { ...NONE, ids: [1] }), false);
    assert.equal(sameFilters({ ...NONE, createEnd: 999 }, NONE), false);
    assert.equal(noFilters(NONE), true);
    assert.equal(noFilters({ ...NONE, merchantId: 3 }), false);
    assert.equal(sortModeOf({ ...NONE, createStart: 1 }), 'created');
    assert.equal(sortModeOf({ ...NONE, updateEnd: 1 }), 'updated');
  });
});
