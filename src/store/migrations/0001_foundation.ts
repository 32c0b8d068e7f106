import { sql } from 'kysely';
import { notNull, withId, type MigrationContext } from './helpers.ts';

export async function up({ db, dialect }: MigrationContext): Promise<void> {
  await withId(db.schema.createTable('warehouses'), dialect)
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', notNull)
    .addColumn('country_code', 'text', notNull)
    .addColumn('country_name', 'text', notNull)
    .addColumn('status', 'integer', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();

  await db.schema
    .createTable('categories')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('name', 'text', notNull)
    .addColumn('parent_id', 'bigint', notNull)
    .addColumn('img_url', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();

  await withId(db.schema.createTable('products'), dialect)
    .addColumn('sku', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', notNull)
    .addColumn('category_id', 'bigint')
    .addColumn('price_cents', 'bigint', notNull)
    .addColumn('weight_grams', 'bigint', notNull)
    .addColumn('image_url', 'text')
    .addColumn('options', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('products_updated_idx').on('products').columns(['updated_at', 'id']).execute();
  await db.schema.createIndex('products_category_idx').on('products').columns(['category_id', 'id']).execute();

  await db.schema
    .createTable('stocks')
    .addColumn('product_id', 'bigint', (c) => c.notNull().references('products.id'))
    .addColumn('warehouse_id', 'bigint', (c) => c.notNull().references('warehouses.id'))
    .addColumn('qty', 'bigint', (c) => c.notNull().check(sql`qty >= 0`))
    .addColumn('updated_at', 'bigint', notNull)
    .addPrimaryKeyConstraint('stocks_pk', ['product_id', 'warehouse_id'])
    .execute();
  await db.schema.createIndex('stocks_updated_idx').on('stocks').columns(['updated_at', 'product_id']).execute();

  await withId(db.schema.createTable('stock_ledger'), dialect)
    .addColumn('product_id', 'bigint', notNull)
    .addColumn('warehouse_id', 'bigint', notNull)
    .addColumn('delta', 'bigint', notNull)
    .addColumn('qty_after', 'bigint', notNull)
    .addColumn('kind', 'text', notNull)
    .addColumn('order_id', 'bigint')
    .addColumn('refund_id', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('stock_ledger_row_idx').on('stock_ledger').columns(['product_id', 'warehouse_id']).execute();

  await withId(db.schema.createTable('channels'), dialect)
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', notNull)
    .addColumn('channel_type', 'text', notNull)
    .addColumn('countries', 'text', notNull)
    .addColumn('base_fee_cents', 'bigint', notNull)
    .addColumn('per_kg_fee_cents', 'bigint', notNull)
    .addColumn('delivery_days_min', 'integer', notNull)
    .addColumn('delivery_days_max', 'integer', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();

  await db.schema
    .createTable('channel_warehouses')
    .addColumn('channel_id', 'bigint', (c) => c.notNull().references('channels.id').onDelete('cascade'))
    .addColumn('warehouse_id', 'bigint', (c) => c.notNull().references('warehouses.id'))
    .addPrimaryKeyConstraint('channel_warehouses_pk', ['channel_id', 'warehouse_id'])
    .execute();

  await withId(db.schema.createTable('merchants'), dialect)
    .addColumn('name', 'text', notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    .addColumn('client_secret_hash', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();

  await withId(db.schema.createTable('api_tokens'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('environment', 'text', notNull)
    .addColumn('scopes', 'text', notNull)
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('api_tokens_merchant_idx').on('api_tokens').column('merchant_id').execute();
}
