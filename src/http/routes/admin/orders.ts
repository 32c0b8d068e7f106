import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AdminResponses } from '../../../schemas/admin-responses.ts';
import { IdParams } from '../../../schemas/admin.ts';
import { AdminOrderQuery, OrderPage, OrderRecord } from '../../../schemas/orders.ts';
import { getOrder, queryOrdersForOperator } from '../../../services/order-query.service.ts';
import type { Store } from '../../../store/db.ts';
import { scopeForOperator } from '../../../store/edge-scopes.ts';
import { allMerchants } from '../../../store/tenancy.ts';

/** The operator sees every merchant's orders, optionally narrowed to one merchant. */
export const adminOrderRoutes: FastifyPluginAsyncTypebox<{ store: Store }> = async (app, { store }) => {
  app.get(
    '/orders',
    { schema: { summary: "Every merchant's orders, or one merchant's", tags: ['Orders'], querystring: AdminOrderQuery, response: AdminResponses(OrderPage) } },
    async (request) => {
      const { merchantId, ...query } = request.query;
      return queryOrdersForOperator(store.db, query, merchantId ?? null, (m) => scopeForOperator(store.db, m));
    },
  );
  app.get(
    '/orders/:id',
    { schema: { summary: 'One order by its parent or split id', tags: ['Orders'], params: IdParams, response: AdminResponses(OrderRecord) } },
    async (request) => getOrder(allMerchants(store.db), request.params.id),
  );
};
