import type { Dialect, Handle, Trx } from './db.ts';
import { sql, type Insertable, type Transaction } from 'kysely';
import type { LedgerKind } from '../domain/vocabulary.ts';
import type { Database, StockLedgerTable } from './schema.ts';
import { prepared } from './prepared.ts';
import { bulkLedgerMark, bulkLedgerSeq, commitOrderColumn } from './stock-feed.repository.ts';

export interface StockKey {
  productId: number;
  warehouseId: number;
}

export interface LedgerRefs {
  kind: LedgerKind;
  orderId?: number | null;
  refundId?: number | null;
  /** What a person typed for a manual adjustment, kept on the ledger row. */
  reason?: string | null;
}

export interface AppliedChange extends StockKey {
  delta: number;
  qtyAfter: number;
}

const whereKey = (k: StockKey) => ({ product_id: k.productId, warehouse_id: k.warehouseId });

async function ensureRow(db: Handle, k: StockKey, now: number): Promise<void> {
  await db
    .insertInto('stocks')
    .values({ ...whereKey(k), qty: 0, updated_at: now })
    .onConflict((oc) => oc.columns(['product_id', 'warehouse_id']).doNothing())
    .execute();
}

async function recordChange(db: Handle, k: StockKey, delta: number, qtyAfter: number, refs: LedgerRefs, now: number) {
  await db
    .insertInto('stock_ledger')
    .values({
      ...whereKey(k),
      delta,
      qty_after: qtyAfter,
      kind: refs.kind,
      order_id: refs.orderId ?? null,
      refund_id: refs.refundId ?? null,
      reason: refs.reason ?? null,
      created_at: now,
    })
    .execute();
}

/**
 * Sets an absolute quantity (an operator's count) and writes the ledger row for the difference. The no-op UPDATE locks
 * the row on PostgreSQL before reading it (portable, unlike FOR UPDATE on SQLite), so the ledger
 * delta is exact under concurrent writers.
 */
export async function setQty(db: Trx, k: StockKey, qty: number, now: number): Promise<AppliedChange> {
  await ensureRow(db, k, now);
  const locked = await db
    .updateTable('stocks')
    .set((eb) => ({ qty: eb.ref('qty') }))
    .where('product_id', '=', k.productId)
    .where('warehouse_id', '=', k.warehouseId)
    .returning('qty')
    .executeTakeFirstOrThrow();
  const delta = qty - locked.qty;
  if (delta === 0) return { ...k, delta, qtyAfter: qty };
  await db.updateTable('stocks').set({ qty, updated_at: now }).where('product_id', '=', k.productId).where('warehouse_id', '=', k.warehouseId).execute();
  await recordChange(db, k, delta, qty, { kind: delta > 0 ? 'restock' : 'adjustment' }, now);
  return { ...k, delta, qtyAfter: qty };
}

/**
 * Adds `delta` (possibly negative) with a conditional update that never takes a row below zero
 * (nor, given `max`, an increase above it); returns null when the row refuses (nothing written).
 */
export async function addQty(db: Trx, k: StockKey, delta: number, refs: LedgerRefs, now: number, max?: number): Promise<AppliedChange | null> {
  if (delta > 0) await ensureRow(db, k, now);
  let update = db
    .updateTable('stocks')
    .set((eb) => ({ qty: eb('qty', '+', delta), updated_at: now }))
    .where('product_id', '=', k.productId)
    .where('warehouse_id', '=', k.warehouseId)
    .where((eb) => eb(eb('qty', '+', delta), '>=', 0));
  if (max !== undefined && delta > 0) update = update.where((eb) => eb(eb('qty', '+', delta), '<=', max));
  const row = await update.returning('qty').executeTakeFirst();
  if (!row) return null;
  await recordChange(db, k, delta, row.qty, refs, now);
  return { ...k, delta, qtyAfter: row.qty };
}

/**
 * Applies several decrements (negative deltas) of distinct stock rows, all or nothing: one
 * conditional UPDATE (each row's delta by a CASE; a row that would go below zero is left out) and,
 * when every row took its delta, one multi-row INSERT of their ledger rows, in the order given —
 * on SQLite three statements (with the feed head's time mark moved once for the rows, so the
 * per-row trigger stays out), on PostgreSQL one (the INSERT in a writing CTE over the UPDATE's
 * rows: one round trip less per order). Returns null when any row refused — the caller rolls the
 * transaction back, since the rows that did take their delta are changed. The order path's rows
 * are locked beforehand (`lockStockRows`), so on PostgreSQL this UPDATE waits for nothing.
 */
export async function takeQty(
  trx: Transaction<Database>,
  dialect: Dialect,
  changes: (StockKey & { delta: number })[],
  refs: LedgerRefs,
  now: number,
): Promise<AppliedChange[] | null> {
  if (changes.length === 0) return [];
  const given = checkedDecrements(changes);
  if (dialect === 'postgres') {
    const rows = await takenWithLedger.all(trx, given, { kind: refs.kind, orderId: refs.orderId ?? null, refundId: refs.refundId ?? null }, now);
    return rows.length === changes.length ? appliedOf(changes, rows) : null;
  }
  const rows = await taken.all(trx, given, now);
  if (rows.length !== changes.length) return null;
  const applied = appliedOf(changes, rows);
  // The rows' time mark moved once for all of them, as the per-row trigger would have moved it
  // for each: the trigger's two UPDATEs per row (the head, then the row itself and its mark index
  // entry) were most of the cost of a ledger row.
  const timeMark = await bulkLedgerMark(trx, dialect, now);
  await ledgerRows.run(
    trx,
    applied.map((a) => ({
      ...whereKey(a),
      delta: a.delta,
      qty_after: a.qtyAfter,
      kind: refs.kind,
      order_id: refs.orderId ?? null,
      refund_id: refs.refundId ?? null,
      created_at: now,
      time_mark: timeMark,
    })),
  );
  return applied;
}

type Decrement = StockKey & { delta: number };

const keyOf = (k: StockKey) => `${k.productId}:${k.warehouseId}`;

/** The decrements as the statements take them: each row once, each delta a negative integer. */
export function checkedDecrements(changes: Decrement[]): Decrement[] {
  if (new Set(changes.map(keyOf)).size !== changes.length) throw new Error('takeQty: a stock row appears twice');
  if (changes.some((c) => !Number.isSafeInteger(c.delta) || c.delta >= 0)) throw new Error('takeQty: deltas must be negative integers');
  return changes.map((c) => ({ productId: c.productId, warehouseId: c.warehouseId, delta: c.delta }));
}

/** The applied changes, in the order asked, with each row's quantity after (from the statement's rows). */
export function appliedOf(changes: Decrement[], rows: { product_id: number; warehouse_id: number; qty: number }[]): AppliedChange[] {
  const after = new Map(rows.map((r) => [keyOf({ productId: r.product_id, warehouseId: r.warehouse_id }), Number(r.qty)]));
  return changes.map((c) => ({ productId: c.productId, warehouseId: c.warehouseId, delta: c.delta, qtyAfter: after.get(keyOf(c))! }));
}

/** The conditional UPDATE of takeQty: each row's delta by a CASE; a row that would go below zero is left out. */
function decrementStatement(db: Handle, changes: Decrement[], now: number) {
  // `cast` types the parameters for PostgreSQL (a CASE of bare parameters would be text there).
  const delta = sql<number>`case ${sql.join(
    changes.map((c) => sql`when product_id = ${c.productId} and warehouse_id = ${c.warehouseId} then cast(${c.delta} as bigint)`),
    sql` `,
  )} end`;
  return db
    .updateTable('stocks')
    .set({ qty: sql`qty + ${delta}`, updated_at: now })
    .where((eb) => eb.or(changes.map((c) => eb.and([eb('product_id', '=', c.productId), eb('warehouse_id', '=', c.warehouseId)]))))
    .where(sql<boolean>`qty + ${delta} >= 0`)
    .returning(['product_id', 'warehouse_id', 'qty']);
}

const taken = prepared(decrementStatement);

const ledgerRows = prepared((db, rows: Insertable<StockLedgerTable>[]) => db.insertInto('stock_ledger').values(rows));

/**
 * PostgreSQL: one round trip — the decrements and their ledger rows in one statement. The ledger
 * rows are written only when every row could be taken (the decrements that succeeded are not
 * undone here either way: fewer rows back tell the caller to roll back). They are inserted in the
 * order given (`ord`), so their ids are, as on SQLite.
 */
const takenWithLedger = prepared(
  (db, changes: Decrement[], refs: { kind: LedgerKind; orderId: number | null; refundId: number | null }, now: number) =>
    sql<{ product_id: number; warehouse_id: number; qty: number }>`
      with ${takenAndLedgerCtes(db, changes, refs, now)}
      select product_id, warehouse_id, qty from taken`,
);

/** PostgreSQL: the decrement and its ledger rows as the CTEs `taken` and `ledger` (the rows only when every decrement applied). */
export function takenAndLedgerCtes(db: Handle, changes: Decrement[], refs: { kind: LedgerKind; orderId: number | null; refundId: number | null }, now: number) {
  return sql`taken as (${decrementStatement(db, changes, now)}), ledger as (
        insert into stock_ledger (product_id, warehouse_id, delta, qty_after, kind, order_id, refund_id, created_at)
        select t.product_id, t.warehouse_id, d.delta, t.qty, ${refs.kind}, cast(${refs.orderId} as bigint), cast(${refs.refundId} as bigint), cast(${now} as bigint)
        from taken t join (values ${sql.join(
          changes.map((c, i) => sql`(cast(${c.productId} as bigint), cast(${c.warehouseId} as bigint), cast(${c.delta} as bigint), cast(${i} as integer))`),
        )}) as d (product_id, warehouse_id, delta, ord) on d.product_id = t.product_id and d.warehouse_id = t.warehouse_id
        where (select count(*) from taken) = ${changes.length}
        order by d.ord
      )`;
}

export async function currentQty(db: Handle, k: StockKey): Promise<number> {
  const row = await db.selectFrom('stocks').select('qty').where('product_id', '=', k.productId).where('warehouse_id', '=', k.warehouseId).executeTakeFirst();
  return row?.qty ?? 0;
}

export interface StockRow {
  productId: number;
  qty: number;
  warehouseCode: string;
  countryCode: string;
}

/** Stock rows of the given products (optionally one warehouse), in warehouse id order. */
async function stockRowsOf(db: Handle, productIds: number[], warehouseId: number | null): Promise<StockRow[]> {
  if (productIds.length === 0) return [];
  return stockRows.all(db, productIds, warehouseId);
}

const stockRows = prepared((db, productIds: number[], warehouseId: number | null) => {
  let q = db
    .selectFrom('stocks')
    .innerJoin('warehouses', 'warehouses.id', 'stocks.warehouse_id')
    .select(['stocks.product_id as productId', 'stocks.qty as qty', 'warehouses.code as warehouseCode', 'warehouses.country_code as countryCode'])
    .where('stocks.product_id', 'in', productIds);
  if (warehouseId !== null) q = q.where('stocks.warehouse_id', '=', warehouseId);
  return q.orderBy('stocks.product_id').orderBy('stocks.warehouse_id');
});

/** Stock rows whose quantity is not the sum of their ledger deltas: the one stock = ledger check (tests, the chaos run, restore and `backup verify`). */
export async function ledgerMismatches(db: Handle): Promise<{ productId: number; warehouseId: number; qty: number; ledger: number }[]> {
  const rows = await db
    .selectFrom('stocks')
    .leftJoin(
      (eb) =>
        eb
          .selectFrom('stock_ledger')
          .select(['product_id', 'warehouse_id', (e) => e.fn.sum<number>('delta').as('total')])
          .groupBy(['product_id', 'warehouse_id'])
          .as('l'),
      (join) => join.onRef('l.product_id', '=', 'stocks.product_id').onRef('l.warehouse_id', '=', 'stocks.warehouse_id'),
    )
    .select(['stocks.product_id as productId', 'stocks.warehouse_id as warehouseId', 'stocks.qty as qty', 'l.total as ledger'])
    // Compared in the database: a million stock rows stay there, only the few that disagree come back.
    .where((eb) => eb(eb.fn.coalesce('l.total', eb.lit(0)), '<>', eb.ref('stocks.qty')))
    .orderBy('stocks.product_id')
    .orderBy('stocks.warehouse_id')
    .execute();
  return rows.map((r) => ({ ...r, ledger: Number(r.ledger ?? 0) }));
}

export interface ChangedPageQuery {
  start: number | null;
  end: number | null;
  warehouseId: number | null;
  productIds: number[] | null;
  offset: number;
  limit: number;
  /**
   * `total` counts the products of a window of at most this many ledger rows (changes); a larger
   * window reports this number. Its cost is reading that many rows, however large the window.
   */
  totalCap: number;
  /** Ledger rows the page reads first (by default enough if few SKUs repeat); tests make it small. */
  firstRead?: number;
}

/**
 * Products with a ledger row (a stock change) in [start, end], with their stock rows (optionally
 * one warehouse's), ordered by their first change in the window in commit order, then SKU. That
 * position never moves once a product is in the window, and products entering it later come after
 * every product already there, so offset pages neither skip nor repeat while stock changes
 * (docs/decisions.md, "Stable stock pages").
 *
 * A page reads the window's ledger rows in commit order from where the window starts until it
 * has its products, and `total` reads at most `totalCap + 1` of them — not the whole window
 * (migration 0012).
 */
export async function changedProductsPage(db: Handle, dialect: Dialect, q: ChangedPageQuery): Promise<{ total: number; rows: WindowProduct[] }> {
  if (q.productIds !== null) return changedAmong(db, dialect, q, q.productIds);
  const range = await windowRange(db, dialect, q.start, q.end);
  if (range === null) return { total: 0, rows: [] };
  // The page reads the window's first rows until it has its SKUs. Beside it, in the first
  // statement, `total` reads the window's first `totalCap + 1` rows: all of them when the window
  // has at most `totalCap`, and then it counts their SKUs; otherwise it reports the cap.
  const onPage = q.offset + q.limit;
  let count: WindowCount | null = null;
  let rows = q.firstRead ?? firstRead(onPage);
  for (;;) {
    const read = await readWindow(db, dialect, q, range, rows, count === null ? q.totalCap + 1 : null);
    count ??= read.count!;
    if (!enough(read.page, onPage)) {
      rows = readMore(rows, onPage, read.page.settled);
      continue;
    }
    // The page's read held the whole window (the count was skipped): its rows are the window's.
    const window = read.page.full ? count : { full: read.page.read > q.totalCap, found: read.page.settled };
    return { total: window.full ? q.totalCap : window.found, rows: read.page.rows };
  }
}

/**
 * Rows the page reads first for `wanted` SKUs: room for SKUs that changed more than once.
 * When that was not enough, as many more as the rows read per SKU found suggest (at least half
 * as many again, so the rows read in all stay within a few times what the last read needed).
 */
const firstRead = (wanted: number) => Math.ceil(wanted * 1.5) + 100;
const readMore = (rows: number, wanted: number, found: number) => Math.ceil(rows * Math.max(1.5, (1.25 * wanted) / Math.max(1, found)));
/** A read found `wanted` settled SKUs, or the window ended within it. */
const enough = (r: { full: boolean; settled: number }, wanted: number) => !r.full || r.settled >= wanted;

/** A product of a window page, with its stock rows (optionally one warehouse's) in warehouse order. */
export interface WindowProduct {
  id: number;
  sku: string;
  stock: StockCell[];
}

interface WindowPage {
  /** Rows read (all the window's when not `full`). */
  read: number;
  full: boolean;
  settled: number;
  rows: WindowProduct[];
}
interface WindowCount {
  /** The window has more rows than were read. */
  full: boolean;
  /** Distinct products among the rows read. */
  found: number;
}

/**
 * The stretch of the feed (commit order) that holds every ledger row whose `created_at` is in the
 * window, as commit positions (`commit_seq` on PostgreSQL, `id` on SQLite): from the first row
 * whose time mark reaches `start`, to the last whose mark is at most `end` plus the largest lag any
 * row's time ever had behind its mark (migration 0012). Null when no row can be in the window. Two
 * index seeks, one statement.
 */
async function windowRange(db: Handle, dialect: Dialect, start: number | null, end: number | null): Promise<{ from: number | null; to: number | null } | null> {
  const pg = dialect === 'postgres';
  const pos = pg ? sql`commit_seq` : sql`id`;
  const order = (direction: 'asc' | 'desc') =>
    pg ? sql.raw(`time_mark ${direction}, commit_seq ${direction}, id ${direction}`) : sql.raw(`time_mark ${direction}, id ${direction}`);
  const from = start === null ? sql`null` : sql`(select ${pos} from stock_ledger where time_mark >= ${start} order by ${order('asc')} limit 1)`;
  const to =
    end === null
      ? sql`null`
      : sql`(select ${pos} from stock_ledger where time_mark <= ${end} + (select time_lag from stock_feed_head where id = 1) order by ${order('desc')} limit 1)`;
  const { rows } = await sql<{ from: number | null; to: number | null }>`select ${from} as "from", ${to} as "to"`.execute(db);
  const range = { from: rows[0].from === null ? null : Number(rows[0].from), to: rows[0].to === null ? null : Number(rows[0].to) };
  if ((start !== null && range.from === null) || (end !== null && range.to === null)) return null;
  if (range.from !== null && range.to !== null && range.from > range.to) return null;
  return range;
}

/**
 * The window's first ledger rows in commit order, read twice in one statement: the first
 * `pageRows` for the page, the first `countRows` (unless null) for `total`.
 *
 * A product first met before the last row read is *settled*: its first change in the whole
 * window is known, and every product not met comes after it. The last row's commit may continue
 * past the rows read (several rows of one transaction share a `commit_seq` on PostgreSQL, and tie
 * on it), so products first met there are settled only when the window ended within the rows
 * read. The page is taken from the settled products, in (first change, SKU) order, and only the
 * products up to the page's end are looked up. The count is of every product met, settled or not.
 */
async function readWindow(
  db: Handle,
  dialect: Dialect,
  q: ChangedPageQuery,
  range: { from: number | null; to: number | null },
  pageRows: number,
  countRows: number | null,
): Promise<{ page: WindowPage; count: WindowCount | null }> {
  const pg = dialect === 'postgres';
  const pos = pg ? sql.ref('commit_seq') : sql.ref('id');
  const inTime = [q.start === null ? null : sql`created_at >= ${q.start}`, q.end === null ? null : sql`created_at <= ${q.end}`].filter((c) => c !== null);
  const where = [
    // PostgreSQL: bounds on `commit_seq` alone are enough. Rows of the first (last) commit that
    // come before (after) the bound's row have marks below `start` (above `end + time_lag`), so
    // the time filter drops them; and a row comparison's range, badly estimated, made the planner
    // sort the whole range instead of walking the feed index in order up to the limit.
    range.from === null ? null : sql`${pos} >= ${range.from}`,
    range.to === null ? null : sql`${pos} <= ${range.to}`,
    // PostgreSQL: the time filter as one condition it cannot estimate (one half). Estimated as a
    // range, its selectivity was multiplied with the commit range's as if independent — they are
    // nearly the same rows — and the planner, expecting a few rows, sorted the whole range.
    inTime.length === 0 ? null : pg ? sql`(case when ${sql.join(inTime, sql` and `)} then true else false end)` : sql.join(inTime, sql` and `),
    q.warehouseId === null ? null : sql`warehouse_id = ${q.warehouseId}`,
  ].filter((c) => c !== null);
  if (where.length === 0) where.push(sql`1 = 1`);
  const rowsOfWindow = (limit: number) =>
    sql`select product_id, ${pos} as pos from stock_ledger where ${sql.join(where, sql` and `)} order by ${pg ? sql`commit_seq, id` : sql`id`} limit ${limit}`;
  // Products tying with the page's last position are all joined and sorted by SKU; the settled
  // products after it are never looked up.
  const page = sql`
    w as (${rowsOfWindow(pageRows)}),
    meta as (select count(*) as n, max(pos) as last from w),
    f as (
      select product_id, min(pos) as first from w group by product_id
      having (select n from meta) < ${pageRows} or min(pos) < (select last from meta)
    ),
    page as (
      select f.product_id, f.first, p.sku from f join products p on p.id = f.product_id
      where f.first <= coalesce((select first from f order by first limit 1 offset ${q.offset + q.limit - 1}), (select max(first) from f))
      order by f.first, p.sku
      limit ${q.limit} offset ${q.offset}
    )`;
  // Every product met is in the window, settled or not: counting needs no sort, SKU or tie rule.
  // Skipped when the page's read already held the whole window (a one-time filter on PostgreSQL).
  const counted =
    countRows === null
      ? sql`select 0 as n, 0 as found`
      : sql`select count(*) as n, count(distinct product_id) as found from (${rowsOfWindow(countRows)}) c where (select n from meta) >= ${pageRows}`;
  const result = await sql<
    { page_read: number; page_settled: number; count_read: number; count_found: number; id: number | null; sku: string | null } & Partial<StockCell>
  >`
    with ${page}, counted as (${counted})
    select meta.n as page_read, (select count(*) from f) as page_settled, counted.n as count_read, counted.found as count_found,
      page.product_id as id, page.sku as sku, s.qty as qty, wh.code as "warehouseCode", wh.country_code as "countryCode"
    from meta cross join counted
      left join page on 1 = 1
      left join stocks s on s.product_id = page.product_id ${q.warehouseId === null ? sql`` : sql`and s.warehouse_id = ${q.warehouseId}`}
      left join warehouses wh on wh.id = s.warehouse_id
    order by page.first, page.sku, s.warehouse_id`.execute(db);
  const first = result.rows[0];
  return {
    page: { read: Number(first.page_read), full: Number(first.page_read) >= pageRows, settled: Number(first.page_settled), rows: withStock(result.rows) },
    count: countRows === null ? null : { full: Number(first.count_read) >= countRows, found: Number(first.count_found) },
  };
}

/** One stock row of a window record: what the response lists for it. */
export interface StockCell {
  qty: number;
  warehouseCode: string;
  countryCode: string;
}

/** Rows of (product, stock row) joined, in order, to products each with their stock rows. */
function withStock(rows: ({ id: number | null; sku: string | null } & Partial<StockCell>)[]): WindowProduct[] {
  const out: WindowProduct[] = [];
  for (const r of rows) {
    if (r.id === null) continue;
    let last = out.at(-1);
    if (last?.id !== Number(r.id)) out.push((last = { id: Number(r.id), sku: r.sku!, stock: [] }));
    if (r.qty !== null && r.qty !== undefined) last.stock.push({ qty: Number(r.qty), warehouseCode: r.warehouseCode!, countryCode: r.countryCode! });
  }
  return out;
}

/** SKU-list mode with a window: the listed products' changes in it (at most 30 products' rows). */
async function changedAmong(db: Handle, dialect: Dialect, q: ChangedPageQuery, productIds: number[]): Promise<{ total: number; rows: WindowProduct[] }> {
  if (productIds.length === 0) return { total: 0, rows: [] };
  let changed = db
    .selectFrom('stock_ledger')
    .select(['product_id', (eb) => eb.fn.min(commitOrderColumn(dialect)).as('first_change')])
    .where('product_id', 'in', productIds);
  if (q.start !== null) changed = changed.where('created_at', '>=', q.start);
  if (q.end !== null) changed = changed.where('created_at', '<=', q.end);
  if (q.warehouseId !== null) changed = changed.where('warehouse_id', '=', q.warehouseId);
  const found = await db
    .selectFrom(changed.groupBy('product_id').as('c'))
    .innerJoin('products', 'products.id', 'c.product_id')
    .select(['products.id as id', 'products.sku as sku'])
    .orderBy('c.first_change')
    .orderBy('products.sku')
    .execute();
  const page = found.slice(q.offset, q.offset + q.limit);
  const stock = await stockRowsOf(
    db,
    page.map((p) => p.id),
    q.warehouseId,
  );
  return {
    total: found.length,
    rows: page.map((p) => ({
      ...p,
      stock: stock.filter((r) => r.productId === p.id).map(({ qty, warehouseCode, countryCode }) => ({ qty, warehouseCode, countryCode })),
    })),
  };
}

export interface BulkSet extends StockKey {
  qty: number;
}

/**
 * Sets many absolute quantities with a few multi-row statements (the bulk import path): creates
 * missing rows, locks and reads the batch's rows with a no-op UPDATE (as `setQty` does), then
 * writes the changed rows and one ledger row per change. Keys may repeat; they apply in order.
 * PostgreSQL ledger rows are left for `stampBulkLedger` before commit. Returns the ledger rows written.
 */
export async function bulkSetQty(db: Trx, dialect: Dialect, rows: BulkSet[], now: number): Promise<number> {
  if (rows.length === 0) return 0;
  const keyOf = (k: StockKey) => `${k.productId}:${k.warehouseId}`;
  const unique = [...new Map(rows.map((r) => [keyOf(r), { product_id: r.productId, warehouse_id: r.warehouseId, qty: 0, updated_at: now }])).values()];
  await db
    .insertInto('stocks')
    .values(unique)
    .onConflict((oc) => oc.columns(['product_id', 'warehouse_id']).doNothing())
    .execute();
  const locked = await db
    .updateTable('stocks')
    .set((eb) => ({ qty: eb.ref('qty') }))
    .where('product_id', 'in', [...new Set(rows.map((r) => r.productId))])
    .returning(['product_id', 'warehouse_id', 'qty'])
    .execute();
  const current = new Map(locked.map((r) => [`${r.product_id}:${r.warehouse_id}`, r.qty]));
  const ledger: Insertable<StockLedgerTable>[] = [];
  const final = new Map<string, BulkSet>();
  for (const r of rows) {
    const key = keyOf(r);
    const delta = r.qty - (current.get(key) ?? 0);
    if (delta === 0) continue;
    current.set(key, r.qty);
    final.set(key, r);
    ledger.push({
      product_id: r.productId,
      warehouse_id: r.warehouseId,
      delta,
      qty_after: r.qty,
      kind: delta > 0 ? 'restock' : 'adjustment',
      created_at: now,
      commit_seq: bulkLedgerSeq(dialect),
    });
  }
  if (final.size === 0) return 0;
  const mark = await bulkLedgerMark(db, dialect, now);
  for (const row of ledger) row.time_mark = mark;
  await db
    .insertInto('stocks')
    .values([...final.values()].map((r) => ({ product_id: r.productId, warehouse_id: r.warehouseId, qty: r.qty, updated_at: now })))
    .onConflict((oc) =>
      oc.columns(['product_id', 'warehouse_id']).doUpdateSet((eb) => ({ qty: eb.ref('excluded.qty'), updated_at: eb.ref('excluded.updated_at') })),
    )
    .execute();
  await db.insertInto('stock_ledger').values(ledger).execute();
  return ledger.length;
}

/**
 * The SKU-list stock query in one round trip: each known SKU with its stock rows (optionally one
 * warehouse's), a SKU without rows once with nulls.
 */
export async function stockOfSkus(db: Handle, skus: string[], warehouseId: number | null) {
  if (skus.length === 0) return [];
  return stockOfSkuRows.all(db, skus, warehouseId);
}

// Prepared (src/store/prepared.ts): one compiled statement per count of SKUs (the stock read's hot path).
const stockOfSkuRows = prepared((db, skus: string[], warehouseId: number | null) =>
  db
    .selectFrom('products')
    .leftJoin('stocks', (join) => {
      const on = join.onRef('stocks.product_id', '=', 'products.id');
      return warehouseId === null ? on : on.on('stocks.warehouse_id', '=', warehouseId);
    })
    .leftJoin('warehouses', 'warehouses.id', 'stocks.warehouse_id')
    .select([
      'products.id as productId',
      'products.sku as sku',
      'stocks.qty as qty',
      'warehouses.code as warehouseCode',
      'warehouses.country_code as countryCode',
    ])
    .where('products.sku', 'in', skus)
    .orderBy('products.id')
    .orderBy('stocks.warehouse_id'),
);

/** A stock row of a product with its warehouse's code, country and state: what allocation reads. */
export interface StockRowView {
  productId: number;
  warehouseId: number;
  warehouseCode: string;
  countryCode: string;
  enabled: boolean;
  qty: number;
}

function stockRowsQuery(db: Handle, productIds: number[]) {
  return db
    .selectFrom('stocks')
    .innerJoin('warehouses', 'warehouses.id', 'stocks.warehouse_id')
    .select([
      'stocks.product_id as productId',
      'stocks.warehouse_id as warehouseId',
      'warehouses.code as warehouseCode',
      'warehouses.country_code as countryCode',
      'warehouses.status as status',
      'stocks.qty as qty',
    ])
    .where('stocks.product_id', 'in', productIds)
    .orderBy('stocks.product_id')
    .orderBy('stocks.warehouse_id');
}

// Two statements, not one with a `lock` flag: a read that cannot lock is one that
// test/unit/writes-take-trx.test.ts can tell from the one that does.
const stockRowViews = prepared(stockRowsQuery);
const lockedStockRowViews = prepared((trx: Handle, productIds: number[]) => stockRowsQuery(trx, productIds).forUpdate('stocks'));

export const asView = (
  rows: { productId: number; warehouseId: number; warehouseCode: string; countryCode: string; status: number; qty: number }[],
): StockRowView[] => rows.map(({ status, ...r }) => ({ ...r, enabled: status === 1 }));

/** The products' stock rows, unlocked (quotes: a dry run reserves nothing). */
export async function readStockRows(db: Handle, productIds: number[]): Promise<StockRowView[]> {
  if (productIds.length === 0) return [];
  return asView(await stockRowViews.all(db, [...new Set(productIds)]));
}

/**
 * The products' stock rows, read inside the transaction that will decrement them and, on
 * PostgreSQL, locked in a fixed order (product, warehouse) so concurrent orders for the same SKUs
 * queue instead of deadlocking or reading stale quantities. SQLite runs one write transaction at a
 * time, so its read is already current. Takes a transaction: a lock outside one would be released
 * at once.
 */
export async function lockStockRows(trx: Transaction<Database>, dialect: Dialect, productIds: number[]): Promise<StockRowView[]> {
  if (productIds.length === 0) return [];
  const ids = [...new Set(productIds)];
  return asView(await (dialect === 'postgres' ? lockedStockRowViews : stockRowViews).all(trx, ids));
}

/** How many stock ledger rows there are (an import reports how many it wrote). */
export async function ledgerRowCount(db: Handle): Promise<number> {
  const r = await db
    .selectFrom('stock_ledger')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
