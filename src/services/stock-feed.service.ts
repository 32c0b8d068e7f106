import { fieldError } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import type { StockChangesPage, StockChangesQuery } from '../schemas/stock.ts';
import type { Store } from '../store/db.ts';
import { FEED_START, feedAfter, feedHead, type FeedPosition } from '../store/stock-feed.repository.ts';
import { warehousesByCode } from '../store/warehouses.repository.ts';

const DEFAULT_LIMIT = 500;
const CURSOR_PREFIX = 'sc1_';

/** Opaque to clients; versioned so the encoding can change without breaking stored cursors. */
export const encodeCursor = (p: FeedPosition) => CURSOR_PREFIX + Buffer.from(`${p.seq}.${p.id}`).toString('base64url');

export function decodeCursor(text: string): FeedPosition | null {
  if (!text.startsWith(CURSOR_PREFIX)) return null;
  const m = /^(\d{1,15})\.(\d{1,15})$/.exec(Buffer.from(text.slice(CURSOR_PREFIX.length), 'base64url').toString('utf8'));
  return m ? { seq: Number(m[1]), id: Number(m[2]) } : null;
}

/** SPEC §6.3: committed stock changes after the cursor, in commit order, without internal references. */
export async function stockChanges(store: Store, q: StockChangesQuery): Promise<StockChangesPage> {
  const { db, dialect } = store;
  const cursorText = q.cursor?.trim() ?? '';
  if (cursorText === 'now') return { changes: [], nextCursor: encodeCursor(await feedHead(db, dialect)), hasMore: false };
  let after = FEED_START;
  if (cursorText !== '') {
    const decoded = decodeCursor(cursorText);
    if (!decoded) throw fieldError('cursor', 'is not a cursor issued by this feed (use nextCursor, "now", or leave it out)');
    after = decoded;
  }
  let warehouseId: number | null = null;
  const code = q.warehouseCode?.trim() ?? '';
  if (code !== '') {
    const w = (await warehousesByCode(db, [code])).get(code);
    // An unknown warehouse has no changes, as an unknown SKU has no stock (§6.1).
    if (!w) return { changes: [], nextCursor: encodeCursor(after), hasMore: false };
    warehouseId = w.id;
  }
  const limit = q.limit ?? DEFAULT_LIMIT;
  const rows = await feedAfter(db, dialect, after, warehouseId, limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    changes: page.map((r) => ({
      sku: r.sku,
      warehouseCode: r.warehouseCode,
      countryCode: r.countryCode,
      qty: r.qty,
      delta: r.delta,
      kind: r.kind,
      changedAt: formatInstant(r.createdAt)!,
    })),
    nextCursor: encodeCursor(last ? { seq: Number(last.seq), id: last.id } : after),
    hasMore: rows.length > limit,
  };
}
