import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { StockQuery } from '../../../schemas/stock.ts';
import { queryStocks } from '../../../services/stock-query.service.ts';
import type { Store } from '../../../store/db.ts';

export const stockRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get('/v1/product/stocks', { schema: { querystring: StockQuery }, config: { scope: 'stock:read' } }, async (request) =>
    queryStocks(store, request.query),
  );
};
