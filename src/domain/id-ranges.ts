/**
 * The ids between `minId` and `maxId` whose decimal digits contain `digits`, as inclusive ranges
 * (they may overlap where an id contains the digits twice), or null when that takes more than
 * `cap` ranges. A part of an order id is matched this way (docs/decisions.md "Order search by text
 * at 1M orders"): ids are numbers, so "contains 0500001" is a set of key ranges of the primary key
 * — for every position the digits may take in an id of every length, one range per value of the
 * digits before them — not a text index, where an id's trigrams (`000`, `100`) are in every order.
 * Ids are dense, so the ranges are few unless the digits are short (3 digits in 1M ids: ~1,100).
 */
export function idRangesContaining(digits: string, minId: number, maxId: number, cap: number): [number, number][] | null {
  if (!/^[0-9]+$/.test(digits) || minId > maxId || minId < 1) return [];
  const length = digits.length;
  const value = Number(digits);
  const ranges: [number, number][] = [];
  for (let width = String(minId).length; width <= String(maxId).length; width++) {
    // The ids of this many digits within [minId, maxId].
    const lo = Math.max(minId, 10 ** (width - 1));
    const hi = Math.min(maxId, 10 ** width - 1);
    for (let at = 0; at + length <= width; at++) {
      // A number does not start with 0.
      if (at === 0 && digits[0] === '0') continue;
      const below = 10 ** (width - at - length);
      const block = 10 ** (width - at);
      // `head`: the digits before position `at`, as a number.
      for (let head = Math.floor(lo / block); head <= Math.floor(hi / block); head++) {
        const start = head * block + value * below;
        const end = start + below - 1;
        if (end < lo || start > hi) continue;
        if (ranges.length === cap) return null;
        ranges.push([Math.max(start, lo), Math.min(end, hi)]);
      }
    }
  }
  return ranges;
}
