import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brokenCategoryChains } from '../../src/domain/categories.ts';
import { normalizeChannelType } from '../../src/domain/channels.ts';
import { centsToAmount } from '../../src/domain/money.ts';
import { environmentOfToken, newAccessToken, randomToken, secretsEqual } from '../../src/domain/secrets.ts';
import { endOfSecond, formatInstant, parseInstant, timeWindow } from '../../src/domain/time.ts';
import { fieldPath } from '../../src/schemas/validate.ts';
import { coerceValue } from '../../src/schemas/common.ts';
import { parseSkuList } from '../../src/services/stock-query.service.ts';

describe('time', () => {
  it('accepts instants with Z or an offset and converts to UTC', () => {
    assert.equal(parseInstant('2022-11-01T06:21:20Z'), Date.UTC(2022, 10, 1, 6, 21, 20));
    assert.equal(parseInstant('2022-11-01T14:21:20+08:00'), Date.UTC(2022, 10, 1, 6, 21, 20));
    assert.equal(parseInstant('2022-11-01T14:21:20+0800'), Date.UTC(2022, 10, 1, 6, 21, 20));
    assert.equal(parseInstant('2022-11-01T06:21Z'), Date.UTC(2022, 10, 1, 6, 21));
    assert.equal(parseInstant('2022-11-01T06:21:20.123Z'), Date.UTC(2022, 10, 1, 6, 21, 20, 123));
  });
  it('refuses anything else', () => {
    for (const bad of ['2022-11-01', '2022-11-01T06:21:20', 'yesterday', '2022-02-30T00:00:00Z', '2022-11-01T25:00:00Z', '1667283680', '']) {
      assert.equal(parseInstant(bad), null, bad);
    }
  });
  it('formats UTC at second precision', () => {
    assert.equal(formatInstant(Date.UTC(2022, 10, 1, 6, 21, 20, 999)), '2022-11-01T06:21:20Z');
    assert.equal(formatInstant(null), null);
  });
  it('formats every instant as Date#toISOString does, without the milliseconds', () => {
    const viaDate = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const edges = [0, -1, 999, 1000, Date.UTC(2000, 1, 29, 23, 59, 59, 999), Date.UTC(2100, 1, 28, 12), Date.UTC(2100, 2, 1), Date.UTC(1900, 1, 28)];
    edges.push(Date.UTC(1000, 0, 1), Date.UTC(999, 11, 31, 23, 59, 59), Date.UTC(9999, 11, 31, 23, 59, 59, 999), Date.UTC(10000, 0, 1), -8.64e15, 8.64e15);
    for (const ms of edges) assert.equal(formatInstant(ms), viaDate(ms), String(ms));
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const [low, high] = [Date.UTC(1000, 0, 1), Date.UTC(10000, 0, 1)];
    for (let i = 0; i < 200_000; i++) {
      // Most within the years computed by arithmetic, some anywhere a Date can be.
      const ms = i % 10 === 0 ? Math.floor((next() * 2 - 1) * 8.64e15) : low + Math.floor(next() * (high - low));
      assert.equal(formatInstant(ms), viaDate(ms), String(ms));
    }
  });
  it('lets a window end cover its whole second (SPEC §1 Times), the start as given', () => {
    const s = Date.UTC(2022, 10, 1, 6, 21, 20);
    assert.equal(endOfSecond(s), s + 999);
    assert.equal(endOfSecond(s + 999), s + 999);
    assert.equal(endOfSecond(s + 1000), s + 1999);
    assert.equal(endOfSecond(-1), -1, 'before 1970 too');
    assert.deepEqual(timeWindow(['from', '2022-11-01T06:21:20Z'], ['to', '2022-11-01T06:21:20Z']), { start: s, end: s + 999 });
    assert.deepEqual(
      timeWindow(['from', '2022-11-01T06:21:20.500Z'], ['to', '2022-11-01T06:21:20.100Z']),
      { start: s + 500, end: s + 999 },
      'same second: not start-after-end',
    );
    assert.deepEqual(timeWindow(['from', undefined], ['to', undefined]), { start: null, end: null });
    assert.throws(() => timeWindow(['from', '2022-11-01T06:21:21Z'], ['to', '2022-11-01T06:21:20Z']), /must not be after to/);
  });
});

describe('categories', () => {
  it('finds missing parents and cycles', () => {
    const parents = new Map([
      [1, 0],
      [2, 1],
      [3, 9],
      [4, 5],
      [5, 4],
    ]);
    assert.deepEqual(brokenCategoryChains(parents, [1, 2, 3, 4]), [
      { id: 3, reason: 'missing_parent' },
      { id: 4, reason: 'cycle' },
    ]);
    assert.deepEqual(brokenCategoryChains(new Map([[7, 7]]), [7]), [{ id: 7, reason: 'cycle' }]);
  });
});

describe('values', () => {
  it('normalises channel types case-insensitively', () => {
    assert.equal(normalizeChannelType('express'), 'Express');
    assert.equal(normalizeChannelType(' EXPEDITED '), 'Expedited');
    assert.equal(normalizeChannelType('Fast'), null);
  });
  it('turns money into cents and back', () => {
    assert.deepEqual(coerceValue('cents', '12.50'), { ok: true, value: 1250 });
    assert.deepEqual(coerceValue('cents', 12.5), { ok: true, value: 1250 });
    assert.deepEqual(coerceValue('cents', 0.07), { ok: true, value: 7 });
    assert.deepEqual(coerceValue('cents', '3'), { ok: true, value: 300 });
    assert.equal(coerceValue('cents', 1.234).ok, false);
    assert.equal(centsToAmount(932), 9.32);
  });
  it('coerces digit strings within bounds', () => {
    assert.deepEqual(coerceValue('integer', '42', { anyOf: [{ minimum: 1 }] }), { ok: true, value: 42 });
    assert.equal(coerceValue('integer', '0', { anyOf: [{ minimum: 1 }] }).ok, false);
    assert.equal(coerceValue('integer', '99999999999999999', {}).ok, false);
  });
  it('names fields the way clients write them', () => {
    assert.equal(fieldPath('/orderItemsList/1/quantity'), 'orderItemsList[1].quantity');
    assert.equal(fieldPath('/items/0', 'sku'), 'items[0].sku');
    assert.equal(fieldPath('', 'name'), 'name');
  });
  it('parses SKU lists', () => {
    assert.deepEqual(parseSkuList('A,,B, A ,C,'), ['A', 'B', 'C']);
    assert.deepEqual(parseSkuList(undefined), []);
  });
});

describe('secrets', () => {
  it('makes prefixed, unguessable tokens', () => {
    const live = newAccessToken('production');
    assert.match(live, /^stk_live_[0-9A-Za-z]{40}$/);
    assert.equal(environmentOfToken(live), 'production');
    assert.equal(environmentOfToken(newAccessToken('sandbox')), 'sandbox');
    assert.equal(environmentOfToken('abc'), null);
    assert.notEqual(randomToken(), randomToken());
  });
  it('compares secrets of any length', () => {
    assert.equal(secretsEqual('abc', 'abc'), true);
    assert.equal(secretsEqual('abc', 'abcd'), false);
  });
});
