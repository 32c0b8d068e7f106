import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
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

  app.post('/warehouses', { schema: { body: WarehouseBody } }, async (request) =>
    presentWarehouse(await saveWarehouse(db, actor(request), request.body, Date.now())),
  );
  app.get('/warehouses', async () => ({ list: (await listWarehouses(db)).map(presentWarehouse) }));

  app.post('/categories', { schema: { body: CategoryBody } }, async (request) =>
    presentCategory(await saveCategory(db, actor(request), request.body, Date.now())),
  );
  app.get('/categories', async () => ({ list: (await listCategories(db)).map(presentCategory) }));

  app.post('/products', { schema: { body: ProductBody } }, async (request) => presentProduct(await saveProduct(db, actor(request), request.body, Date.now())));

  app.put('/stocks', { schema: { body: StockSetBody } }, async (request) => ({
    items: await setStockLevels(db, actor(request), request.body.items, Date.now()),
  }));
  app.post('/stocks/adjust', { schema: { body: StockAdjustBody } }, async (request) => ({
    items: await adjustStockLevels(db, actor(request), request.body.items, Date.now()),
  }));

  app.post('/channels', { schema: { body: ChannelBody } }, async (request) => presentChannel(await saveChannel(db, actor(request), request.body, Date.now())));
  app.get('/channels', async () => ({ list: (await listChannels(db)).map(presentChannel) }));

  app.post('/import', { schema: { body: ImportBody } }, async (request) => importCatalog(db, actor(request), request.body, Date.now()));
};
