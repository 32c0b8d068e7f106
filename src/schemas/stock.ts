import { Type, type Static } from 'typebox';
import { Page } from './common.ts';

export const StockQuery = Type.Object({
  skus: Type.Optional(Type.String({ maxLength: 4000, description: 'comma-separated SKU codes, at most 30 distinct' })),
  warehouseCode: Type.Optional(Type.String({ maxLength: 32 })),
  dateStartTime: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 instant with Z or an offset' })),
  dateEndTime: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 instant with Z or an offset' })),
  pageNumber: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
});
export type StockQuery = Static<typeof StockQuery>;

export const WarehouseStock = Type.Object({ qty: Type.Integer(), warehouseCode: Type.String(), countryCode: Type.String() });
export const StockRecord = Type.Object({ sku: Type.String(), warehouseStockList: Type.Array(WarehouseStock) });
export type StockRecord = Static<typeof StockRecord>;
export const StockPage = Page(StockRecord);
export type StockPage = Static<typeof StockPage>;
