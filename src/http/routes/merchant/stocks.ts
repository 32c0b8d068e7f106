import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MerchantResponses } from '../../../schemas/common.ts';
import { StockPage, StockQuery } from '../../../schemas/stock.ts';
import { queryStocks } from '../../../services/stock-query.service.ts';
import type { Store } from '../../../store/db.ts';

export const stockRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  const schema = {
    operationId: 'queryStocks',
    summary: 'Stock query',
    description:
      'By `skus` (at most 30 distinct; one record per known SKU, in request order) and/or by a change window ' +
      '(`dateStartTime`/`dateEndTime`; then `pageNumber` is required). At least one of `skus`, `dateStartTime`, `dateEndTime`.',
    tags: ['Stock'],
    querystring: StockQuery,
    response: MerchantResponses(StockPage),
  };
  app.get('/v1/product/stocks', { schema, config: { scope: 'stock:read' } }, async (request) => queryStocks(store, request.query));
};
