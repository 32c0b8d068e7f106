import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';
import type { Config } from '../../../config.ts';
import { adminKeyActor } from '../../../domain/audit.ts';
import { AdminResponses } from '../../../schemas/admin-responses.ts';
import {
  AdminClaimPage,
  AdminClaimQuery,
  ApproveClaimBody,
  ClaimNoParams,
  ClaimRecord,
  ClaimResolutionBody,
  FileIdParams,
  ReceiveClaimBody,
  RejectClaimBody,
} from '../../../schemas/claims.ts';
import { approveClaim, getClaimForOperator, listClaimsForOperator, receiveClaim, rejectClaim, setClaimResolution } from '../../../services/claims.service.ts';
import type { Store } from '../../../store/db.ts';
import { allMerchants } from '../../../store/tenancy.ts';
import { EVIDENCE_TYPES } from '../../../domain/claims.ts';
import { ErrorEnvelope } from '../../../schemas/common.ts';
import { evidenceDownload } from '../../../services/claim-files.service.ts';
import { sendEvidence } from '../../downloads.ts';

/** SPEC §18: the operator's claims queue and decisions; each decision is audited in its transaction. */
export const adminClaimRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config; adminApiKey: string }> = async (
  app,
  { store, config, adminApiKey },
) => {
  const deps = { store, config };
  const actor = (request: { id: string }) => adminKeyActor(adminApiKey, request.id);
  const doc = (summary: string, data: TSchema) => ({ summary, tags: ['Claims'], response: AdminResponses(data) });
  app.get(
    '/claims',
    {
      schema: {
        ...doc('Claims of every merchant: open ones first, oldest first, with age and SLA flag (CLAIM_SLA_HOURS)', AdminClaimPage),
        querystring: AdminClaimQuery,
      },
    },
    async (request) =>
      listClaimsForOperator(
        store.db,
        config,
        { status: request.query.status ?? null, merchantId: null, reason: null },
        request.query.pageNumber ?? 1,
        request.query.pageSize ?? 50,
      ),
  );
  app.get(
    '/claims/files/:fileId',
    {
      schema: {
        summary: 'Download an evidence file of any merchant (an attachment, nosniff)',
        tags: ['Claims'],
        params: FileIdParams,
        response: { '4xx': ErrorEnvelope, '5xx': ErrorEnvelope },
        'x-binary': [...EVIDENCE_TYPES],
      },
      config: { envelope: false },
    },
    async (request, reply) => sendEvidence(reply, await evidenceDownload(allMerchants(store.db), config, request.params.fileId)),
  );
  app.get('/claims/:claimNo', { schema: { ...doc('One claim', ClaimRecord), params: ClaimNoParams } }, async (request) =>
    getClaimForOperator(store.db, request.params.claimNo),
  );
  app.post(
    '/claims/:claimNo/approve',
    {
      schema: {
        ...doc(
          'Approve an open claim: resolved at once (credited, or reshipped in a replacement order), or, with returnRequired, awaiting the return',
          ClaimRecord,
        ),
        params: ClaimNoParams,
        body: ApproveClaimBody,
      },
    },
    async (request) => approveClaim(deps, actor(request), request.params.claimNo, request.body ?? {}),
  );
  app.post(
    '/claims/:claimNo/reject',
    { schema: { ...doc('Reject an open claim, with the reason the merchant sees', ClaimRecord), params: ClaimNoParams, body: RejectClaimBody } },
    async (request) => rejectClaim(deps, actor(request), request.params.claimNo, request.body.reason),
  );
  app.post(
    '/claims/:claimNo/received',
    {
      schema: {
        ...doc('The returned goods arrived in a warehouse: back in its stock (claim_return), then the claim resolves', ClaimRecord),
        params: ClaimNoParams,
        body: ReceiveClaimBody,
      },
    },
    async (request) => receiveClaim(deps, actor(request), request.params.claimNo, request.body),
  );
  app.post(
    '/claims/:claimNo/resolution',
    {
      schema: {
        ...doc('Switch the resolution of an approved claim not resolved yet (an approved or received one resolves at once)', ClaimRecord),
        params: ClaimNoParams,
        body: ClaimResolutionBody,
      },
    },
    async (request) => setClaimResolution(deps, actor(request), request.params.claimNo, request.body.resolution),
  );
};
