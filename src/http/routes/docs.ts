import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyPluginAsync, RouteOptions } from 'fastify';
import { buildAdminOpenApiDocument } from '../openapi/admin-openapi.document.ts';
import { buildOpenApiDocument } from '../openapi/openapi.document.ts';

/** The one file of the `redoc` package the page needs (its standalone bundle); nothing else of it is served. */
const BUNDLE = 'redoc.standalone.js';
const JS = 'text/javascript; charset=utf-8';

/**
 * The bundle's only request to another server is its footer's logo (cdn.redoc.ly): that image is
 * replaced by an empty local one, so the page loads nothing from elsewhere (test/e2e/docs-browser
 * fails if a new version brings the request back).
 */
const REDOC_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_IMAGE = 'data:image/svg+xml,%3Csvg xmlns=%22http://www.w3.org/2000/svg%22 width=%221%22 height=%221%22/%3E';

/**
 * Redoc's theme: system fonts (none are fetched), the console's accent colour, and text colours
 * that meet WCAG AA contrast (4.5:1) on Redoc's light panels — its default secondary grey
 * (#757575 on #fafafa) falls just short, and so does the lighter primary it derives (#2c8ff2 for
 * "pattern property" labels). Read-only: the page describes, it never sends a request
 * with a merchant's token. `docs/decisions.md`, "API reference page".
 */
const initJs = (documentUrl: string) => `Redoc.init('${documentUrl}', {
  theme: {
    colors: { primary: { main: '#0b5cad', light: '#0b5cad' }, text: { primary: '#1b1f24', secondary: '#57606a' } },
    typography: {
      fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif',
      headings: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif' },
      code: { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace' },
    },
  },
  expandResponses: '200',
  jsonSampleExpandLevel: 3,
  hideLoading: true,
}, document.getElementById('reference'), function (error) {
  document.getElementById('reference').setAttribute('data-rendered', error ? 'failed' : 'true');
});
`;

const page = (title: string, initUrl: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <link rel="icon" href="data:,">
  <style>body { margin: 0; }</style>
</head>
<body>
  <main id="reference"></main>
  <script src="/docs/assets/${BUNDLE}"></script>
  <script src="${initUrl}"></script>
</body>
</html>
`;

/**
 * SPEC §10: `GET /docs` (the reference rendered by Redoc, every asset from this server:
 * deployments often have no internet) and `GET /docs/openapi.json`, generated from `routes` — the app's registered routes —
 * on first request, once they are all known; on the merchant surface. Issue 16: `GET /docs/admin`
 * and `GET /docs/admin/openapi.json`, the operator API's own document, on the admin surface
 * (ADMIN_PORT when set). The renderer's bundle is served on either.
 */
export const docsRoutes: FastifyPluginAsync<{ routes: readonly RouteOptions[]; merchant: boolean; admin: boolean }> = async (
  app,
  { routes, merchant, admin },
) => {
  const bundleFile = path.join(path.dirname(createRequire(import.meta.url).resolve('redoc/package.json')), 'bundles', BUNDLE);
  let bundle: string | null = null;
  const raw = { config: { envelope: false } };
  const html = 'text/html; charset=utf-8';

  const serveDocument = (url: string, build: () => unknown) => {
    let document: string | null = null;
    app.get(url, raw, async (_request, reply) => {
      document ??= JSON.stringify(build());
      return reply.type('application/json; charset=utf-8').header('Cache-Control', 'no-cache').send(document);
    });
  };
  if (merchant) {
    serveDocument('/docs/openapi.json', () => buildOpenApiDocument(routes));
    const merchantPage = page('Stockist Open API reference', '/docs/assets/init.js');
    const merchantInit = initJs('/docs/openapi.json');
    app.get('/docs', raw, async (_request, reply) => reply.type(html).send(merchantPage));
    app.get('/docs/assets/init.js', raw, async (_request, reply) => reply.type(JS).send(merchantInit));
  }
  if (admin) {
    serveDocument('/docs/admin/openapi.json', () => buildAdminOpenApiDocument(routes));
    const adminPage = page('Stockist operator API reference', '/docs/admin/init.js');
    const adminInit = initJs('/docs/admin/openapi.json');
    app.get('/docs/admin', raw, async (_request, reply) => reply.type(html).send(adminPage));
    app.get('/docs/admin/init.js', raw, async (_request, reply) => reply.type(JS).send(adminInit));
  }
  app.get(`/docs/assets/${BUNDLE}`, raw, async (_request, reply) => {
    bundle ??= (await fs.readFile(bundleFile, 'utf8')).replaceAll(REDOC_LOGO, EMPTY_IMAGE);
    return reply.type(JS).header('Cache-Control', 'public, max-age=3600').send(bundle);
  });
};
