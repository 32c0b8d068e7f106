import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { Purger, purgeTasks } from '../../src/jobs/purger.ts';
import { buildTestApp, DIALECTS, newMerchant, PG_SKIP, tableDigests, type TestApp } from '../helpers.ts';
import { form, freshAddress, freshFormKey, HOST, ORIGIN, PASSWORD, staff } from './console-client.ts';
import { enrol, invite, totpCode } from './manager-helpers.ts';

/**
 * Front ends III, 3: a form sent after its session ended is kept (server-side, sealed, without
 * passwords, codes or the CSRF token) for the browser that sent it; signing in again — with a
 * second factor too — leads back to the form filled in, and nothing is written until its button is
 * pressed. Kept forms nobody came back for are purged.
 */

type Clock = { now: number };

/** A browser with a cookie jar: the session cookie and the kept form's cookie side by side. */
function jar(t: TestApp) {
  const cookies = new Map<string, string>();
  const address = freshAddress();
  const cookieHeader = () => (cookies.size ? { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {});
  const remember = (set: string | string[] | undefined) => {
    for (const line of [set ?? []].flat()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      if (/Max-Age=0/.test(line)) cookies.delete(name);
      else cookies.set(name, pair.slice(eq + 1));
    }
  };
  return {
    cookies,
    async get(url: string) {
      const r = await t.app.inject({ method: 'GET', url, remoteAddress: address, headers: { host: HOST, ...cookieHeader() } });
      remember(r.headers['set-cookie']);
      return r;
    },
    async post(url: string, fields: Record<string, string | readonly string[]>, referer?: string) {
      const r = await t.app.inject({
        method: 'POST',
        url,
        remoteAddress: address,
        // Like a page the browser just loaded, a form carries a fresh one-time key unless the test sends its own.
        payload: form({ _formKey: freshFormKey(), ...fields }),
        headers: {
          host: HOST,
          origin: ORIGIN,
          'content-type': 'application/x-www-form-urlencoded',
          ...(referer ? { referer: `${ORIGIN}${referer}` } : {}),
          ...cookieHeader(),
        },
      });
      remember(r.headers['set-cookie']);
      return r;
    },
  };
}

const csrfOf = (html: string) => /name="_csrf" value="([A-Za-z0-9]+)"/.exec(html)![1];
const formKeyOf = (html: string, action: string) => {
  const from = html.slice(html.indexOf(`action="${action}"`));
  return /name="_formKey" value="([A-Za-z0-9_-]+)"/.exec(from.slice(0, from.indexOf('</form>')))![1];
};
const count = async (t: TestApp, table: 'products' | 'api_tokens' | 'audit_log') =>
  Number(
    (
      await t.store.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
/**
 * Every table but the kept forms' own and the sessions' (the ended session's row is deleted when it
 * is presented): what a signed-out form must not change.
 */
const digestsButKept = async (t: TestApp) =>
  Object.fromEntries(Object.entries(await tableDigests(t.store)).filter(([table]) => table !== 'web_kept_forms' && !table.endsWith('sessions')));

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`a form survives the session's end (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const build = async (ctx: TestContext) => {
      const clock: Clock = { now: Date.now() };
      const t = await buildTestApp(ctx, dialect, { CONSOLE_SESSION_IDLE_MINUTES: '30', MANAGER_SESSION_IDLE_MINUTES: '30' }, { now: () => clock.now });
      return { t, clock };
    };

    it('console: the new product form sent after the session idled out comes back filled after signing in; nothing is written until it is sent', async (ctx) => {
      const { t, clock } = await build(ctx);
      await staff(t, 'keeper@example.com', 'owner');
      const b = jar(t);
      assert.equal((await b.post('/console/sign-in', { email: 'keeper@example.com', password: PASSWORD })).statusCode, 303);
      const page = await b.get('/console/new-product');
      assert.equal(page.statusCode, 200);
      const products = await count(t, 'products');

      clock.now += 31 * 60_000;
      const before = await digestsButKept(t);
      const fields = { sku: 'KEPT-1', name: 'Kept “product” <b>', price: '12.50', weightGrams: '250' };
      const sent = await b.post('/console/new-product', { _csrf: csrfOf(page.body), ...fields }, '/console/new-product');
      assert.equal(sent.statusCode, 401, 'still a refusal for who is asking');
      assert.match(String(sent.headers['content-type']), /^text\/html/);
      assert.match(sent.body, /action="\/console\/sign-in"/, 'the sign-in form, not a bare error page');
      assert.match(sent.body, /Your session had ended, so that form was not sent and nothing was changed/);
      assert.ok(
        [...b.cookies.keys()].some((k) => k.endsWith('_form')),
        'the kept form’s cookie',
      );
      assert.deepEqual(await digestsButKept(t), before, 'nothing written');

      // Kept sealed, without the CSRF token or the form key.
      const rows = await t.store.db.selectFrom('web_kept_forms').selectAll().execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0].page, '/console/new-product');
      assert.equal(rows[0].action, '/console/new-product');
      assert.doesNotMatch(rows[0].sealed, /KEPT-1|Kept/);

      const back = await b.post('/console/sign-in', { email: 'keeper@example.com', password: PASSWORD });
      assert.equal(back.statusCode, 303);
      assert.equal(back.headers.location, '/console/new-product', 'signing in leads back to the form');
      const filled = await b.get('/console/new-product');
      assert.equal(filled.statusCode, 200);
      assert.match(filled.body, /the form is filled in as you left it, but not sent/);
      assert.match(filled.body, /name="sku"[^>]*value="KEPT-1"/);
      assert.match(filled.body, /name="name"[^>]*value="Kept &#8220;product&#8221; &#60;b&#62;"|name="name"[^>]*value="Kept “product” &#60;b&#62;"/);
      assert.match(filled.body, /name="price"[^>]*value="12.50"/);
      assert.match(filled.body, /name="weightGrams"[^>]*value="250"/);
      assert.equal(await count(t, 'products'), products, 'filled, not sent');
      assert.equal(
        await t.store.db
          .selectFrom('web_kept_forms')
          .selectAll()
          .execute()
          .then((r) => r.length),
        0,
        'taken',
      );
      assert.ok(![...b.cookies.keys()].some((k) => k.endsWith('_form')), 'its cookie cleared');

      const again = await b.get('/console/new-product');
      assert.doesNotMatch(again.body, /value="KEPT-1"/, 'filled once');

      // Pressing the button sends it, with the page's own fresh CSRF token.
      const pressed = await b.post('/console/new-product', { _csrf: csrfOf(filled.body), ...fields });
      assert.equal(pressed.statusCode, 303, pressed.body.slice(0, 300));
      assert.equal(await count(t, 'products'), products + 1);
    });

    it('a kept form expires: the purger removes it and signing in goes home', async (ctx) => {
      const { t, clock } = await build(ctx);
      await staff(t, 'late@example.com', 'owner');
      const b = jar(t);
      await b.post('/console/sign-in', { email: 'late@example.com', password: PASSWORD });
      const page = await b.get('/console/new-product');
      clock.now += 31 * 60_000;
      assert.equal((await b.post('/console/new-product', { _csrf: csrfOf(page.body), sku: 'LATE-1' }, '/console/new-product')).statusCode, 401);
      clock.now += 16 * 60_000;
      const task = purgeTasks(t.store, t.config).find((p) => p.what === 'forms kept after their session ended')!;
      assert.equal(await new Purger(task, { info() {}, error() {} }).runOnce(clock.now), 1);
      const back = await b.post('/console/sign-in', { email: 'late@example.com', password: PASSWORD });
      assert.equal(back.headers.location, '/console');

      // A POST from a browser that never had a session here keeps nothing (and still answers 401).
      const stranger = jar(t);
      assert.equal((await stranger.post('/console/new-product', { _csrf: 'x', sku: 'NOBODY' }, '/console/new-product')).statusCode, 401);
      assert.equal(stranger.cookies.size, 0);
      assert.equal((await t.store.db.selectFrom('web_kept_forms').selectAll().execute()).length, 0);
    });

    it('business manager with two-factor: password, then code, then the filled token form; passwords are never kept', async (ctx) => {
      const { t, clock } = await build(ctx);
      const m = await newMerchant(t, 'Kept forms shop');
      const b = jar(t);
      const accepted = await b.post(await invite(t, m.merchantId, 'dev@kept.example', 'admin'), { password: PASSWORD, confirm: PASSWORD });
      assert.equal(accepted.statusCode, 303);
      // enrol() drives a Browser; this jar has the same get/post shape for what it needs.
      const secret = await enrol(
        {
          cookie: null,
          address: '',
          get: (url: string) => b.get(url),
          post: (url: string, fields: Record<string, string | readonly string[]>) => b.post(url, fields),
          csrf: async () => '',
        },
        clock.now,
      );
      const page = await b.get('/manager/credentials');
      assert.equal(page.statusCode, 200);
      const tokens = await count(t, 'api_tokens');

      clock.now += 31 * 60_000;
      const sent = await b.post(
        '/manager/credentials/tokens',
        {
          _csrf: csrfOf(page.body),
          _formKey: formKeyOf(page.body, '/manager/credentials/tokens'),
          name: 'nightly stock sync',
          scopes: ['stock:read', 'orders:read'],
          expiresInDays: '30',
        },
        '/manager/credentials',
      );
      assert.equal(sent.statusCode, 401);
      assert.match(sent.body, /action="\/manager\/sign-in"/);
      assert.equal(await count(t, 'api_tokens'), tokens);

      // A password change sent signed out: kept without its passwords (this replaces the kept token form).
      const account = await b.post(
        '/manager/account/password',
        { _csrf: 'x', current: PASSWORD, password: 'a new horse staple', confirm: 'a new horse staple' },
        '/manager/account',
      );
      assert.equal(account.statusCode, 401);
      const sealed = await t.store.db.selectFrom('web_kept_forms').select(['sealed', 'page']).execute();
      assert.ok(sealed.length >= 1);

      const password = await b.post('/manager/sign-in', { email: 'dev@kept.example', password: PASSWORD });
      assert.equal(password.headers.location, '/manager/sign-in/code', 'the code first');
      clock.now += 30_000;
      const code = await b.post('/manager/sign-in/code', { _csrf: csrfOf((await b.get('/manager/sign-in/code')).body), code: totpCode(secret, clock.now) });
      assert.equal(code.statusCode, 303, code.body.slice(0, 300));
      assert.equal(code.headers.location, '/manager/account', 'back to the latest form sent');
      const filled = await b.get('/manager/account');
      assert.match(filled.body, /the form is filled in as you left it, but not sent/);
      for (const name of ['current', 'password', 'confirm'])
        assert.doesNotMatch(filled.body, new RegExp(`name="${name}"[^>]*value="[^"]+"`), `${name} is not kept`);
      assert.doesNotMatch(filled.body, /a new horse staple/);

      // The token form, sent again signed out, comes back with its ticks.
      clock.now += 31 * 60_000;
      const page2 = await b.get('/manager/credentials');
      assert.equal(page2.statusCode, 303, 'signed out again');
      await b.post(
        '/manager/credentials/tokens',
        { _csrf: 'stale', name: 'nightly stock sync', scopes: ['stock:read', 'orders:read'], expiresInDays: '30' },
        '/manager/credentials',
      );
      assert.equal((await b.post('/manager/sign-in', { email: 'dev@kept.example', password: PASSWORD })).headers.location, '/manager/sign-in/code');
      clock.now += 30_000;
      const code2 = await b.post('/manager/sign-in/code', { _csrf: csrfOf((await b.get('/manager/sign-in/code')).body), code: totpCode(secret, clock.now) });
      assert.equal(code2.headers.location, '/manager/credentials');
      const tokenForm = await b.get('/manager/credentials');
      assert.match(tokenForm.body, /name="name"[^>]*value="nightly stock sync"/);
      assert.match(tokenForm.body, /name="scopes" value="stock:read" checked/);
      assert.match(tokenForm.body, /name="scopes" value="orders:read" checked/);
      assert.doesNotMatch(tokenForm.body, /name="scopes" value="orders:write" checked/);
      assert.match(tokenForm.body, /name="expiresInDays"[^>]*value="30"/);
      assert.equal(await count(t, 'api_tokens'), tokens, 'nothing written until the button is pressed');
    });
  });
}
