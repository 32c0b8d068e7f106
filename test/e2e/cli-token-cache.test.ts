import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildApp } from '../../src/app.ts';
import { ADMIN_KEY, freshStore, testConfig } from '../helpers.ts';
import { runCli } from './process.ts';

/**
 * Issue 29 item 3, the CLI's path: `stockist token revoke` and the server are two processes, so the
 * command cannot clear the server's token cache. What bounds it is the cache's TTL
 * (TOKEN_CACHE_SECONDS, default 5; docs/decisions.md "Token cache"): the server, with the default,
 * refuses the token once the entry it cached has lapsed — on its own clock, moved by hand here — and
 * a lookup after a revocation is never cached. The command line itself answers only after the
 * revocation is committed.
 */
describe('a token revoked on the command line', () => {
  it('is refused by a running server within TOKEN_CACHE_SECONDS (the default), then for good', { timeout: 120_000 }, async (t) => {
    const db = await freshStore('sqlite');
    t.after(() => db.drop());
    const clock = { ms: Date.now() };
    const config = testConfig({ TOKEN_CACHE_SECONDS: '5' });
    const app = await buildApp({ config, store: db.store, adminApiKey: ADMIN_KEY }, { logger: false, now: () => clock.ms });
    t.after(() => app.close());
    const admin = (method: 'POST', url: string, payload: unknown) =>
      app.inject({ method, url, payload: payload as object, headers: { authorization: `Bearer ${ADMIN_KEY}` } }).then((r) => r.json());
    const merchant = (await admin('POST', '/admin/v1/merchants', { name: 'CLI revoke' })).data;
    const token = (await admin('POST', `/admin/v1/merchants/${merchant.merchantId}/tokens`, {})).data;
    const use = async () =>
      (await app.inject({ method: 'GET', url: '/openapi/v1/account', headers: { authorization: `Bearer ${token.accessToken}` } })).statusCode;

    assert.equal(await use(), 200, 'works, and its lookup is cached');
    const revoked = runCli(['token', 'revoke', token.tokenId], { DATABASE_URL: db.url });
    assert.equal(revoked.status, 0, revoked.stderr);
    assert.match(revoked.stdout, new RegExp(`^token ${token.tokenId} revoked at `));
    assert.equal(await use(), 200, 'another process: the cached lookup still answers');
    clock.ms += 4_999;
    assert.equal(await use(), 200, 'until the entry lapses');
    clock.ms += 1;
    assert.equal(await use(), 401, 'TOKEN_CACHE_SECONDS after it was cached: refused');
    assert.equal(await use(), 401, 'and the refusal is not cached away');
  });
});
