import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { DIALECTS, loadCatalogue, newMerchant, useApp, type TestApp } from '../helpers.ts';
import { signedIn as consoleSignedIn, staff } from './console-client.ts';
import { follow, member } from './manager-helpers.ts';
import { basic, tokenRequest } from './oauth-helpers.ts';

const URL = '/openapi/v1/product/stocks?skus=SKU-A';
/** TOKEN_CACHE_SECONDS as shipped: what the issue saw (a revoked token still worked after the page answered). */
const DEFAULT_CACHE_SECONDS = String(loadConfig({}).tokenCacheSeconds);

/**
 * Issue 29 item 3: every path that revokes a credential or disables a merchant through this
 * process clears its token cache before it answers, so the very next request with the token is
 * refused — with the default TOKEN_CACHE_SECONDS and the app's clock standing still, so nothing
 * lapses on its own. One test per path: the console, the business manager, the operator API and
 * the token endpoint. The CLI is another process: test/e2e/cli-token-cache.test.ts.
 */
for (const dialect of DIALECTS) {
  describe(`revocation holds from the next request, whoever revokes (${dialect})`, () => {
    const clock = { ms: Date.now(), now: () => clock.ms };
    const t = useApp(dialect, { TOKEN_CACHE_SECONDS: DEFAULT_CACHE_SECONDS }, { now: clock.now });
    /** The token works (and its lookup is now cached). */
    const works = async (token: string) => assert.equal((await t.merchant(token, 'GET', URL)).status, 200, 'works before');
    const refused = async (token: string, status: number, message: RegExp) => {
      const r = await t.merchant(token, 'GET', URL);
      assert.equal(r.status, status, r.raw);
      assert.match(r.body.message, message);
    };
    const idOf = async (merchantId: string, what: 'api_tokens' | 'oauth_clients') =>
      (await t.store.db.selectFrom(what).select('id').where('merchant_id', '=', Number(merchantId)).orderBy('id', 'desc').executeTakeFirstOrThrow()).id;

    // The catalogue the tokens read, loaded once before the tests (no test writes it).
    before(() => loadCatalogue(t as TestApp));

    it('uses the default cache', async () => {
      assert.equal(t.config.tokenCacheSeconds, 5);
    });

    it('console: a token revoked on the merchant page', async () => {
      await staff(t, 'revoker@example.com', 'owner');
      const owner = await consoleSignedIn(t, 'revoker@example.com');
      const m = await newMerchant(t, 'Console revoke');
      await works(m.token);
      const csrf = await owner.csrf(`/console/merchants/${m.merchantId}`);
      const r = await owner.post(`/console/merchants/${m.merchantId}/tokens/${m.tokenId}/revoke`, { _csrf: csrf });
      assert.equal(r.statusCode, 303, r.body.slice(0, 300));
      await refused(m.token, 401, /revoked/);
    });

    it('console: a merchant disabled', async () => {
      await staff(t, 'disabler@example.com', 'owner');
      const owner = await consoleSignedIn(t, 'disabler@example.com');
      const m = await newMerchant(t, 'Console disable');
      await works(m.token);
      const csrf = await owner.csrf(`/console/merchants/${m.merchantId}`);
      assert.equal((await owner.post(`/console/merchants/${m.merchantId}/disable`, { _csrf: csrf })).statusCode, 303);
      await refused(m.token, 403, /disabled/);
    });

    it('business manager: a personal token revoked', async () => {
      const m = await newMerchant(t, 'Manager token');
      const admin = await member(t, m.merchantId, 'token-admin@example.com', 'admin');
      const csrf = await admin.csrf('/manager/credentials');
      const made = await follow(admin, await admin.post('/manager/credentials/tokens', { _csrf: csrf, name: 'Reader', scopes: 'stock:read' }));
      assert.equal(made.statusCode, 200, made.body.slice(0, 300));
      const token = /data-secret>([^<]+)</.exec(made.body)![1];
      await works(token);
      const r = await admin.post(`/manager/credentials/tokens/${await idOf(m.merchantId, 'api_tokens')}/revoke`, { _csrf: csrf });
      assert.equal(r.statusCode, 303);
      await refused(token, 401, /revoked/);
    });

    it('business manager: an OAuth client revoked (its tokens with it)', async () => {
      const m = await newMerchant(t, 'Manager client');
      const admin = await member(t, m.merchantId, 'client-admin@example.com', 'admin');
      const csrf = await admin.csrf('/manager/credentials');
      const made = await follow(admin, await admin.post('/manager/credentials/clients', { _csrf: csrf, name: 'Backend' }));
      const clientId = /data-client-id>([^<]+)</.exec(made.body)![1];
      const secret = /data-secret>([^<]+)</.exec(made.body)![1];
      const grant = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) });
      assert.equal(grant.status, 200);
      await works(grant.body.access_token);
      assert.equal((await admin.post(`/manager/credentials/clients/${await idOf(m.merchantId, 'oauth_clients')}/revoke`, { _csrf: csrf })).statusCode, 303);
      await refused(grant.body.access_token, 401, /revoked/);
      assert.equal((await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) })).status, 401, 'nor new ones');
    });

    it('business manager: a client secret rotated (the old secret at once; tokens already issued stay, by design)', async () => {
      const m = await newMerchant(t, 'Manager rotate');
      const admin = await member(t, m.merchantId, 'rotate-admin@example.com', 'admin');
      const csrf = await admin.csrf('/manager/credentials');
      const made = await follow(admin, await admin.post('/manager/credentials/clients', { _csrf: csrf, name: 'Backend' }));
      const clientId = /data-client-id>([^<]+)</.exec(made.body)![1];
      const secret = /data-secret>([^<]+)</.exec(made.body)![1];
      const grant = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) });
      await works(grant.body.access_token);
      const rotated = await follow(
        admin,
        await admin.post(`/manager/credentials/clients/${await idOf(m.merchantId, 'oauth_clients')}/rotate`, { _csrf: csrf }),
      );
      const fresh = /data-secret>([^<]+)</.exec(rotated.body)![1];
      const old = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(clientId, secret) });
      assert.equal(old.status, 401, 'the old secret is refused at once');
      assert.equal(old.body.error, 'invalid_client');
      assert.equal((await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(clientId, fresh) })).status, 200);
      await works(grant.body.access_token);
    });

    it('operator API: a token revoked', async () => {
      const m = await newMerchant(t, 'API revoke');
      await works(m.token);
      assert.equal((await t.admin('DELETE', `/admin/v1/tokens/${m.tokenId}`)).status, 200);
      await refused(m.token, 401, /revoked/);
    });

    it('operator API: a merchant disabled', async () => {
      const m = await newMerchant(t, 'API disable');
      await works(m.token);
      assert.equal((await t.admin('PATCH', `/admin/v1/merchants/${m.merchantId}`, { status: 'disabled' })).status, 200);
      await refused(m.token, 403, /disabled/);
    });

    it('token endpoint: a refresh token used twice revokes its family', async () => {
      const m = await newMerchant(t, 'Refresh reuse');
      const auth = { authorization: basic(m.clientId, m.clientSecret) };
      const first = await tokenRequest(t, { grant_type: 'client_credentials' }, auth);
      await works(first.body.access_token);
      assert.equal((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, auth)).status, 200);
      assert.equal((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, auth)).status, 400, 'reuse');
      await refused(first.body.access_token, 401, /revoked/);
    });
  });
}
