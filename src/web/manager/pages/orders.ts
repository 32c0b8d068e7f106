import { mayManage } from '../../../domain/merchant-users.ts';
import { claimableSplits } from '../../../services/claims-manager.service.ts';
import { ManagerIdParams, ManagerOrderQuery } from '../../../schemas/manager.ts';
import { channelShippingByCode, trackingLinkOf } from '../../../services/catalog.service.ts';
import { orderForMerchant, ordersCsvForMerchant, searchOrdersForMerchant } from '../../../services/order-search.service.ts';
import { sendCsv } from '../../csv.ts';
import { presentManagerOrder, presentManagerOrders } from '../present.ts';
import type { ManagerPage } from './context.ts';

/** Page 4, Orders and refunds (read-only): search by id, custom id, date and status; detail with splits, tracking, refunds. */
export const ordersPage: ManagerPage = {
  nav: [{ href: '/manager/orders', label: 'Orders', permission: 'orders:read' }],
  routes: async (app, { config, store, now, page, merchant, user }) => {
    app.get('/orders', { schema: { querystring: ManagerOrderQuery } }, async (request, reply) => {
      const result = await searchOrdersForMerchant(merchant(request), store.dialect, request.query);
      return page(reply, 200, 'orders', presentManagerOrders(result));
    });

    // The same search as a CSV file: the page's filters, every matching order of this merchant only.
    app.get('/orders.csv', { schema: { querystring: ManagerOrderQuery } }, async (request, reply) =>
      sendCsv(reply, await ordersCsvForMerchant(merchant(request), store.dialect, request.query), now()),
    );

    app.get('/orders/:id', { schema: { params: ManagerIdParams } }, async (request, reply) => {
      const detail = await orderForMerchant(merchant(request), Number(request.params.id));
      // A shipped split's tracking number links to its channel's tracking page (issue 29, 10).
      const shipping = await channelShippingByCode(store.db);
      // A split order that shipped, within the claim window, with something left to claim: "Open a claim" (for roles that may).
      const claimable = mayManage(user(request).role, 'claims:write')
        ? await claimableSplits(merchant(request), config, detail.order.splitOrders, now())
        : new Set<string>();
      return page(
        reply,
        200,
        'order',
        presentManagerOrder(detail, (channelCode, trackingCode) => trackingLinkOf(shipping, channelCode, trackingCode), claimable),
      );
    });
  },
};
