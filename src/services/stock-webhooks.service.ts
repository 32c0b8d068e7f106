import { comparePos, nextStockFanOut, StockBatcher, type FeedChange, type FeedPos } from '../domain/stock-batches.ts';
import { formatInstant } from '../domain/time.ts';
import { RETRY_WINDOW_MS } from '../domain/webhook-schedule.ts';
import type { Store } from '../store/db.ts';
import { feedAfter } from '../store/stock-feed.repository.ts';
import { within } from '../store/tenancy.ts';
import * as webhooks from '../store/webhooks.repository.ts';
import { encodeCursor } from './stock-feed.service.ts';

/** SPEC §13: at most one stock.changed fan-out per endpoint per interval (STOCK_WEBHOOK_INTERVAL_MS). */
const DEFAULT_STOCK_INTERVAL_MS = 5000;

export interface StockFanOutOptions {
  intervalMs?: number;
  /** Feed rows read per window (one read serves every due endpoint whose position it covers). */
  windowRows?: number;
  /** Windows read per round at most. */
  maxWindows?: number;
  /** Deliveries an endpoint may have waiting before its fan-out pauses (its changes wait in the feed). */
  maxOpen?: number;
  /** Endpoints considered per round. */
  maxEndpoints?: number;
}

interface Group {
  after: FeedPos;
  batcher: StockBatcher;
  subs: webhooks.StockSubscription[];
}

/** Runs `fn` over `items` one after another (in one transaction, statements go one at a time). */
async function sequence<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const item of items) out.push(await fn(item));
  return out;
}

/** The stock.changed body (SPEC §13): `cursor` is the feed cursor after the last change included. */
function stockChangedPayload(batch: { to: FeedPos; changes: { sku: string; warehouseCode: string; qty: number; at: number }[] }, now: number): string {
  return JSON.stringify({
    type: 'stock.changed',
    timestamp: formatInstant(now),
    data: {
      changes: batch.changes.map((c) => ({ sku: c.sku, warehouseCode: c.warehouseCode, qty: c.qty, updateDate: formatInstant(c.at) })),
      cursor: encodeCursor(batch.to),
    },
  });
}

/**
 * Turns the stock change feed into stock.changed deliveries (the worker calls `run` every round).
 * Nothing happens in the transactions that change stock: every endpoint keeps a position in the
 * feed, and this reads the feed after it — so orders, refunds, operator changes and imports all
 * produce deliveries without knowing about them, and their cost does not grow with endpoints.
 *
 * The only thing kept between rounds is a cache of parsed SKU lists, keyed by their revision.
 */
export class StockFanOut {
  private readonly filters = new Map<number, { rev: number; wants: ReadonlySet<string> | null }>();
  private readonly intervalMs: number;
  private readonly windowRows: number;
  private readonly maxWindows: number;
  private readonly maxOpen: number;
  private readonly maxEndpoints: number;

  constructor(
    private readonly store: Pick<Store, 'db' | 'dialect'>,
    options: StockFanOutOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? DEFAULT_STOCK_INTERVAL_MS;
    this.windowRows = options.windowRows ?? 10_000;
    this.maxWindows = options.maxWindows ?? 20;
    this.maxOpen = options.maxOpen ?? 20;
    this.maxEndpoints = options.maxEndpoints ?? 1000;
  }

  /**
   * One round: returns how many deliveries it created. The feed is read once for all due endpoints,
   * window after window from the furthest behind; each endpoint joins when the reading reaches its
   * position. Endpoints at the same position with the same SKU list (all of them, typically) form
   * one group with one batcher: their batches are computed and stored once. A group takes rows
   * until it has `maxOpen` deliveries' worth; when every group is full, the reading jumps ahead to
   * the next endpoint's position.
   */
  async run(now: number): Promise<number> {
    const { db, dialect } = this.store;
    const waiting = (await webhooks.dueStockSubscriptions(db, now, this.maxOpen, this.maxEndpoints)).sort((a, b) => comparePos(b.after, a.after));
    const groups = new Map<string, Group>();
    const open = () => [...groups.values()].some((g) => !g.batcher.full);
    let start: FeedPos | null = null;
    let complete = false;
    for (let windows = 0; windows < this.maxWindows && (waiting.length > 0 || open()); windows++) {
      if (!open()) start = waiting.at(-1)!.after;
      const read = await feedAfter(db, dialect, start!, null, this.windowRows + 1);
      complete = read.length <= this.windowRows;
      const rows: FeedChange[] = read
        .slice(0, this.windowRows)
        .map((r) => ({ seq: Number(r.seq), id: r.id, sku: r.sku, warehouseCode: r.warehouseCode, qty: r.qty, at: r.createdAt }));
      const end: FeedPos = rows.at(-1) ?? start!;
      // Those whose position this window passes (all of them once it reaches the head) join.
      while (waiting.length > 0 && (complete || comparePos(waiting.at(-1)!.after, end) < 0)) {
        const sub = waiting.pop()!;
        const wants = await this.wants(sub);
        const key = `${sub.after.seq}.${sub.after.id} ${wants === null ? 'all' : `${sub.id}.${sub.filterRev}`}`;
        const group = groups.get(key);
        if (group) group.subs.push(sub);
        else groups.set(key, { after: sub.after, batcher: new StockBatcher(sub.after, wants, undefined, this.maxOpen), subs: [sub] });
      }
      for (const g of groups.values()) g.batcher.push(rows);
      if (complete) break;
      start = end;
    }
    return groups.size === 0 ? 0 : this.write([...groups.values()], complete, now);
  }

  /**
   * One transaction for the round, a few statements per group whatever its number of endpoints:
   * the group's positions move on (each endpoint's only if no other worker moved it and its SKU list
   * is the one read), its batches are stored once, each merchant gets one event per batch and each
   * endpoint that moved one delivery per batch. On SQLite every statement here holds the write lock
   * order intake needs; written one endpoint at a time, 100 endpoints took ≈ 1,000 statements.
   */
  private async write(groups: Group[], complete: boolean, now: number): Promise<number> {
    const { db, dialect } = this.store;
    let created = 0;
    await db.transaction().execute(async (trx) => {
      await webhooks.lockEndpoints(
        trx,
        dialect,
        groups.flatMap((g) => g.subs.map((sub) => sub.id)),
      );
      for (const group of groups) {
        const { batches, position } = group.batcher.finish(complete);
        if (batches.length === 0 && comparePos(position, group.after) === 0) continue;
        // Caught up: the next fan-out waits for the interval. Behind (a backlog): the next round goes on.
        const dueAt = batches.length > 0 && complete && !group.batcher.full ? nextStockFanOut(now, this.intervalMs) : null;
        // Not moved: lost to another worker, or the SKU list or status changed; the next round reads afresh.
        const moved = await webhooks.advanceStockPositions(trx, group.subs, group.after, position, dueAt);
        const subs = group.subs.filter((sub) => moved.has(sub.id)).sort((x, y) => x.id - y.id);
        if (batches.length === 0 || subs.length === 0) continue;
        const batchIds = await sequence(batches, (batch) => webhooks.insertStockBatch(trx, stockChangedPayload(batch, now), now));
        const cursors = batches.map((batch) => ({ cursorFrom: encodeCursor(batch.from), cursorTo: encodeCursor(batch.to) }));
        const byMerchant = new Map<number, webhooks.StockSubscription[]>();
        for (const sub of subs) byMerchant.set(sub.merchantId, [...(byMerchant.get(sub.merchantId) ?? []), sub]);
        for (const members of byMerchant.values()) {
          const scope = within(members[0].owner, trx);
          const eventIds = await webhooks.insertStockEvents(scope, batchIds, now);
          // Batch by batch, so that each endpoint's deliveries get ids in feed order (its lane's order).
          const deliveries = cursors.flatMap((range, i) => members.map((sub) => ({ endpointId: sub.id, eventId: eventIds[i], ...range })));
          await webhooks.insertStockDeliveries(scope, deliveries, now, now + RETRY_WINDOW_MS);
        }
        created += batches.length * subs.length;
      }
    });
    return created;
  }

  private async wants(sub: webhooks.StockSubscription): Promise<ReadonlySet<string> | null> {
    const cached = this.filters.get(sub.id);
    if (cached && cached.rev === sub.filterRev) return cached.wants;
    const row = await webhooks.stockFilter(this.store.db, sub.id);
    // A list replaced after the subscription was read has another revision, which
    // advanceStockPosition refuses (or, replaced after that check, commits after the fan-out: the
    // window, read before, then holds only changes that were committed under the old list).
    const wants = row?.skus ? new Set(JSON.parse(row.skus) as string[]) : null;
    if (row) this.filters.set(sub.id, { rev: row.stock_filter_rev, wants });
    return wants;
  }
}
