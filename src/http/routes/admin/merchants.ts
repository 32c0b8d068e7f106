import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';
import { AdminResponses, IssuedTokenRecord, MerchantList, MerchantRecord, NewMerchantRecord, RevokedToken } from '../../../schemas/admin-responses.ts';
import type { Config } from '../../../config.ts';
import { adminKeyActor } from '../../../domain/audit.ts';
import { formatInstant, type Clock } from '../../../domain/time.ts';
import { invitationUrl, passwordResetUrl } from '../../../domain/merchant-users.ts';
import { IdParams, MerchantBody, MerchantPatchBody, TokenBody, TokenIdParams } from '../../../schemas/admin.ts';
import {
  InvitationCreated,
  InvitationIdParams,
  InviteUserBody,
  OpenInvitationList,
  PasswordResetBody,
  PasswordResetCreated,
  RevokedInvitation,
} from '../../../schemas/manager.ts';
import { inviteUser, openInvitations, revokeInvitation } from '../../../services/merchant-invitations.service.ts';
import { createPasswordReset } from '../../../services/merchant-team.service.ts';
import { findMerchant } from '../../../store/merchants.repository.ts';
import { forMerchant } from '../../../store/tenancy.ts';
import { notFound } from '../../../domain/errors.ts';
import { createMerchant, issueToken, revokeToken, setMerchantStatus } from '../../../services/merchants.service.ts';
import type { Store } from '../../../store/db.ts';
import { listMerchants } from '../../../store/merchants.repository.ts';
import { presentMerchant } from '../../../present/catalog.presenter.ts';

/** Operator credentials: merchants, their client credentials and their bearer tokens. Every write is audited (never a secret). */
export const adminMerchantRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config; adminApiKey: string; now?: Clock }> = async (
  app,
  { store, config, adminApiKey, now = Date.now },
) => {
  const { db } = store;
  const actor = (request: { id: string }) => adminKeyActor(adminApiKey, request.id);
  const doc = (summary: string, data: TSchema) => ({ summary, tags: ['Merchants'], response: AdminResponses(data) });

  app.post(
    '/merchants',
    { schema: { ...doc('Create a merchant: its OAuth client id and secret (shown once)', NewMerchantRecord), body: MerchantBody } },
    async (request) => {
      const m = await createMerchant(db, actor(request), request.body.name, Date.now());
      return { ...m, merchantId: String(m.merchantId) };
    },
  );
  app.get('/merchants', { schema: doc('Every merchant', MerchantList) }, async () => ({ list: (await listMerchants(db)).map(presentMerchant) }));
  app.patch(
    '/merchants/:id',
    { schema: { ...doc('Disable or re-enable a merchant', MerchantRecord), params: IdParams, body: MerchantPatchBody } },
    async (request) => presentMerchant(await setMerchantStatus(forMerchant(db, Number(request.params.id)), actor(request), request.body.status, Date.now())),
  );

  app.post(
    '/merchants/:id/tokens',
    { schema: { ...doc('Issue a long-lived bearer token (shown once)', IssuedTokenRecord), params: IdParams, body: TokenBody } },
    async (request) => {
      const t = await issueToken(forMerchant(db, Number(request.params.id)), actor(request), config.env, request.body ?? {}, Date.now());
      return {
        tokenId: String(t.tokenId),
        merchantId: String(t.merchantId),
        accessToken: t.accessToken,
        scopes: t.scopes,
        expiresAt: formatInstant(t.expiresAt),
      };
    },
  );
  app.delete(
    '/tokens/:tokenId',
    { schema: { ...doc('Revoke a token (and its refresh-token family)', RevokedToken), params: TokenIdParams } },
    async (request) => {
      const r = await revokeToken(db, actor(request), Number(request.params.tokenId), Date.now());
      return { tokenId: String(r.tokenId), revokedAt: formatInstant(r.revokedAt) };
    },
  );

  // A one-time link to the merchant's business manager (SPEC §14), on PUBLIC_BASE_URL or this request's origin.
  app.post(
    '/merchants/:id/users',
    {
      schema: {
        ...doc('Invite a user to the merchant’s business manager: a one-time link, valid 72 hours (shown once)', InvitationCreated),
        params: IdParams,
        body: InviteUserBody,
      },
    },
    async (request) => {
      const invitation = await inviteUser(forMerchant(db, Number(request.params.id)), adminKeyActor(adminApiKey, request.id), request.body, now());
      const origin = config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
      return {
        invitationId: String(invitation.invitationId),
        merchantId: String(invitation.merchantId),
        email: invitation.email,
        role: invitation.role,
        invitationUrl: invitationUrl(origin, invitation.token),
        expiresAt: formatInstant(invitation.expiresAt),
      };
    },
  );
  // Open invitations, and revoking one (Hardening III): an invitation sent by mistake stops at once.
  app.get(
    '/merchants/:id/invitations',
    {
      schema: {
        ...doc('The merchant’s open business manager invitations (not accepted, revoked or expired), newest first', OpenInvitationList),
        params: IdParams,
      },
    },
    async (request) => {
      const merchantId = Number(request.params.id);
      if (!(await findMerchant(db, merchantId))) throw notFound('merchant');
      const rows = await openInvitations(forMerchant(db, merchantId), now());
      return {
        list: rows.map((r) => ({
          invitationId: String(r.id),
          merchantId: String(r.merchant_id),
          email: r.email,
          role: r.role,
          createdBy: r.created_by,
          createdAt: formatInstant(r.created_at),
          expiresAt: formatInstant(r.expires_at),
        })),
      };
    },
  );
  app.delete(
    '/merchants/:id/invitations/:invitationId',
    { schema: { ...doc('Revoke an open invitation: its link stops working at once', RevokedInvitation), params: InvitationIdParams } },
    async (request) => {
      const row = await revokeInvitation(forMerchant(db, Number(request.params.id)), actor(request), Number(request.params.invitationId), now());
      return { invitationId: String(row.id), email: row.email, revokedAt: formatInstant(row.revoked_at!) };
    },
  );
  // A one-time link that sets the password of the account an address has at this merchant (Hardening III, 5).
  app.post(
    '/merchants/:id/password-resets',
    {
      schema: {
        ...doc('A password reset link for a business manager account of this merchant: once, valid 24 hours (shown once)', PasswordResetCreated),
        params: IdParams,
        body: PasswordResetBody,
      },
    },
    async (request) => {
      const merchantId = Number(request.params.id);
      const reset = await createPasswordReset(forMerchant(db, merchantId), actor(request), { email: request.body.email }, now());
      const origin = config.publicBaseUrl ?? `${request.protocol}://${request.host}`;
      return { merchantId: String(merchantId), email: reset.email, resetUrl: passwordResetUrl(origin, reset.token), expiresAt: formatInstant(reset.expiresAt) };
    },
  );
};
