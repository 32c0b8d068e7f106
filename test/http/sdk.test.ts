import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { SDK_EXAMPLE, sdkPackage } from '../../src/http/routes/sdk.ts';
import { buildTestApp } from '../helpers.ts';

/** The names of a ustar archive's entries. */
function tarNames(tar: Buffer): string[] {
  const names: string[] = [];
  for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
    names.push(
      tar
        .subarray(at, at + 100)
        .toString('utf8')
        .replace(/\0.*$/s, ''),
    );
    const size = Number.parseInt(
      tar
        .subarray(at + 124, at + 136)
        .toString('utf8')
        .replace(/\0.*$/s, ''),
      8,
    );
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return names;
}

// Storage plays no part: SQLite only. The package comes from dist/sdk/ (the test runner builds it).
describe('/sdk/: the typed client package, public', () => {
  const sdk = sdkPackage();

  it('lists the package and the example; serves the tarball as gzip under its versioned name, without a session or token', async (t) => {
    assert.ok(sdk, 'dist/sdk/ holds the package');
    const app = await buildTestApp(t, 'sqlite');
    const version = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../clients/typescript/package.json'), 'utf8')).version;
    assert.equal(sdk.tarball, `stockist-client-${version}.tgz`);

    const index = await app.app.inject({ method: 'GET', url: '/sdk' });
    assert.equal(index.statusCode, 200);
    assert.match(index.headers['content-type'] as string, /^text\/html/);
    assert.ok(index.body.includes(`href="/sdk/${sdk.tarball}"`) && index.body.includes(`href="/sdk/${SDK_EXAMPLE}"`));
    assert.ok(!index.body.includes('certificate.pem'), 'no certificate to hand out on plain HTTP');

    const tarball = await app.app.inject({ method: 'GET', url: `/sdk/${sdk.tarball}` });
    assert.equal(tarball.statusCode, 200);
    assert.equal(tarball.headers['content-type'], 'application/gzip');
    assert.match(tarball.headers['cache-control'] as string, /public/);
    const names = tarNames(zlib.gunzipSync(tarball.rawPayload));
    for (const name of [
      'package/package.json',
      'package/index.js',
      'package/README.md',
      `package/examples/${SDK_EXAMPLE}`,
      'package/types/clients/typescript/src/index.d.ts',
    ])
      assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    const manifest = JSON.parse(
      zlib
        .gunzipSync(tarball.rawPayload)
        .toString('utf8')
        .match(/\{\s*"name": "@stockist\/client"[\s\S]*?\n\}/)![0],
    );
    assert.equal(manifest.version, version);
    assert.equal(manifest.dependencies, undefined, 'nothing to fetch from a registry');

    const example = await app.app.inject({ method: 'GET', url: `/sdk/${SDK_EXAMPLE}` });
    assert.equal(example.statusCode, 200);
    assert.match(example.headers['content-type'] as string, /^text\/javascript/);
    assert.match(example.body, /from '@stockist\/client'/);

    for (const url of ['/sdk/stockist-client-0.0.0.tgz', '/sdk/certificate.pem', '/sdk/../package.json']) {
      assert.equal((await app.app.inject({ method: 'GET', url })).statusCode, 404, url);
    }
  });

  it('answers with the security headers of every page: nosniff, the CSP, no framing, the referrer policy (issue 44, 17)', async (t) => {
    assert.ok(sdk, 'dist/sdk/ holds the package');
    const app = await buildTestApp(t, 'sqlite');
    const page = await app.app.inject({ method: 'GET', url: '/console/sign-in' });
    const names = ['content-security-policy', 'x-content-type-options', 'x-frame-options', 'referrer-policy'];
    const expected = Object.fromEntries(names.map((n) => [n, page.headers[n]]));
    assert.equal(expected['x-content-type-options'], 'nosniff');
    assert.match(String(expected['content-security-policy']), /default-src 'none'/);
    for (const url of ['/sdk', `/sdk/${sdk.tarball}`, `/sdk/${SDK_EXAMPLE}`]) {
      const r = await app.app.inject({ method: 'GET', url });
      assert.equal(r.statusCode, 200, url);
      assert.deepEqual(Object.fromEntries(names.map((n) => [n, r.headers[n]])), expected, url);
    }
    // The tarball stays cacheable: the headers add to its own, they do not replace them.
    assert.match(String((await app.app.inject({ method: 'GET', url: `/sdk/${sdk.tarball}` })).headers['cache-control']), /public/);
  });

  it('hands out the certificate a TLS server made itself, and not one configured with TLS_CERT_FILE', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-sdk-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const { loadOrCreateCertificate } = await import('../../src/runtime/tls.ts');
    const made = await loadOrCreateCertificate({ dataDir: dir, tlsCertFile: null, tlsKeyFile: null } as Parameters<typeof loadOrCreateCertificate>[0]);
    const https = { key: made.key, cert: made.cert };

    const selfSigned = await buildTestApp(t, 'sqlite', { TLS: 'on' }, { https });
    const pem = await selfSigned.app.inject({ method: 'GET', url: '/sdk/certificate.pem' });
    assert.equal(pem.statusCode, 200);
    assert.equal(pem.headers['content-type'], 'application/x-pem-file');
    assert.equal(pem.body, made.cert);
    assert.ok((await selfSigned.app.inject({ method: 'GET', url: '/sdk' })).body.includes('href="/sdk/certificate.pem"'));

    const certFile = path.join(dir, 'tls/cert.pem');
    const configured = await buildTestApp(t, 'sqlite', { TLS: 'on', TLS_CERT_FILE: certFile, TLS_KEY_FILE: path.join(dir, 'tls/key.pem') }, { https });
    assert.equal((await configured.app.inject({ method: 'GET', url: '/sdk/certificate.pem' })).statusCode, 404);
  });

  it('is served where the merchant API is, not on an operator-only listener', async (t) => {
    const adminOnly = await buildTestApp(t, 'sqlite', {}, { surfaces: { merchant: false, admin: true } });
    assert.equal((await adminOnly.app.inject({ method: 'GET', url: `/sdk/${sdk!.tarball}` })).statusCode, 404);
  });
});
