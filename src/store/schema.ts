import type { Generated } from 'kysely';

/** Times are epoch milliseconds (UTC) in BIGINT columns; money is integer cents. */
export interface WarehousesTable {
  id: Generated<number>;
  code: string;
  name: string;
  country_code: string;
  country_name: string;
  status: number;
  created_at: number;
  updated_at: number;
}

export interface CategoriesTable {
  id: number;
  name: string;
  parent_id: number;
  img_url: string | null;
  created_at: number;
  updated_at: number;
}

export interface ProductsTable {
  id: Generated<number>;
  sku: string;
  name: string;
  category_id: number | null;
  price_cents: number;
  weight_grams: number;
  image_url: string | null;
  options: string | null;
  created_at: number;
  updated_at: number;
}

export interface StocksTable {
  product_id: number;
  warehouse_id: number;
  qty: number;
  updated_at: number;
}

export type LedgerKind = 'sale' | 'return' | 'restock' | 'adjustment';

export interface StockLedgerTable {
  id: Generated<number>;
  product_id: number;
  warehouse_id: number;
  delta: number;
  qty_after: number;
  kind: LedgerKind;
  order_id: number | null;
  refund_id: number | null;
  created_at: number;
  /** PostgreSQL: the committing transaction's feed number (see migration 0002); NULL on SQLite. */
  commit_seq: number | null;
}

export interface StockFeedHeadTable {
  id: number;
  seq: number;
}

export interface ChannelsTable {
  id: Generated<number>;
  code: string;
  name: string;
  channel_type: string;
  /** JSON array of ISO country codes, or ["*"] for every destination. */
  countries: string;
  base_fee_cents: number;
  per_kg_fee_cents: number;
  delivery_days_min: number;
  delivery_days_max: number;
  created_at: number;
  updated_at: number;
}

export interface ChannelWarehousesTable {
  channel_id: number;
  warehouse_id: number;
}

export interface MerchantsTable {
  id: Generated<number>;
  name: string;
  status: 'active' | 'disabled';
  client_id: string;
  client_secret_hash: string;
  created_at: number;
  updated_at: number;
}

export interface ApiTokensTable {
  id: Generated<number>;
  merchant_id: number;
  token_hash: string;
  environment: 'sandbox' | 'production';
  /** Space-separated scopes, as in OAuth. */
  scopes: string;
  expires_at: number | null;
  revoked_at: number | null;
  created_at: number;
}

export interface Database {
  warehouses: WarehousesTable;
  categories: CategoriesTable;
  products: ProductsTable;
  stocks: StocksTable;
  stock_ledger: StockLedgerTable;
  stock_feed_head: StockFeedHeadTable;
  channels: ChannelsTable;
  channel_warehouses: ChannelWarehousesTable;
  merchants: MerchantsTable;
  api_tokens: ApiTokensTable;
}
