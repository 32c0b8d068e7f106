import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EVIDENCE_TYPES } from '../../../domain/claims.ts';
import { AppError } from '../../../domain/errors.ts';
import { evidenceDownload, storeEvidence } from '../../../services/claim-files.service.ts';
import { sendEvidence } from '../../downloads.ts';
import type { Config } from '../../../config.ts';
import { sendStored } from '../../envelope.ts';
import {
  ClaimListQuery,
  ClaimNoParams,
  ClaimPage,
  ClaimRecord,
  ClaimReturnBody,
  FileIdParams,
  OpenClaimBody,
  OpenedClaim,
  UploadedEvidence,
} from '../../../schemas/claims.ts';
import { ErrorEnvelope, MerchantResponses } from '../../../schemas/common.ts';
import { IdempotencyHeaders } from '../../../schemas/orders.ts';
import { cancelClaim, getClaim, listClaims, openClaim, postClaimReturn } from '../../../services/claims.service.ts';
import type { Store } from '../../../store/db.ts';

const CLAIMS = ['Claims'];

/**
 * An upload's body as the route sees it: the request stream, unread. A class with a private field,
 * so the Text rule's walk over the body (which trims strings in objects) finds no property to touch.
 */
class UploadBody {
  readonly #stream: Readable;
  constructor(stream: Readable) {
    this.#stream = stream;
  }
  get stream(): Readable {
    return this.#stream;
  }
}

/** The OpenAPI description of a binary upload or download (openapi.document.ts reads `x-binary`). */
const BINARY = { 'x-binary': [...EVIDENCE_TYPES] };

/** SPEC §18: claims after shipment — open, follow, cancel, post the return (scopes claims:read, claims:write). */
export const claimRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config }> = async (app, { store, config }) => {
  const deps = { store, config };
  // Evidence bodies are not parsed: the route streams them to storage (claim-files.service.ts).
  app.addContentTypeParser([...EVIDENCE_TYPES], (_request, payload, done) => done(null, new UploadBody(payload)));
  app.post(
    '/v1/claims/files',
    {
      schema: {
        operationId: 'uploadClaimEvidence',
        summary: 'Upload an evidence file (photo or PDF) for a claim',
        description:
          'The raw bytes as the body, with `Content-Type` image/jpeg, image/png, image/webp or application/pdf; at most 5 MB (413/41300). ' +
          'The type is read from the bytes: a file whose bytes are not of its Content-Type is 415/41500. Returns `{fileId, size, contentType}`; ' +
          'name the `fileId` in `evidence` when opening the claim (at most 6). Files no claim names are removed after a day. Honours `Idempotency-Key`.',
        tags: CLAIMS,
        headers: IdempotencyHeaders,
        response: MerchantResponses(UploadedEvidence),
        ...BINARY,
      },
      config: { envelope: false },
    },
    async (request, reply) => {
      const body = request.body as unknown;
      if (!(body instanceof UploadBody)) throw new AppError('unsupported_format', 41500, `send the file as one of ${EVIDENCE_TYPES.join(', ')}`);
      const stored = await storeEvidence(
        deps,
        request.merchant!,
        request.headers['content-type'],
        request.headers['content-length'],
        body.stream,
        request.headers['idempotency-key'] ?? null,
        request.id,
      );
      return sendStored(reply, stored);
    },
  );
  app.get(
    '/v1/claims/files/:fileId',
    {
      schema: {
        operationId: 'downloadClaimEvidence',
        summary: 'Download an evidence file',
        description: 'Your own files only (another merchant’s answers 404). Sent as an attachment with `X-Content-Type-Options: nosniff`.',
        tags: CLAIMS,
        params: FileIdParams,
        response: { '4xx': ErrorEnvelope, '5xx': ErrorEnvelope },
        ...BINARY,
      },
      config: { envelope: false },
    },
    async (request, reply) => sendEvidence(reply, await evidenceDownload(request.merchant!, config, request.params.fileId)),
  );
  app.post(
    '/v1/claims',
    {
      schema: {
        operationId: 'openClaim',
        summary: 'Open a claim on a shipped split order',
        description:
          'A parcel lost (`not_received`), damaged, wrong, incomplete or of poor quality: name the split order (`orderId` = `splitOrders[].id`), ' +
          'the SKUs and quantities, and the resolution you want — `refund` (credited to your account) or `reship` (a replacement order, charged nothing). ' +
          `Only on a shipped or delivered split order, within CLAIM_WINDOW_DAYS (default 60) of its shipment (else 409/40904; before shipment, request a refund); ` +
          'each SKU at most what shipped less what was refunded and what other claims hold (else 422/42204 naming `items[i].quantity`). ' +
          'Attach evidence uploaded first with `POST /v1/claims/files` (at most 6). Honours `Idempotency-Key`.',
        tags: CLAIMS,
        body: OpenClaimBody,
        headers: IdempotencyHeaders,
        response: MerchantResponses(OpenedClaim),
      },
      config: { envelope: false },
    },
    async (request, reply) => sendStored(reply, await openClaim(deps, request.merchant!, request.body, request.headers['idempotency-key'] ?? null, request.id)),
  );
  app.get(
    '/v1/claims',
    {
      schema: {
        operationId: 'listClaims',
        summary: 'Your claims, newest first',
        description:
          'Filters `status`, `orderId` (a split order id), `createStartTime`/`createEndTime`. Page by number, or walk with `cursor` (follow `nextCursor` until it is null).',
        tags: CLAIMS,
        querystring: ClaimListQuery,
        response: MerchantResponses(ClaimPage),
      },
    },
    async (request) => listClaims(request.merchant!, request.query),
  );
  app.get(
    '/v1/claims/:claimNo',
    {
      schema: { operationId: 'getClaim', summary: 'One claim', tags: CLAIMS, params: ClaimNoParams, response: MerchantResponses(ClaimRecord) },
    },
    async (request) => getClaim(request.merchant!, request.params.claimNo),
  );
  app.post(
    '/v1/claims/:claimNo/cancel',
    {
      schema: {
        operationId: 'cancelClaim',
        summary: 'Withdraw an open claim',
        description: 'Only while the claim is `open` (else 409/40903). Honours `Idempotency-Key`.',
        tags: CLAIMS,
        params: ClaimNoParams,
        headers: IdempotencyHeaders,
        response: MerchantResponses(ClaimRecord),
      },
      config: { envelope: false },
    },
    async (request, reply) =>
      sendStored(reply, await cancelClaim(deps, request.merchant!, request.params.claimNo, request.headers['idempotency-key'] ?? null, request.id)),
  );
  app.post(
    '/v1/claims/:claimNo/return',
    {
      schema: {
        operationId: 'postClaimReturn',
        summary: "The return's carrier and tracking code",
        description:
          'When the approval asked for the goods back (`awaiting_return`; else 409/40903); may be sent again to correct it. Honours `Idempotency-Key`.',
        tags: CLAIMS,
        params: ClaimNoParams,
        body: ClaimReturnBody,
        headers: IdempotencyHeaders,
        response: MerchantResponses(ClaimRecord),
      },
      config: { envelope: false },
    },
    async (request, reply) =>
      sendStored(
        reply,
        await postClaimReturn(deps, request.merchant!, request.params.claimNo, request.body, request.headers['idempotency-key'] ?? null, request.id),
      ),
  );
};
