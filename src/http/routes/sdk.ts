import fs from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { installPageSecurityHeaders } from '../page-headers.ts';

/** The typed client's npm package as built into dist/sdk/ by scripts/build-sdk.mjs. */
export interface SdkPackage {
  /** `stockist-client-<version>.tgz`, served at `/sdk/<tarball>`. */
  tarball: string;
  version: string;
  folder: string;
}

/** The example inside the package (examples/read-stock.mjs), also served on its own to read. */
export const SDK_EXAMPLE = 'read-stock.mjs';
/** Where a server on its own generated (self-signed) certificate hands that certificate out. */
export const SDK_CERTIFICATE = 'certificate.pem';

let found: SdkPackage | null | undefined;

/**
 * The package in dist/sdk/ beside the bundle, found once. The sources (tests, `npm run dev`) use
 * the same dist/sdk/: the build (`npm ci`, `npm run build`, the test runner's --if-stale build)
 * makes it. Null when no build made one: the routes and the Get started section are then absent.
 */
export function sdkPackage(): SdkPackage | null {
  if (found !== undefined) return found;
  let dir = import.meta.dirname;
  while (!fs.existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  const folder = path.join(dir, 'dist/sdk');
  const tarball = fs.existsSync(folder) ? fs.readdirSync(folder).find((name) => /^stockist-client-.+\.tgz$/.test(name)) : undefined;
  found = tarball ? { tarball, version: tarball.slice('stockist-client-'.length, -'.tgz'.length), folder } : null;
  return found;
}

/** The page's one long word, the example's path, may break after each slash (<wbr>): it fits a 390 px phone (issue 44, 6). */
const page = (sdk: SdkPackage, certificate: boolean) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Stockist client ${sdk.version}</title>
</head>
<body>
<main>
  <h1>Stockist TypeScript client ${sdk.version}</h1>
  <ul>
    <li><a href="/sdk/${sdk.tarball}">${sdk.tarball}</a>: the npm package (no dependencies), <code>npm install</code> this address</li>
    <li><a href="/sdk/${SDK_EXAMPLE}">${SDK_EXAMPLE}</a>: the example in it (<code>node_modules/<wbr>@stockist/<wbr>client/<wbr>examples/<wbr>${SDK_EXAMPLE}</code>)</li>
${certificate ? `    <li><a href="/sdk/${SDK_CERTIFICATE}">${SDK_CERTIFICATE}</a>: this server's self-signed certificate, for <code>NODE_EXTRA_CA_CERTS</code></li>\n` : ''}  </ul>
  <p>Sign in to the business manager (<a href="/manager">/manager</a>) for the commands with this server's address and a token.</p>
</main>
</body>
</html>
`;

/**
 * Issue 29: the typed client as an npm package a merchant installs from the server's address, its
 * example, and (sandbox on its generated certificate) that certificate. Public, like /docs: the
 * package is the same for everyone and holds no secret (docs/decisions.md, "Client package at /sdk/").
 * `certificate` is the PEM of a self-signed certificate this server made, else null.
 */
export const sdkRoutes: FastifyPluginAsync<{ certificate: string | null }> = async (app, { certificate }) => {
  const sdk = sdkPackage();
  if (!sdk) return;
  // Pages and files a browser opens: the headers of every page (issue 44, 17).
  installPageSecurityHeaders(app);
  const raw = { config: { envelope: false } };
  const tarball = fs.readFileSync(path.join(sdk.folder, sdk.tarball));
  const example = fs.readFileSync(path.join(sdk.folder, SDK_EXAMPLE));
  const index = page(sdk, certificate !== null);
  app.get('/sdk', raw, async (_request, reply) => reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-cache').send(index));
  // A version's bytes never change under its name; a new client is a new version.
  app.get(`/sdk/${sdk.tarball}`, raw, async (_request, reply) =>
    reply
      .type('application/gzip')
      .header('Cache-Control', 'public, max-age=86400')
      .header('Content-Disposition', `attachment; filename="${sdk.tarball}"`)
      .send(tarball),
  );
  app.get(`/sdk/${SDK_EXAMPLE}`, raw, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('Cache-Control', 'no-cache').send(example),
  );
  if (certificate !== null) {
    app.get(`/sdk/${SDK_CERTIFICATE}`, raw, async (_request, reply) =>
      reply
        .type('application/x-pem-file')
        .header('Cache-Control', 'no-cache')
        .header('Content-Disposition', `attachment; filename="stockist-sandbox.pem"`)
        .send(certificate),
    );
  }
};
