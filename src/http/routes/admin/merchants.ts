import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from 'typebox';
import { AdminResponses, IssuedTokenRecord, MerchantList, MerchantRecord, NewMerchantRecord, RevokedToken } from '../../../schemas/admin-responses.ts';
import type { Config } from '../../../config.ts';
import { adminKeyActor } from '../../../domain/audit.ts';
import { formatInstant } from '../../../domain/time.ts';
import { IdParams, MerchantBody, MerchantPatchBody, TokenBody, TokenIdParams } from '../../../schemas/admin.ts';
import { createMerchant, issueToken, revokeToken, setMerchantStatus } from '../../../services/merchants.service.ts';
import type { Store } from '../../../store/db.ts';
import { listMerchants } from '../../../store/merchants.repository.ts';
import { presentMerchant } from '../../../present/catalog.presenter.ts';

/** Operator credentials: merchants, their client credentials and their bearer tokens. Every write is audited (never a secret). */
export const adminMerchantRoutes: FastifyPluginAsyncTypebox<{ store: Store; config: Config; adminApiKey: string }> = async (
  app,
  { store, config, adminApiKey },
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
    async (request) => presentMerchant(await setMerchantStatus(db, actor(request), Number(request.params.id), request.body.status, Date.now())),
  );

  app.post(
    '/merchants/:id/tokens',
    { schema: { ...doc('Issue a long-lived bearer token (shown once)', IssuedTokenRecord), params: IdParams, body: TokenBody } },
    async (request) => {
      const t = await issueToken(db, actor(request), config.env, Number(request.params.id), request.body ?? {}, Date.now());
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
};
