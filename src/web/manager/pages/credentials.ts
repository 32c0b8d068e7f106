import { SCOPES } from '../../../domain/scopes.ts';
import { ClientForm, ManagerCsrfForm, ManagerIdParams, PersonalTokenForm } from '../../../schemas/manager.ts';
import { createClient, createPersonalToken, listCredentials, revokeClient, revokePersonalToken, rotateClient } from '../../../services/credentials.service.ts';
import type { ManagerPage } from './context.ts';

const CREDENTIALS = '/manager/credentials';

/**
 * Page 2, API credentials: OAuth clients and personal access tokens. Every form answers 303 to
 * this page; a new secret is shown there once (a one-time display sealed with the session's cookie).
 */
export const credentialsPage: ManagerPage = {
  nav: [{ href: CREDENTIALS, label: 'API credentials', permission: 'credentials:read' }],
  routes: async (app, { config, store, now, page, forms, origin, user, actor }) => {
    const { db } = store;
    const show = async (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], shown: Record<string, unknown> | null) => {
      const me = user(request);
      return page(reply, 200, 'credentials', {
        title: 'API credentials',
        ...(await listCredentials(db, config.env, me.merchantId)),
        canWrite: me.role !== 'viewer',
        scopes: SCOPES,
        tokenUrl: `${origin(request)}/openapi/oauth/token`,
        shown,
      });
    };

    app.get('/credentials', async (request, reply) => show(request, reply, await forms.take(request, 'credentials')));

    /** A new secret: kept for this page, shown there once (POST → 303 → GET). */
    const shownOnce = async (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], shown: Record<string, unknown>) => {
      await forms.flash(request, 'credentials', shown);
      return reply.redirect(CREDENTIALS, 303);
    };

    app.post('/credentials/clients', { schema: { body: ClientForm } }, async (request, reply) => {
      const { client, secret } = await createClient(db, actor(request), user(request).merchantId, request.body.name, now());
      return shownOnce(request, reply, { kind: 'client', name: client.name, clientId: client.client_id, secret });
    });

    app.post('/credentials/clients/:id/rotate', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      const { client, secret } = await rotateClient(db, actor(request), user(request).merchantId, request.params.id, now());
      return shownOnce(request, reply, { kind: 'client', name: client.name, clientId: client.client_id, secret });
    });

    app.post('/credentials/clients/:id/revoke', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      await revokeClient(db, actor(request), user(request).merchantId, request.params.id, now());
      return reply.redirect(CREDENTIALS, 303);
    });

    app.post('/credentials/tokens', { schema: { body: PersonalTokenForm } }, async (request, reply) => {
      const { name, scopes, expiresInDays } = request.body;
      const issued = await createPersonalToken(
        db,
        config.env,
        actor(request),
        user(request).merchantId,
        { name, scopes: SCOPES.filter((s) => [scopes].flat().includes(s)), expiresInDays: expiresInDays ? Number(expiresInDays) : null },
        now(),
      );
      return shownOnce(request, reply, { kind: 'token', name, secret: issued.accessToken, scopes: issued.scopes.join(' ') });
    });

    app.post('/credentials/tokens/:id/revoke', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      await revokePersonalToken(db, actor(request), user(request).merchantId, request.params.id, now());
      return reply.redirect(CREDENTIALS, 303);
    });
  },
};
