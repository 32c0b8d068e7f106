import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { idRangesContaining } from '../../src/domain/id-ranges.ts';

/** The ids the ranges hold, each once, ascending. */
const idsIn = (ranges: [number, number][]) => {
  const ids = new Set<number>();
  for (const [lo, hi] of ranges) for (let id = lo; id <= hi; id++) ids.add(id);
  return [...ids].sort((a, b) => a - b);
};
/** What the ranges must hold: every id of the span whose digits contain `digits`, found by reading each. */
const byReading = (digits: string, lo: number, hi: number) => {
  const ids: number[] = [];
  for (let id = lo; id <= hi; id++) if (String(id).includes(digits)) ids.push(id);
  return ids;
};

/** A part of an order id is matched as key ranges (the order search, docs/decisions.md "Order search by text at 1M orders"). */
describe('idRangesContaining', () => {
  it('holds exactly the ids whose digits contain the part, over spans of one and several id lengths', () => {
    const spans: [number, number][] = [
      [1, 1_200],
      [950, 10_500],
      [1_000_000_000_001, 1_000_000_003_000],
      [4_999_999_998_500, 5_000_000_000_700],
    ];
    for (const [lo, hi] of spans) {
      for (const digits of ['0', '1', '00', '10', '99', '000', '001', '100', '123', '0000', '9999', '5000000000', '1000000002', '00000000002', '7']) {
        const ranges = idRangesContaining(digits, lo, hi, 100_000);
        assert.ok(ranges !== null);
        for (const [a, b] of ranges) assert.ok(lo <= a && a <= b && b <= hi, `${digits} in ${lo}–${hi}: [${a}, ${b}] inside the span`);
        assert.deepEqual(idsIn(ranges), byReading(digits, lo, hi), `${digits} in ${lo}–${hi}`);
      }
    }
  });

  it('is few ranges for a long part and null past the cap for a short one', () => {
    const lo = 1_000_000_000_001;
    const hi = 1_000_001_000_000;
    const long = idRangesContaining('00000500001', lo, hi, 2_000);
    assert.ok(long !== null && long.length <= 3, `${long?.length} ranges`);
    assert.equal(idRangesContaining('123', lo, hi, 500), null, '~1,100 ranges for 3 digits in a million ids');
    assert.ok((idRangesContaining('123', lo, hi, 2_000)?.length ?? 0) > 500);
  });

  it('holds nothing for anything but digits, or an empty span', () => {
    assert.deepEqual(idRangesContaining('12a', 1, 1000, 100), []);
    assert.deepEqual(idRangesContaining('', 1, 1000, 100), []);
    assert.deepEqual(idRangesContaining('12', 1000, 1, 100), []);
  });
});
