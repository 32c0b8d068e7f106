/**
 * How the stock change feed (SPEC §6.3) becomes `stock.changed` deliveries for one endpoint
 * (SPEC §13): coalesced, in feed order, at most MAX_STOCK_CHANGES per delivery.
 */

/** Changes per `stock.changed` delivery at most. */
const MAX_STOCK_CHANGES = 500;

/** A place in the feed: the commit order key, then the ledger id (a tie-break within one commit). */
export interface FeedPos {
  seq: number;
  id: number;
}

export const comparePos = (a: FeedPos, b: FeedPos): number => a.seq - b.seq || a.id - b.id;

/**
 * When an endpoint just sent a stock.changed batch may get its next one: at least `intervalMs`
 * later (at most one delivery per interval), rounded up to a quarter of the interval. The rounding
 * makes endpoints fall due in a few common rounds, where those at the same feed position share
 * their batches (computed and stored once); it delays a change by at most a quarter interval more.
 */
export function nextStockFanOut(now: number, intervalMs: number): number {
  if (intervalMs <= 0) return now;
  const step = Math.max(1, Math.floor(intervalMs / 4));
  return Math.ceil((now + intervalMs) / step) * step;
}

/** One feed row, as much of it as a delivery needs. */
export interface FeedChange extends FeedPos {
  sku: string;
  warehouseCode: string;
  /** The quantity after the change. */
  qty: number;
  /** When it was committed (epoch ms). */
  at: number;
}

export interface StockEntry {
  sku: string;
  warehouseCode: string;
  qty: number;
  at: number;
}

/** One delivery: every wanted change in (from, to], each (sku, warehouse) once with its latest quantity. */
export interface StockBatch {
  from: FeedPos;
  /** The last change included: the cursor the delivery carries. */
  to: FeedPos;
  /** Ordered by each pair's latest change in the range. */
  changes: StockEntry[];
}

export interface StockPlan {
  batches: StockBatch[];
  /** Where the endpoint stands afterwards: every wanted change up to here is in a batch. */
  position: FeedPos;
}

/**
 * Turns feed rows (pushed in commit order, window after window; rows at or before `after` are
 * ignored) into batches for one endpoint. A batch closes when one more distinct (sku, warehouse)
 * would exceed `max`; so each batch's entries are exactly the state of its pairs at its `to`
 * cursor, and a client applying the batches in order holds the feed's state at every cursor it has
 * seen. After `limit` closed batches it takes no more rows (`full`): the rest waits in the feed.
 */
export class StockBatcher {
  private readonly batches: StockBatch[] = [];
  private from: FeedPos;
  private scanned: FeedPos;
  private last: FeedPos | null = null;
  // Insertion order is the order of each pair's latest change: a repeat is deleted and re-added.
  private open = new Map<string, StockEntry>();

  constructor(
    private readonly after: FeedPos,
    private readonly wants: ReadonlySet<string> | null,
    private readonly max = MAX_STOCK_CHANGES,
    private readonly limit = Number.POSITIVE_INFINITY,
  ) {
    this.from = after;
    this.scanned = after;
  }

  get full(): boolean {
    return this.batches.length >= this.limit;
  }

  push(rows: readonly FeedChange[]): void {
    for (const row of rows) {
      if (this.full) return;
      if (comparePos(row, this.after) <= 0) continue;
      if (this.wants === null || this.wants.has(row.sku)) {
        const key = `${row.sku}\u0000${row.warehouseCode}`;
        if (!this.open.has(key) && this.open.size >= this.max) {
          this.close();
          if (this.full) return;
        }
        this.open.delete(key);
        this.open.set(key, { sku: row.sku, warehouseCode: row.warehouseCode, qty: row.qty, at: row.at });
        this.last = { seq: row.seq, id: row.id };
      }
      this.scanned = { seq: row.seq, id: row.id };
    }
  }

  /**
   * The batches and where the endpoint stands. `complete`: the rows pushed reach the feed's head.
   * If they do not, a trailing batch that is not full is left for a later read (where more changes
   * can join it) — unless it is the only one, so that every call makes progress. A backlog
   * therefore becomes full deliveries: n distinct changes in ⌈n / max⌉ of them.
   */
  finish(complete: boolean): StockPlan {
    if (this.full) return { batches: this.batches, position: this.from };
    if (this.open.size > 0 && this.open.size < this.max && !complete && this.batches.length > 0) return { batches: this.batches, position: this.from };
    if (this.open.size > 0) this.close();
    return { batches: this.batches, position: this.scanned };
  }

  private close(): void {
    this.batches.push({ from: this.from, to: this.last!, changes: [...this.open.values()] });
    this.from = this.last!;
    this.open = new Map();
  }
}

/** All of `rows` at once (see StockBatcher). */
export function planStockBatches(
  rows: readonly FeedChange[],
  after: FeedPos,
  wants: ReadonlySet<string> | null,
  complete: boolean,
  max = MAX_STOCK_CHANGES,
): StockPlan {
  const batcher = new StockBatcher(after, wants, max);
  batcher.push(rows);
  return batcher.finish(complete);
}
