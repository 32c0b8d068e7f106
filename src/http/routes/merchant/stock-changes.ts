import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { StockChangesQuery } from '../../../schemas/stock.ts';
import { stockChanges } from '../../../services/stock-feed.service.ts';
import type { Store } from '../../../store/db.ts';

export const stockChangesRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get('/v1/product/stocks/changes', { schema: { querystring: StockChangesQuery }, config: { scope: 'stock:read' } }, async (request) =>
    stockChanges(store, request.query),
  );
};
