import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ProductsQuery } from '../../../schemas/catalog.ts';
import { categoryTree, etagMatches, productCatalogue, warehouseList } from '../../../services/catalog-read.service.ts';
import type { Store } from '../../../store/db.ts';

/** SPEC §3: category tree (with ETag), warehouses and the product catalogue. */
export const catalogRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const { db } = store;
  app.get('/v1/product/category', { config: { scope: 'catalog:read' } }, async (request, reply) => {
    const { tree, etag } = await categoryTree(db);
    // Clients may keep the tree but must revalidate: categories change without notice.
    reply.header('ETag', etag).header('Cache-Control', 'private, no-cache');
    if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    return tree;
  });
  app.get('/v1/product/countryAndWarehouse', { config: { scope: 'catalog:read' } }, async () => warehouseList(db));
  app.get('/v1/product/products', { schema: { querystring: ProductsQuery }, config: { scope: 'catalog:read' } }, async (request) =>
    productCatalogue(db, request.query),
  );
};
