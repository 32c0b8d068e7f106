import { Type, type Static, type TSchema } from 'typebox';
import type { TreeNode } from '../domain/categories.ts';
import { Page, PageQueryFields } from './common.ts';

const CategoryNodeSchema: TSchema = Type.Cyclic(
  {
    Node: Type.Object({
      categoryId: Type.Integer(),
      name: Type.String(),
      parentId: Type.Integer({ description: '0 at the root' }),
      level: Type.Integer({ description: '1 at the root' }),
      fullCategoryId: Type.String({ description: 'ids from the root, joined by "/"' }),
      imgUrl: Type.Union([Type.String(), Type.Null()]),
      child: Type.Array(Type.Ref('Node')),
    }),
  },
  'Node',
);
export const CategoryTree = Type.Object({ list: Type.Array(CategoryNodeSchema) });
export type CategoryTree = { list: TreeNode[] };

export const WarehouseInfo = Type.Object({
  warehouseId: Type.Integer(),
  warehouseCode: Type.String(),
  warehouseNameExt: Type.String(),
  countryCode: Type.String(),
  countryCn: Type.String({ description: 'country name, e.g. "China"' }),
  status: Type.Integer({ description: '1 enabled, 0 disabled' }),
});
export const WarehouseList = Type.Object({ list: Type.Array(WarehouseInfo) });
export type WarehouseList = Static<typeof WarehouseList>;

export const ProductsQuery = Type.Object({
  categoryId: Type.Optional(Type.Integer({ minimum: 1, description: 'this category and its subcategories' })),
  updateStartTime: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 instant with Z or an offset' })),
  updateEndTime: Type.Optional(Type.String({ maxLength: 64, description: 'ISO 8601 instant with Z or an offset' })),
  ...PageQueryFields(100, { pageSize: 'default 30' }),
});
export type ProductsQuery = Static<typeof ProductsQuery>;

export const CatalogProduct = Type.Object({
  sku: Type.String(),
  name: Type.String(),
  categoryId: Type.Union([Type.Integer(), Type.Null()]),
  price: Type.Number(),
  weightGrams: Type.Integer(),
  imageUrl: Type.Union([Type.String(), Type.Null()]),
  updateDate: Type.String(),
});
export const ProductPage = Page(CatalogProduct);
export type ProductPage = Static<typeof ProductPage>;
