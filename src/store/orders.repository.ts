import type { Insertable, Selectable } from 'kysely';
import type { Handle } from './db.ts';
import type { OrderItemsTable, OrdersTable, SplitOrdersTable } from './schema.ts';
import { handleOf, isMerchantScope, type MerchantScope, type TenantScope } from './tenancy.ts';

export type OrderRow = Selectable<OrdersTable>;
export type SplitOrderRow = Selectable<SplitOrdersTable>;
export type OrderItemRow = Selectable<OrderItemsTable>;

/**
 * Who is reading (SPEC §2.3): a merchant, through a `MerchantScope` whose queries are already
 * restricted to its rows, or the operator, through the bare handle, seeing every merchant.
 */
export type OrderReader = TenantScope;
const ordersOf = (r: OrderReader) => (isMerchantScope(r) ? r.selectFrom('orders') : r.handle.selectFrom('orders'));
const splitsOf = (r: OrderReader) => (isMerchantScope(r) ? r.selectFrom('split_orders') : r.handle.selectFrom('split_orders'));

type Owned<T> = Omit<Insertable<T>, 'merchant_id'>;

export async function insertOrder(scope: MerchantScope, row: Owned<OrdersTable>): Promise<number> {
  return (await scope.insertInto('orders', row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertSplitOrder(scope: MerchantScope, row: Owned<SplitOrdersTable>): Promise<number> {
  return (await scope.insertInto('split_orders', row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertItems(scope: MerchantScope, rows: Owned<OrderItemsTable>[]): Promise<void> {
  if (rows.length) await scope.insertInto('order_items', rows).execute();
}

export const findOrderByCustomId = (scope: MerchantScope, customOrderId: string) =>
  scope.selectFrom('orders').select(['id', 'request_hash']).where('custom_order_id', '=', customOrderId).executeTakeFirst();

/** The parent order id for a parent or split-order id the reader may see; null when not theirs or absent. */
export async function resolveOrderId(reader: OrderReader, id: number): Promise<number | null> {
  const row =
    (await ordersOf(reader).select('orders.id as id').where('orders.id', '=', id).executeTakeFirst()) ??
    (await splitsOf(reader).select('split_orders.order_id as id').where('split_orders.id', '=', id).executeTakeFirst());
  return row?.id ?? null;
}

export interface OrderAggregate {
  order: OrderRow;
  splits: SplitOrderRow[];
  items: OrderItemRow[];
}

/** Orders with their split orders and items, in the order of `ids` (three queries, any page size). */
export async function loadOrders(db: Handle, ids: number[]): Promise<OrderAggregate[]> {
  if (ids.length === 0) return [];
  const [orders, splits, items] = await Promise.all([
    db.selectFrom('orders').selectAll().where('id', 'in', ids).execute(),
    db.selectFrom('split_orders').selectAll().where('order_id', 'in', ids).orderBy('id').execute(),
    db.selectFrom('order_items').selectAll().where('order_id', 'in', ids).orderBy('id').execute(),
  ]);
  const byId = new Map(orders.map((o) => [o.id, o]));
  return ids
    .filter((id) => byId.has(id))
    .map((id) => ({ order: byId.get(id)!, splits: splits.filter((s) => s.order_id === id), items: items.filter((i) => i.order_id === id) }));
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

export interface OrderIdPage {
  /** Rows in the window, counted up to `totalCap`. */
  total: number;
  ids: number[];
  /** The sort key of the page's last row when more rows follow it, else null. */
  next: [number, number] | null;
}

/**
 * One page of order ids: newest first by (created_at, id), or by (updated_at, id) ascending when
 * an update window is given (incremental sync). Keyset pages continue strictly after `after` in
 * that order, so rows inserted or moved elsewhere never shift the walk (SPEC §4.6).
 */
export async function pageOrderIds(reader: OrderReader, f: OrderFilter): Promise<OrderIdPage> {
  let q = ordersOf(reader);
  if (f.ids !== null) {
    // Split ids are resolved to their parents first, so the order lookup is by primary key
    // (an OR with a subquery made both databases scan every order of the merchant).
    const viaSplits = f.ids.length ? await splitsOf(reader).select('split_orders.order_id as id').where('split_orders.id', 'in', f.ids).execute() : [];
    const ids = [...new Set([...f.ids, ...viaSplits.map((r) => r.id)])];
    if (ids.length === 0) return { total: 0, ids: [], next: null };
    q = q.where('orders.id', 'in', ids);
  }
  if (f.createStart !== null) q = q.where('orders.created_at', '>=', f.createStart);
  if (f.createEnd !== null) q = q.where('orders.created_at', '<=', f.createEnd);
  if (f.updateStart !== null) q = q.where('orders.updated_at', '>=', f.updateStart);
  if (f.updateEnd !== null) q = q.where('orders.updated_at', '<=', f.updateEnd);
  const byUpdate = f.updateStart !== null || f.updateEnd !== null;
  const key = byUpdate ? 'orders.updated_at' : 'orders.created_at';
  let page = q;
  if (f.after !== null) {
    const [time, id] = f.after;
    page = page.where((eb) => eb(eb.refTuple(key, 'orders.id'), byUpdate ? '>' : '<', eb.tuple(time, id)));
  }
  page = byUpdate ? page.orderBy(key, 'asc').orderBy('orders.id', 'asc') : page.orderBy(key, 'desc').orderBy('orders.id', 'desc');
  const [count, rows] = await Promise.all([
    // A bounded count: it reads at most totalCap + 1 index entries, however large the window.
    handleOf(reader)
      .selectFrom(q.select('orders.id').limit(f.totalCap).as('w'))
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
    page
      .select(['orders.id as id', `${key} as key`])
      .offset(f.offset)
      .limit(f.limit + 1)
      .execute(),
  ]);
  const more = rows.length > f.limit;
  const shown = more ? rows.slice(0, f.limit) : rows;
  const last = shown.at(-1);
  return { total: Number(count.n), ids: shown.map((r) => r.id), next: more && last ? [Number(last.key), last.id] : null };
}

export interface OrderSearch {
  /** An order id (parent or split) or a custom order id. */
  text: string | null;
  status: OrdersTable['status'] | null;
  /** created_at within [from, to). */
  from: number | null;
  to: number | null;
}

/** The business manager's order search (one merchant), newest first; `limit + 1` rows tell whether more follow. */
export async function searchOrders(scope: MerchantScope, s: OrderSearch, offset: number, limit: number) {
  let q = scope.selectFrom('orders').select(['id', 'custom_order_id', 'status', 'fulfillment_status', 'refund_status', 'subtotal_cents', 'freight_cents', 'coupon_cents', 'created_at']);
  if (s.text !== null) {
    const text = s.text;
    const id = /^[0-9]{1,16}$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : null;
    const splitParent = id === null ? null : ((await scope.selectFrom('split_orders').select('order_id').where('id', '=', id).executeTakeFirst())?.order_id ?? null);
    q = q.where((eb) =>
      eb.or([eb('custom_order_id', '=', text), ...(id === null ? [] : [eb('id', '=', id)]), ...(splitParent === null ? [] : [eb('id', '=', splitParent)])]),
    );
  }
  if (s.status !== null) q = q.where('status', '=', s.status);
  if (s.from !== null) q = q.where('created_at', '>=', s.from);
  if (s.to !== null) q = q.where('created_at', '<', s.to);
  return q.orderBy('id', 'desc').offset(offset).limit(limit + 1).execute();
}
