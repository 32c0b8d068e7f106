import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, PG_SKIP, newMerchant, useApp } from '../helpers.ts';
import { basic, form, tokenRequest } from './oauth-helpers.ts';

const STOCK_URL = '/openapi/v1/product/stocks?skus=SKU-A';
const ALL_SCOPES = 'catalog:read stock:read orders:read orders:write refunds:write account:read claims:read claims:write';

function assertOAuthError(r: { status: number; headers: Record<string, unknown>; body: Record<string, any> }, status: number, error: string) {
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.error, error);
  assert.equal(typeof r.body.error_description, 'string');
  assert.equal(r.body.code, undefined, 'not the envelope');
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.equal(r.headers.pragma, 'no-cache');
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`OAuth token endpoint (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect, { ACCESS_TOKEN_TTL_SECONDS: '600', OAUTH_FAILURE_LIMIT: '1000' });

    it('issues tokens for client credentials sent in a form body, in the RFC 6749 shape', async () => {
      const m = await newMerchant(t, 'OAuth Form');
      const issuedFrom = Date.now();
      const r = await tokenRequest(t, { grant_type: 'client_credentials', client_id: m.clientId, client_secret: m.clientSecret });
      const issuedBy = Date.now();
      assert.equal(r.status, 200);
      assert.deepEqual(Object.keys(r.body).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
      assert.match(r.body.access_token, /^stk_test_[0-9A-Za-z]{40}$/);
      assert.match(r.body.refresh_token, /^stkr_test_/);
      assert.equal(r.body.token_type, 'Bearer');
      assert.equal(r.body.expires_in, 600, 'ACCESS_TOKEN_TTL_SECONDS');
      assert.equal(r.body.scope, ALL_SCOPES);
      assert.equal(r.headers['cache-control'], 'no-store');
      assert.equal(r.headers['x-request-id'] !== undefined, true);
      const use = await t.merchant(r.body.access_token, 'GET', STOCK_URL);
      assert.equal(use.status, 200);
      const row = await t.store.db
        .selectFrom('api_tokens')
        .selectAll()
        .where('merchant_id', '=', Number(m.merchantId))
        .where('kind', '=', 'oauth')
        .executeTakeFirstOrThrow();
      // Issued during the request, for ACCESS_TOKEN_TTL_SECONDS: no allowance for how slow the machine is.
      const expires = row.expires_at!;
      assert.ok(expires >= issuedFrom + 600_000 && expires <= issuedBy + 600_000, `expires ${expires} for a request in [${issuedFrom}, ${issuedBy}]`);
      assert.notEqual(row.token_hash, r.body.access_token);
      const refresh = await t.store.db.selectFrom('oauth_refresh_tokens').selectAll().where('merchant_id', '=', Number(m.merchantId)).execute();
      assert.equal(refresh.length, 1);
      assert.ok(!refresh[0].token_hash.includes(r.body.refresh_token), 'only the hash is stored');
    });

    it('accepts HTTP Basic client authentication, JSON bodies and the /openapi/openapi alias', async () => {
      const m = await newMerchant(t, 'OAuth Basic');
      const viaBasic = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(m.clientId, m.clientSecret) });
      assert.equal(viaBasic.status, 200);
      const viaJson = await tokenRequest(t, { grant_type: 'client_credentials', client_id: m.clientId, client_secret: m.clientSecret }, { json: true });
      assert.equal(viaJson.status, 200);
      const viaAlias = await tokenRequest(
        t,
        { grant_type: 'client_credentials', client_id: m.clientId },
        { authorization: basic(m.clientId, m.clientSecret), url: '/openapi/openapi/oauth/token' },
      );
      assert.equal(viaAlias.status, 200);
      for (const r of [viaBasic, viaJson, viaAlias]) assert.equal((await t.merchant(r.body.access_token, 'GET', STOCK_URL)).status, 200);
    });

    it('grants the scopes asked for, and the token is held to them', async () => {
      const m = await newMerchant(t, 'OAuth Scoped');
      const r = await tokenRequest(t, {
        grant_type: 'client_credentials',
        client_id: m.clientId,
        client_secret: m.clientSecret,
        scope: 'orders:read catalog:read',
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.scope, 'catalog:read orders:read');
      const refused = await t.merchant(r.body.access_token, 'GET', STOCK_URL);
      assert.equal(refused.status, 403);
      assert.match(refused.body.message, /stock:read/);
    });

    it('rotates refresh tokens and keeps to (or narrows) the original scope', async () => {
      const m = await newMerchant(t, 'OAuth Rotate');
      const first = await tokenRequest(t, {
        grant_type: 'client_credentials',
        client_id: m.clientId,
        client_secret: m.clientSecret,
        scope: 'stock:read orders:read',
      });
      const second = await tokenRequest(
        t,
        { grant_type: 'refresh_token', refresh_token: first.body.refresh_token },
        { authorization: basic(m.clientId, m.clientSecret) },
      );
      assert.equal(second.status, 200);
      assert.notEqual(second.body.refresh_token, first.body.refresh_token, 'a new refresh token');
      assert.notEqual(second.body.access_token, first.body.access_token);
      assert.equal(second.body.scope, 'stock:read orders:read');
      assert.equal((await t.merchant(second.body.access_token, 'GET', STOCK_URL)).status, 200);
      const narrowed = await tokenRequest(t, {
        grant_type: 'refresh_token',
        refresh_token: second.body.refresh_token,
        scope: 'orders:read',
        client_id: m.clientId,
        client_secret: m.clientSecret,
      });
      assert.equal(narrowed.status, 200);
      assert.equal(narrowed.body.scope, 'orders:read');
      const widened = await tokenRequest(t, {
        grant_type: 'refresh_token',
        refresh_token: narrowed.body.refresh_token,
        scope: 'orders:read orders:write',
        client_id: m.clientId,
        client_secret: m.clientSecret,
      });
      assertOAuthError(widened, 400, 'invalid_scope');
      // The refused widening did not consume the token.
      const again = await tokenRequest(t, {
        grant_type: 'refresh_token',
        refresh_token: narrowed.body.refresh_token,
        client_id: m.clientId,
        client_secret: m.clientSecret,
      });
      assert.equal(again.status, 200);
      assert.equal(again.body.scope, 'orders:read', 'no scope asked: what the refresh token carries');
    });

    it('revokes the whole family when a used refresh token is presented again', async () => {
      const m = await newMerchant(t, 'OAuth Reuse');
      const auth = { authorization: basic(m.clientId, m.clientSecret) };
      const first = await tokenRequest(t, { grant_type: 'client_credentials' }, auth);
      const second = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, auth);
      const third = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: second.body.refresh_token }, auth);
      assert.equal(third.status, 200);
      // An unrelated family of the same client survives.
      const other = await tokenRequest(t, { grant_type: 'client_credentials' }, auth);

      const reuse = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, auth);
      assertOAuthError(reuse, 400, 'invalid_grant');
      assert.match(reuse.body.error_description, /already used/);
      for (const token of [first, second, third].map((r) => r.body.access_token)) {
        const r = await t.merchant(token, 'GET', STOCK_URL);
        assert.equal(r.status, 401);
        assert.match(r.body.message, /revoked/);
      }
      const latest = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: third.body.refresh_token }, auth);
      assertOAuthError(latest, 400, 'invalid_grant');
      assert.match(latest.body.error_description, /revoked/);
      assert.equal((await t.merchant(other.body.access_token, 'GET', STOCK_URL)).status, 200);
      assert.equal((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: other.body.refresh_token }, auth)).status, 200);
    });

    it('lets exactly one of two concurrent refreshes with one token win', async () => {
      const m = await newMerchant(t, 'OAuth Race');
      const auth = { authorization: basic(m.clientId, m.clientSecret) };
      const first = await tokenRequest(t, { grant_type: 'client_credentials' }, auth);
      const results = await Promise.all([1, 2, 3].map(() => tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, auth)));
      const won = results.filter((r) => r.status === 200);
      assert.equal(won.length, 1, `exactly one winner: ${JSON.stringify(results.map((r) => [r.status, r.body.error]))}`);
      const lost = results.filter((r) => r.status !== 200);
      for (const r of lost) assertOAuthError(r, 400, 'invalid_grant');
      assert.equal(lost.length, 2, 'the others are reuse');
      // The reuse revoked the family, including what the winner got.
      assert.equal((await t.merchant(won[0].body.access_token, 'GET', STOCK_URL)).status, 401);
      assertOAuthError(await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: won[0].body.refresh_token }, auth), 400, 'invalid_grant');
    });

    it('refuses expired refresh tokens and expired access tokens', async () => {
      const m = await newMerchant(t, 'OAuth Expiry');
      const auth = { authorization: basic(m.clientId, m.clientSecret) };
      const r = await tokenRequest(t, { grant_type: 'client_credentials' }, auth);
      await t.store.db
        .updateTable('oauth_refresh_tokens')
        .set({ expires_at: Date.now() - 1 })
        .where('merchant_id', '=', Number(m.merchantId))
        .execute();
      const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: r.body.refresh_token }, auth);
      assertOAuthError(refreshed, 400, 'invalid_grant');
      assert.match(refreshed.body.error_description, /expired/);
      await t.store.db
        .updateTable('api_tokens')
        .set({ expires_at: Date.now() - 1 })
        .where('merchant_id', '=', Number(m.merchantId))
        .where('kind', '=', 'oauth')
        .execute();
      const use = await t.merchant(r.body.access_token, 'GET', STOCK_URL);
      assert.equal(use.status, 401);
      assert.match(use.body.message, /expired/);
    });

    it('revokes the family when the operator revokes an OAuth access token', async () => {
      const m = await newMerchant(t, 'OAuth Operator Revoke');
      const auth = { authorization: basic(m.clientId, m.clientSecret) };
      const r = await tokenRequest(t, { grant_type: 'client_credentials' }, auth);
      const row = await t.store.db
        .selectFrom('api_tokens')
        .select('id')
        .where('merchant_id', '=', Number(m.merchantId))
        .where('kind', '=', 'oauth')
        .executeTakeFirstOrThrow();
      assert.equal((await t.admin('DELETE', `/admin/v1/tokens/${row.id}`)).status, 200);
      assert.equal((await t.merchant(r.body.access_token, 'GET', STOCK_URL)).status, 401);
      assertOAuthError(await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: r.body.refresh_token }, auth), 400, 'invalid_grant');
    });

    it('answers invalid_client with 401, WWW-Authenticate, and no hint whether the client exists', async () => {
      const m = await newMerchant(t, 'OAuth Client Errors');
      const wrongBasic = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(m.clientId, 'sks_wrong') });
      assertOAuthError(wrongBasic, 401, 'invalid_client');
      assert.match(String(wrongBasic.headers['www-authenticate']), /^Basic realm="stockist"/);
      const unknownBasic = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic('cli_nobody', 'sks_wrong') });
      assertOAuthError(unknownBasic, 401, 'invalid_client');
      assert.equal(unknownBasic.body.error_description, wrongBasic.body.error_description);
      const wrongBody = await tokenRequest(t, { grant_type: 'client_credentials', client_id: m.clientId, client_secret: 'sks_wrong' });
      assertOAuthError(wrongBody, 401, 'invalid_client');
      for (const params of [{ grant_type: 'client_credentials' }, { grant_type: 'client_credentials', client_id: m.clientId }] as Record<string, string>[]) {
        assertOAuthError(await tokenRequest(t, params), 401, 'invalid_client');
      }
      for (const authorization of [
        'Basic !!!',
        `Basic ${Buffer.from('no-colon').toString('base64')}`,
        `Basic ${Buffer.from('%E0%A4%A:x').toString('base64')}`,
      ]) {
        const r = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization });
        assertOAuthError(r, 401, 'invalid_client');
        assert.match(String(r.headers['www-authenticate']), /^Basic/);
      }
      // A secret that is right for another client does not work for this one.
      const other = await newMerchant(t, 'OAuth Other Client');
      assertOAuthError(
        await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(m.clientId, other.clientSecret) }),
        401,
        'invalid_client',
      );
    });

    it('answers invalid_request, unsupported_grant_type and invalid_scope with 400', async () => {
      const m = await newMerchant(t, 'OAuth Request Errors');
      const auth = { authorization: basic(m.clientId, m.clientSecret) };
      assertOAuthError(await tokenRequest(t, {}, auth), 400, 'invalid_request');
      assertOAuthError(await tokenRequest(t, { grant_type: 'password', username: 'a', password: 'b' }, auth), 400, 'unsupported_grant_type');
      assertOAuthError(await tokenRequest(t, { grant_type: 'authorization_code', code: 'x' }, auth), 400, 'unsupported_grant_type');
      assertOAuthError(await tokenRequest(t, { grant_type: 'refresh_token' }, auth), 400, 'invalid_request');
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials', client_secret: m.clientSecret }, auth), 400, 'invalid_request');
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials', client_id: 'cli_someone_else' }, auth), 400, 'invalid_request');
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials', scope: 'admin' }, auth), 400, 'invalid_scope');
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials', scope: 'stock:read orders:delete' }, auth), 400, 'invalid_scope');
      // Repeated parameters are refused (RFC 6749 §3.2).
      const repeated = await t.app.inject({
        method: 'POST',
        url: '/openapi/oauth/token',
        payload: 'grant_type=client_credentials&grant_type=refresh_token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth },
      });
      assertOAuthError({ status: repeated.statusCode, headers: repeated.headers, body: repeated.json() }, 400, 'invalid_request');
      for (const [payload, contentType] of [
        ['', undefined],
        ['{bad json', 'application/json'],
        ['grant_type=client_credentials', 'text/plain'],
        ['[1]', 'application/json'],
      ] as const) {
        const r = await t.app.inject({
          method: 'POST',
          url: '/openapi/oauth/token',
          payload,
          headers: { ...(contentType ? { 'content-type': contentType } : {}), ...auth },
        });
        assertOAuthError({ status: r.statusCode, headers: r.headers, body: r.json() }, 400, 'invalid_request');
      }
      const big = await t.app.inject({
        method: 'POST',
        url: '/openapi/oauth/token',
        payload: form({ grant_type: 'client_credentials', scope: 'x'.repeat(2_000_000) }),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth },
      });
      assertOAuthError({ status: big.statusCode, headers: big.headers, body: big.json() }, 413, 'invalid_request');
    });

    it('answers invalid_grant for unknown, malformed and other clients’ refresh tokens', async () => {
      const m = await newMerchant(t, 'OAuth Grant Errors');
      const other = await newMerchant(t, 'OAuth Grant Other');
      const auth = { authorization: basic(m.clientId, m.clientSecret) };
      const theirs = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(other.clientId, other.clientSecret) });
      for (const refresh of ['stkr_test_unknown', 'garbage', theirs.body.refresh_token, theirs.body.access_token]) {
        const r = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: refresh }, auth);
        assertOAuthError(r, 400, 'invalid_grant');
        assert.match(r.body.error_description, /unknown refresh token/);
      }
      // Theirs still works for them: a stranger presenting it is not a reuse of it.
      assert.equal(
        (
          await tokenRequest(
            t,
            { grant_type: 'refresh_token', refresh_token: theirs.body.refresh_token },
            { authorization: basic(other.clientId, other.clientSecret) },
          )
        ).status,
        200,
      );
      const live = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: `stkr_live_${'a'.repeat(48)}` }, auth);
      assertOAuthError(live, 400, 'invalid_grant');
      assert.match(live.body.error_description, /production refresh token/);
    });

    it('refuses a disabled merchant with unauthorized_client, and its OAuth tokens with 403', async () => {
      const m = await newMerchant(t, 'OAuth Disabled');
      const auth = { authorization: basic(m.clientId, m.clientSecret) };
      const r = await tokenRequest(t, { grant_type: 'client_credentials' }, auth);
      await t.admin('PATCH', `/admin/v1/merchants/${m.merchantId}`, { status: 'disabled' });
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials' }, auth), 400, 'unauthorized_client');
      assertOAuthError(await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: r.body.refresh_token }, auth), 400, 'unauthorized_client');
      const use = await t.merchant(r.body.access_token, 'GET', STOCK_URL);
      assert.equal(use.status, 403);
      assert.equal(use.body.code, 40300);
    });

    it('keeps refusing non-JSON bodies with 415/41500 everywhere else', async () => {
      const m = await newMerchant(t, 'OAuth Formless');
      // Both routes exist and take a JSON body: only the media type is wrong.
      const routes = [
        ['/admin/v1/merchants', 'Bearer test-admin-key-0123456789'],
        ['/openapi/v2/order/orders/channel', `Bearer ${m.token}`],
      ];
      for (const [url, authorization] of routes) {
        const r = await t.app.inject({
          method: 'POST',
          url,
          payload: 'name=x',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization },
        });
        assert.equal(r.statusCode, 415, `${url}: ${r.body}`);
        assert.equal(r.json().code, 41500, url);
      }
    });
  });
}
