import type { Insertable, Selectable } from 'kysely';
import type { Dialect, Handle } from './db.ts';
import type { OrderItemsTable, OrdersTable, SplitOrdersTable } from './schema.ts';
import { isMerchantScope, type MerchantScope } from './tenancy.ts';

export type OrderRow = Selectable<OrdersTable>;
export type SplitOrderRow = Selectable<SplitOrdersTable>;
export type OrderItemRow = Selectable<OrderItemsTable>;

/**
 * Who is reading (SPEC §2.3): a merchant, through a `MerchantScope` whose queries are already
 * restricted to its rows, or the operator, through the bare handle, seeing every merchant.
 */
export type OrderReader = MerchantScope | Handle;
const ordersOf = (r: OrderReader) => (isMerchantScope(r) ? r.selectFrom('orders') : r.selectFrom('orders'));
const splitsOf = (r: OrderReader) => (isMerchantScope(r) ? r.selectFrom('split_orders') : r.selectFrom('split_orders'));

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
  offset: number;
  limit: number;
}

/** One page of order ids: newest first, or by update time ascending when an update window is given (incremental sync). */
export async function pageOrderIds(reader: OrderReader, f: OrderFilter): Promise<{ total: number; ids: number[] }> {
  let q = ordersOf(reader);
  if (f.ids !== null) {
    // Split ids are resolved to their parents first, so the order lookup is by primary key
    // (an OR with a subquery made both databases scan every order of the merchant).
    const viaSplits = f.ids.length ? await splitsOf(reader).select('split_orders.order_id as id').where('split_orders.id', 'in', f.ids).execute() : [];
    const ids = [...new Set([...f.ids, ...viaSplits.map((r) => r.id)])];
    if (ids.length === 0) return { total: 0, ids: [] };
    q = q.where('orders.id', 'in', ids);
  }
  if (f.createStart !== null) q = q.where('orders.created_at', '>=', f.createStart);
  if (f.createEnd !== null) q = q.where('orders.created_at', '<=', f.createEnd);
  if (f.updateStart !== null) q = q.where('orders.updated_at', '>=', f.updateStart);
  if (f.updateEnd !== null) q = q.where('orders.updated_at', '<=', f.updateEnd);
  const byUpdate = f.updateStart !== null || f.updateEnd !== null;
  const [count, rows] = await Promise.all([
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    (byUpdate ? q.orderBy('orders.updated_at', 'asc').orderBy('orders.id', 'asc') : q.orderBy('orders.created_at', 'desc').orderBy('orders.id', 'desc'))
      .select('orders.id')
      .offset(f.offset)
      .limit(f.limit)
      .execute(),
  ]);
  return { total: Number(count.n), ids: rows.map((r) => r.id) };
}

export interface LockedStock {
  productId: number;
  warehouseId: number;
  warehouseCode: string;
  countryCode: string;
  enabled: boolean;
  qty: number;
}

/**
 * Reads the stock rows an order may draw from and, on PostgreSQL, locks them in a fixed order
 * (product, warehouse) so concurrent orders for the same SKUs queue instead of deadlocking or
 * reading stale quantities. SQLite runs one write transaction at a time, so its read is already
 * current.
 */
export async function lockStockRows(db: Handle, dialect: Dialect, productIds: number[]): Promise<LockedStock[]> {
  if (productIds.length === 0) return [];
  let q = db
    .selectFrom('stocks')
    .innerJoin('warehouses', 'warehouses.id', 'stocks.warehouse_id')
    .select(['stocks.product_id as productId', 'stocks.warehouse_id as warehouseId', 'warehouses.code as warehouseCode', 'warehouses.country_code as countryCode', 'warehouses.status as status', 'stocks.qty as qty'])
    .where('stocks.product_id', 'in', [...new Set(productIds)])
    .orderBy('stocks.product_id')
    .orderBy('stocks.warehouse_id');
  if (dialect === 'postgres') q = q.forUpdate('stocks');
  const rows = await q.execute();
  return rows.map(({ status, ...r }) => ({ ...r, enabled: status === 1 }));
}
