import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { FastifyPluginAsync, RouteOptions } from 'fastify';
import { notFound } from '../../domain/errors.ts';
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
const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/docs/openapi.json',
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

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Stockist Open API reference</title>
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <style>body { margin: 0; }</style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/init.js"></script>
</body>
</html>
`;

/**
 * SPEC §10: `GET /docs` (Swagger UI, every asset from this server: deployments often have no
 * internet) and `GET /docs/openapi.json`, generated from `routes` — the app's registered routes —
 * on first request, once they are all known.
 */
export const docsRoutes: FastifyPluginAsync<{ routes: readonly RouteOptions[] }> = async (app, { routes }) => {
  const distDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assetCache = new Map<string, Buffer>();
  let document: string | null = null;
  const raw = { config: { envelope: false } };

  app.get('/docs/openapi.json', raw, async (_request, reply) => {
    document ??= JSON.stringify(buildOpenApiDocument(routes));
    return reply.type('application/json; charset=utf-8').header('Cache-Control', 'no-cache').send(document);
  });
  app.get('/docs', raw, async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
  app.get('/docs/assets/init.js', raw, async (_request, reply) => reply.type(ASSETS['swagger-ui-bundle.js']).send(INIT_JS));
  app.get<{ Params: { file: string } }>('/docs/assets/:file', raw, async (request, reply) => {
    const { file } = request.params;
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) throw notFound(`asset ${file}`);
    let content = assetCache.get(file);
    if (!content) assetCache.set(file, (content = await fs.readFile(path.join(distDir, file))));
    return reply.type(type).header('Cache-Control', 'public, max-age=3600').send(content);
  });
};
