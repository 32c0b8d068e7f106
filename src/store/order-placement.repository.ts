import { sql, type Insertable } from 'kysely';
import type { Dialect, Handle, Trx } from './db.ts';
import type { IdempotencyKeysTable, OrderItemsTable, OrdersTable, SplitOrdersTable } from './schema.ts';
import { listChannels, type Channel } from './channels.repository.ts';
import { productsBySku, type Product } from './products.repository.ts';
import { postedOf, postingArgs, postingCtes, type Posted, type Posting, type PostingArgs } from './ledger.repository.ts';
import {
  appliedOf,
  asView,
  checkedDecrements,
  lockStockRows,
  takeQty,
  takenAndLedgerCtes,
  type AppliedChange,
  type StockKey,
  type StockRowView,
} from './stocks.repository.ts';
import { insertItems, insertOrder, insertSplitOrders } from './orders.repository.ts';
import { prepared, preparedForMerchant } from './prepared.ts';
import type { MerchantScope } from './tenancy.ts';
import { handleOf } from './scope-handle.ts';

/**
 * The order path's two steps as the store runs them (services/orders.service.ts `createOrderIn`):
 * what a plan reads, and what a planned order writes. SQLite runs them as the separate statements
 * the rest of the store has (in-process: no round trips to save). PostgreSQL runs each as one
 * statement — on PostgreSQL an order's cost was mostly its round trips, each a `writev` and a parse
 * in the API process (docs/performance.md, "Where the time goes", "An order in five statements").
 */

/** What `planOrder` needs, read in the order's transaction with the stock rows locked. */
export interface OrderInputs {
  /** The products of the SKUs that exist. */
  products: Product[];
  /** Their stock rows, locked (PostgreSQL) in product, warehouse order. */
  stock: StockRowView[];
  channels: Channel[];
  /**
   * PostgreSQL: the new order's id, taken from the orders' sequence by the same statement (so the
   * write can be one statement); a refused order leaves a gap, as a rolled-back insert does. SQLite:
   * null, the insert assigns it.
   */
  orderId: number | null;
}

/**
 * The order's inputs. On PostgreSQL the stock rows are locked in (product, warehouse) order — the
 * locking subquery sorts before it locks, as `lockStockRows` does — so concurrent orders for the
 * same SKUs queue instead of deadlocking. Takes a transaction: a lock outside one would end at once.
 */
export async function readOrderInputs(trx: Trx, dialect: Dialect, skus: string[]): Promise<OrderInputs> {
  const unique = [...new Set(skus)];
  if (dialect === 'sqlite') {
    const products = unique.length ? [...(await productsBySku(trx, unique)).values()] : [];
    const stock = await lockStockRows(
      trx,
      dialect,
      products.map((p) => p.id),
    );
    return { products, stock, channels: await listChannels(trx), orderId: null };
  }
  const row = await inputsLocking.first(trx, unique);
  if (!row) throw new Error('readOrderInputs: no row');
  return { products: row.products, stock: asView(row.stock), channels: row.channels, orderId: row.order_id };
}

/** PostgreSQL: products, locked stock rows, channels (with their warehouses' codes, sorted) and a new order id, as one row of JSON arrays. */
const inputsLocking = prepared(
  (_db: Handle, skus: string[]) =>
    // Without SKUs (never from the API: an order has a line) nothing matches.
    sql<{ products: Product[]; stock: Parameters<typeof asView>[0]; channels: Channel[]; order_id: number }>`
    with p as (select * from products where ${skus.length ? sql`sku in (${sql.join(skus)})` : sql`false`}),
    s as (
      select stocks.product_id as "productId", stocks.warehouse_id as "warehouseId", warehouses.code as "warehouseCode",
        warehouses.country_code as "countryCode", warehouses.status as status, stocks.qty as qty
      from stocks inner join warehouses on warehouses.id = stocks.warehouse_id
      where stocks.product_id in (select id from p)
      order by stocks.product_id, stocks.warehouse_id
      for update of stocks
    )
    select coalesce((select json_agg(p) from p), '[]') as products,
      coalesce((select json_agg(s order by s."productId", s."warehouseId") from s), '[]') as stock,
      coalesce((select json_agg(c order by c.id) from (
        select channels.*, array(
          select w.code from channel_warehouses cw inner join warehouses w on w.id = cw.warehouse_id
          where cw.channel_id = channels.id order by w.code
        ) as "warehouseCodes" from channels
      ) c), '[]') as channels,
      nextval(pg_get_serial_sequence('orders', 'id')) as order_id`,
);

type Owned<T> = Omit<Insertable<T>, 'merchant_id'>;

/** A planned order's rows, without the ids the write assigns. */
export interface OrderToWrite {
  /** `OrderInputs.orderId`. */
  orderId: number | null;
  order: Omit<Owned<OrdersTable>, 'id'>;
  /** Split orders in the order their ids are assigned, each with its items (ids assigned in this order too). */
  splits: { row: Omit<Owned<SplitOrdersTable>, 'order_id'>; items: Omit<Owned<OrderItemsTable>, 'order_id' | 'split_order_id'>[] }[];
  decrements: (StockKey & { delta: number })[];
  /** The order's charge, once its id is known. */
  charge: (orderId: number) => Posting;
  /**
   * The Idempotency-Key's row for the order's response, once its id is known (null: no key). Written
   * in the order's statement where there is one (PostgreSQL: `keyStored`); SQLite leaves it to the caller.
   */
  keyRow: ((orderId: number) => Insertable<IdempotencyKeysTable>) | null;
  now: number;
}

export interface WrittenOrder {
  orderId: number;
  /** The decrements with each row's quantity after; null when a row would have gone below zero (the caller rolls back). */
  applied: AppliedChange[] | null;
  /** The charge when the order's statement posted it (PostgreSQL); undefined: the caller posts it (ledger.service.ts `chargeOrder`). */
  posted: Posted | undefined;
  /** The key row of `keyRow` when the order's statement wrote it; null: the caller saves the response. */
  keyStored: Insertable<IdempotencyKeysTable> | null;
}

/**
 * Writes the order, its split orders and items, the stock decrements and their stock ledger rows —
 * on PostgreSQL with the order's charge and the Idempotency-Key row, all in one statement of writing
 * CTEs. Its charge is not conditional on the stock and its rows are written either way: a decrement
 * that did not take every row (`applied` null) makes the caller roll the transaction back. `posted`
 * is undefined when the account is missing or cannot cover the charge — the caller then posts the
 * usual way, which opens the account or refuses (and a refusal rolls back the key row with the rest).
 */
export async function writeOrder(scope: MerchantScope<Trx>, dialect: Dialect, w: OrderToWrite): Promise<WrittenOrder> {
  const changes = checkedDecrements(w.decrements);
  const refs = (orderId: number) => ({ kind: 'sale' as const, orderId, refundId: null });
  if (dialect === 'sqlite' || w.orderId === null) {
    const orderId = await insertOrder(scope, w.order);
    const splitIds = await insertSplitOrders(
      scope,
      w.splits.map((s) => ({ ...s.row, order_id: orderId })),
    );
    await insertItems(
      scope,
      w.splits.flatMap((s, n) => s.items.map((i) => ({ ...i, order_id: orderId, split_order_id: splitIds[n] }))),
    );
    const applied = await takeQty(handleOf(scope), dialect, changes, refs(orderId), w.now);
    return { orderId, applied, posted: undefined, keyStored: null };
  }
  const orderId = w.orderId;
  const key = w.keyRow?.(orderId) ?? null;
  const rows = await orderWritten.all(scope, {
    order: { ...w.order, id: orderId },
    splits: w.splits.map((s) => ({ ...s.row, order_id: orderId })),
    items: w.splits.flatMap((s) => s.items.map((i) => ({ warehouseId: s.row.warehouse_id, row: { ...i, order_id: orderId } }))),
    changes,
    refs: refs(orderId),
    charge: postingArgs(scope, w.charge(orderId)),
    key,
    now: w.now,
  });
  if (rows.length !== changes.length) return { orderId, applied: null, posted: undefined, keyStored: key };
  const { product_id: _p, warehouse_id: _w, qty: _q, ...account } = rows[0];
  return { orderId, applied: appliedOf(changes, rows), posted: postedOf(account as Parameters<typeof postedOf>[0]), keyStored: key };
}

interface OrderStatementArgs {
  order: Owned<OrdersTable>;
  splits: Owned<SplitOrdersTable>[];
  /** Each item with its split order's warehouse: a split order is one warehouse's share of the order, so the warehouse finds its new id. */
  items: { warehouseId: number; row: Omit<Owned<OrderItemsTable>, 'split_order_id'> }[];
  changes: (StockKey & { delta: number })[];
  refs: { kind: 'sale'; orderId: number; refundId: null };
  charge: PostingArgs;
  key: Insertable<IdempotencyKeysTable> | null;
  now: number;
}

/**
 * PostgreSQL: the whole order as writing CTEs. Every CTE runs to completion whether or not the
 * final SELECT reads it; the foreign keys are checked at the statement's end, when every row is
 * there. Split orders and items are inserted in the order given, so their ids are, as on SQLite.
 */
const orderWritten = preparedForMerchant((scope, a: OrderStatementArgs) => {
  const db = handleOf(scope);
  const items = a.items.map((i) => ({ ...i.row, split_order_id: sql<number>`(select id from sp where warehouse_id = ${i.warehouseId})` }));
  return sql<{ product_id: number; warehouse_id: number; qty: number } & Record<string, unknown>>`
    with o as (${scope.insertInto('orders', a.order)}),
    sp as (${scope.insertInto('split_orders', a.splits).returning(['id', 'warehouse_id'])}),
    it as (${scope.insertInto('order_items', items as unknown as Owned<OrderItemsTable>[])}),
    ${takenAndLedgerCtes(db, a.changes, a.refs, a.now)}, ${postingCtes(scope, a.charge, a.now)}${
      a.key ? sql`, k as (${db.insertInto('idempotency_keys').values(a.key)})` : sql``
    }
    select t.product_id, t.warehouse_id, t.qty, m.*, (select id from entry) as entry_id
    from taken t left join moved m on true`;
});
