import { AppError } from '../../../domain/errors.ts';
import { can } from '../../../domain/staff.ts';
import { ConsoleIdParams, OrderSearchQuery, ShipForm, ActionForm, CancelSplitForm, OrderNoteForm } from '../../../schemas/console-operations.ts';
import type { FastifyReply } from 'fastify';
import { MAX_ORDER_NOTE, orderNoteForOperator, setOrderNote } from '../../../services/order-notes.service.ts';
import { channelShippingByCode, trackingLinkOf } from '../../../services/catalog.service.ts';
import { cancelUnshippedSplit, cancellationPreview, deliverSplitOrder, shipWithChannelCarrier, splitOrderRef } from '../../../services/fulfillment.service.ts';
import { orderForOperator, ordersCsvForOperator, searchOrdersForOperator } from '../../../services/order-search.service.ts';
import { merchantNamesById } from '../../../services/merchants.service.ts';
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
  routes: async (app, { config, store, now, page, user, actor, forms }) => {
    const { db } = store;

    app.get('/orders', { schema: { querystring: OrderSearchQuery } }, async (request, reply) => {
      const result = await searchOrdersForOperator(db, store.dialect, request.query);
      return page(reply, 200, 'orders', presentConsoleOrders(result));
    });

    // The same search as a CSV file: the page's filters (its query string), every matching order.
    app.get('/orders.csv', { schema: { querystring: OrderSearchQuery } }, async (request, reply) =>
      sendCsv(reply, await ordersCsvForOperator(db, store.dialect, request.query), now()),
    );

    /**
     * The order's page; `refused`: a form that was not saved, shown where it was typed with the
     * reason — a ship form on its split (`shipError`) or the internal note (`refusedNote`).
     */
    const orderPage = async (
      reply: FastifyReply,
      status: number,
      orderId: string,
      refused: {
        shipError?: { splitId: number; message: string; carrier: string; trackingCode: string };
        refusedNote?: { text: string; reason: string };
      } = {},
    ) => {
      const { role } = user(reply.request);
      const detail = await orderForOperator(db, Number(orderId));
      const note = await orderNoteForOperator(db, Number(detail.order.id));
      const shipping = await channelShippingByCode(db);
      const rights = {
        fulfil: can(role, 'orders:fulfil'),
        cancel: can(role, 'orders:cancel'),
        webhooks: can(role, 'webhooks:manage'),
        note: can(role, 'orders:note'),
        channels: can(role, 'catalog:write'),
      };
      return page(
        reply,
        status,
        'order',
        presentConsoleOrder(detail, rights, {
          note: { note, refused: refused.refusedNote ?? null, max: MAX_ORDER_NOTE },
          shipping: {
            carriersOf: (channelCode) => shipping.get(channelCode)?.carriers ?? [],
            trackingLink: (channelCode, trackingCode) => trackingLinkOf(shipping, channelCode, trackingCode),
            refused: refused.shipError ?? null,
          },
        }),
      );
    };

    app.get('/orders/:id', { schema: { params: ConsoleIdParams } }, async (request, reply) => orderPage(reply, 200, request.params.id));

    // The internal note (issue 29, 10): saved, audited, back to the order (303); too long: the form again with the text.
    app.post('/orders/:id/note', { schema: { params: ConsoleIdParams, body: OrderNoteForm } }, async (request, reply) => {
      const text = request.body.note;
      let orderId: number;
      try {
        orderId = await setOrderNote(db, actor(request), request.params.id, text, now());
      } catch (error) {
        if (error instanceof AppError && error.kind === 'invalid')
          return orderPage(reply, 400, request.params.id, { refusedNote: { text, reason: error.message } });
        throw error;
      }
      await forms.flash(request, 'notice', { text: text.trim() === '' ? 'Note removed.' : 'Note saved.' });
      return reply.redirect(`${ORDERS}/${orderId}#note`, 303);
    });

    // Both answer with the order's page (303): htmx follows it and swaps <main> in place. The
    // carrier is picked from the split's channel's carriers (any typed in when it lists none); a
    // refused one comes back as the order's page with the reason on that split, nothing written.
    app.post('/splits/:id/ship', { schema: { params: ConsoleIdParams, body: ShipForm } }, async (request, reply) => {
      const { carrier, trackingCode } = request.body;
      try {
        const orderId = await shipWithChannelCarrier(db, actor(request), Number(request.params.id), { carrier, trackingCode }, now());
        await forms.flash(request, 'notice', { text: `Split order ${request.params.id} shipped (tracking ${trackingCode.trim()}).` });
        return reply.redirect(`${ORDERS}/${orderId}`, 303);
      } catch (error) {
        if (!(error instanceof AppError) || error.kind !== 'invalid') throw error;
        const split = await splitOrderRef(db, Number(request.params.id));
        const message = error.errors?.length ? error.errors.map((e) => `${e.field} ${e.message}`).join('; ') : error.message;
        return orderPage(reply, 400, String(split.order_id), { shipError: { splitId: split.id, message, carrier, trackingCode } });
      }
    });

    app.post('/splits/:id/deliver', { schema: { params: ConsoleIdParams, body: ActionForm } }, async (request, reply) => {
      const orderId = await deliverSplitOrder(db, actor(request), Number(request.params.id), now());
      await forms.flash(request, 'notice', { text: `Split order ${request.params.id} marked delivered.` });
      return reply.redirect(`${ORDERS}/${orderId}`, 303);
    });

    // A destructive action asks first (SPEC §14): this page says what the cancellation does.
    app.get('/splits/:id/cancel', { schema: { params: ConsoleIdParams } }, async (request, reply) => {
      const preview = await cancellationPreview(db, Number(request.params.id));
      const names = await merchantNamesById(db, [preview.merchantId]);
      return page(reply, 200, 'split-cancel', presentSplitCancel(preview, names.get(preview.merchantId) ?? '', config.supplierCurrency));
    });

    app.post('/splits/:id/cancel', { schema: { params: ConsoleIdParams, body: CancelSplitForm } }, async (request, reply) => {
      const orderId = await cancelUnshippedSplit(db, actor(request), Number(request.params.id), request.body.reason, now());
      await forms.flash(request, 'notice', { text: `Split order ${request.params.id} cancelled; its lines are back in stock.` });
      return reply.redirect(`${ORDERS}/${orderId}`, 303);
    });
  },
};
