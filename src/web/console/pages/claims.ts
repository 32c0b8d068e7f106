import { CLAIM_RESOLUTIONS, type ClaimResolution } from '../../../domain/claims.ts';
import { fieldError } from '../../../domain/errors.ts';
import { can } from '../../../domain/staff.ts';
import { sendEvidence } from '../../../http/downloads.ts';
import { ClaimDecisionForm, ConsoleClaimFileParams, ConsoleClaimParams, ConsoleClaimQuery } from '../../../schemas/console.ts';
import { claimForConsole, claimQueueFilter, claimQueueForConsole, claimsCsvForConsole, evidenceForConsole } from '../../../services/claims-console.service.ts';
import { approveClaim, receiveClaim, rejectClaim, setClaimResolution } from '../../../services/claims.service.ts';
import { sendCsv } from '../../csv.ts';
import { CONSOLE_PREFIX } from '../console-routes.ts';
import { presentClaim, presentClaimQueue } from '../present-claims.ts';
import type { ConsolePage } from './context.ts';

/** Claims shown on a page of the queue. */
const QUEUE_PAGE = 50;

/**
 * Claims after shipment (SPEC §18; docs/claims.md, "The console"): the queue (open ones first,
 * oldest first, past CLAIM_SLA_HOURS marked, filtered by state, merchant and reason) with its CSV,
 * a claim's page with its evidence and history, and the decisions — each POST → 303 → the claim's
 * page with a notice; a refusal (the wrong state, a missing reason) is shown in place by the
 * console's refusal handling, nothing written.
 */
export const claimsPage: ConsolePage = {
  nav: [{ href: `${CONSOLE_PREFIX}/claims`, label: 'Claims', permission: 'claims:read' }],
  routes: async (app, { config, store, now, page, forms, user, actor }) => {
    const deps = { store, config };

    app.get('/claims', { schema: { querystring: ConsoleClaimQuery } }, async (request, reply) => {
      const filter = claimQueueFilter(request.query);
      const queue = await claimQueueForConsole(store.db, config, filter, Number(request.query.page ?? 1), QUEUE_PAGE, now());
      return page(reply, 200, 'claims', presentClaimQueue(queue, filter, config.claimSlaHours));
    });

    // The queue (every page, the page's filters) as a CSV file.
    app.get('/claims.csv', { schema: { querystring: ConsoleClaimQuery } }, async (request, reply) =>
      sendCsv(reply, claimsCsvForConsole(store.db, config, claimQueueFilter(request.query), now()), now()),
    );

    // An evidence file, as the operator's download sends it (an attachment, nosniff, sandboxed): the
    // claim page's thumbnails load it with <img> for JPEG, PNG and WebP only.
    app.get('/claims/files/:fileId', { schema: { params: ConsoleClaimFileParams } }, async (request, reply) =>
      sendEvidence(reply, await evidenceForConsole(store.db, config, request.params.fileId)),
    );

    app.get('/claims/:claimNo', { schema: { params: ConsoleClaimParams } }, async (request, reply) => {
      const { role } = user(request);
      const claim = await claimForConsole(store.db, config, request.params.claimNo, now());
      return page(
        reply,
        200,
        'claim',
        presentClaim(claim, { decide: can(role, 'claims:decide'), receive: can(role, 'claims:receive') }, config.supplierCurrency, config.defaultWarehouse),
      );
    });

    /** The decision's notice, then the claim's page. */
    const done = async (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], claimNo: number, text: string) => {
      await forms.flash(request, 'notice', { text: `Claim ${claimNo} ${text}` });
      return reply.redirect(`${CONSOLE_PREFIX}/claims/${claimNo}`, 303);
    };
    const outcome = (status: string, decisionReason: string | null) =>
      status === 'credited'
        ? 'approved and credited.'
        : status === 'reshipped'
          ? 'approved: a replacement order is placed.'
          : status === 'awaiting_return'
            ? 'approved: waiting for the goods to come back.'
            : `is ${status.replace(/_/g, ' ')}${decisionReason ? `: ${decisionReason}` : '.'}`;

    for (const returnRequired of [false, true]) {
      app.post(
        `/claims/:claimNo/${returnRequired ? 'require-return' : 'approve'}`,
        { schema: { params: ConsoleClaimParams, body: ClaimDecisionForm } },
        async (request, reply) => {
          const { claimNo } = request.params;
          const note = request.body.note?.trim() ?? '';
          const claim = await approveClaim(deps, actor(request), claimNo, { returnRequired, ...(note ? { note } : {}) }, now());
          return done(request, reply, claimNo, outcome(claim.status, claim.decisionReason));
        },
      );
    }

    app.post('/claims/:claimNo/reject', { schema: { params: ConsoleClaimParams, body: ClaimDecisionForm } }, async (request, reply) => {
      const { claimNo } = request.params;
      await rejectClaim(deps, actor(request), claimNo, request.body.reason?.trim() ?? '', now());
      return done(request, reply, claimNo, 'rejected.');
    });

    app.post('/claims/:claimNo/received', { schema: { params: ConsoleClaimParams, body: ClaimDecisionForm } }, async (request, reply) => {
      const { claimNo } = request.params;
      const warehouseCode = request.body.warehouseCode?.trim() ?? '';
      if (warehouseCode === '') throw fieldError('warehouseCode', 'is required: choose the warehouse the goods came back to');
      const claim = await receiveClaim(deps, actor(request), claimNo, { warehouseCode }, now());
      return done(request, reply, claimNo, `received into ${warehouseCode}; ${outcome(claim.status, claim.decisionReason)}`);
    });

    app.post('/claims/:claimNo/resolution', { schema: { params: ConsoleClaimParams, body: ClaimDecisionForm } }, async (request, reply) => {
      const { claimNo } = request.params;
      const resolution = request.body.resolution ?? '';
      if (!(CLAIM_RESOLUTIONS as readonly string[]).includes(resolution)) throw fieldError('resolution', `must be one of ${CLAIM_RESOLUTIONS.join(', ')}`);
      const claim = await setClaimResolution(deps, actor(request), claimNo, resolution as ClaimResolution, now());
      return done(request, reply, claimNo, `resolves by ${resolution}; ${outcome(claim.status, claim.decisionReason)}`);
    });
  },
};
