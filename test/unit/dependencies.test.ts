import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Fastify from 'fastify';
import semver from 'semver';

const ROOT = path.resolve(import.meta.dirname, '../..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));

/** Issue 17 item 6: `npm install` on a supported Node version prints no EBADENGINE warning. */
describe('dependencies and the supported Node.js versions', () => {
  it('every installed package accepts every Node.js version package.json declares', () => {
    const ours = pkg.engines.node as string;
    assert.ok(semver.satisfies(process.version, ours), `this Node.js (${process.version}) is one the project declares (${ours})`);
    // What npm installed here: an optional package for another platform (the wasm32 fallback of
    // oxc-resolver, under knip) stays in the lock file but is never installed, so never warns.
    const installed = Object.entries(lock.packages as Record<string, { version?: string; optional?: boolean; engines?: { node?: string } }>).filter(
      ([name, p]) => name !== '' && (!p.optional || fs.existsSync(path.join(ROOT, name))),
    );
    assert.ok(installed.length > 100, 'the lock file lists the installed packages');
    const refusing = installed
      .filter(([, p]) => typeof p.engines?.node === 'string' && !semver.subset(ours, p.engines.node))
      .map(([name, p]) => `${name.replace(/^.*node_modules\//, '')}@${p.version} wants node ${p.engines!.node}`);
    assert.deepEqual(refusing, []);
  });

  it('app.inject (light-my-request and the cookie version it brings) sends cookies', async () => {
    const app = Fastify();
    app.get('/', async (request) => ({ cookie: request.headers.cookie ?? null }));
    const r = await app.inject({ method: 'GET', url: '/', cookies: { session: 'a b', theme: 'dark' } });
    assert.deepEqual(r.json(), { cookie: 'session=a%20b; theme=dark' });
    await app.close();
  });
});
