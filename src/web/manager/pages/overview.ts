import { SCOPES } from '../../../domain/scopes.ts';
import { ManagerCsrfForm } from '../../../schemas/manager.ts';
import { createPersonalToken } from '../../../services/credentials.service.ts';
import { MANAGER_PREFIX } from '../manager-routes.ts';
import type { ManagerPage } from './context.ts';

/** A token made on the Get started page lives a day: enough to try the API, not a credential to keep. */
const GET_STARTED_TOKEN_DAYS = 1;

/** Page 1, Get started: the base URL, a ready curl with a fresh token, the documentation, the typed client. */
export const overviewPage: ManagerPage = {
  nav: [{ href: '/manager', label: 'Get started', permission: 'overview:read' }],
  routes: async (app, { config, store, now, page, forms, origin, user, actor }) => {
    const view = (request: Parameters<typeof origin>[0], token: string | null) => ({
      title: 'Get started',
      origin: origin(request),
      baseUrl: `${origin(request)}/openapi`,
      docsUrl: `${origin(request)}/docs`,
      token,
      canCreate: user(request).role !== 'viewer',
    });

    app.get('', async (request, reply) => page(reply, 200, 'overview', view(request, await forms.take<string>(request, 'get-started-token'))));

    app.post('/get-started/token', { schema: { body: ManagerCsrfForm } }, async (request, reply) => {
      const me = user(request);
      const issued = await createPersonalToken(
        store.db,
        config.env,
        actor(request),
        me.merchantId,
        { name: `Get started (${me.email})`, scopes: [...SCOPES], expiresInDays: GET_STARTED_TOKEN_DAYS },
        now(),
      );
      // Shown once, on the page the 303 leads to.
      await forms.flash(request, 'get-started-token', issued.accessToken);
      return reply.redirect(MANAGER_PREFIX, 303);
    });
  },
};
