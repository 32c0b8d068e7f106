import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ADMIN_PREFIX, adminOpenApiPath } from '../../src/http/openapi/admin-openapi.document.ts';
import { ADMIN_DOCUMENT_FILE, DOCUMENT_FILE, generateArtifacts } from '../../scripts/openapi-artifacts.ts';
import { ADMIN_KEY, buildTestApp, useApp } from '../helpers.ts';

type Json = Record<string, any>;

/**
 * Issue 16: the operator API's own OpenAPI 3.1 document (docs/openapi-admin.json, served at
 * /docs/admin/openapi.json with a page at /docs/admin where the operator API is served). Every
 * admin response in every suite is checked against it by the test helper (test/contract.ts).
 */
describe('operator OpenAPI document (docs/openapi-admin.json)', () => {
  const registered: { method: string; url: string; schema: Json | undefined }[] = [];
  const t = useApp(
    'sqlite',
    {},
    {
      eagerSchemas: true,
      onRoute: (r) => registered.push(...[r.method].flat().map((method) => ({ method, url: r.url ?? '', schema: r.schema as Json | undefined }))),
    },
  );
  const committed = () => JSON.parse(fs.readFileSync(ADMIN_DOCUMENT_FILE, 'utf8')) as Json;
  const adminRoutes = () => registered.filter((r) => r.url.startsWith(`${ADMIN_PREFIX}/`) && r.method !== 'HEAD');

  it('is current: the committed document equals the generated one byte for byte (run `npm run openapi`)', async () => {
    const { adminDocumentText } = await generateArtifacts();
    assert.equal(fs.readFileSync(ADMIN_DOCUMENT_FILE, 'utf8'), adminDocumentText, 'docs/openapi-admin.json is stale: run `npm run openapi`');
  });

  it('is served at GET /docs/admin/openapi.json, the same document, without the admin key', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/docs/admin/openapi.json' });
    assert.equal(r.statusCode, 200);
    assert.match(String(r.headers['content-type']), /application\/json/);
    assert.deepEqual(JSON.parse(r.body), committed());
  });

  it('has its own reference page at /docs/admin, loading the operator document from local assets', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/docs/admin' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    assert.match(page.body, /<title>Stockist operator API reference<\/title>/);
    const scripts = [...page.body.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(scripts, ['/docs/assets/redoc.standalone.js', '/docs/admin/init.js']);
    const init = await t.app.inject({ method: 'GET', url: '/docs/admin/init.js' });
    assert.equal(init.statusCode, 200);
    assert.match(init.body, /Redoc\.init\('\/docs\/admin\/openapi\.json'/);
    for (const src of scripts) assert.equal((await t.app.inject({ method: 'GET', url: src })).statusCode, 200, src);
  });

  it('is a valid OpenAPI 3.1 document whose internal references all resolve', async () => {
    const validator = new Validator();
    const result = await validator.validate(committed());
    assert.equal(validator.version, '3.1');
    assert.ok(result.valid, JSON.stringify(result.errors, null, 2));
    const doc = committed();
    for (const ref of new Set(JSON.stringify(doc).match(/"\$ref":"#[^"]+"/g) ?? [])) {
      const target = ref
        .slice(9, -1)
        .split('/')
        .slice(1)
        .reduce((o: any, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      assert.ok(target, `${ref} resolves`);
    }
    assert.doesNotMatch(fs.readFileSync(ADMIN_DOCUMENT_FILE, 'utf8'), /"\$id"|"\$defs"/);
  });

  it('documents every /admin/v1 route with its response schema and the admin key, and nothing else', async () => {
    await t.app.ready();
    const doc = committed();
    const routes = adminRoutes();
    assert.ok(routes.length >= 20, `${routes.length} operator routes`);
    for (const r of routes) {
      const response = r.schema?.response as Json | undefined;
      // A file download (x-binary: claim evidence) answers bytes on 200, documented from x-binary.
      const download = r.method === 'GET' && (r.schema as Json | undefined)?.['x-binary'] !== undefined;
      assert.ok((download || response?.['200']) && response?.['4xx'] && response['5xx'], `${r.method} ${r.url} declares its responses`);
      const op = doc.paths[adminOpenApiPath(r.url)]?.[r.method.toLowerCase()];
      assert.ok(op, `${r.method} ${r.url} is documented`);
      const success = op.responses['200'].content;
      assert.ok(
        download ? success['image/png'].schema.format === 'binary' : success['application/json'].schema,
        `${r.method} ${r.url} documents its success body`,
      );
      assert.deepEqual(op.security, [{ adminKey: [] }]);
    }
    const documented = Object.values(doc.paths).flatMap((ops: any) => Object.keys(ops));
    assert.equal(documented.length, routes.length, 'one operation per operator route');
    assert.deepEqual(
      doc.servers.map((s: Json) => s.url),
      ['/admin/v1'],
    );
    assert.equal(doc.components.securitySchemes.adminKey.scheme, 'bearer');
  });

  it('leaves the merchant document merchant-only', async () => {
    const merchant = JSON.parse(fs.readFileSync(DOCUMENT_FILE, 'utf8')) as Json;
    assert.equal(
      Object.keys(merchant.paths).some((p) => p.startsWith('/admin') || p.startsWith('/v1/admin')),
      false,
    );
    assert.doesNotMatch(JSON.stringify(merchant), /admin\/v1|ADMIN_API_KEY|adminKey/);
    const served = await t.app.inject({ method: 'GET', url: '/docs/openapi.json' });
    assert.doesNotMatch(served.body, /\/admin\//);
  });

  it('with ADMIN_PORT, each reference is served only where its API is', async (t) => {
    const admin = await buildTestApp(t, 'sqlite', {}, { surfaces: { merchant: false, admin: true } });
    const merchant = await buildTestApp(t, 'sqlite', {}, { surfaces: { merchant: true, admin: false } });
    const status = async (app: typeof admin, url: string) => (await app.app.inject({ method: 'GET', url })).statusCode;
    assert.equal(await status(admin, '/docs/admin'), 200);
    assert.equal(await status(admin, '/docs/admin/openapi.json'), 200);
    assert.equal(await status(admin, '/docs/assets/redoc.standalone.js'), 200);
    assert.equal(await status(admin, '/docs'), 404, 'the merchant reference stays on the merchant port');
    assert.equal(await status(admin, '/docs/openapi.json'), 404);
    assert.equal(await status(merchant, '/docs'), 200);
    assert.equal(await status(merchant, '/docs/openapi.json'), 200);
    assert.equal(await status(merchant, '/docs/admin'), 404, 'the operator reference is not on the public port');
    assert.equal(await status(merchant, '/docs/admin/openapi.json'), 404);
    const listed = await admin.app.inject({ method: 'GET', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    assert.equal(listed.statusCode, 200, 'the operator API itself still needs (and takes) the key');
  });
});
