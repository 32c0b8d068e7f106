import { Readable } from 'node:stream';
import { CLAIM_REASONS, CLAIM_RESOLUTIONS, EVIDENCE_TYPES, MAX_CLAIM_EVIDENCE } from '../../../domain/claims.ts';
import { AppError, isRefusal } from '../../../domain/errors.ts';
import { lookupId } from '../../../domain/ids.ts';
import { mayManage } from '../../../domain/merchant-users.ts';
import { sendEvidence } from '../../../http/downloads.ts';
import { httpStatus } from '../../../http/errors.ts';
import { OpenClaimBody, ClaimReturnBody } from '../../../schemas/claims.ts';
import {
  ManagerClaimFileParams,
  ManagerClaimParams,
  ManagerClaimQuery,
  ManagerClaimReturnForm,
  ManagerCsrfForm,
  ManagerIdParams,
  ManagerOpenClaimForm,
} from '../../../schemas/manager.ts';
import { parseDocument } from '../../../schemas/validate.ts';
import { evidenceDownload, storeEvidence } from '../../../services/claim-files.service.ts';
import {
  claimForMerchant,
  claimFormFor,
  claimListFilters,
  claimsCsvForMerchant,
  claimsPageForMerchant,
  unattachedEvidence,
} from '../../../services/claims-manager.service.ts';
import { cancelClaim, openClaim, postClaimReturn } from '../../../services/claims.service.ts';
import { auditWrite } from '../../../services/merchant-team.service.ts';
import { sendCsv } from '../../csv.ts';
import { evidenceLabel, presentClaimForm, presentManagerClaim, presentManagerClaims, type ClaimFormInput, type ClaimFormRefusal } from '../present-claims.ts';
import type { ManagerPage } from './context.ts';

const CLAIMS = '/manager/claims';

/** A script's upload as the route sees it: the request stream, unread (the API's evidence route does the same). */
class UploadBody {
  readonly #stream: Readable;
  constructor(stream: Readable) {
    this.#stream = stream;
  }
  get stream(): Readable {
    return this.#stream;
  }
}

/** A repeated form field as a list (one value arrives as a string, none as undefined). */
const listOf = (value: string | string[] | undefined) => (value === undefined ? [] : [value].flat());

/** An AppError's reasons, one line each (`items[0].quantity: …`). */
const reasonsOf = (error: AppError) => (error.errors?.length ? error.errors.map((e) => `${e.field}: ${e.message}`) : [error.message]);
const fieldsOf = (error: AppError) => (error.errors ?? []).map((e) => e.field);

/**
 * Claims after shipment in the business manager (SPEC §18; docs/claims.md, "The business
 * manager"): opening a claim from a shipped split order (lines, quantities, reason, resolution,
 * description, evidence — uploaded with progress by claim-upload.js, or as files of the multipart
 * form without script), the claims list with its CSV, a claim's page with its history, evidence and
 * decision, the return's tracking and cancelling. The writes are the merchant API's services.
 */
export const claimsPage: ManagerPage = {
  nav: [{ href: CLAIMS, label: 'Claims', permission: 'claims:read' }],
  routes: async (app, { config, store, now, page, forms, user, merchant, actor }) => {
    const deps = { store, config };
    const mayWrite = (request: Parameters<typeof user>[0]) => mayManage(user(request).role, 'claims:write');
    // A script's upload (POST /claims/files): streamed to storage by the API's evidence service.
    app.addContentTypeParser([...EVIDENCE_TYPES], (_request, payload, done) => done(null, new UploadBody(payload)));

    app.get('/claims', { schema: { querystring: ManagerClaimQuery } }, async (request, reply) => {
      const filters = claimListFilters(request.query);
      const result = await claimsPageForMerchant(merchant(request), filters, Number(request.query.page ?? 1));
      return page(reply, 200, 'claims', presentManagerClaims(result, filters, config.supplierCurrency));
    });

    app.get('/claims.csv', { schema: { querystring: ManagerClaimQuery } }, async (request, reply) =>
      sendCsv(reply, claimsCsvForMerchant(merchant(request), claimListFilters(request.query)), now()),
    );

    // An evidence file of the merchant's: an attachment, nosniff, sandboxed (the API's download).
    app.get('/claims/files/:fileId', { schema: { params: ManagerClaimFileParams } }, async (request, reply) =>
      sendEvidence(reply, await evidenceDownload(merchant(request), config, lookupId(request.params.fileId))),
    );

    // The page's script uploads each file here first, with progress; the answer is JSON for it.
    app.post('/claims/files', async (request, reply) => {
      const body = request.body as unknown;
      try {
        if (!(body instanceof UploadBody)) throw new AppError('unsupported_format', 41500, `a file is one of ${EVIDENCE_TYPES.join(', ')}`);
        const stored = await storeEvidence(
          deps,
          merchant(request),
          request.headers['content-type'],
          request.headers['content-length'],
          body.stream,
          null,
          request.id,
        );
        const data = (stored.body as { data: { fileId: string; size: number; contentType: string } }).data;
        return reply
          .code(200)
          .type('application/json')
          .send({ fileId: data.fileId, label: evidenceLabel(data.contentType, data.size) });
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return reply.code(httpStatus(error)).type('application/json').send({ message: error.message });
      }
    });

    app.get('/claims/:claimNo', { schema: { params: ManagerClaimParams } }, async (request, reply) => {
      const claim = await claimForMerchant(merchant(request), lookupId(request.params.claimNo));
      return page(reply, 200, 'claim', presentManagerClaim(claim, mayWrite(request)));
    });

    app.post('/claims/:claimNo/return', { schema: { params: ManagerClaimParams, body: ManagerClaimReturnForm } }, async (request, reply) => {
      const claimNo = lookupId(request.params.claimNo);
      const typed = { carrier: request.body.carrier, trackingCode: request.body.trackingCode };
      try {
        const body = parseDocument<ClaimReturnBody>(ClaimReturnBody, typed);
        await postClaimReturn(
          deps,
          merchant(request),
          claimNo,
          body,
          null,
          request.id,
          auditWrite(actor(request), 'claim.post_return', now(), { carrier: body.carrier, trackingCode: body.trackingCode }),
        );
      } catch (error) {
        // Another merchant's claim (or none) stays a 404 page; the wrong state or a bad field is the claim's page again, typed values kept.
        if (!(error instanceof AppError) || error.kind === 'not_found' || !isRefusal(error)) throw error;
        const claim = await claimForMerchant(merchant(request), claimNo);
        return page(reply, httpStatus(error), 'claim', presentManagerClaim(claim, mayWrite(request), { ...typed, errors: reasonsOf(error) }));
      }
      await forms.flash(request, 'notice', { text: `Return tracking of claim ${claimNo} saved: the supplier marks the goods received when they arrive.` });
      return reply.redirect(`${CLAIMS}/${claimNo}`, 303);
    });

    app.post('/claims/:claimNo/cancel', { schema: { params: ManagerClaimParams, body: ManagerCsrfForm } }, async (request, reply) => {
      const claimNo = lookupId(request.params.claimNo);
      await cancelClaim(deps, merchant(request), claimNo, null, request.id, auditWrite(actor(request), 'claim.cancel', now()));
      await forms.flash(request, 'notice', { text: `Claim ${claimNo} cancelled: its quantities may be claimed again.` });
      return reply.redirect(`${CLAIMS}/${claimNo}`, 303);
    });

    app.get('/split-orders/:id/claim', { schema: { params: ManagerIdParams } }, async (request, reply) => {
      const form = await claimFormFor(merchant(request), config, lookupId(request.params.id), now());
      return page(reply, form.closed ? 409 : 200, 'claim-form', presentClaimForm(form, null, null));
    });

    app.post('/split-orders/:id/claim', { schema: { params: ManagerIdParams, body: ManagerOpenClaimForm } }, async (request, reply) => {
      const scope = merchant(request);
      const form = await claimFormFor(scope, config, lookupId(request.params.id), now());
      const b = request.body;
      const files = forms.files(request);
      const skus = listOf(b.sku);
      const quantities = listOf(b.quantity).map((q) => q.trim());
      const keptIds = listOf(b.evidence);
      let kept = await unattachedEvidence(scope, keptIds.filter((id) => /^[0-9]{1,16}$/.test(id)).map(Number));
      const input = (): ClaimFormInput => ({
        // The quantities by the form's lines (a line the form did not send stays blank).
        quantities: form.lines.map((l) => quantities[skus.indexOf(l.sku)] ?? ''),
        reason: b.reason ?? '',
        resolution: b.resolution ?? '',
        description: b.description ?? '',
        evidence: kept,
      });
      const refuse = (status: number, refusal: ClaimFormRefusal) => page(reply, status, 'claim-form', presentClaimForm(form, input(), refusal));
      if (form.closed) return refuse(409, { reasons: [form.closed], fields: [] });

      // What the form can check before a file is stored: a refusal here writes nothing at all.
      const problems: { field: string; message: string }[] = [];
      const items: { sku: string; quantity: number }[] = [];
      form.lines.forEach((line, index) => {
        const typed = input().quantities[index];
        if (typed === '' || typed === '0') return;
        const field = `items[${items.length}].quantity`;
        if (!/^[0-9]{1,10}$/.test(typed)) problems.push({ field, message: `${line.sku}: the quantity is a whole number` });
        else if (Number(typed) > line.claimable) problems.push({ field, message: `${line.sku}: at most ${line.claimable} can be claimed` });
        items.push({ sku: line.sku, quantity: Number(typed) });
      });
      if (items.length === 0) problems.push({ field: 'items', message: 'choose what the claim is about: a quantity above 0 on at least one line' });
      if (!(CLAIM_REASONS as readonly string[]).includes(b.reason ?? '')) problems.push({ field: 'reason', message: 'choose a reason' });
      if (!(CLAIM_RESOLUTIONS as readonly string[]).includes(b.resolution ?? '')) problems.push({ field: 'resolution', message: 'choose refund or reship' });
      if ((b.description ?? '').length > 2000)
        problems.push({ field: 'description', message: `at most 2,000 characters (${(b.description ?? '').length} typed)` });
      if (kept.length < keptIds.length) problems.push({ field: 'evidence', message: 'a file named is not one of yours on no other claim: upload it again' });
      if (kept.length + files.length > MAX_CLAIM_EVIDENCE)
        problems.push({ field: 'evidence', message: `at most ${MAX_CLAIM_EVIDENCE} files (${kept.length + files.length} chosen)` });
      if (problems.length)
        return refuse(400, {
          reasons: problems.map((p) => p.message),
          fields: problems.map((p) => p.field),
        });

      // The files of a form sent without script: stored as the script's uploads are, each refused one named.
      const fileProblems: string[] = [];
      let fileStatus = 400;
      for (const { file } of files) {
        try {
          const stored = await storeEvidence(deps, scope, file.type, String(file.size), Readable.from(Buffer.from(await file.arrayBuffer())), null, request.id);
          const data = (stored.body as { data: { fileId: string; size: number; contentType: string } }).data;
          kept = [...kept, { id: Number(data.fileId), contentType: data.contentType, sizeBytes: data.size }];
        } catch (error) {
          if (!(error instanceof AppError)) throw error;
          fileProblems.push(`${file.name || 'a file'}: ${error.message}`);
          fileStatus = httpStatus(error);
        }
      }
      if (fileProblems.length) return refuse(fileStatus, { reasons: fileProblems, fields: ['files'] });

      let claimNo: string;
      try {
        const body = parseDocument<OpenClaimBody>(OpenClaimBody, {
          orderId: form.splitId,
          reason: b.reason,
          resolution: b.resolution,
          items,
          ...(b.description ? { description: b.description } : {}),
          evidence: kept.map((f) => f.id),
        });
        const opened = await openClaim(
          deps,
          scope,
          body,
          null,
          request.id,
          auditWrite(actor(request), 'claim.open', now(), {
            splitOrderId: form.splitId,
            reason: body.reason,
            resolution: body.resolution,
            items: items.map((i) => `${i.sku} x ${i.quantity}`).join('; '),
            evidence: kept.length,
          }),
        );
        claimNo = (opened.body as { data: { claimNo: string } }).data.claimNo;
      } catch (error) {
        if (!(error instanceof AppError) || error.kind === 'not_found' || !isRefusal(error)) throw error;
        return refuse(httpStatus(error), { reasons: reasonsOf(error), fields: fieldsOf(error) });
      }
      await forms.flash(request, 'notice', {
        text: `Claim ${claimNo} opened: the supplier’s after-sales desk decides it; its decision shows here.`,
      });
      return reply.redirect(`${CLAIMS}/${claimNo}`, 303);
    });
  },
};
