import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParams } from '../../../schemas/admin.ts';
import { AdminOrderQuery } from '../../../schemas/orders.ts';
import { getOrder, queryOrdersForOperator } from '../../../services/order-query.service.ts';
import type { Store } from '../../../store/db.ts';
import { allMerchants } from '../../../store/tenancy.ts';

/** The operator sees every merchant's orders, optionally narrowed to one merchant. */
export const adminOrderRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get('/orders', { schema: { querystring: AdminOrderQuery } }, async (request) => {
    const { merchantId, ...query } = request.query;
    return queryOrdersForOperator(store.db, query, merchantId === undefined ? null : Number(merchantId));
  });
  app.get('/orders/:id', { schema: { params: IdParams } }, async (request) => getOrder(allMerchants(store.db), request.params.id));
};
