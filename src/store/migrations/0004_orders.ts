import { notNull, startSequence, withId, type MigrationContext } from './helpers.ts';

/**
 * Order and split-order ids share one namespace (`GET /orders/{id}` takes either), so their
 * sequences start in disjoint ranges: orders at 1 000 000 000 001, split orders at 5 000 000 000 001
 * (four trillion orders apart), both 13-digit numbers like the original interface's samples.
 */
export const ORDER_ID_START = 1_000_000_000_000;
export const SPLIT_ORDER_ID_START = 5_000_000_000_000;
export const ORDER_ITEM_ID_START = 2_000_000_000_000;

export async function up(ctx: MigrationContext): Promise<void> {
  const { db, dialect } = ctx;
  await withId(db.schema.createTable('orders'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id'))
    .addColumn('custom_order_id', 'text')
    .addColumn('request_hash', 'text', notNull)
    .addColumn('sale_platform', 'text')
    .addColumn('channel_type', 'text', notNull)
    .addColumn('channel_code', 'text')
    .addColumn('remark', 'text')
    .addColumn('ship_to_country', 'text', notNull)
    .addColumn('address', 'text', notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('financial_status', 'text', notNull)
    .addColumn('fulfillment_status', 'text', notNull)
    .addColumn('refund_status', 'text')
    .addColumn('currency_code', 'text', notNull)
    .addColumn('subtotal_cents', 'bigint', notNull)
    .addColumn('freight_cents', 'bigint', notNull)
    .addColumn('coupon_cents', 'bigint', notNull)
    .addColumn('promotion_cents', 'bigint', notNull)
    .addColumn('refunded_cents', 'bigint', notNull)
    .addColumn('pay_date', 'bigint')
    .addColumn('completed_date', 'bigint')
    .addColumn('cancel_date', 'bigint')
    .addColumn('refund_date', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await startSequence(ctx, 'orders', ORDER_ID_START);
  // customOrderId is unique per merchant (NULLs do not collide on either database).
  await db.schema.createIndex('orders_custom_id_uq').on('orders').columns(['merchant_id', 'custom_order_id']).unique().execute();
  await db.schema.createIndex('orders_merchant_created_idx').on('orders').columns(['merchant_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('orders_merchant_updated_idx').on('orders').columns(['merchant_id', 'updated_at', 'id']).execute();
  await db.schema.createIndex('orders_created_idx').on('orders').columns(['created_at', 'id']).execute();

  await withId(db.schema.createTable('split_orders'), dialect)
    .addColumn('order_id', 'bigint', (c) => c.notNull().references('orders.id'))
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('warehouse_id', 'bigint', (c) => c.notNull().references('warehouses.id'))
    .addColumn('warehouse_code', 'text', notNull)
    .addColumn('country_code', 'text', notNull)
    .addColumn('channel_code', 'text', notNull)
    .addColumn('channel_type', 'text', notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('freight_cents', 'bigint', notNull)
    .addColumn('weight_grams', 'bigint', notNull)
    .addColumn('carrier', 'text')
    .addColumn('tracking_code', 'text')
    .addColumn('shipped_at', 'bigint')
    .addColumn('delivered_at', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await startSequence(ctx, 'split_orders', SPLIT_ORDER_ID_START);
  await db.schema.createIndex('split_orders_order_idx').on('split_orders').columns(['order_id', 'id']).execute();

  await withId(db.schema.createTable('order_items'), dialect)
    .addColumn('order_id', 'bigint', (c) => c.notNull().references('orders.id'))
    .addColumn('split_order_id', 'bigint', (c) => c.notNull().references('split_orders.id'))
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('line_index', 'integer', notNull)
    .addColumn('product_id', 'bigint', (c) => c.notNull().references('products.id'))
    .addColumn('sku', 'text', notNull)
    .addColumn('product_name', 'text', notNull)
    .addColumn('image_url', 'text')
    .addColumn('unit_cents', 'bigint', notNull)
    .addColumn('quantity', 'bigint', notNull)
    .addColumn('refunded_quantity', 'bigint', notNull)
    .addColumn('pending_refund_quantity', 'bigint', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await startSequence(ctx, 'order_items', ORDER_ITEM_ID_START);
  await db.schema.createIndex('order_items_order_idx').on('order_items').columns(['order_id', 'id']).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('merchant_id', 'bigint', notNull)
    .addColumn('idempotency_key', 'text', notNull)
    .addColumn('request_hash', 'text', notNull)
    .addColumn('state', 'text', notNull)
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('expires_at', 'bigint', notNull)
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['merchant_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry_idx').on('idempotency_keys').column('expires_at').execute();
}
