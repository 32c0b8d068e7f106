import { can } from '../../../domain/staff.ts';
import { ConsolePageQuery, ConsoleRefundParams, RefundDecisionForm } from '../../../schemas/console.ts';
import { RefundListQuery } from '../../../schemas/console-operations.ts';
import { REFUND_STATES } from '../../../domain/vocabulary.ts';
import { refundListCsv, searchRefundsForOperator } from '../../../services/refund-search.service.ts';
import { listRefundsForOperator, refundsCsvForOperator, reviewRefundInConsole } from '../../../services/refunds.service.ts';
import { sendCsv } from '../../csv.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentRefundDecided, presentRefundQueue } from '../present.ts';
import { presentRefundList } from '../present-merchants.ts';
import type { ConsolePage } from './context.ts';

/**
 * The refund review queue, oldest first, approve or reject in place; and the list of every refund
 * (any status, newest first, filtered by status, merchant and day requested) with its CSV file.
 */
export const refundsPage: ConsolePage = {
  nav: [
    { href: `${CONSOLE_PREFIX}/refunds`, label: 'Refund review', permission: 'refunds:read' },
    { href: `${CONSOLE_PREFIX}/refunds/all`, label: 'All refunds', permission: 'refunds:read' },
  ],
  routes: async (app, { config, store, now, page, user, actor }) => {
    app.get('/refunds', { schema: { querystring: ConsolePageQuery } }, async (request, reply) => {
      const pageNumber = Number(request.query.page ?? 1);
      const refunds = await listRefundsForOperator(store.db, config, 'pending_review', pageNumber, 50, now());
      return page(reply, 200, 'refunds', presentRefundQueue(refunds, { currency: 'USD', canReview: can(user(request).role, 'refunds:review') }));
    });

    // The whole queue (every page) as a CSV file.
    app.get('/refunds.csv', async (_request, reply) => sendCsv(reply, await refundsCsvForOperator(store.db, config, 'pending_review', now()), now()));

    app.get('/refunds/all', { schema: { querystring: RefundListQuery } }, async (request, reply) => {
      return page(reply, 200, 'refund-list', presentRefundList(await searchRefundsForOperator(store.db, request.query), REFUND_STATES));
    });

    // The same list as a CSV file: the page's filters (its query string), every matching refund.
    app.get('/refunds/all.csv', { schema: { querystring: RefundListQuery } }, async (request, reply) =>
      sendCsv(reply, refundListCsv(store.db, config, request.query, now()), now()),
    );

    for (const verb of ['approve', 'reject'] as const) {
      app.post(`/refunds/:refundNo/${verb}`, { schema: { params: ConsoleRefundParams, body: RefundDecisionForm } }, async (request, reply) => {
        const decision =
          verb === 'approve' ? { approve: true as const } : { approve: false as const, reason: request.body.reason || 'rejected by the operator' };
        const refund = await reviewRefundInConsole(store.db, actor(request), Number(request.params.refundNo), decision);
        // htmx swaps the row in place; without JavaScript the form posts and the queue reloads.
        if (request.headers['hx-request'] === 'true') return page(reply, 200, 'refund-decided', presentRefundDecided(refund, 'USD'));
        return reply.redirect(`${CONSOLE_PREFIX}/refunds`, 303);
      });
    }
  },
};
