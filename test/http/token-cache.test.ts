import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TokenCache } from '../../src/services/merchants.service.ts';
import { buildTestApp, loadCatalogue, newMerchant, useApp } from '../helpers.ts';

const URL = '/openapi/v1/product/stocks?skus=SKU-A';

/** Issue 8: token lookups are cached, bounded and short-lived; revocation still lands within the TTL. */
describe('token lookup cache', () => {
  // The app's clock, moved by hand: "still cached" and "lapsed" do not depend on the machine's speed.
  const clock = { ms: Date.now(), now: () => clock.ms };
  const t = useApp('sqlite', { TOKEN_CACHE_SECONDS: '1' }, { now: clock.now });

  it('drops cached lookups when credentials change through this process', async () => {
    await loadCatalogue(t);
    const m = await newMerchant(t, 'Cached');
    assert.equal((await t.merchant(m.token, 'GET', URL)).status, 200);
    await t.admin('DELETE', `/admin/v1/tokens/${m.tokenId}`);
    assert.equal((await t.merchant(m.token, 'GET', URL)).status, 401, 'revoked through the API: at once');
    const d = await newMerchant(t, 'Disabled later');
    assert.equal((await t.merchant(d.token, 'GET', URL)).status, 200);
    await t.admin('PATCH', `/admin/v1/merchants/${d.merchantId}`, { status: 'disabled' });
    assert.equal((await t.merchant(d.token, 'GET', URL)).status, 403);
  });

  it('sees a revocation made elsewhere once the entry lapses, TOKEN_CACHE_SECONDS after it was cached', async () => {
    const m = await newMerchant(t, 'Elsewhere');
    assert.equal((await t.merchant(m.token, 'GET', URL)).status, 200);
    // As another instance (or the CLI) would: straight in the database.
    await t.store.db.updateTable('api_tokens').set({ revoked_at: Date.now() }).where('id', '=', Number(m.tokenId)).execute();
    assert.equal((await t.merchant(m.token, 'GET', URL)).status, 200, 'still cached');
    clock.ms += 999;
    assert.equal((await t.merchant(m.token, 'GET', URL)).status, 200, 'still cached 999 ms later');
    clock.ms += 1;
    const lapsed = await t.merchant(m.token, 'GET', URL);
    assert.equal(lapsed.status, 401);
    assert.match(lapsed.body.message, /revoked/);
  });

  it('does not store a lookup that read the database before a clear (a request in flight during a revocation)', () => {
    const cache = new TokenCache(5_000);
    const row = { tokenId: 1 } as unknown as Parameters<TokenCache['set']>[1];
    const before = cache.generation;
    cache.clear(); // the revocation's answer, while the lookup was reading the row as it was
    cache.set('hash', row, 0, before);
    assert.equal(cache.get('hash', 1), undefined, 'the stale row is not put back');
    cache.set('hash', row, 0, cache.generation);
    assert.equal(cache.get('hash', 1)?.row, row, 'a lookup begun after the clear is cached');
  });

  it('caches nothing with TOKEN_CACHE_SECONDS=0', async (ctx) => {
    const off = await buildTestApp(ctx, 'sqlite', { TOKEN_CACHE_SECONDS: '0' }, { now: clock.now });
    await loadCatalogue(off);
    const m = await newMerchant(off, 'Uncached');
    assert.equal((await off.merchant(m.token, 'GET', URL)).status, 200);
    await off.store.db.updateTable('api_tokens').set({ revoked_at: Date.now() }).where('id', '=', Number(m.tokenId)).execute();
    assert.equal((await off.merchant(m.token, 'GET', URL)).status, 401, 'the next request sees the revocation');
  });
});
