import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MerchantResponses } from '../../../schemas/common.ts';
import { StockChangesPage, StockChangesQuery } from '../../../schemas/stock.ts';
import { stockChanges } from '../../../services/stock-feed.service.ts';
import type { Store } from '../../../store/db.ts';

export const stockChangesRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const schema = {
    operationId: 'stockChanges',
    summary: 'Stock change feed',
    description: 'Changes in commit order; store `nextCursor` and poll again to see every change exactly once. `cursor=now` returns the current head.',
    tags: ['Stock'],
    querystring: StockChangesQuery,
    response: MerchantResponses(StockChangesPage),
  };
  app.get('/v1/product/stocks/changes', { schema, config: { scope: 'stock:read' } }, async (request) => stockChanges(store, request.query));
};
