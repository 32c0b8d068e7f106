import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { buildTestApp, DIALECTS, PG_SKIP, loadCatalogue, newMerchant, stockQty, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE } from '../fixtures.ts';
import { browser, follow, freshFormKey, signedIn, staff } from './console-client.ts';
import { member } from './manager-helpers.ts';

/**
 * Issue 29, 1 and 2 over HTTP: every state-changing form answers POST → 303 → GET; a form that is
 * not idempotent by nature carries a one-time key, so a second submission of the same rendered
 * form (double click, reload, resubmission) applies nothing and answers 303 to the first one's
 * page; a new secret is shown once on that page, sealed in the database; destructive actions ask
 * first (the confirmation is part of the page: no route, no script).
 */

type T = TestApp;
const count = async (t: T, table: 'stock_ledger' | 'audit_log' | 'merchants' | 'api_tokens' | 'oauth_clients' | 'merchant_invitations' | 'journal_entries') =>
  Number(
    (
      await t.store.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** The form key the page rendered into the form posting to `action` (a browser sends exactly that). */
function keyOf(html: string, action: string): string {
  const form = html.slice(html.indexOf(`action="${action}"`));
  const key = /name="_formKey" value="([A-Za-z0-9_-]+)"/.exec(form.slice(0, form.indexOf('</form>')))?.[1];
  assert.ok(key, `the form posting to ${action} carries a one-time key`);
  return key;
}
const csrfOf = (html: string) => /name="_csrf" value="([A-Za-z0-9]+)"/.exec(html)![1];

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`web forms: once, 303, confirmations (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    /**
     * What every test here starts from, on an app and a database of its own (closed when the test
     * ends), so any one test runs alone.
     */
    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect);
      await loadCatalogue(t, ORDER_CATALOGUE);
      await staff(t, 'owner@example.com', 'owner');
      const owner = await signedIn(t, 'owner@example.com');
      return { t, owner };
    };

    it('a form body with invalid UTF-8, percent-encoded or raw, is refused with 400 as a page, nothing written, on both front ends (SPEC §1; issue 44, 14)', async (ctx) => {
      const { t, owner } = await build(ctx);
      const m = await newMerchant(t, 'Bytes shop');
      const dev = await member(t, m.merchantId, 'bytes@example.com', 'developer');
      const csrf = csrfOf((await owner.get('/console/new-product')).body);
      const product = `_csrf=${csrf}&_formKey=${freshFormKey()}&sku=U1&price=1&weightGrams=1&name=`;
      const post = (url: string, cookie: string | null, payload: string | Buffer) =>
        t.app.inject({
          method: 'POST',
          url,
          payload,
          headers: {
            host: 'localhost:80',
            origin: 'http://localhost:80',
            'content-type': 'application/x-www-form-urlencoded',
            ...(cookie ? { cookie } : {}),
          },
        });
      const before = await tableDigests(t.store);
      for (const [url, cookie, payload] of [
        ['/console/new-product', owner.cookie, `${product}a%ED%A0%80b`], // an encoded surrogate: not UTF-8
        ['/console/new-product', owner.cookie, `${product}a%C3b`], // a sequence cut short
        ['/console/new-product', owner.cookie, `${product}a%FFb`],
        ['/console/new-product', owner.cookie, Buffer.concat([Buffer.from(product), Buffer.from([0x61, 0xff, 0x62])])], // raw bytes
        ['/console/new-product', owner.cookie, `${product}a%zzb`], // not a percent-encoding at all
        ['/console/sign-in', null, 'email=a%ED%A0%80b%40example.com&password=x'],
        ['/manager/sign-in', null, 'email=a%ED%A0%80b%40example.com&password=x'],
        ['/manager/account/password', dev.cookie, `_csrf=x&current=a%ED%A0%80b&password=y&confirm=y`],
      ] as const) {
        const r = await post(url, cookie, payload);
        assert.equal(r.statusCode, 400, `${url} ${payload}: ${r.body.slice(0, 200)}`);
        assert.match(String(r.headers['content-type']), /^text\/html/, url);
        // Refused in place: the form's page again, the reason in its status region (not a bare error page).
        assert.match(
          r.body,
          /data-notice>Not done: The form could not be read: its body (is not valid UTF-8|holds a percent-encoding that is not valid UTF-8)[\s\S]*<form method="post"/,
          url,
        );
        assert.doesNotMatch(r.body, /data-error-page/, url);
        assert.doesNotMatch(r.body, /at [A-Za-z]+ \(/, 'no stack');
      }
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
      // A valid encoding of U+FFFD itself is text like any other.
      const fine = await post('/console/new-product', owner.cookie, `${product}a%EF%BF%BDb`);
      assert.equal(fine.statusCode, 303, fine.body.slice(0, 300));
      assert.ok(dev.cookie);
    });

    it('a stock adjustment sent twice with the same key applies once; the second answers 303 to the product page, saying so', async (ctx) => {
      const { t, owner } = await build(ctx);
      const page = await owner.get('/console/products/B');
      const fields = {
        _csrf: csrfOf(page.body),
        _formKey: keyOf(page.body, '/console/products/B/adjust'),
        warehouseCode: 'G006',
        delta: '3',
        reason: 'found three',
      };
      const before = { qty: await stockQty(t, 'B', 'G006'), ledger: await count(t, 'stock_ledger'), audit: await count(t, 'audit_log') };
      const first = await owner.post('/console/products/B/adjust', fields);
      assert.equal(first.statusCode, 303, first.body);
      assert.equal(first.headers.location, '/console/products/B');
      const shown = await owner.get('/console/products/B');
      assert.match(shown.body, /Adjusted B in G006 by \+3/);
      assert.doesNotMatch(
        (await owner.get('/console/products/B')).body,
        /Adjusted B in G006/,
        'a reload shows the result without the one-time message, and posts nothing',
      );

      const again = await owner.post('/console/products/B/adjust', fields);
      assert.equal(again.statusCode, 303);
      assert.equal(again.headers.location, '/console/products/B');
      assert.match((await owner.get('/console/products/B')).body, /data-notice>That form was sent already: it took effect once/);
      assert.equal(await stockQty(t, 'B', 'G006'), before.qty! + 3);
      assert.equal(await count(t, 'stock_ledger'), before.ledger + 1, 'one ledger row');
      assert.equal(await count(t, 'audit_log'), before.audit + 1, 'one audit row');
    });

    it('two submissions of the same key at once (a double click): one applies, both answer 303', async (ctx) => {
      const { t, owner } = await build(ctx);
      const page = await owner.get('/console/products/B');
      const fields = {
        _csrf: csrfOf(page.body),
        _formKey: keyOf(page.body, '/console/products/B/adjust'),
        warehouseCode: 'G006',
        delta: '2',
        reason: 'double click',
      };
      const qty = await stockQty(t, 'B', 'G006');
      const ledger = await count(t, 'stock_ledger');
      const answers = await Promise.all([owner.post('/console/products/B/adjust', fields), owner.post('/console/products/B/adjust', fields)]);
      assert.deepEqual(
        answers.map((r) => r.statusCode),
        [303, 303],
      );
      assert.equal(await stockQty(t, 'B', 'G006'), qty! + 2);
      assert.equal(await count(t, 'stock_ledger'), ledger + 1);
    });

    it('a once-only form without its key is refused (400, reload) and writes nothing; another session cannot spend or replay a key', async (ctx) => {
      const { t, owner } = await build(ctx);
      const csrf = await owner.csrf('/console/products/B');
      const before = await tableDigests(t.store);
      const bare = await owner.post('/console/products/B/adjust', { _csrf: csrf, _formKey: '', warehouseCode: 'G006', delta: '1', reason: 'no key' });
      assert.equal(bare.statusCode, 400);
      assert.match(bare.body, /no valid one-time key; reload the page/);
      assert.deepEqual(await tableDigests(t.store), before);

      const key = freshFormKey();
      assert.equal(
        (await owner.post('/console/products/B/adjust', { _csrf: csrf, _formKey: key, warehouseCode: 'G006', delta: '1', reason: 'mine' })).statusCode,
        303,
      );
      await staff(t, 'other@example.com', 'owner');
      const other = await signedIn(t, 'other@example.com');
      const digests = await tableDigests(t.store);
      const stolen = await other.post('/console/products/B/adjust', {
        _csrf: await other.csrf(),
        _formKey: key,
        warehouseCode: 'G006',
        delta: '1',
        reason: 'theirs',
      });
      assert.equal(stolen.statusCode, 303);
      assert.equal(stolen.headers.location, '/console', 'not the other session’s page');
      const after = await tableDigests(t.store);
      assert.equal(after.stock_ledger, digests.stock_ledger, 'nothing applied');
    });

    it('merchant create, token issue, invitation, top-up and adjustment: each applies once; each secret is shown once on the merchant page and sealed in the database', async (ctx) => {
      const { t, owner } = await build(ctx);
      const list = await owner.get('/console/merchants');
      const create = { _csrf: csrfOf(list.body), _formKey: keyOf(list.body, '/console/merchants'), name: 'Once Shop' };
      const merchants = await count(t, 'merchants');
      const created = await owner.post('/console/merchants', create);
      assert.equal(created.statusCode, 303);
      const merchantPath = String(created.headers.location);
      assert.match(merchantPath, /^\/console\/merchants\/\d+$/);
      const sealed = await t.store.db.selectFrom('web_flashes').select('payload').execute();
      assert.ok(sealed.length >= 1);
      for (const row of sealed) assert.doesNotMatch(row.payload, /sks_|Once Shop/, 'the waiting secret is sealed, not in clear');
      const shown = await owner.get(merchantPath);
      const secret = /<code data-secret>(sks_[A-Za-z0-9_-]+)<\/code>/.exec(shown.body)?.[1];
      assert.ok(secret, 'the client secret is shown on the merchant page after the 303');
      assert.ok(!(await owner.get(merchantPath)).body.includes(secret), 'a reload does not show it again');
      const resent = await owner.post('/console/merchants', create);
      assert.equal(resent.headers.location, merchantPath, 'the resubmission goes to the merchant the first one created');
      assert.equal(await count(t, 'merchants'), merchants + 1);

      const page = await owner.get(merchantPath);
      const issue = { _csrf: csrfOf(page.body), _formKey: keyOf(page.body, `${merchantPath}/tokens`), scopes: 'orders:read', expiresInDays: '7' };
      const tokens = await count(t, 'api_tokens');
      assert.equal((await owner.post(`${merchantPath}/tokens`, issue)).statusCode, 303);
      assert.match((await owner.get(merchantPath)).body, /<code data-secret>stk_test_/);
      assert.equal((await owner.post(`${merchantPath}/tokens`, issue)).headers.location, merchantPath);
      assert.equal(await count(t, 'api_tokens'), tokens + 1, 'one token');

      const invite = { _csrf: csrfOf(page.body), _formKey: keyOf(page.body, `${merchantPath}/users`), email: 'once@example.com', role: 'viewer' };
      const invitations = await count(t, 'merchant_invitations');
      assert.equal((await owner.post(`${merchantPath}/users`, invite)).statusCode, 303);
      assert.match((await owner.get(merchantPath)).body, /<code data-secret>http[^<]+\/manager\/invitations\//);
      assert.equal((await owner.post(`${merchantPath}/users`, invite)).statusCode, 303);
      assert.equal(await count(t, 'merchant_invitations'), invitations + 1, 'one invitation');

      const entries = await count(t, 'journal_entries');
      const topUp = {
        _csrf: csrfOf(page.body),
        _formKey: keyOf(page.body, `${merchantPath}/account/top-ups`),
        environment: 'sandbox',
        amount: '10.00',
        reference: 'BANK-1',
      };
      assert.equal((await owner.post(`${merchantPath}/account/top-ups`, topUp)).statusCode, 303);
      assert.equal((await owner.post(`${merchantPath}/account/top-ups`, topUp)).statusCode, 303);
      const adjustAction = `${merchantPath}/account/adjustments`;
      const adjustForm = page.body.slice(page.body.indexOf(`action="${adjustAction}"`));
      const adjust = {
        _csrf: csrfOf(page.body),
        _formKey: keyOf(page.body, adjustAction),
        formKey: /name="formKey" value="([A-Za-z0-9_-]+)"/.exec(adjustForm)![1],
        environment: 'sandbox',
        amount: '-1.50',
        reason: 'fee',
      };
      assert.equal((await owner.post(adjustAction, adjust)).statusCode, 303);
      assert.equal((await owner.post(adjustAction, adjust)).statusCode, 303);
      assert.equal(await count(t, 'journal_entries'), entries + 2, 'one top-up and one adjustment');
    });

    it('staff: create and disable answer 303 to the list, which shows the new password once; disable asks first', async (ctx) => {
      const { t, owner } = await build(ctx);
      // A colleague the owner may disable.
      await staff(t, 'other@example.com', 'owner');
      const list = await owner.get('/console/staff');
      assert.match(list.body, /<details class="confirm">\s*<summary data-confirm-open="disable">Disable…/);
      assert.match(list.body, /is signed out everywhere at once and cannot sign in until enabled again/);
      const fields = { _csrf: csrfOf(list.body), _formKey: keyOf(list.body, '/console/staff'), email: 'hire@example.com', role: 'support' };
      const created = await owner.post('/console/staff', fields);
      assert.equal(created.statusCode, 303);
      assert.equal(created.headers.location, '/console/staff');
      const shown = await owner.get('/console/staff');
      assert.match(shown.body, /data-password>[A-Za-z0-9]{20}</);
      assert.doesNotMatch((await owner.get('/console/staff')).body, /data-password>/, 'shown once');
      const again = await owner.post('/console/staff', fields);
      assert.equal(again.statusCode, 303, 'the resubmission is not a 409 "exists already" page');
    });

    it('the console’s destructive actions ask first, on the page, naming what happens (no script, no extra route)', async (ctx) => {
      const { t, owner } = await build(ctx);
      const m = await newMerchant(t, 'Confirm shop');
      const page = await owner.get(`/console/merchants/${m.merchantId}`);
      assert.match(page.body, /<summary data-confirm-open="disable">Disable merchant…<\/summary>/);
      assert.match(page.body, /Disabling <strong>Confirm shop<\/strong> refuses every API call it makes/);
      assert.match(page.body, /<summary data-confirm-open="revoke">Revoke…/);
      assert.match(page.body, /stops working at once \(an OAuth token's refresh token too\)/);
      assert.doesNotMatch(page.body, /<script>|onclick=|onsubmit=/);
    });

    it('business manager: client, token, webhook, invitation and get-started token apply once; their secrets show once after the 303; rotate, revoke, delete and remove ask first', async (ctx) => {
      const { t } = await build(ctx);
      const m = await newMerchant(t, 'Manager once shop');
      const admin = await member(t, m.merchantId, 'once-admin@example.com', 'admin');

      const creds = await admin.get('/manager/credentials');
      const client = { _csrf: csrfOf(creds.body), _formKey: keyOf(creds.body, '/manager/credentials/clients'), name: 'Backend' };
      const clients = await count(t, 'oauth_clients');
      const made = await admin.post('/manager/credentials/clients', client);
      assert.equal(made.statusCode, 303);
      assert.equal(made.headers.location, '/manager/credentials');
      const shown = await admin.get('/manager/credentials');
      assert.match(shown.body, /data-secret>sks_/);
      assert.doesNotMatch((await admin.get('/manager/credentials')).body, /data-secret>/, 'shown once');
      assert.equal((await admin.post('/manager/credentials/clients', client)).headers.location, '/manager/credentials');
      assert.equal(await count(t, 'oauth_clients'), clients + 1, 'one client');
      assert.match(shown.body, /<summary data-confirm-open="rotate-client">Rotate secret…/);
      assert.match(shown.body, /with 0 it stops at once/);
      assert.match(shown.body, /<summary data-confirm-open="revoke-client">Revoke…/);

      const token = { _csrf: csrfOf(creds.body), _formKey: keyOf(creds.body, '/manager/credentials/tokens'), name: 'CI', scopes: 'orders:read' };
      const tokens = await count(t, 'api_tokens');
      assert.equal((await admin.post('/manager/credentials/tokens', token)).statusCode, 303);
      assert.match((await admin.get('/manager/credentials')).body, /data-secret>stk_test_/);
      assert.equal((await admin.post('/manager/credentials/tokens', token)).statusCode, 303);
      assert.equal(await count(t, 'api_tokens'), tokens + 1, 'one token');

      const overview = await admin.get('/manager');
      const start = { _csrf: csrfOf(overview.body), _formKey: keyOf(overview.body, '/manager/get-started/token') };
      assert.equal((await admin.post('/manager/get-started/token', start)).headers.location, '/manager');
      assert.match((await admin.get('/manager')).body, /data-curl>curl -H "Authorization: Bearer stk_test_/);
      assert.doesNotMatch((await admin.get('/manager')).body, /data-curl>/, 'shown once');
      assert.equal((await admin.post('/manager/get-started/token', start)).statusCode, 303);
      assert.equal(await count(t, 'api_tokens'), tokens + 2, 'one get-started token');

      const team = await admin.get('/manager/team');
      const invite = { _csrf: csrfOf(team.body), _formKey: keyOf(team.body, '/manager/team/invitations'), email: 'dev@example.com', role: 'developer' };
      const invitations = await count(t, 'merchant_invitations');
      assert.equal((await admin.post('/manager/team/invitations', invite)).headers.location, '/manager/team');
      const teamShown = await admin.get('/manager/team');
      assert.match(teamShown.body, /data-invitation-url>http/);
      assert.equal((await admin.post('/manager/team/invitations', invite)).statusCode, 303);
      assert.equal(await count(t, 'merchant_invitations'), invitations + 1, 'one invitation');
      assert.match(teamShown.body, /<summary data-confirm-open="revoke-invitation">Cancel invitation…/);
      assert.match(teamShown.body, /The link sent to dev@example.com stops working at once/);
    });

    it('business manager: a key spent at one merchant’s session does nothing at another’s', async (ctx) => {
      const { t } = await build(ctx);
      const a = await newMerchant(t, 'Key shop A');
      const b = await newMerchant(t, 'Key shop B');
      const devA = await member(t, a.merchantId, 'key-a@example.com', 'developer');
      const devB = await member(t, b.merchantId, 'key-b@example.com', 'developer');
      const key = freshFormKey();
      assert.equal(
        (await devA.post('/manager/credentials/clients', { _csrf: await devA.csrf('/manager/credentials'), _formKey: key, name: 'A' })).statusCode,
        303,
      );
      const clients = await count(t, 'oauth_clients');
      const r = await devB.post('/manager/credentials/clients', { _csrf: await devB.csrf('/manager/credentials'), _formKey: key, name: 'B' });
      assert.equal(r.statusCode, 303);
      assert.equal(r.headers.location, '/manager', 'not merchant A’s page');
      assert.equal(await count(t, 'oauth_clients'), clients, 'nothing applied');
      assert.doesNotMatch((await follow(devB, r)).body, /data-secret>/);
    });

    it('business manager: the webhook forms answer 303; register and rotate show the secret once; rotate and delete ask first', async (ctx) => {
      const { t } = await build(ctx);
      const m = await newMerchant(t, 'Hook once shop');
      const dev = await member(t, m.merchantId, 'hook-dev@example.com', 'developer');
      const list = await dev.get('/manager/webhooks');
      const fields = { _csrf: csrfOf(list.body), _formKey: keyOf(list.body, '/manager/webhooks'), url: 'http://127.0.0.1:9/hook', events: 'refund.failed' };
      assert.equal((await dev.post('/manager/webhooks', fields)).headers.location, '/manager/webhooks');
      assert.match((await dev.get('/manager/webhooks')).body, /data-secret>whsec_/);
      assert.equal((await dev.post('/manager/webhooks', fields)).statusCode, 303);
      const rows = await t.store.db.selectFrom('webhook_endpoints').select('id').where('merchant_id', '=', Number(m.merchantId)).execute();
      assert.equal(rows.length, 1, 'one endpoint');
      const detail = await dev.get(`/manager/webhooks/${rows[0].id}`);
      assert.match(detail.body, /<summary data-confirm-open="rotate-secret">Rotate the signing secret…/);
      assert.match(detail.body, /<summary data-confirm-open="delete-webhook">Delete the endpoint…/);
      assert.match(detail.body, /receives nothing more: deliveries waiting for it are dropped/);
      const rotate = { _csrf: csrfOf(detail.body), _formKey: keyOf(detail.body, `/manager/webhooks/${rows[0].id}/rotate-secret`) };
      const rotated = await dev.post(`/manager/webhooks/${rows[0].id}/rotate-secret`, rotate);
      assert.equal(rotated.headers.location, `/manager/webhooks/${rows[0].id}`);
      assert.match((await dev.get(`/manager/webhooks/${rows[0].id}`)).body, /New signing secret[\s\S]*data-secret>whsec_/);
      const audits = await count(t, 'audit_log');
      assert.equal((await dev.post(`/manager/webhooks/${rows[0].id}/rotate-secret`, rotate)).statusCode, 303);
      assert.equal(await count(t, 'audit_log'), audits, 'the second rotation applied nothing');
    });
  });
}

describe('web forms: a viewer cannot spend a key', () => {
  const t = useApp('sqlite');
  it('a refused form (403) writes nothing, its key stays unspent', async () => {
    const m = await newMerchant(t, 'Viewer key shop');
    const viewer = await member(t, m.merchantId, 'viewer-key@example.com', 'viewer');
    const before = await tableDigests(t.store);
    const r = await viewer.post('/manager/credentials/clients', { _csrf: await viewer.csrf('/manager'), name: 'x' });
    assert.equal(r.statusCode, 403);
    assert.deepEqual(await tableDigests(t.store), before);
    assert.equal(browser(t).cookie, null);
  });
});
