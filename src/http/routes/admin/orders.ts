import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AdminOrderQuery, OrderIdParams } from '../../../schemas/orders.ts';
import { getOrder, queryOrders } from '../../../services/order-query.service.ts';
import type { Store } from '../../../store/db.ts';
import { forMerchant } from '../../../store/tenancy.ts';

/** The operator sees every merchant's orders, optionally narrowed to one merchant. */
export const adminOrderRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get('/orders', { schema: { querystring: AdminOrderQuery } }, async (request) => {
    const { merchantId, ...query } = request.query;
    return queryOrders(merchantId === undefined ? store.db : forMerchant(store.db, Number(merchantId)), query);
  });
  app.get('/orders/:id', { schema: { params: OrderIdParams } }, async (request) => getOrder(store.db, request.params.id));
};
