import { Type, type Static } from 'typebox';
import { Page, PageQueryFields } from './common.ts';
import { LEDGER_KINDS, type LedgerKind } from '../domain/vocabulary.ts';
import { STOCK_TOTAL_CAP } from '../domain/paging.ts';

export const StockQuery = Type.Object({
  skus: Type.Optional(Type.String({ maxLength: 4000, description: 'comma-separated SKU codes, at most 30 distinct' })),
  warehouseCode: Type.Optional(Type.String({ maxLength: 32 })),
  dateStartTime: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 instant with Z or an offset' })),
  dateEndTime: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 instant with Z or an offset' })),
  ...PageQueryFields(100),
});
export type StockQuery = Static<typeof StockQuery>;

export const WarehouseStock = Type.Object({ qty: Type.Integer(), warehouseCode: Type.String(), countryCode: Type.String() });
export const StockRecord = Type.Object({ sku: Type.String(), warehouseStockList: Type.Array(WarehouseStock) });
export type StockRecord = Static<typeof StockRecord>;
const cap = STOCK_TOTAL_CAP.toLocaleString('en-US');
/** A page of stock records (SPEC §6.1): a time window's `total` is counted when the window holds at most STOCK_TOTAL_CAP changes. */
export const StockPage = Type.Object({
  ...Page(StockRecord).properties,
  total: Type.Integer({
    description: `SKUs found. By time window: counted when the window holds at most ${cap} stock changes; a window with more reports ${cap} ("${cap} or more"), and its end is a short or empty page`,
  }),
});
export type StockPage = Static<typeof StockPage>;

export const StockChangesQuery = Type.Object({
  cursor: Type.Optional(
    Type.String({ maxLength: 200, description: 'nextCursor of the previous page; absent = from the oldest retained change; "now" = the current head' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'changes per page, default 500' })),
  warehouseCode: Type.Optional(Type.String({ maxLength: 32 })),
});
export type StockChangesQuery = Static<typeof StockChangesQuery>;

export const StockChange = Type.Object({
  sku: Type.String(),
  warehouseCode: Type.String(),
  countryCode: Type.String(),
  qty: Type.Integer({ description: 'quantity available after the change' }),
  delta: Type.Integer(),
  kind: Type.Unsafe<LedgerKind>({ type: 'string', enum: [...LEDGER_KINDS] }),
  changedAt: Type.String(),
});
export const StockChangesPage = Type.Object({ changes: Type.Array(StockChange), nextCursor: Type.String(), hasMore: Type.Boolean() });
export type StockChangesPage = Static<typeof StockChangesPage>;
