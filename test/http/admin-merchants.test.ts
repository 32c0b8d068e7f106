import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, tableDigests, useApp } from '../helpers.ts';

const STOCK_URL = '/openapi/v1/product/stocks?skus=SKU-A';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`merchants, tokens and bearer auth (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const t = useApp(dialect);
    // The catalogue the tokens read (SKU-A at STOCK_URL): made once, before any test, so each runs alone.
    before(() => loadCatalogue(t));

    it('creates merchants with client credentials shown once', async () => {
      const r = await t.admin('POST', '/admin/v1/merchants', { name: '  Acme Store  ' });
      assert.equal(r.status, 200);
      assert.match(r.body.data.merchantId, /^\d+$/);
      assert.equal(r.body.data.name, 'Acme Store');
      assert.match(r.body.data.clientId, /^cli_/);
      assert.match(r.body.data.clientSecret, /^sks_/);
      const list = await t.admin('GET', '/admin/v1/merchants');
      const listed = list.body.data.list.find((m: { merchantId: string }) => m.merchantId === r.body.data.merchantId);
      assert.equal(listed.status, 'active');
      assert.equal(listed.clientSecret, undefined, 'the secret is never listed');
      const stored = await t.store.db.selectFrom('merchants').selectAll().where('id', '=', Number(r.body.data.merchantId)).executeTakeFirstOrThrow();
      assert.notEqual(stored.client_secret_hash, r.body.data.clientSecret, 'only a hash is stored');
    });

    it('refuses bad merchant and token bodies, writing nothing', async () => {
      for (const [method, url, body] of [
        ['POST', '/admin/v1/merchants', {}],
        ['POST', '/admin/v1/merchants', { name: 'x'.repeat(129) }],
        ['POST', '/admin/v1/merchants', { name: ['a'] }],
        ['PATCH', '/admin/v1/merchants/1', { status: 'paused' }],
        ['POST', '/admin/v1/merchants/1/tokens', { scopes: ['root'] }],
        ['POST', '/admin/v1/merchants/1/tokens', { scopes: [] }],
        ['POST', '/admin/v1/merchants/1/tokens', { expiresInSeconds: 5 }],
        ['POST', '/admin/v1/merchants/abc/tokens', {}],
      ] as const) {
        const before = await tableDigests(t.store);
        const r = await t.admin(method, url, body);
        assert.equal(r.status, 400, `${method} ${url} ${JSON.stringify(body)}`);
        assert.equal(r.body.code, 40000);
        assert.deepEqual(await tableDigests(t.store), before);
      }
      const missing = await t.admin('POST', '/admin/v1/merchants/999999/tokens', {});
      assert.equal(missing.status, 404);
      assert.equal(missing.body.code, 40400);
      assert.equal((await t.admin('PATCH', '/admin/v1/merchants/999999', { status: 'disabled' })).status, 404);
      assert.equal((await t.admin('DELETE', '/admin/v1/tokens/999999')).status, 404);
    });

    it('issues tokens that work, stored only as hashes', async () => {
      const m = await newMerchant(t, 'Token Co');
      assert.match(m.token, /^stk_test_[0-9A-Za-z]{40}$/);
      const r = await t.merchant(m.token, 'GET', STOCK_URL);
      assert.equal(r.status, 200);
      assert.equal(r.body.data.list[0].sku, 'SKU-A');
      const rows = await t.store.db.selectFrom('api_tokens').select('token_hash').execute();
      assert.ok(rows.every((row) => row.token_hash !== m.token && !row.token_hash.includes(m.token)));
    });

    it('answers a missing, malformed or unknown token with 401 and WWW-Authenticate', async () => {
      for (const authorization of [undefined, 'Basic abc', 'Bearer', 'Bearer stk_test_unknownunknownunknown', 'Bearer something-else']) {
        const r = await t.app.inject({ method: 'GET', url: STOCK_URL, headers: authorization ? { authorization } : {} });
        assert.equal(r.statusCode, 401, String(authorization));
        assert.equal(r.json().code, 40100);
        assert.match(String(r.headers['www-authenticate']), /^Bearer realm="stockist"/);
      }
    });

    it('refuses revoked and expired tokens', async () => {
      const m = await newMerchant(t, 'Revoke Co');
      const revoked = await t.admin('DELETE', `/admin/v1/tokens/${m.tokenId}`);
      assert.equal(revoked.status, 200);
      assert.equal(revoked.body.data.tokenId, m.tokenId);
      const r = await t.merchant(m.token, 'GET', STOCK_URL);
      assert.equal(r.status, 401);
      assert.match(r.body.message, /revoked/);
      assert.match(String(r.headers['www-authenticate']), /Bearer/);

      const e = await newMerchant(t, 'Expiry Co', { expiresInSeconds: 60 });
      assert.equal((await t.merchant(e.token, 'GET', STOCK_URL)).status, 200);
      await t.store.db
        .updateTable('api_tokens')
        .set({ expires_at: Date.now() - 1 })
        .where('id', '=', Number(e.tokenId))
        .execute();
      const expired = await t.merchant(e.token, 'GET', STOCK_URL);
      assert.equal(expired.status, 401);
      assert.match(expired.body.message, /expired/);
    });

    it('refuses a token of the other environment with a message that says so', async () => {
      const live = `stk_live_${'a'.repeat(40)}`;
      const r = await t.merchant(live, 'GET', STOCK_URL);
      assert.equal(r.status, 401);
      assert.match(r.body.message, /production token/);
    });

    it('refuses a disabled merchant with 403 and lets it back in when re-enabled', async () => {
      const m = await newMerchant(t, 'Disabled Co');
      const d = await t.admin('PATCH', `/admin/v1/merchants/${m.merchantId}`, { status: 'disabled' });
      assert.equal(d.body.data.status, 'disabled');
      const r = await t.merchant(m.token, 'GET', STOCK_URL);
      assert.equal(r.status, 403);
      assert.equal(r.body.code, 40300);
      await t.admin('PATCH', `/admin/v1/merchants/${m.merchantId}`, { status: 'active' });
      assert.equal((await t.merchant(m.token, 'GET', STOCK_URL)).status, 200);
    });

    it('enforces the route scope', async () => {
      const m = await newMerchant(t, 'Scoped Co', { scopes: ['catalog:read'] });
      const r = await t.merchant(m.token, 'GET', STOCK_URL);
      assert.equal(r.status, 403);
      assert.equal(r.body.code, 40300);
      assert.match(r.body.message, /stock:read/);
    });
  });
}
