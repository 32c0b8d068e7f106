import type { Insertable, Selectable } from 'kysely';
import type { Dialect, Handle } from './db.ts';
import type { OrderItemsTable, OrdersTable, SplitOrdersTable } from './schema.ts';

export type OrderRow = Selectable<OrdersTable>;
export type SplitOrderRow = Selectable<SplitOrdersTable>;
export type OrderItemRow = Selectable<OrderItemsTable>;

/**
 * Tenancy: every merchant-facing read takes the merchant id and filters by it here, in the
 * storage layer; `null` is the operator, who sees every merchant.
 */
export type Tenant = number | null;

export async function insertOrder(db: Handle, row: Insertable<OrdersTable>): Promise<number> {
  return (await db.insertInto('orders').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertSplitOrder(db: Handle, row: Insertable<SplitOrdersTable>): Promise<number> {
  return (await db.insertInto('split_orders').values(row).returning('id').executeTakeFirstOrThrow()).id;
}

export async function insertItems(db: Handle, rows: Insertable<OrderItemsTable>[]): Promise<void> {
  if (rows.length) await db.insertInto('order_items').values(rows).execute();
}

export const findOrderByCustomId = (db: Handle, merchantId: number, customOrderId: string) =>
  db.selectFrom('orders').select(['id', 'request_hash']).where('merchant_id', '=', merchantId).where('custom_order_id', '=', customOrderId).executeTakeFirst();

/** The parent order id for a parent or split-order id, within the tenant; null when not theirs or absent. */
export async function resolveOrderId(db: Handle, tenant: Tenant, id: number): Promise<number | null> {
  let parent = db.selectFrom('orders').select('id').where('id', '=', id);
  let split = db.selectFrom('split_orders').select('order_id as id').where('id', '=', id);
  if (tenant !== null) {
    parent = parent.where('merchant_id', '=', tenant);
    split = split.where('merchant_id', '=', tenant);
  }
  const row = (await parent.executeTakeFirst()) ?? (await split.executeTakeFirst());
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
  tenant: Tenant;
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
export async function pageOrderIds(db: Handle, f: OrderFilter): Promise<{ total: number; ids: number[] }> {
  let q = db.selectFrom('orders');
  if (f.tenant !== null) q = q.where('orders.merchant_id', '=', f.tenant);
  if (f.ids !== null) {
    const ids = f.ids;
    q = q.where((eb) => eb.or([eb('orders.id', 'in', ids), eb('orders.id', 'in', eb.selectFrom('split_orders').select('order_id').where('split_orders.id', 'in', ids))]));
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
