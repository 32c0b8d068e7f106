import { can } from '../../../domain/staff.ts';
import { ConsoleIdParams, OrderSearchQuery, ShipForm, ActionForm, CancelSplitForm } from '../../../schemas/console-operations.ts';
import { cancelUnshippedSplit, cancellationPreview, deliverSplitOrder, shipSplitOrder } from '../../../services/fulfillment.service.ts';
import { orderForOperator, ordersCsvForOperator, searchOrdersForOperator } from '../../../services/order-search.service.ts';
import { sendCsv } from '../../csv.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentConsoleOrder, presentConsoleOrders, presentSplitCancel } from '../present.ts';
import type { ConsolePage } from './context.ts';

const ORDERS = `${CONSOLE_PREFIX}/orders`;

/**
 * Orders (SPEC §14): search across merchants, one order with its splits, items, freight, refunds
 * and webhook deliveries, the warehouse's two actions on a split order (ship and deliver), and
 * cancelling a split that has not shipped (after a confirmation page that says what it will do).
 */
export const ordersPage: ConsolePage = {
  nav: [{ href: ORDERS, label: 'Orders', permission: 'orders:read' }],
  routes: async (app, { config, store, now, page, user, actor }) => {
    const { db } = store;

    app.get('/orders', { schema: { querystring: OrderSearchQuery } }, async (request, reply) => {
      const result = await searchOrdersForOperator(db, request.query);
      return page(reply, 200, 'orders', presentConsoleOrders(result));
    });

    // The same search as a CSV file: the page's filters (its query string), every matching order.
    app.get('/orders.csv', { schema: { querystring: OrderSearchQuery } }, async (request, reply) =>
      sendCsv(reply, await ordersCsvForOperator(db, request.query), now()),
    );

    app.get('/orders/:id', { schema: { params: ConsoleIdParams } }, async (request, reply) => {
      const detail = await orderForOperator(db, request.params.id);
      const { role } = user(request);
      return page(
        reply,
        200,
        'order',
        presentConsoleOrder(detail, { fulfil: can(role, 'orders:fulfil'), cancel: can(role, 'orders:cancel'), webhooks: can(role, 'webhooks:manage') }),
      );
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

    // A destructive action asks first (SPEC §14): this page says what the cancellation does.
    app.get('/splits/:id/cancel', { schema: { params: ConsoleIdParams } }, async (request, reply) => {
      return page(reply, 200, 'split-cancel', presentSplitCancel(await cancellationPreview(db, request.params.id), config.supplierCurrency));
    });

    app.post('/splits/:id/cancel', { schema: { params: ConsoleIdParams, body: CancelSplitForm } }, async (request, reply) => {
      const orderId = await cancelUnshippedSplit(db, actor(request), request.params.id, request.body.reason, now());
      return reply.redirect(`${ORDERS}/${orderId}`, 303);
    });
  },
};
