import { READ_SCOPES } from '../../../domain/scopes.ts';
import { SDK_CERTIFICATE, SDK_EXAMPLE, sdkPackage } from '../../../http/routes/sdk.ts';
import { ManagerCsrfForm } from '../../../schemas/manager.ts';
import { createPersonalToken } from '../../../services/credentials.service.ts';
import { MANAGER_PREFIX } from '../manager-routes.ts';
import { presentGetStarted } from '../present-integrations.ts';
import type { ManagerPage } from './context.ts';

/**
 * A token made on the Get started page lives a day and only reads (least privilege, as the token
 * forms): enough to try the API and run the example, which read; a token that writes is made on
 * API credentials, with the scopes ticked there.
 */
const GET_STARTED_TOKEN_DAYS = 1;

/**
 * Page 1, Get started: the base URL, a ready curl with a fresh token, the documentation, and the
 * typed client installed from this server (/sdk/) with its example: every command as printed works
 * from an empty folder with nothing but this server's address (test/e2e/sdk-install.test.ts).
 */
export const overviewPage: ManagerPage = {
  nav: [{ href: '/manager', label: 'Get started', permission: 'overview:read' }],
  routes: async (app, { config, now, page, forms, origin, user, actor, merchant }) => {
    // A server on the certificate it made itself (TLS on, no TLS_CERT_FILE) hands that certificate
    // out at /sdk/certificate.pem; curl takes -k to fetch it, Node and npm trust it by NODE_EXTRA_CA_CERTS.
    const selfSigned = config.tls && !config.tlsCertFile;
    const sdk = sdkPackage();
    const view = (request: Parameters<typeof origin>[0], token: string | null) =>
      presentGetStarted({
        origin: origin(request),
        environment: config.env,
        selfSigned,
        tarball: sdk?.tarball ?? null,
        certificate: SDK_CERTIFICATE,
        example: SDK_EXAMPLE,
        token,
        canCreate: user(request).role !== 'viewer',
      });

    app.get('', async (request, reply) => page(reply, 200, 'overview', view(request, await forms.take<string>(request, 'get-started-token'))));

    app.post('/get-started/token', { schema: { body: ManagerCsrfForm } }, async (request, reply) => {
      const me = user(request);
      const issued = await createPersonalToken(
        merchant(request),
        config.env,
        actor(request),
        { name: `Get started (${me.email})`, scopes: [...READ_SCOPES], expiresInDays: GET_STARTED_TOKEN_DAYS },
        now(),
      );
      // Shown once, on the page the 303 leads to.
      await forms.flash(request, 'get-started-token', issued.accessToken);
      return reply.redirect(MANAGER_PREFIX, 303);
    });
  },
};
