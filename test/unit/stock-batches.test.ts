import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nextStockFanOut, planStockBatches, StockBatcher, type FeedChange, type FeedPos } from '../../src/domain/stock-batches.ts';

let nextId = 0;
/** Feed rows: one per [sku, warehouse, qty], each its own commit. */
const rows = (...changes: [string, string, number][]): FeedChange[] =>
  changes.map(([sku, warehouseCode, qty]) => {
    const id = ++nextId;
    return { seq: id, id, sku, warehouseCode, qty, at: 1000 * id };
  });
const pos = (r: FeedChange): FeedPos => ({ seq: r.seq, id: r.id });
const START: FeedPos = { seq: 0, id: 0 };
const entries = (b: { changes: { sku: string; warehouseCode: string; qty: number }[] }) => b.changes.map((c) => `${c.sku}/${c.warehouseCode}=${c.qty}`);

/** Applies batches in order to a map, as a receiver does. */
function apply(state: Map<string, number>, batches: { changes: { sku: string; warehouseCode: string; qty: number }[] }[]) {
  for (const b of batches) for (const c of b.changes) state.set(`${c.sku}/${c.warehouseCode}`, c.qty);
  return state;
}

describe('stock.changed batches', () => {
  it('coalesces each (sku, warehouse) to its latest quantity, ordered by its latest change, with the last change as cursor', () => {
    const r = rows(['A', 'G1', 9], ['B', 'G1', 5], ['A', 'G1', 8], ['A', 'G2', 3], ['A', 'G1', 7]);
    const plan = planStockBatches(r, START, null, true);
    assert.equal(plan.batches.length, 1);
    assert.deepEqual(entries(plan.batches[0]), ['B/G1=5', 'A/G2=3', 'A/G1=7']);
    assert.deepEqual(plan.batches[0].from, START);
    assert.deepEqual(plan.batches[0].to, pos(r[4]));
    assert.deepEqual(plan.position, pos(r[4]));
    assert.equal(plan.batches[0].changes[2].at, r[4].at, 'updateDate is the latest change’s time');
  });

  it('ignores rows at or before the position', () => {
    const r = rows(['A', 'G1', 9], ['B', 'G1', 5], ['C', 'G1', 1]);
    const plan = planStockBatches(r, pos(r[1]), null, true);
    assert.deepEqual(entries(plan.batches[0]), ['C/G1=1']);
    assert.deepEqual(plan.batches[0].from, pos(r[1]));
  });

  it('splits at `max` distinct pairs into consecutive ranges, each the exact state of its pairs at its cursor', () => {
    const r = rows(['A', 'G1', 1], ['B', 'G1', 1], ['A', 'G1', 2], ['C', 'G1', 1], ['B', 'G1', 2], ['D', 'G1', 1], ['A', 'G1', 3]);
    const plan = planStockBatches(r, START, null, true, 2);
    assert.deepEqual(plan.batches.map(entries), [
      ['B/G1=1', 'A/G1=2'],
      ['C/G1=1', 'B/G1=2'],
      ['D/G1=1', 'A/G1=3'],
    ]);
    assert.deepEqual(
      plan.batches.map((b) => [b.from, b.to]),
      [
        [START, pos(r[2])],
        [pos(r[2]), pos(r[4])],
        [pos(r[4]), pos(r[6])],
      ],
    );
    const final = new Map<string, number>();
    for (const x of r) final.set(`${x.sku}/${x.warehouseCode}`, x.qty);
    assert.deepEqual(apply(new Map(), plan.batches), final);
  });

  it('filters by SKU; the position still passes the rows it skipped', () => {
    const r = rows(['A', 'G1', 1], ['X', 'G1', 1], ['B', 'G1', 1], ['X', 'G1', 2]);
    const plan = planStockBatches(r, START, new Set(['A', 'B']), true);
    assert.deepEqual(entries(plan.batches[0]), ['A/G1=1', 'B/G1=1']);
    assert.deepEqual(plan.batches[0].to, pos(r[2]), 'the cursor is the last change included');
    assert.deepEqual(plan.position, pos(r[3]));
    const none = planStockBatches(rows(['X', 'G1', 3]), plan.position, new Set(['A']), true);
    assert.deepEqual(none.batches, []);
    assert.notDeepEqual(none.position, plan.position, 'moves on without a delivery');
  });

  it('with more rows to read, leaves a trailing batch that is not full for the next read, unless it is the only one', () => {
    const r = rows(['A', 'G1', 1], ['B', 'G1', 1], ['C', 'G1', 1]);
    const partial = planStockBatches(r, START, null, false, 2);
    assert.deepEqual(partial.batches.map(entries), [['A/G1=1', 'B/G1=1']]);
    assert.deepEqual(partial.position, pos(r[1]), 'C is read again next time');
    const only = planStockBatches(r.slice(0, 1), START, null, false, 2);
    assert.deepEqual(only.batches.map(entries), [['A/G1=1']], 'progress even when nothing fills a batch');
    assert.deepEqual(only.position, pos(r[0]));
  });

  it('keeps rows of one commit apart by ledger id', () => {
    const commit: FeedChange[] = [
      { seq: 7, id: 70, sku: 'A', warehouseCode: 'G1', qty: 1, at: 1 },
      { seq: 7, id: 71, sku: 'B', warehouseCode: 'G1', qty: 1, at: 1 },
      { seq: 7, id: 72, sku: 'C', warehouseCode: 'G1', qty: 1, at: 1 },
    ];
    const first = planStockBatches(commit, START, null, true, 2);
    assert.deepEqual(
      first.batches.map((b) => b.to),
      [
        { seq: 7, id: 71 },
        { seq: 7, id: 72 },
      ],
    );
    assert.deepEqual(entries(planStockBatches(commit, { seq: 7, id: 71 }, null, true).batches[0]), ['C/G1=1']);
  });

  it('takes rows window after window; stops after `limit` batches, leaving the rest in the feed', () => {
    const r = rows(['A', 'G1', 1], ['B', 'G1', 1], ['C', 'G1', 1], ['D', 'G1', 1], ['E', 'G1', 1], ['F', 'G1', 1]);
    const batcher = new StockBatcher(START, null, 2, 2);
    batcher.push(r.slice(0, 3));
    assert.equal(batcher.full, false);
    batcher.push(r.slice(3));
    assert.equal(batcher.full, true);
    const plan = batcher.finish(false);
    assert.deepEqual(plan.batches.map(entries), [
      ['A/G1=1', 'B/G1=1'],
      ['C/G1=1', 'D/G1=1'],
    ]);
    assert.deepEqual(plan.position, pos(r[3]), 'E and F wait');
    // A filtered endpoint gathers across windows into one batch.
    const few = new StockBatcher(START, new Set(['A', 'F']), 2);
    few.push(r.slice(0, 3));
    few.push(r.slice(3));
    assert.deepEqual(few.finish(true).batches.map(entries), [['A/G1=1', 'F/G1=1']]);
  });

  it('schedules the next fan-out at least an interval later, on a quarter-interval grid', () => {
    for (const now of [0, 1, 1249, 1250, 1251, 123_456_789]) {
      const next = nextStockFanOut(now, 5000);
      assert.ok(next >= now + 5000 && next < now + 5000 + 1250, `${now} → ${next}`);
      assert.equal(next % 1250, 0);
    }
    assert.equal(nextStockFanOut(1001, 1000), 2250, 'quarter of 1000 is 250');
    assert.equal(nextStockFanOut(77, 0), 77, 'no interval: every round');
  });
});
