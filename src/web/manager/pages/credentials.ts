import { AppError } from '../../../domain/errors.ts';
import { rotationGraceHours } from '../../../domain/oauth.ts';
import { tickedScopes } from '../../../domain/scopes.ts';
import { ClientForm, ManagerCsrfForm, ManagerIdParams, PersonalTokenForm, RotateClientForm } from '../../../schemas/manager.ts';
import { createClient, createPersonalToken, listCredentials, revokeClient, revokePersonalToken, rotateClient } from '../../../services/credentials.service.ts';
import { presentCredentials, type CredentialsRefusal, type ShownCredential } from '../present-integrations.ts';
import type { ManagerPage } from './context.ts';

const CREDENTIALS = '/manager/credentials';

/**
 * Page 2, API credentials: OAuth clients and personal access tokens. Every form answers 303 to
 * this page; a new secret is shown there once (a one-time display sealed with the session's cookie).
 */
export const credentialsPage: ManagerPage = {
  nav: [{ href: CREDENTIALS, label: 'API credentials', permission: 'credentials:read' }],
  routes: async (app, { config, now, page, forms, origin, user, actor, merchant }) => {
    /** `refused`: a form refused with its reason and what was typed; nothing was written. */
    const show = async (
      request: Parameters<typeof user>[0],
      reply: Parameters<typeof page>[0],
      shown: ShownCredential | null,
      refused: CredentialsRefusal | null = null,
    ) =>
      page(
        reply,
        refused?.status ?? 200,
        'credentials',
        presentCredentials(await listCredentials(merchant(request), config.env), {
          environment: config.env,
          tokenUrl: `${origin(request)}/openapi/oauth/token`,
          canWrite: user(request).role !== 'viewer',
          shown,
          refused,
        }),
      );

    app.get('/credentials', async (request, reply) => show(request, reply, await forms.take<ShownCredential>(request, 'credentials')));

    /** A new secret: kept for this page, shown there once (POST → 303 → GET). */
    const shownOnce = async (request: Parameters<typeof user>[0], reply: Parameters<typeof page>[0], shown: ShownCredential) => {
      await forms.flash(request, 'credentials', shown);
      return reply.redirect(CREDENTIALS, 303);
    };

    app.post('/credentials/clients', { schema: { body: ClientForm } }, async (request, reply) => {
      const { client, secret } = await createClient(merchant(request), actor(request), request.body.name, now());
      return shownOnce(request, reply, { kind: 'client', name: client.name, clientId: client.client_id, secret });
    });

    /** The form's own field refused (400): the page again with the reason; anything else is an error page. */
    const fieldRefusal = <T>(work: () => T) => {
      try {
        return { value: work(), error: null };
      } catch (error) {
        if (!(error instanceof AppError) || error.kind !== 'invalid') throw error;
        return { value: null, error: error.message };
      }
    };

    app.post('/credentials/clients/:id/rotate', { schema: { params: ManagerIdParams, body: RotateClientForm } }, async (request, reply) => {
      const grace = fieldRefusal(() => rotationGraceHours(request.body.graceHours));
      if (grace.value === null)
        return show(request, reply, null, {
          status: 400,
          form: 'rotate',
          error: grace.error ?? '',
          typed: { clientId: String(request.params.id), graceHours: request.body.graceHours },
        });
      const { client, secret, oldSecretUntil } = await rotateClient(merchant(request), actor(request), request.params.id, grace.value, now());
      return shownOnce(request, reply, { kind: 'client', name: client.name, clientId: client.client_id, secret, oldSecretUntil });
    });

    app.post('/credentials/clients/:id/revoke', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      await revokeClient(merchant(request), actor(request), request.params.id, now());
      await forms.flash(request, 'notice', { text: 'Client revoked: its secret no longer gets tokens.' });
      return reply.redirect(CREDENTIALS, 303);
    });

    app.post('/credentials/tokens', { schema: { body: PersonalTokenForm } }, async (request, reply) => {
      const { name, expiresInDays } = request.body;
      const scopes = fieldRefusal(() => tickedScopes(request.body.scopes));
      if (scopes.value === null) return show(request, reply, null, { status: 400, form: 'token', error: scopes.error ?? '', typed: { name, expiresInDays } });
      const issued = await createPersonalToken(
        merchant(request),
        config.env,
        actor(request),
        { name, scopes: scopes.value, expiresInDays: expiresInDays ? Number(expiresInDays) : null },
        now(),
      );
      return shownOnce(request, reply, { kind: 'token', name, secret: issued.accessToken, scopes: issued.scopes.join(' ') });
    });

    app.post('/credentials/tokens/:id/revoke', { schema: { params: ManagerIdParams, body: ManagerCsrfForm } }, async (request, reply) => {
      await revokePersonalToken(merchant(request), actor(request), request.params.id, now());
      await forms.flash(request, 'notice', { text: 'Token revoked.' });
      return reply.redirect(CREDENTIALS, 303);
    });
  },
};
