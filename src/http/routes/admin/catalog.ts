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
import { CategoryBody, ChannelBody, ImportBody, ProductBody, StockAdjustBody, StockSetBody, WarehouseBody } from '../../../schemas/admin.ts';
import { importCatalog, listChannels, saveCategory, saveChannel, saveProduct, saveWarehouse } from '../../../services/catalog.service.ts';
import { adjustStockLevels, setStockLevels } from '../../../services/stock.service.ts';
import { listWarehouses } from '../../../store/warehouses.repository.ts';
import { listCategories } from '../../../store/categories.repository.ts';
import type { Store } from '../../../store/db.ts';
import { presentCategory, presentChannel, presentProduct, presentWarehouse } from '../../../present/catalog.presenter.ts';

/** Operator catalogue: warehouses, categories, products, stock levels, channels and bulk import. Every write is audited. */
export const adminCatalogRoutes: FastifyPluginAsyncTypebox<{ store: Store; adminApiKey: string }> = async (app, { store, adminApiKey }) => {
  const { db } = store;
  const actor = (request: { id: string }) => adminKeyActor(adminApiKey, request.id);
  const doc = (summary: string, data: TSchema, tag = 'Catalogue') => ({ summary, tags: [tag], response: AdminResponses(data) });

  app.post('/warehouses', { schema: { ...doc('Create or update a warehouse (by warehouseCode)', AdminWarehouse), body: WarehouseBody } }, async (request) =>
    presentWarehouse(await saveWarehouse(db, actor(request), request.body, Date.now())),
  );
  app.get('/warehouses', { schema: doc('Every warehouse', AdminWarehouseList) }, async () => ({ list: (await listWarehouses(db)).map(presentWarehouse) }));

  app.post('/categories', { schema: { ...doc('Create or update a category (by categoryId)', AdminCategory), body: CategoryBody } }, async (request) =>
    presentCategory(await saveCategory(db, actor(request), request.body, Date.now())),
  );
  app.get('/categories', { schema: doc('Every category', AdminCategoryList) }, async () => ({ list: (await listCategories(db)).map(presentCategory) }));

  app.post('/products', { schema: { ...doc('Create or update a product (by sku)', AdminProduct), body: ProductBody } }, async (request) =>
    presentProduct(await saveProduct(db, actor(request), request.body, Date.now())),
  );

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

  app.post('/channels', { schema: { ...doc('Create or update a shipping channel (by channelCode)', AdminChannel), body: ChannelBody } }, async (request) =>
    presentChannel(await saveChannel(db, actor(request), request.body, Date.now())),
  );
  app.get('/channels', { schema: doc('Every shipping channel', AdminChannelList) }, async () => ({ list: (await listChannels(db)).map(presentChannel) }));

  app.post('/import', { schema: { ...doc('Import a catalogue document, all or nothing', ImportCounts), body: ImportBody } }, async (request) =>
    importCatalog(db, actor(request), request.body, Date.now()),
  );
};
