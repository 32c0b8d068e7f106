import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';
import {
  AdminCategory,
  AdminCategoryList,
  AdminChannel,
  AdminChannelList,
  AdminProduct,
  AdminResponses,
  AdminWarehouse,
  AdminWarehouseList,
  ImportCounts,
  StockResults,
} from '../../../schemas/admin-responses.ts';
import { adminKeyActor } from '../../../domain/audit.ts';
import {
  AdminCodeParams,
  AdminSkuParams,
  CategoryBody,
  ChannelBody,
  IfMatchHeaders,
  ImportBody,
  ProductBody,
  StockAdjustBody,
  StockSetBody,
  WarehouseBody,
} from '../../../schemas/admin.ts';
import {
  channelByCode,
  importCatalog,
  listChannels,
  productBySku,
  saveCategory,
  saveChannel,
  saveProduct,
  saveWarehouse,
  warehouseByCode,
} from '../../../services/catalog.service.ts';
import { ifMatchCheck, withEtag } from '../../etag.ts';
import { adjustStockLevels, setStockLevels } from '../../../services/stock.service.ts';
import { everyCategory, everyWarehouse } from '../../../services/catalog-read.service.ts';
import type { Store } from '../../../store/db.ts';
import { presentCategory, presentChannel, presentProduct, presentWarehouse } from '../../../present/catalog.presenter.ts';

/**
 * Operator catalogue: warehouses, categories, products, stock levels, channels and bulk import.
 * Every write is audited. A warehouse, product or channel read alone answers its `ETag`, and its
 * upsert takes `If-Match` (http/etag.ts): a save made against another version is 412, not written.
 */
export const adminCatalogRoutes: FastifyPluginAsyncTypebox<{ store: Store; adminApiKey: string }> = async (app, { store, adminApiKey }) => {
  const { db } = store;
  const actor = (request: { id: string }) => adminKeyActor(adminApiKey, request.id);
  const doc = (summary: string, data: TSchema, tag = 'Catalogue') => ({ summary, tags: [tag], response: AdminResponses(data) });

  app.post(
    '/warehouses',
    { schema: { ...doc('Create or update a warehouse (by warehouseCode)', AdminWarehouse), headers: IfMatchHeaders, body: WarehouseBody } },
    async (request, reply) => {
      const saved = await saveWarehouse(db, actor(request), request.body, Date.now(), 'upsert', ifMatchCheck(request.headers['if-match']));
      return withEtag(reply, saved.version, presentWarehouse(saved));
    },
  );
  app.get('/warehouses/:code', { schema: { ...doc('One warehouse, with its ETag', AdminWarehouse), params: AdminCodeParams } }, async (request, reply) => {
    const warehouse = await warehouseByCode(db, request.params.code);
    return withEtag(reply, warehouse.version, presentWarehouse(warehouse));
  });
  app.get('/warehouses', { schema: doc('Every warehouse', AdminWarehouseList) }, async () => ({ list: (await everyWarehouse(db)).map(presentWarehouse) }));

  app.post('/categories', { schema: { ...doc('Create or update a category (by categoryId)', AdminCategory), body: CategoryBody } }, async (request) =>
    presentCategory(await saveCategory(db, actor(request), request.body, Date.now())),
  );
  app.get('/categories', { schema: doc('Every category', AdminCategoryList) }, async () => ({ list: (await everyCategory(db)).map(presentCategory) }));

  app.post(
    '/products',
    { schema: { ...doc('Create or update a product (by sku)', AdminProduct), headers: IfMatchHeaders, body: ProductBody } },
    async (request, reply) => {
      const saved = await saveProduct(db, actor(request), request.body, Date.now(), 'upsert', ifMatchCheck(request.headers['if-match']));
      return withEtag(reply, saved.version, presentProduct(saved));
    },
  );
  app.get('/products/:sku', { schema: { ...doc('One product, with its ETag', AdminProduct), params: AdminSkuParams } }, async (request, reply) => {
    const product = await productBySku(db, request.params.sku);
    return withEtag(reply, product.version, presentProduct(product));
  });

  app.put('/stocks', { schema: { ...doc('Set absolute stock quantities', StockResults, 'Stock'), body: StockSetBody } }, async (request) => ({
    items: await setStockLevels(db, actor(request), request.body.items, Date.now()),
  }));
  app.post(
    '/stocks/adjust',
    { schema: { ...doc('Change stock quantities by a delta, all or nothing', StockResults, 'Stock'), body: StockAdjustBody } },
    async (request) => ({
      items: await adjustStockLevels(db, actor(request), request.body.items, Date.now()),
    }),
  );

  app.post(
    '/channels',
    { schema: { ...doc('Create or update a shipping channel (by channelCode)', AdminChannel), headers: IfMatchHeaders, body: ChannelBody } },
    async (request, reply) => {
      const saved = await saveChannel(db, actor(request), request.body, Date.now(), 'upsert', ifMatchCheck(request.headers['if-match']));
      return withEtag(reply, saved.version, presentChannel(saved));
    },
  );
  app.get('/channels/:code', { schema: { ...doc('One shipping channel, with its ETag', AdminChannel), params: AdminCodeParams } }, async (request, reply) => {
    const channel = await channelByCode(db, request.params.code);
    return withEtag(reply, channel.version, presentChannel(channel));
  });
  app.get('/channels', { schema: doc('Every shipping channel', AdminChannelList) }, async () => ({ list: (await listChannels(db)).map(presentChannel) }));

  app.post('/import', { schema: { ...doc('Import a catalogue document, all or nothing', ImportCounts), body: ImportBody } }, async (request) =>
    importCatalog(db, actor(request), request.body, Date.now()),
  );
};
