import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { DIALECTS, newMerchant, tableDigests, useApp } from '../helpers.ts';
import { signedIn as consoleSignedIn, staff } from './console-client.ts';
import { follow, member, type Browser } from './manager-helpers.ts';
import { tokenRequest } from './oauth-helpers.ts';

const HOUR = 3_600_000;
/** TOKEN_CACHE_SECONDS as shipped, so a token's cached lookup is in play. */
const DEFAULT_CACHE_SECONDS = String(loadConfig({}).tokenCacheSeconds);
const URL = '/openapi/v1/product/products';

/**
 * Issue 29 item 14, credentials from the user's side. Token forms of both front ends follow one
 * least-privilege rule (nothing ticked is refused, nothing written; the forms start with the read
 * scopes ticked) while the operator API keeps SPEC §2.1's default; rotating an OAuth client's
 * secret keeps the old one working for the grace period chosen (0–24 h), on the app's clock.
 */
for (const dialect of DIALECTS) {
  describe(`credentials: least privilege and rotation grace (${dialect})`, () => {
    const clock = { ms: Date.now(), now: () => clock.ms };
    const t = useApp(dialect, { TOKEN_CACHE_SECONDS: DEFAULT_CACHE_SECONDS }, { now: clock.now });
    const grant = (clientId: string, secret: string) => tokenRequest(t, { grant_type: 'client_credentials', client_id: clientId, client_secret: secret });

    /** A developer's new OAuth client: its id, its secret and its row id. */
    async function newClient(dev: Browser, name: string) {
      const created = await follow(dev, await dev.post('/manager/credentials/clients', { _csrf: await dev.csrf('/manager/credentials'), name }));
      const clientId = /data-client-id>(cli_[A-Za-z0-9]+)</.exec(created.body)![1];
      const secret = /data-secret>(sks_[A-Za-z0-9]+)</.exec(created.body)![1];
      const row = await t.store.db.selectFrom('oauth_clients').select('id').where('client_id', '=', clientId).executeTakeFirstOrThrow();
      return { clientId, secret, id: row.id };
    }
    async function rotate(dev: Browser, id: number, graceHours: string) {
      const r = await dev.post(`/manager/credentials/clients/${id}/rotate`, { _csrf: await dev.csrf('/manager/credentials'), graceHours });
      assert.equal(r.statusCode, 303, r.body.slice(0, 500));
      const page = await follow(dev, r);
      return { page: page.body, secret: /data-secret>(sks_[A-Za-z0-9]+)</.exec(page.body)![1] };
    }

    it('business manager: the token form starts with only the read scopes ticked; nothing ticked is refused with its reason, nothing written', async () => {
      const m = await newMerchant(t, 'Least privilege shop');
      const dev = await member(t, m.merchantId, 'least@example.com', 'developer');
      const page = await dev.get('/manager/credentials');
      const ticked = [...page.body.matchAll(/name="scopes" value="([a-z:]+)" checked/g)].map((x) => x[1]);
      assert.deepEqual(ticked, ['catalog:read', 'stock:read', 'orders:read', 'account:read', 'claims:read']);
      const before = await tableDigests(t.store);
      const r = await dev.post('/manager/credentials/tokens', { _csrf: await dev.csrf('/manager/credentials'), name: 'Nothing', expiresInDays: '30' });
      assert.equal(r.statusCode, 400);
      assert.match(r.body, /Not created: scopes: tick at least one scope/);
      assert.match(r.body, /id="token-name"[^>]*value="Nothing"/, 'what was typed comes back');
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
    });

    it('console: the token form starts with only the read scopes ticked; nothing ticked is refused (400), nothing written — the same rule', async () => {
      await staff(t, 'least-owner@example.com', 'owner');
      const owner = await consoleSignedIn(t, 'least-owner@example.com');
      const m = await newMerchant(t, 'Console least shop');
      const page = await owner.get(`/console/merchants/${m.merchantId}`);
      const ticked = [...page.body.matchAll(/name="scopes" value="([a-z:]+)" checked/g)].map((x) => x[1]);
      assert.deepEqual(ticked, ['catalog:read', 'stock:read', 'orders:read', 'account:read', 'claims:read']);
      const before = await tableDigests(t.store);
      const r = await owner.post(`/console/merchants/${m.merchantId}/tokens`, {
        _csrf: await owner.csrf(`/console/merchants/${m.merchantId}`),
        expiresInDays: '7',
      });
      assert.equal(r.statusCode, 400);
      assert.match(r.body, /tick at least one scope/);
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
      const issued = await owner.post(`/console/merchants/${m.merchantId}/tokens`, {
        _csrf: await owner.csrf(`/console/merchants/${m.merchantId}`),
        scopes: ['catalog:read', 'stock:read'],
      });
      assert.equal(issued.statusCode, 303);
      const shown = (await follow(owner, issued)).body;
      assert.match(shown, /<dt>Scopes<\/dt><dd>catalog:read stock:read<\/dd>/, 'only what was ticked');
    });

    it('operator API: no scopes still means every scope (SPEC §2.1)', async () => {
      const m = await newMerchant(t, 'API default shop');
      const r = await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/tokens`, {});
      assert.equal(r.status, 200, r.raw);
      const row = await t.store.db.selectFrom('api_tokens').select('scopes').where('id', '=', Number(r.body.data.tokenId)).executeTakeFirstOrThrow();
      assert.match(row.scopes, /orders:write/);
    });

    it('rotation with a grace period: both secrets work until it ends, then only the new one; a token from the old secret keeps only the rules in place', async () => {
      const m = await newMerchant(t, 'Grace shop');
      const dev = await member(t, m.merchantId, 'grace@example.com', 'developer');
      const client = await newClient(dev, 'Backend');
      const rotatedAt = clock.ms;
      const { page, secret: fresh } = await rotate(dev, client.id, '2');
      assert.match(page, /data-old-secret-until>keeps working until/);
      assert.equal((await grant(client.clientId, fresh)).status, 200, 'the new secret works at once');
      clock.ms = rotatedAt + 2 * HOUR - 1000;
      const late = await grant(client.clientId, client.secret);
      assert.equal(late.status, 200, 'the old secret works within the grace period');
      const oldToken = late.body.access_token as string;
      assert.equal((await t.merchant(oldToken, 'GET', URL)).status, 200);
      clock.ms = rotatedAt + 2 * HOUR;
      const over = await grant(client.clientId, client.secret);
      assert.equal(over.status, 401, 'refused once the grace period is over');
      assert.equal(over.body.error, 'invalid_client');
      assert.equal((await grant(client.clientId, fresh)).status, 200);
      // The token the old secret obtained is an ordinary token: it lives its 2 h, no longer, cache or not.
      assert.equal((await t.merchant(oldToken, 'GET', URL)).status, 200, 'tokens already issued stay valid');
      clock.ms = rotatedAt + 2 * HOUR - 1000 + t.config.accessTokenTtlSeconds * 1000;
      assert.equal((await t.merchant(oldToken, 'GET', URL)).status, 401, 'expired on time');
      const audit = await t.store.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'oauth_client.rotate')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      assert.match(JSON.stringify(audit), /graceHours[^0-9]+2/);
    });

    it('a token from the old secret is refused at once when the client is revoked, grace or not', async () => {
      const m = await newMerchant(t, 'Grace revoke shop');
      const dev = await member(t, m.merchantId, 'grace-revoke@example.com', 'developer');
      const client = await newClient(dev, 'Backend');
      await rotate(dev, client.id, '24');
      const r = await grant(client.clientId, client.secret);
      assert.equal(r.status, 200);
      assert.equal((await t.merchant(r.body.access_token, 'GET', URL)).status, 200, 'works (and is cached)');
      const revoked = await dev.post(`/manager/credentials/clients/${client.id}/revoke`, { _csrf: await dev.csrf('/manager/credentials') });
      assert.equal(revoked.statusCode, 303);
      assert.equal((await t.merchant(r.body.access_token, 'GET', URL)).status, 401);
      assert.equal((await grant(client.clientId, client.secret)).status, 401, 'the old secret of a revoked client');
    });

    it('rotation with 0 hours (the form’s default) refuses the old secret at once; a second rotation ends the first one’s grace', async () => {
      const m = await newMerchant(t, 'No grace shop');
      const dev = await member(t, m.merchantId, 'no-grace@example.com', 'developer');
      const client = await newClient(dev, 'Backend');
      const form = await dev.get('/manager/credentials');
      assert.match(form.body, new RegExp(`id="grace-${client.id}" name="graceHours"[^>]*value="0"`));
      const { page, secret: second } = await rotate(dev, client.id, '0');
      assert.doesNotMatch(page, /data-old-secret-until/);
      assert.equal((await grant(client.clientId, client.secret)).status, 401, 'the old secret stops at once');
      assert.equal((await grant(client.clientId, second)).status, 200);
      const { secret: third } = await rotate(dev, client.id, '5');
      assert.equal((await grant(client.clientId, second)).status, 200, 'in its grace');
      await rotate(dev, client.id, '5');
      assert.equal((await grant(client.clientId, second)).status, 401, 'only the secret just replaced keeps a grace');
      assert.equal((await grant(client.clientId, third)).status, 200);
    });

    it('refuses a grace period out of 0–24 whole hours with its reason, nothing written', async () => {
      const m = await newMerchant(t, 'Bad grace shop');
      const dev = await member(t, m.merchantId, 'bad-grace@example.com', 'developer');
      const client = await newClient(dev, 'Backend');
      for (const graceHours of ['25', '-1', '1.5', 'soon', '100', ' 2 4']) {
        const before = await tableDigests(t.store);
        const r = await dev.post(`/manager/credentials/clients/${client.id}/rotate`, { _csrf: await dev.csrf('/manager/credentials'), graceHours });
        assert.equal(r.statusCode, 400, graceHours);
        assert.match(r.body, /Not rotated: graceHours: must be a whole number of hours from 0 to 24/);
        assert.match(r.body, /<details class="confirm" open>/, 'the form is open with the reason');
        assert.deepEqual(await tableDigests(t.store), before, `${graceHours}: nothing written`);
      }
      assert.equal((await grant(client.clientId, client.secret)).status, 200, 'the secret is unchanged');
    });

    it('another merchant’s client cannot be rotated (404), and a viewer may not rotate (403); nothing written', async () => {
      const mine = await newMerchant(t, 'Tenant A');
      const other = await newMerchant(t, 'Tenant B');
      const dev = await member(t, mine.merchantId, 'tenant-a@example.com', 'developer');
      const theirs = await newClient(await member(t, other.merchantId, 'tenant-b@example.com', 'developer'), 'Theirs');
      const viewer = await member(t, other.merchantId, 'tenant-b-viewer@example.com', 'viewer');
      const before = await tableDigests(t.store);
      const r = await dev.post(`/manager/credentials/clients/${theirs.id}/rotate`, { _csrf: await dev.csrf('/manager/credentials'), graceHours: '2' });
      assert.equal(r.statusCode, 404);
      const v = await viewer.post(`/manager/credentials/clients/${theirs.id}/rotate`, { _csrf: await viewer.csrf('/manager/credentials'), graceHours: '2' });
      assert.equal(v.statusCode, 403);
      assert.deepEqual(await tableDigests(t.store), before);
    });
  });
}
