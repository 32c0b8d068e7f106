import { can } from '../../../domain/staff.ts';
import { ConsoleIdParams, OrderSearchQuery, ShipForm, ActionForm } from '../../../schemas/console-operations.ts';
import { deliverSplitOrder, shipSplitOrder } from '../../../services/fulfillment.service.ts';
import { orderForOperator, searchOrdersForOperator } from '../../../services/order-search.service.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import type { ConsolePage } from './context.ts';

const ORDERS = `${CONSOLE_PREFIX}/orders`;

/**
 * Orders (SPEC §14): search across merchants, one order with its splits, items, freight, refunds
 * and webhook deliveries, and the warehouse's two actions on a split order: ship and deliver.
 */
export const ordersPage: ConsolePage = {
  nav: [{ href: ORDERS, label: 'Orders', permission: 'orders:read' }],
  routes: async (app, { store, now, page, user, actor }) => {
    const { db } = store;

    app.get('/orders', { schema: { querystring: OrderSearchQuery } }, async (request, reply) => {
      const result = await searchOrdersForOperator(db, request.query);
      return page(reply, 200, 'orders', { title: 'Orders', ...result });
    });

    app.get('/orders/:id', { schema: { params: ConsoleIdParams } }, async (request, reply) => {
      const detail = await orderForOperator(db, request.params.id);
      return page(reply, 200, 'order', { title: `Order ${detail.order.id}`, ...detail, canFulfil: can(user(request).role, 'orders:fulfil') });
    });

    // Both answer with the order's page (303): htmx follows it and swaps <main> in place.
    app.post('/splits/:id/ship', { schema: { params: ConsoleIdParams, body: ShipForm } }, async (request, reply) => {
      const { carrier, trackingCode } = request.body;
      const orderId = await shipSplitOrder(db, actor(request), request.params.id, { carrier, trackingCode }, now());
      return reply.redirect(`${ORDERS}/${orderId}`, 303);
    });

    app.post('/splits/:id/deliver', { schema: { params: ConsoleIdParams, body: ActionForm } }, async (request, reply) => {
      const orderId = await deliverSplitOrder(db, actor(request), request.params.id, now());
      return reply.redirect(`${ORDERS}/${orderId}`, 303);
    });
  },
};
