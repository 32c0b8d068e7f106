import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdempotencyHeaders, OrderIdParams } from '../../../schemas/orders.ts';
import { RefundBody, RefundPageQuery } from '../../../schemas/refunds.ts';
import { refundsOfOrder, requestRefund } from '../../../services/refunds.service.ts';
import type { Store } from '../../../store/db.ts';
import { forMerchant } from '../../../store/tenancy.ts';

/** SPEC §5: request a refund; read an order's refunds. */
export const refundRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.post(
    '/v2/order/orders/:id/refund',
    { schema: { params: OrderIdParams, body: RefundBody, headers: IdempotencyHeaders }, config: { scope: 'refunds:write', envelope: false } },
    async (request, reply) => {
      const result = await requestRefund({ store }, request.principal!.merchantId, request.params.id, request.body ?? {}, request.headers['idempotency-key'] ?? null, request.id);
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.code(result.status).send(result.body);
    },
  );
  app.get('/v2/order/orders/refund/:id', { schema: { params: OrderIdParams, querystring: RefundPageQuery }, config: { scope: 'orders:read' } }, async (request) =>
    refundsOfOrder(forMerchant(store.db, request.principal!.merchantId), request.params.id, request.query),
  );
};
