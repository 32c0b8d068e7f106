import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { OPERATION_METHODS, StockistClient } from '../../clients/typescript/src/index.ts';
import { MERCHANT_PREFIX, MERCHANT_ROUTES } from '../../src/http/merchant-routes.ts';
import { ERROR_CATALOGUE } from '../../src/http/openapi/error-catalogue.ts';
import { openApiPath } from '../../src/http/openapi/openapi.document.ts';
import { CLIENT_SCHEMA_FILE, DOCUMENT_FILE, generateArtifacts } from '../../scripts/openapi-artifacts.ts';
import { useApp } from '../helpers.ts';

type Json = Record<string, any>;

describe('OpenAPI document (docs/openapi.json)', () => {
  const registered: { method: string; url: string; schema: Json | undefined }[] = [];
  const t = useApp(
    'sqlite',
    {},
    {
      eagerSchemas: true,
      onRoute: (r) => registered.push(...[r.method].flat().map((method) => ({ method, url: r.url ?? '', schema: r.schema as Json | undefined }))),
    },
  );
  const committed = () => JSON.parse(fs.readFileSync(DOCUMENT_FILE, 'utf8')) as Json;

  it('is current: the committed document and client types equal the generated ones (run `npm run openapi`)', async () => {
    const { documentText, schemaText } = await generateArtifacts();
    assert.equal(fs.readFileSync(DOCUMENT_FILE, 'utf8'), documentText, 'docs/openapi.json is stale: run `npm run openapi`');
    assert.equal(fs.readFileSync(CLIENT_SCHEMA_FILE, 'utf8'), schemaText, 'clients/typescript/src/schema.d.ts is stale: run `npm run openapi`');
  });

  it("every route schema compiles (the server compiles them lazily, on each route's first use; here all at once)", async () => {
    await t.app.ready();
    assert.ok(registered.length > 50);
  });

  it('is served at GET /docs/openapi.json, the same document', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/docs/openapi.json' });
    assert.equal(r.statusCode, 200);
    assert.match(String(r.headers['content-type']), /application\/json/);
    assert.deepEqual(JSON.parse(r.body), committed());
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(committed());
    assert.equal(validator.version, '3.1');
    assert.ok(result.valid, JSON.stringify(result.errors, null, 2));
    // Every internal $ref resolves.
    const doc = committed();
    const refs = JSON.stringify(doc).match(/"\$ref":"#[^"]+"/g) ?? [];
    for (const ref of new Set(refs)) {
      const target = ref
        .slice(9, -1)
        .split('/')
        .slice(1)
        .reduce((o: any, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      assert.ok(target, `${ref} resolves`);
    }
  });

  it('has every merchant route with its scope, the token endpoint and the /openapi servers', () => {
    const doc = committed();
    assert.deepEqual(
      doc.servers.map((s: Json) => s.url),
      ['/openapi', '/openapi/openapi'],
    );
    const built = new Set(registered.map((r) => `${r.method} ${r.url}`));
    for (const route of MERCHANT_ROUTES) {
      const served = built.has(`${route.method} ${MERCHANT_PREFIX}${route.path}`);
      assert.ok(served, `${route.method} ${route.path} is in MERCHANT_ROUTES but the app does not serve it`);
      const op = doc.paths[openApiPath(MERCHANT_PREFIX + route.path)]?.[route.method.toLowerCase()];
      assert.ok(op, `${route.method} ${route.path} is documented`);
      assert.deepEqual(op.security, [{ merchantBearer: [route.scope] }, { oauth2: [route.scope] }], `${route.path} names its scope`);
      assert.match(op.description, new RegExp(`Scope: \`${route.scope}\``));
    }
    const token = doc.paths['/oauth/token'].post;
    assert.deepEqual(Object.keys(token.requestBody.content).sort(), ['application/json', 'application/x-www-form-urlencoded']);
    assert.equal(token.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/TokenResponse');
    assert.equal(token.responses['401'].$ref, '#/components/responses/OAuthError401');
    assert.ok(doc.components.securitySchemes.merchantBearer && doc.components.securitySchemes.oauth2);
    assert.equal(
      Object.keys(doc.paths).some((p) => p.startsWith('/admin')),
      false,
      'the operator API is not in the merchant document',
    );
  });

  it('declares a response schema (envelope and error envelope) on every merchant route', () => {
    const merchant = registered.filter((r) => r.url.startsWith(`${MERCHANT_PREFIX}/`) && r.method !== 'HEAD');
    assert.ok(merchant.length >= 14);
    for (const r of merchant) {
      const response = r.schema?.response as Json | undefined;
      // A file download (x-binary: claim evidence) answers bytes on 200, documented from x-binary.
      const download = r.method === 'GET' && (r.schema as Json | undefined)?.['x-binary'] !== undefined;
      assert.ok(download || response?.['200'], `${r.method} ${r.url} declares schema.response[200]`);
      assert.ok(response?.['4xx'] && response['5xx'], `${r.method} ${r.url} declares its error responses`);
    }
  });

  it('shows every error code of the catalogue with an example', () => {
    const doc = committed();
    for (const e of ERROR_CATALOGUE) {
      const example = doc.components.responses[`Error${e.status}`]?.content['application/json'].examples[String(e.code)];
      assert.ok(example, `${e.code} has an example`);
      assert.equal(example.value.code, e.code);
      assert.equal(example.value.data, null);
    }
  });

  it("describes the claim codes SPEC §1's table lacks (40904, 42204) on the opening of a claim", () => {
    const doc = committed();
    const open = doc.paths['/v1/claims'].post;
    for (const [status, code] of [
      ['409', 40904],
      ['422', 42204],
    ] as const) {
      const ref: string = open.responses[status].$ref;
      const example = doc.components.responses[ref.split('/').at(-1)!].content['application/json'].examples[String(code)];
      assert.equal(example?.value.code, code, `POST /v1/claims ${status} shows ${code}`);
      assert.match(open.description, new RegExp(`${status}/${code}`), `the operation's description names ${status}/${code}`);
    }
  });

  it('hoists TypeBox $defs and $id into components (no JSON Schema ids in the document)', () => {
    const text = fs.readFileSync(DOCUMENT_FILE, 'utf8');
    assert.doesNotMatch(text, /"\$id"|"\$defs"/);
  });

  it('has a client method for every operation', () => {
    const doc = committed();
    const ids = Object.values(doc.paths)
      .flatMap((ops: any) => Object.values(ops).map((op: any) => op.operationId))
      .sort();
    assert.deepEqual(Object.keys(OPERATION_METHODS).sort(), ids);
    for (const method of Object.values(OPERATION_METHODS)) assert.equal(typeof (StockistClient.prototype as any)[method], 'function', method);
  });
});
