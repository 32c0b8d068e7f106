import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyPluginAsync, RouteOptions } from 'fastify';
import { notFound } from '../../domain/errors.ts';
import { buildAdminOpenApiDocument } from '../openapi/admin-openapi.document.ts';
import { buildOpenApiDocument } from '../openapi/openapi.document.ts';

/** The swagger-ui-dist files the page needs; nothing else of the package is served. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'oauth2-redirect.html': 'text/html; charset=utf-8',
  'oauth2-redirect.js': 'text/javascript; charset=utf-8',
};

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io.
const initJs = (documentUrl: string) => `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '${documentUrl}',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    persistAuthorization: false,
    oauth2RedirectUrl: window.location.origin + '/docs/assets/oauth2-redirect.html',
    presets: [SwaggerUIBundle.presets.apis],
  });
});
`;

const page = (title: string, initUrl: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <style>body { margin: 0; }</style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="${initUrl}"></script>
</body>
</html>
`;

/**
 * SPEC §10: `GET /docs` (Swagger UI, every asset from this server: deployments often have no
 * internet) and `GET /docs/openapi.json`, generated from `routes` — the app's registered routes —
 * on first request, once they are all known; on the merchant surface. Issue 16: `GET /docs/admin`
 * and `GET /docs/admin/openapi.json`, the operator API's own document, on the admin surface
 * (ADMIN_PORT when set). The Swagger UI assets are served on either.
 */
export const docsRoutes: FastifyPluginAsync<{ routes: readonly RouteOptions[]; merchant: boolean; admin: boolean }> = async (
  app,
  { routes, merchant, admin },
) => {
  const distDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assetCache = new Map<string, Buffer>();
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
    app.get('/docs/assets/init.js', raw, async (_request, reply) => reply.type(ASSETS['swagger-ui-bundle.js']).send(merchantInit));
  }
  if (admin) {
    serveDocument('/docs/admin/openapi.json', () => buildAdminOpenApiDocument(routes));
    const adminPage = page('Stockist operator API reference', '/docs/admin/init.js');
    const adminInit = initJs('/docs/admin/openapi.json');
    app.get('/docs/admin', raw, async (_request, reply) => reply.type(html).send(adminPage));
    app.get('/docs/admin/init.js', raw, async (_request, reply) => reply.type(ASSETS['swagger-ui-bundle.js']).send(adminInit));
  }
  app.get<{ Params: { file: string } }>('/docs/assets/:file', raw, async (request, reply) => {
    const { file } = request.params;
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) throw notFound(`asset ${file}`);
    let content = assetCache.get(file);
    if (!content) assetCache.set(file, (content = await fs.readFile(path.join(distDir, file))));
    return reply.type(type).header('Cache-Control', 'public, max-age=3600').send(content);
  });
};
