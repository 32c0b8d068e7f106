import { PostgresAdapter, sql, type Expression, type Insertable, type Selectable, type SqlBool } from 'kysely';
import type { FulfillmentStatus, OrderStatus, RefundStatus } from '../domain/vocabulary.ts';
import { countUpTo, likeContaining, type Dialect, type Handle, type Trx } from './db.ts';
import type { OrderItemsTable, OrdersTable, SplitOrdersTable } from './schema.ts';
import { prepared, preparedForMerchant, preparedForTenant } from './prepared.ts';
import { idRangesContaining } from '../domain/id-ranges.ts';
import { isMerchantScope, type MerchantScope, type ScopedOrderId, type TenantScope } from './tenancy.ts';
import { merchantIdOf, resolvedOrderId } from './scope-mint.ts';
import { handleOf } from './scope-handle.ts';

export type OrderRow = Selectable<OrdersTable>;
export type SplitOrderRow = Selectable<SplitOrdersTable>;
export type OrderItemRow = Selectable<OrderItemsTable>;

/**
 * Who is reading (SPEC §2.3): a merchant, through a `MerchantScope` whose queries are already
 * restricted to its rows, or the operator, through the bare handle, seeing every merchant.
 */
export type OrderReader = TenantScope;
const ordersOf = (r: OrderReader) => (isMerchantScope(r) ? r.selectFrom('orders') : handleOf(r).selectFrom('orders'));
const splitsOf = (r: OrderReader) => (isMerchantScope(r) ? r.selectFrom('split_orders') : handleOf(r).selectFrom('split_orders'));

type Owned<T> = Omit<Insertable<T>, 'merchant_id'>;

const isPostgres = (db: Handle) => db.getExecutor().adapter instanceof PostgresAdapter;

// The order path's three inserts are prepared (compiled once per shape, src/store/prepared.ts).
const orderInsert = preparedForMerchant((scope, row: Owned<OrdersTable>) => scope.insertInto('orders', row).returning('id'));
const splitOrderInsert = preparedForMerchant((scope, rows: Owned<SplitOrdersTable>[]) =>
  scope.insertInto('split_orders', rows).returning(['id', 'order_id', 'warehouse_id']),
);
const itemInsert = preparedForMerchant((scope, rows: Owned<OrderItemsTable>[]) => scope.insertInto('order_items', rows));

export async function insertOrder(scope: MerchantScope<Trx>, row: Owned<OrdersTable>): Promise<number> {
  const inserted = await orderInsert.first(scope, row);
  if (!inserted) throw new Error('insertOrder: no id returned');
  return inserted.id;
}

/**
 * Inserts an order's split orders in one statement; returns their ids in the order of `rows`.
 * A split order is one warehouse's share, so (order, warehouse) tells the returned rows apart
 * (RETURNING promises no order on either database).
 */
export async function insertSplitOrders(scope: MerchantScope<Trx>, rows: Owned<SplitOrdersTable>[]): Promise<number[]> {
  if (rows.length === 0) return [];
  const keyOf = (r: { order_id: number; warehouse_id: number }) => `${r.order_id}:${r.warehouse_id}`;
  const inserted = await splitOrderInsert.all(scope, rows);
  const idOf = new Map(inserted.map((r) => [keyOf(r), r.id]));
  if (idOf.size !== rows.length) throw new Error('insertSplitOrders: two split orders of one order share a warehouse');
  return rows.map((r) => idOf.get(keyOf(r))!);
}

export async function insertItems(scope: MerchantScope<Trx>, rows: Owned<OrderItemsTable>[]): Promise<void> {
  if (rows.length) await itemInsert.run(scope, rows);
}

export const findOrderByCustomId = (scope: MerchantScope, customOrderId: string) =>
  scope.selectFrom('orders').select(['id', 'request_hash']).where('custom_order_id', '=', customOrderId).executeTakeFirst();

/** The parent order id for a parent or split-order id the reader may see; null when not theirs or absent. */
export async function resolveOrderId(reader: OrderReader, id: number): Promise<ScopedOrderId | null> {
  const row =
    (await ordersOf(reader).select('orders.id as id').where('orders.id', '=', id).executeTakeFirst()) ??
    (await splitsOf(reader).select('split_orders.order_id as id').where('split_orders.id', '=', id).executeTakeFirst());
  return row ? resolvedOrderId(row.id) : null;
}

/** An order row read through a scope: its id is resolved. */
export type ScopedOrderRow = OrderRow & { id: ScopedOrderId };

export interface OrderAggregate {
  order: OrderRow;
  splits: SplitOrderRow[];
  items: OrderItemRow[];
}

/** Orders with their split orders and items, in the order of `ids` (three queries at once on SQLite, two on PostgreSQL; any page size). */
export async function loadOrders(reader: OrderReader, ids: ScopedOrderId[]): Promise<OrderAggregate[]> {
  if (ids.length === 0) return [];
  const db = handleOf(reader);
  const [rows, children] = await Promise.all([orderRows.all(db, ids), childrenOf(db, ids)]);
  const byId = new Map(rows.map((o) => [o.id, o]));
  return assemble(
    ids.flatMap((id) => byId.get(id) ?? []),
    children,
  );
}

/** Order rows already read, with their split orders and items (two queries on SQLite, one on PostgreSQL), in the order given. */
export async function withChildren(reader: OrderReader, orders: ScopedOrderRow[]): Promise<OrderAggregate[]> {
  if (orders.length === 0) return [];
  return assemble(
    orders,
    await childrenOf(
      handleOf(reader),
      orders.map((o) => o.id),
    ),
  );
}

/**
 * The orders' split orders and items, each list by id. PostgreSQL: one statement, each list as one
 * JSON array (a round trip is most of what a read costs the API process there: docs/performance.md,
 * "Where the time goes"); SQLite: two statements, which cost no round trip.
 */
async function childrenOf(db: Handle, ids: number[]): Promise<[SplitOrderRow[], OrderItemRow[]]> {
  if (isPostgres(db)) {
    const row = await childrenAsJson.first(db, ids);
    return [row?.splits ?? [], row?.items ?? []];
  }
  return Promise.all([splitOrderRows.all(db, ids), itemRows.all(db, ids)]);
}

// Prepared (src/store/prepared.ts): one compiled statement per count of ids.
const orderRows = prepared((db, ids: number[]) => db.selectFrom('orders').selectAll().where('id', 'in', ids));
const splitOrderRows = prepared((db, ids: number[]) => db.selectFrom('split_orders').selectAll().where('order_id', 'in', ids).orderBy('id'));
const itemRows = prepared((db, ids: number[]) => db.selectFrom('order_items').selectAll().where('order_id', 'in', ids).orderBy('id'));
// PostgreSQL only: `json_agg` of a table's rows writes every column under its own name, as the
// rows above have them (all integers and text, read back as numbers and strings).
const childrenAsJson = prepared((db, ids: number[]) =>
  db.selectNoFrom((eb) => [
    eb
      .selectFrom('split_orders as s')
      .select(sql<SplitOrderRow[]>`coalesce(json_agg(s order by s.id), '[]'::json)`.as('rows'))
      .where('s.order_id', 'in', ids)
      .as('splits'),
    eb
      .selectFrom('order_items as i')
      .select(sql<OrderItemRow[]>`coalesce(json_agg(i order by i.id), '[]'::json)`.as('rows'))
      .where('i.order_id', 'in', ids)
      .as('items'),
  ]),
);

function assemble(orders: OrderRow[], [splits, items]: [SplitOrderRow[], OrderItemRow[]]): OrderAggregate[] {
  return orders.map((order) => ({ order, splits: splits.filter((s) => s.order_id === order.id), items: items.filter((i) => i.order_id === order.id) }));
}

export interface OrderFilter {
  /** Parent or split ids. */
  ids: number[] | null;
  createStart: number | null;
  createEnd: number | null;
  updateStart: number | null;
  updateEnd: number | null;
  /** Keyset mode: continue after this sort key ([time, id]); offset is then 0. */
  after: [number, number] | null;
  offset: number;
  limit: number;
  /** `total` counts at most this many rows, so its cost does not grow with the window. */
  totalCap: number;
}

export interface OrderPage {
  /** Rows in the window, counted up to `totalCap`. */
  total: number;
  /** The page's order rows, in the page's order. */
  orders: ScopedOrderRow[];
  /** The sort key of the page's last row when more rows follow it, else null. */
  next: [number, number] | null;
}

/**
 * One page of orders: newest first by (created_at, id), or by (updated_at, id) ascending when
 * an update window is given (incremental sync). Keyset pages continue strictly after `after` in
 * that order, so rows inserted or moved elsewhere never shift the walk (SPEC §4.6).
 *
 * The page query reads the order rows themselves (the caller adds their children), and an `ids`
 * query — at most a few hundred rows with the split ids' parents — is read whole in one statement
 * and counted and paged here: a separate count and page query would read the same rows again.
 */
export async function pageOrders(reader: OrderReader, f: OrderFilter): Promise<OrderPage> {
  let ids = f.ids;
  // PostgreSQL resolves split ids inside the order lookup (a round trip less); on SQLite, where a
  // statement costs no round trip, the union costs more than a second statement, so they are
  // resolved first (docs/performance.md, "Performance III, third round", item 3).
  const splitIdsInside = ids !== null && isPostgres(handleOf(reader));
  if (ids !== null && !splitIdsInside) {
    const viaSplits = ids.length ? await splitParents.all(reader, ids) : [];
    ids = [...new Set([...ids, ...viaSplits.map((r) => r.id)])];
  }
  if (ids !== null && ids.length === 0) return { total: 0, orders: [], next: null };
  const window: OrderWindow = { ids, splitIdsInside, createStart: f.createStart, createEnd: f.createEnd, updateStart: f.updateStart, updateEnd: f.updateEnd };
  const byUpdate = sortsByUpdate(window);
  const keyOf = (o: OrderRow): [number, number] => [Number(byUpdate ? o.updated_at : o.created_at), o.id];
  const pageOf = (total: number, rows: OrderRow[]): OrderPage => {
    const more = rows.length > f.limit;
    const shown = more ? rows.slice(0, f.limit) : rows;
    const last = shown.at(-1);
    return { total, orders: shown as ScopedOrderRow[], next: more && last ? keyOf(last) : null };
  };
  if (ids !== null) {
    const rows = await windowRows.all(reader, window);
    const after = f.after === null ? rows : rows.filter((o) => comesAfter(keyOf(o), f.after!, byUpdate));
    return pageOf(Math.min(rows.length, f.totalCap), after.slice(f.offset, f.offset + f.limit + 1));
  }
  const [count, rows] = await Promise.all([windowCount.first(reader, window, f.totalCap), windowPage.all(reader, window, f.after, f.offset, f.limit + 1)]);
  return pageOf(Number(count?.n ?? 0), rows);
}

/** An order query's filters: what decides which orders are in it. */
type OrderWindow = Pick<OrderFilter, 'ids' | 'createStart' | 'createEnd' | 'updateStart' | 'updateEnd'> & {
  /** `ids` may be split-order ids still, resolved in the statement (PostgreSQL). */
  splitIdsInside: boolean;
};

const sortsByUpdate = (w: OrderWindow) => w.updateStart !== null || w.updateEnd !== null;

// Prepared (src/store/prepared.ts): which filters are present is shape (null or not), their
// bounds are values, so each combination compiles once.
function ordersInWindow(reader: OrderReader, w: OrderWindow) {
  let q = ordersOf(reader);
  if (w.ids !== null) q = q.where('orders.id', 'in', w.splitIdsInside ? orderIdsNamedBy(reader, w.ids) : w.ids);
  if (w.createStart !== null) q = q.where('orders.created_at', '>=', w.createStart);
  if (w.createEnd !== null) q = q.where('orders.created_at', '<=', w.createEnd);
  if (w.updateStart !== null) q = q.where('orders.updated_at', '>=', w.updateStart);
  if (w.updateEnd !== null) q = q.where('orders.updated_at', '<=', w.updateEnd);
  return q;
}

/** The window's rows in its order: by (updated_at, id) ascending for an update window, else by (created_at, id) descending. */
function orderedWindow(reader: OrderReader, w: OrderWindow, after: [number, number] | null) {
  const byUpdate = sortsByUpdate(w);
  const key = byUpdate ? 'orders.updated_at' : 'orders.created_at';
  let q = ordersInWindow(reader, w);
  if (after !== null) q = q.where((eb) => eb(eb.refTuple(key, 'orders.id'), byUpdate ? '>' : '<', eb.tuple(after[0], after[1])));
  q = byUpdate ? q.orderBy(key, 'asc').orderBy('orders.id', 'asc') : q.orderBy(key, 'desc').orderBy('orders.id', 'desc');
  return q.selectAll('orders');
}

/**
 * The orders that ids name, as parent or split-order ids: a union the order lookup reads by
 * primary key (an `OR` of the two made both databases scan every order of the merchant), in the
 * same statement as the lookup.
 */
const splitParents = preparedForTenant((reader, splitIds: number[]) =>
  splitsOf(reader).select('split_orders.order_id as id').where('split_orders.id', 'in', splitIds),
);
const orderIdsNamedBy = (reader: OrderReader, ids: number[]) =>
  splitsOf(reader)
    .select('split_orders.order_id as id')
    .where('split_orders.id', 'in', ids)
    .union(ordersOf(reader).select('orders.id as id').where('orders.id', 'in', ids));
const windowRows = preparedForTenant((reader, w: OrderWindow) => orderedWindow(reader, w, null));
// A bounded count: it reads at most `cap` + 1 index entries, however large the window.
const windowCount = preparedForTenant((reader, w: OrderWindow, cap: number) =>
  handleOf(reader)
    .selectFrom(ordersInWindow(reader, w).select('orders.id').limit(cap).as('w'))
    .select((eb) => eb.fn.countAll<number>().as('n')),
);
const windowPage = preparedForTenant((reader, w: OrderWindow, after: [number, number] | null, offset: number, limit: number) =>
  orderedWindow(reader, w, after).offset(offset).limit(limit),
);

/** Whether sort key `k` lies strictly past `after` in the walk's order (ascending by update, else descending). */
function comesAfter(k: [number, number], after: [number, number], ascending: boolean): boolean {
  const cmp = k[0] !== after[0] ? k[0] - after[0] : k[1] - after[1];
  return ascending ? cmp > 0 : cmp < 0;
}

/**
 * What a search term matches (any of these): orders it names exactly, orders of merchants whose
 * name contains it, and orders whose id, custom order id or recipient contains it.
 */
export interface OrderTerm {
  /** Parent order ids the term names exactly (an order, split-order or custom order id). */
  ids: number[];
  /** Merchants whose name contains the term (the operator's search only). */
  merchantIds: number[];
  /** Matched as a part of the order's id, custom order id or recipient, case-insensitively; null: no such match (a term too short for the trigram index). */
  text: string | null;
  /**
   * The orders `text` matches, when `ordersWithText` found at most TEXT_MATCH_LIST of them (the
   * search's statements then read these ids, not the index); null: more, or not looked up.
   */
  textIds: number[] | null;
}

export interface OrderSearch {
  /** Null: any order. */
  term: OrderTerm | null;
  merchantId: number | null;
  status: OrderRow['status'] | null;
  createStart: number | null;
  createEnd: number | null;
  /** Continue after this (created_at, id), newest first. */
  before: [number, number] | null;
  limit: number;
}

/**
 * The text of an order that a search term is matched in, besides its id (a part of which is
 * matched as id ranges, `idsContaining`): custom order id and recipient, lower-cased, as
 * PostgreSQL's trigram index (orders_search_trgm_idx, migration 0049) holds it — the same
 * expression, or the index is not used. SQLite keeps the same text in the FTS5 table `orders_search`.
 */
const ORDER_TEXT_PG = `lower(coalesce(custom_order_id, '') || ' ' || coalesce(address::json ->> 'recipient', ''))`;
/** The same text as an expression the index does not serve: the whole term rechecked after the index found the rows. */
const ORDER_TEXT_PG_UNINDEXED = `(${ORDER_TEXT_PG} || '')`;

/** An FTS5 query for `text` as one phrase: with the trigram tokenizer, "contains `text`", every character literal. */
const ftsPhrase = (text: string) => `"${text.replaceAll('"', '""')}"`;

/**
 * On SQLite, a term matching more than TEXT_MATCH_LIST orders matches the newest this many by id:
 * FTS5 reads a term's matches in rowid order, so the newest 10,000 cost about 20 ms at 1M orders
 * where all of a term that is in every order cost 2.5 s (docs/decisions.md). The list's count stops
 * at the same number, so such a term is shown as "10,000 or more" either way; only a walk past the
 * 10,000th match ends there (PostgreSQL's plan needs no such bound).
 */
const SQLITE_TEXT_MATCH_CAP = 10_000;

/**
 * A term that matches at most this many orders is looked up once per search (`ordersWithText`)
 * and the search's statements read those ids; one matching more is matched inside each statement
 * (then it is common, and the newest-first walk meets its matches soon).
 */
const TEXT_MATCH_LIST = 10_000;
/** A part of an order id spread over more key ranges than this is matched inside the statements instead (a short part: common). */
const ID_RANGES_MAX = 2_000;
/** PostgreSQL: how many of the newest orders tell which of a term's trigrams are rare. */
const TRIGRAM_SAMPLE = 1_000;
/** PostgreSQL: a term in at least this share of the sample is common: its matches are not listed (the walk meets them soon). */
const DENSE_SHARE = 0.1;
/** PostgreSQL: at most this many of a term's rarest trigrams are read from the index; the whole term is rechecked on the rows found. */
const TRIGRAMS_READ = 3;

/**
 * The orders a text term matches — a part of the id (digits), of the custom order id or of the
 * recipient — when there are at most TEXT_MATCH_LIST of them, else null. Each part is read once in
 * the way that stops early (docs/decisions.md "Order search by text at 1M orders"): the id as key
 * ranges; on SQLite the newest SQLITE_TEXT_MATCH_CAP of FTS5's matches (the same bound as before);
 * on PostgreSQL the index for the term's rarest trigrams only. A merchant's scope reads its own
 * orders where the table has the merchant (PostgreSQL's text); elsewhere the ids may name other
 * merchants' orders, which the search's statements never show (they keep the scope's condition).
 */
export async function ordersWithText(reader: OrderReader, dialect: Dialect, text: string): Promise<number[] | null> {
  const [byId, byText] = await Promise.all([
    /^[0-9]+$/.test(text) ? idsContaining(reader, dialect, text) : [],
    dialect === 'sqlite' ? sqliteTextMatches(reader, text) : pgTextMatches(reader, text),
  ]);
  if (byId === null || byText === null) return null;
  const ids = [...new Set([...byId, ...byText])];
  return ids.length > TEXT_MATCH_LIST ? null : ids;
}

/** Orders whose id contains `digits`, read as key ranges of the primary key; null: more than TEXT_MATCH_LIST, or too many ranges. */
async function idsContaining(reader: OrderReader, dialect: Dialect, digits: string): Promise<number[] | null> {
  const db = handleOf(reader);
  // Two subqueries: SQLite reads min() and max() from the key only when each is a query of its own (together: a scan).
  const { rows: spans } = await sql<{
    lo: number | string | null;
    hi: number | string | null;
  }>`select (select min(id) from orders) as lo, (select max(id) from orders) as hi`.execute(db);
  const span = spans[0];
  if (!span || span.lo === null || span.hi === null) return [];
  const ranges = idRangesContaining(digits, Number(span.lo), Number(span.hi), ID_RANGES_MAX);
  if (ranges === null) return null;
  if (ranges.length === 0) return [];
  const limit = sql.lit(TEXT_MATCH_LIST + 1);
  const { rows } =
    dialect === 'sqlite'
      ? await sql<{
          id: number;
        }>`select o.id from json_each(${JSON.stringify(ranges)}) r join orders o on o.id between r.value ->> 0 and r.value ->> 1 limit ${limit}`.execute(db)
      : await sql<{ id: string }>`select o.id from unnest(${ranges.map((r) => r[0])}::bigint[], ${ranges.map((r) => r[1])}::bigint[]) as r(lo, hi)
          join orders o on o.id between r.lo and r.hi limit ${limit}`.execute(db);
  return rows.length > TEXT_MATCH_LIST ? null : rows.map((r) => Number(r.id));
}

/**
 * SQLite: the newest SQLITE_TEXT_MATCH_CAP matches by id (all of them for a rarer term), read once
 * per search; the search's statements each re-read them before (a page, its count, the count before it).
 */
async function sqliteTextMatches(reader: OrderReader, text: string): Promise<number[]> {
  const { rows } = await sql<{
    id: number;
  }>`select rowid as id from orders_search where orders_search match ${ftsPhrase(text)} order by rowid desc limit ${sql.lit(SQLITE_TEXT_MATCH_CAP)}`.execute(
    handleOf(reader),
  );
  return rows.map((r) => r.id);
}

/** The term's three-character parts that pg_trgm indexes as they are (lower-case letters and digits: `%abc%` is the trigram `abc`). */
function plainTrigrams(text: string): string[] {
  const chars = [...text.toLowerCase()];
  const found = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) {
    const t = chars.slice(i, i + 3).join('');
    if (/^[a-z0-9]{3}$/.test(t)) found.add(t);
  }
  return [...found];
}

/**
 * PostgreSQL: a GIN scan reads every posting list of the term's trigrams in full, so `recipient
 * 147609` read a million entries for each of `rec`, `eci`, `cip`… to find five orders. The newest
 * TRIGRAM_SAMPLE orders tell which trigrams are rare: when the whole term is in many of them it is
 * common (null: the statements walk the newest orders and meet its matches soon); otherwise the
 * index is read for the TRIGRAMS_READ rarest trigrams only (each a part of the term, so every match
 * has them) and the whole term is rechecked on those rows through an expression the index does not
 * serve.
 */
async function pgTextMatches(reader: OrderReader, text: string): Promise<number[] | null> {
  const pattern = likeContaining(text);
  const trigrams = plainTrigrams(text);
  let rare: string[] = [];
  if (trigrams.length > 0) {
    const sample = await ordersOf(reader)
      .select(sql<string>`${sql.raw(ORDER_TEXT_PG)}`.as('text'))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(TRIGRAM_SAMPLE)
      .execute();
    const lowered = text.toLowerCase();
    if (sample.filter((r) => r.text.includes(lowered)).length >= sample.length * DENSE_SHARE && sample.length === TRIGRAM_SAMPLE) return null;
    const seen = (t: string) => sample.filter((r) => r.text.includes(t)).length;
    rare = trigrams
      .map((t) => ({ t, n: seen(t) }))
      .sort((a, b) => a.n - b.n)
      .slice(0, TRIGRAMS_READ)
      .map((x) => x.t);
  }
  let q = ordersOf(reader).select('id');
  if (rare.length === 0) q = q.where(sql<SqlBool>`${sql.raw(ORDER_TEXT_PG)} like ${pattern} escape '\\'`);
  else {
    for (const t of rare) q = q.where(sql<SqlBool>`${sql.raw(ORDER_TEXT_PG)} like ${`%${t}%`}`);
    q = q.where(sql<SqlBool>`${sql.raw(ORDER_TEXT_PG_UNINDEXED)} like ${pattern} escape '\\'`);
  }
  const rows = await q.limit(TEXT_MATCH_LIST + 1).execute();
  return rows.length > TEXT_MATCH_LIST ? null : rows.map((r) => Number(r.id));
}

/** Whether a term can match nothing at all (no exact id, no merchant, no text). */
const matchesNothing = (t: OrderTerm | null) => t !== null && t.ids.length === 0 && t.merchantIds.length === 0 && (t.text === null || t.textIds?.length === 0);

/**
 * The order search of both front ends (the operator's across merchants, a merchant's within its
 * scope): newest first by (created_at, id), one keyset page at a time (no OFFSET, no count), so a
 * page costs the same however deep the walk is.
 */
export async function searchOrderIds(reader: OrderReader, dialect: Dialect, s: OrderSearch): Promise<{ ids: ScopedOrderId[]; next: [number, number] | null }> {
  if (matchesNothing(s.term)) return { ids: [], next: null };
  let q = searchedOrders(reader, dialect, s).select(['id', 'created_at']);
  if (s.before !== null) {
    const [time, id] = s.before;
    q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(time, id)));
  }
  const rows = await q
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(s.limit + 1)
    .execute();
  const shown = rows.slice(0, s.limit);
  const last = shown.at(-1);
  return { ids: shown.map((r) => resolvedOrderId(r.id)), next: rows.length > s.limit && last ? [Number(last.created_at), last.id] : null };
}

/** The orders a search's filters match (no order, no page). */
function searchedOrders(reader: OrderReader, dialect: Dialect, s: Omit<OrderSearch, 'before' | 'limit'>) {
  // A merchant's scope searches its own orders whatever the search names; the operator's, the merchant it names (or all).
  const merchantId = isMerchantScope(reader) ? merchantIdOf(reader) : s.merchantId;
  let q = handleOf(reader).selectFrom('orders');
  const term = s.term;
  if (term !== null) {
    q = q.where((eb) => {
      const any: Expression<SqlBool>[] = [];
      if (term.ids.length) any.push(eb('id', 'in', term.ids));
      if (term.merchantIds.length) any.push(eb('merchant_id', 'in', term.merchantIds));
      if (term.textIds !== null) {
        if (term.textIds.length)
          any.push(
            dialect === 'sqlite'
              ? sql<SqlBool>`id in (select value from json_each(${JSON.stringify(term.textIds)}))`
              : sql<SqlBool>`id = any(${term.textIds}::bigint[])`,
          );
      } else if (term.text !== null) {
        any.push(
          dialect === 'sqlite'
            ? sql<SqlBool>`id in (select rowid from orders_search where orders_search match ${ftsPhrase(term.text)} order by rowid desc limit ${sql.lit(SQLITE_TEXT_MATCH_CAP)})`
            : sql<SqlBool>`${sql.raw(ORDER_TEXT_PG)} like ${likeContaining(term.text)} escape '\\'`,
        );
        if (/^[0-9]+$/.test(term.text))
          any.push(dialect === 'sqlite' ? sql<SqlBool>`instr(id, ${term.text}) > 0` : sql<SqlBool>`strpos(id::text, ${term.text}) > 0`);
      }
      return eb.or(any);
    });
  }
  if (merchantId !== null) q = q.where('merchant_id', '=', merchantId);
  if (s.status !== null) q = q.where('status', '=', s.status);
  if (s.createStart !== null) q = q.where('created_at', '>=', s.createStart);
  if (s.createEnd !== null) q = q.where('created_at', '<', s.createEnd);
  return q;
}

/**
 * How many orders a search matches, counting at most `cap` (a bounded read, so the list says
 * "about"); with `upTo`, only those at or before that (created_at, id) in the walk, newest first —
 * the rows the pages before this one showed.
 */
export async function countSearchedOrders(
  reader: OrderReader,
  dialect: Dialect,
  s: Omit<OrderSearch, 'before' | 'limit'>,
  cap: number,
  upTo: [number, number] | null,
): Promise<number> {
  if (matchesNothing(s.term)) return 0;
  let inner = searchedOrders(reader, dialect, s).select('id');
  if (upTo !== null) inner = inner.where((eb) => eb(eb.refTuple('created_at', 'id'), '>=', eb.tuple(upTo[0], upTo[1])));
  return countUpTo(handleOf(reader), inner, cap);
}

/** Parent ids a search term names: an order id, a split-order id, or a custom order id (within a merchant's scope, its own only). */
export async function ordersNamedBy(reader: OrderReader, term: string, numericId: number | null): Promise<number[]> {
  const [byCustom, byId, bySplit] = await Promise.all([
    ordersOf(reader).select('id').where('custom_order_id', '=', term).execute(),
    numericId === null ? [] : ordersOf(reader).select('id').where('id', '=', numericId).execute(),
    numericId === null ? [] : splitsOf(reader).select('order_id as id').where('id', '=', numericId).execute(),
  ]);
  return [...new Set([...byCustom, ...byId, ...bySplit].map((r) => r.id))];
}

/** An order's derived statuses after a change (services/order-state.service.ts decides them). */
export interface OrderStatusChange {
  status: OrderStatus;
  refundStatus: RefundStatus | null;
  /** Null keeps the current value (no split order is active). */
  fulfillment: FulfillmentStatus | null;
  /** Added to `refunded_cents` (a successful refund). */
  refundedCents?: number;
  /** A refund succeeded: `refund_date` is now. */
  refunded?: boolean;
}

/**
 * The UPDATE that writes an order's statuses, not executed (PostgreSQL runs it inside a larger
 * statement). It needs nothing read from the order: a date is kept from the first time its
 * status was reached, and `updated_at` never goes backwards — a transaction that took `now` before
 * waiting for a lock must not move the order behind a later change, or a keyset walk by
 * updateDate could pass it unseen (SPEC §4.6). Every value is a parameter, never a literal: a
 * statement whose text changed with `now` would be prepared anew on SQLite every time and push the
 * hot statements out of the statement cache.
 */
/** What an order's derived statuses are computed from: its status now, its items' counts, its split orders' statuses. */
export async function statusFacts(db: Handle, orderId: number) {
  const [order, items, splits] = await Promise.all([
    db.selectFrom('orders').select('status').where('id', '=', orderId).executeTakeFirstOrThrow(),
    db
      .selectFrom('order_items')
      .select(['quantity', 'refunded_quantity as refunded', 'pending_refund_quantity as pending'])
      .where('order_id', '=', orderId)
      .execute(),
    db.selectFrom('split_orders').select('status').where('order_id', '=', orderId).execute(),
  ]);
  return { status: order.status, items, splits: splits.map((s) => s.status) };
}

export function updateOrderStatus(db: Trx, orderId: number, change: OrderStatusChange, now: number) {
  return orderStatusUpdate(db, orderId, statusUpdateOf(change), now);
}

/**
 * A status change as the UPDATE takes it, preparable (src/store/prepared.ts): the builder may not
 * branch on a value, so what decides the columns is shape — `fulfillment` null or not,
 * `refundedCents` present or not, and booleans for what follows from the status.
 */
export interface StatusUpdate {
  status: OrderStatus;
  refundStatus: RefundStatus | null;
  fulfillment: FulfillmentStatus | null;
  refundedCents?: number;
  refunded: boolean;
  completed: boolean;
  cancel: boolean;
}

export const statusUpdateOf = (change: OrderStatusChange): StatusUpdate => ({
  status: change.status,
  refundStatus: change.refundStatus,
  fulfillment: change.fulfillment,
  ...(change.refundedCents ? { refundedCents: change.refundedCents } : {}),
  refunded: Boolean(change.refunded),
  completed: change.status === 'completed',
  cancel: change.status === 'cancel',
});

export function orderStatusUpdate(db: Handle, orderId: number, u: StatusUpdate, now: number) {
  return db
    .updateTable('orders')
    .set((eb) => ({
      status: u.status,
      refund_status: u.refundStatus,
      ...(u.fulfillment === null ? {} : { fulfillment_status: u.fulfillment }),
      ...(u.refundedCents === undefined ? {} : { refunded_cents: eb('refunded_cents', '+', u.refundedCents) }),
      ...(u.refunded ? { refund_date: now } : {}),
      ...(u.completed ? { completed_date: eb.fn.coalesce('completed_date', eb.val(now)) } : {}),
      ...(u.cancel ? { cancel_date: eb.fn.coalesce('cancel_date', eb.val(now)) } : {}),
      updated_at: eb.case().when('updated_at', '>', now).then(eb.ref('updated_at')).else(eb.val(now)).end(),
    }))
    .where('id', '=', orderId);
}
