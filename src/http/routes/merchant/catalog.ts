import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CategoryTree, ProductPage, ProductsQuery, WarehouseList } from '../../../schemas/catalog.ts';
import { MerchantResponses } from '../../../schemas/common.ts';
import { categoryTree, etagMatches, productCatalogue, warehouseList } from '../../../services/catalog-read.service.ts';
import type { Store } from '../../../store/db.ts';

/** SPEC §3: category tree (with ETag), warehouses and the product catalogue. */
export const catalogRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const { db } = store;
  const categorySchema = {
    operationId: 'getCategories',
    summary: 'Category tree',
    description: 'The whole tree. Sends an `ETag`; `If-None-Match` with it answers 304 without a body.',
    tags: ['Catalogue'],
    // A `null` schema documents a response without a body.
    response: { ...MerchantResponses(CategoryTree), 304: Type.Null({ description: 'not modified: If-None-Match matched the ETag' }) },
  };
  app.get('/v1/product/category', { schema: categorySchema, config: { scope: 'catalog:read' } }, async (request, reply) => {
    const { tree, etag } = await categoryTree(db);
    // Clients may keep the tree but must revalidate: categories change without notice.
    reply.header('ETag', etag).header('Cache-Control', 'private, no-cache');
    if (etagMatches(request.headers['if-none-match'], etag))
      // No body: the 304 schema (null) only documents that.
      return reply.code(304).send(undefined as never);
    return tree;
  });

  const warehouseSchema = {
    operationId: 'getWarehouses',
    summary: 'Warehouses and their countries',
    tags: ['Catalogue'],
    response: MerchantResponses(WarehouseList),
  };
  app.get('/v1/product/countryAndWarehouse', { schema: warehouseSchema, config: { scope: 'catalog:read' } }, async () => warehouseList(db));

  const productsSchema = {
    operationId: 'listProducts',
    summary: 'SKU catalogue page',
    description: 'Without an update window products come in id order; with one, in ascending `updateDate` then id (incremental sync).',
    tags: ['Catalogue'],
    querystring: ProductsQuery,
    response: MerchantResponses(ProductPage),
  };
  app.get('/v1/product/products', { schema: productsSchema, config: { scope: 'catalog:read' } }, async (request) => productCatalogue(db, request.query));
};
