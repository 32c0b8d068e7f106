import { can } from '../../../domain/staff.ts';
import { ConsolePageQuery, ConsoleRefundParams, RefundDecisionForm } from '../../../schemas/console.ts';
import { listRefundsForOperator, refundsCsvForOperator, reviewRefund } from '../../../services/refunds.service.ts';
import { sendCsv } from '../../csv.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentRefundDecided, presentRefundQueue } from '../present.ts';
import type { ConsolePage } from './context.ts';

/** The refund review queue, oldest first; approve or reject in place. */
export const refundsPage: ConsolePage = {
  nav: [{ href: `${CONSOLE_PREFIX}/refunds`, label: 'Refund review', permission: 'refunds:read' }],
  routes: async (app, { config, store, now, page, user, actor }) => {
    app.get('/refunds', { schema: { querystring: ConsolePageQuery } }, async (request, reply) => {
      const pageNumber = Number(request.query.page ?? 1);
      const refunds = await listRefundsForOperator(store.db, config, 'pending_review', pageNumber, 50, now());
      return page(reply, 200, 'refunds', presentRefundQueue(refunds, { currency: 'USD', canReview: can(user(request).role, 'refunds:review') }));
    });

    // The whole queue (every page) as a CSV file.
    app.get('/refunds.csv', async (_request, reply) => sendCsv(reply, await refundsCsvForOperator(store.db, config, 'pending_review', now()), now()));

    for (const verb of ['approve', 'reject'] as const) {
      app.post(`/refunds/:refundNo/${verb}`, { schema: { params: ConsoleRefundParams, body: RefundDecisionForm } }, async (request, reply) => {
        const decision =
          verb === 'approve' ? { approve: true as const } : { approve: false as const, reason: request.body.reason || 'rejected by the operator' };
        const refund = await reviewRefund(store.db, actor(request), request.params.refundNo, decision);
        // htmx swaps the row in place; without JavaScript the form posts and the queue reloads.
        if (request.headers['hx-request'] === 'true') return page(reply, 200, 'refund-decided', presentRefundDecided(refund, 'USD'));
        return reply.redirect(`${CONSOLE_PREFIX}/refunds`, 303);
      });
    }
  },
};
