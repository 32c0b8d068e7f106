import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../../config.ts';
import { CreateOrderBody, IdempotencyHeaders, OrderIdParams, OrderQuery, QuoteBody } from '../../../schemas/orders.ts';
import { getOrder, queryOrders } from '../../../services/order-query.service.ts';
import { placeOrder } from '../../../services/orders.service.ts';
import { quoteChannelTypes, quoteChannels } from '../../../services/quotes.service.ts';
import type { Store } from '../../../store/db.ts';
import { forMerchant } from '../../../store/tenancy.ts';

/** SPEC §4: create (v1 and the v2 alias), quotes, query. */
export const orderRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config }> = async (app, { store, config }) => {
  const deps = { store, config };

  for (const url of ['/v1/order/orders', '/v2/order/orders']) {
    app.post(url, { schema: { body: CreateOrderBody, headers: IdempotencyHeaders }, config: { scope: 'orders:write', envelope: false } }, async (request, reply) => {
      const result = await placeOrder(deps, request.principal!.merchantId, request.body, request.headers['idempotency-key'] ?? null, request.id);
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(result.status).send(result.body);
    });
  }

  app.post('/v2/order/orders/channel', { schema: { body: QuoteBody }, config: { scope: 'orders:read' } }, async (request) => quoteChannels(deps, request.body));
  app.post('/v2/order/orders/automaticSplit/channel', { schema: { body: QuoteBody }, config: { scope: 'orders:read' } }, async (request) =>
    quoteChannelTypes(deps, request.body),
  );

  app.get('/v2/order/orders', { schema: { querystring: OrderQuery }, config: { scope: 'orders:read' } }, async (request) =>
    queryOrders(forMerchant(store.db, request.principal!.merchantId), request.query),
  );
  app.get('/v2/order/orders/:id', { schema: { params: OrderIdParams }, config: { scope: 'orders:read' } }, async (request) =>
    getOrder(forMerchant(store.db, request.principal!.merchantId), request.params.id),
  );
};
