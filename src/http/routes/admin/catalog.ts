import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { CategoryBody, ChannelBody, ImportBody, ProductBody, StockAdjustBody, StockSetBody, WarehouseBody } from '../../../schemas/admin.ts';
import { importCatalog, listChannels, putCategories, putChannels, putProducts, putWarehouses } from '../../../services/catalog.service.ts';
import { adjustStocks, setStocks } from '../../../services/stock.service.ts';
import { listWarehouses } from '../../../store/warehouses.repository.ts';
import { listCategories } from '../../../store/categories.repository.ts';
import type { Store } from '../../../store/db.ts';
import { presentCategory, presentChannel, presentProduct, presentWarehouse } from '../../../present/catalog.presenter.ts';

/** Operator catalogue: warehouses, categories, products, stock levels, channels and bulk import. */
export const adminCatalogRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const { db } = store;
  const inTransaction = db.transaction.bind(db);

  app.post('/warehouses', { schema: { body: WarehouseBody } }, async (request) => {
    const [w] = await inTransaction().execute((trx) => putWarehouses(trx, [request.body], '', Date.now()));
    return presentWarehouse(w);
  });
  app.get('/warehouses', async () => ({ list: (await listWarehouses(db)).map(presentWarehouse) }));

  app.post('/categories', { schema: { body: CategoryBody } }, async (request) => {
    const [c] = await inTransaction().execute((trx) => putCategories(trx, [request.body], '', Date.now()));
    return presentCategory(c);
  });
  app.get('/categories', async () => ({ list: (await listCategories(db)).map(presentCategory) }));

  app.post('/products', { schema: { body: ProductBody } }, async (request) => {
    const [p] = await inTransaction().execute((trx) => putProducts(trx, [request.body], '', Date.now()));
    return presentProduct(p);
  });

  app.put('/stocks', { schema: { body: StockSetBody } }, async (request) => ({
    items: await inTransaction().execute((trx) => setStocks(trx, request.body.items, 'items', Date.now())),
  }));
  app.post('/stocks/adjust', { schema: { body: StockAdjustBody } }, async (request) => ({
    items: await inTransaction().execute((trx) => adjustStocks(trx, request.body.items, 'items', Date.now())),
  }));

  app.post('/channels', { schema: { body: ChannelBody } }, async (request) => {
    await inTransaction().execute((trx) => putChannels(trx, [request.body], '', Date.now()));
    const saved = (await listChannels(db)).find((c) => c.code === request.body.channelCode)!;
    return presentChannel(saved);
  });
  app.get('/channels', async () => ({ list: (await listChannels(db)).map(presentChannel) }));

  app.post('/import', { schema: { body: ImportBody } }, async (request) => importCatalog(db, request.body, Date.now()));
};
