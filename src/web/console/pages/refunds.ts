import { AppError } from '../../../domain/errors.ts';
import { can } from '../../../domain/staff.ts';
import { ConsolePageQuery, ConsoleRefundParams, RefundDecisionForm } from '../../../schemas/console.ts';
import { RefundListQuery } from '../../../schemas/console-operations.ts';
import { REFUND_STATES } from '../../../domain/vocabulary.ts';
import { refundListCsv, searchRefundsForOperator } from '../../../services/refund-search.service.ts';
import { refundQueueForConsole, refundsCsvForOperator, refundsWaiting, reviewRefundInConsole } from '../../../services/refunds.service.ts';
import { sendCsv } from '../../csv.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentRefundDecided, presentRefundQueue, presentRefundRow } from '../present.ts';
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
  routes: async (app, { config, store, now, page, forms, user, actor }) => {
    /** The queue's page; `refused`: a decision refused on one of its rows (shown there, with what was typed). */
    const queue = async (
      request: Parameters<typeof user>[0],
      reply: Parameters<typeof page>[0],
      pageNumber: number,
      status = 200,
      refused: { refundNo: string; message: string; reason: string } | null = null,
    ) => {
      const refunds = await refundQueueForConsole(store.db, config, pageNumber, 50, now());
      return page(
        reply,
        status,
        'refunds',
        presentRefundQueue(refunds, { currency: config.supplierCurrency, canReview: can(user(request).role, 'refunds:review'), refused }),
      );
    };

    app.get('/refunds', { schema: { querystring: ConsolePageQuery } }, async (request, reply) => queue(request, reply, Number(request.query.page ?? 1)));

    // The whole queue (every page) as a CSV file.
    app.get('/refunds.csv', async (_request, reply) => sendCsv(reply, await refundsCsvForOperator(store.db, config, 'pending_review', now()), now()));

    app.get('/refunds/all', { schema: { querystring: RefundListQuery } }, async (request, reply) => {
      return page(
        reply,
        200,
        'refund-list',
        presentRefundList(await searchRefundsForOperator(store.db, request.query), REFUND_STATES, config.supplierCurrency),
      );
    });

    // The same list as a CSV file: the page's filters (its query string), every matching refund.
    app.get('/refunds/all.csv', { schema: { querystring: RefundListQuery } }, async (request, reply) =>
      sendCsv(reply, refundListCsv(store.db, config, request.query, now()), now()),
    );

    for (const verb of ['approve', 'reject'] as const) {
      app.post(`/refunds/:refundNo/${verb}`, { schema: { params: ConsoleRefundParams, body: RefundDecisionForm } }, async (request, reply) => {
        const { refundNo } = request.params;
        const reason = request.body.reason ?? '';
        const decision = verb === 'approve' ? { approve: true as const } : { approve: false as const, reason };
        const htmx = request.headers['hx-request'] === 'true';
        let refund: Awaited<ReturnType<typeof reviewRefundInConsole>>;
        try {
          refund = await reviewRefundInConsole(store.db, actor(request), refundNo, decision);
        } catch (error) {
          // A rejection without a reason: the row again, its reason field marked (htmx swaps the row alone).
          if (!(error instanceof AppError) || error.errors?.[0]?.field !== 'reason') throw error;
          const refused = { refundNo: String(refundNo), message: error.errors[0].message, reason };
          if (!htmx) return queue(request, reply, 1, 400, refused);
          const row = (await refundQueueForConsole(store.db, config, 1, 50, now())).list.find((r) => r.refundNo === refused.refundNo);
          if (!row) throw error;
          reply.header('HX-Refused', 'row');
          return page(reply, 400, 'refund-row', presentRefundRow(row, config.supplierCurrency, refused, true));
        }
        // htmx swaps the row in place (and the count); without JavaScript the form posts and the queue reloads.
        if (htmx) return page(reply, 200, 'refund-decided', presentRefundDecided(refund, config.supplierCurrency, await refundsWaiting(store.db)));
        await forms.flash(request, 'notice', { text: `Refund ${refundNo} ${verb === 'approve' ? 'approved' : 'rejected'}.` });
        return reply.redirect(`${CONSOLE_PREFIX}/refunds`, 303);
      });
    }
  },
};
