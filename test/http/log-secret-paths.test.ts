import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { RouteOptions } from 'fastify';
import { redactSecretPaths } from '../../src/domain/secrets.ts';
import { DIALECTS, PG_SKIP, newMerchant, useApp, type TestApp } from '../helpers.ts';
import { HOST, PASSWORD, browser, follow, signedIn, staff, type Browser } from './console-client.ts';
import { invite } from './manager-helpers.ts';

/**
 * Issue 44, item 11: a path that carries a secret (a password reset link, an invitation link) is
 * logged without it. Each such flow runs with the log captured at `trace` (the most the server
 * ever logs), as a browser would drive it — the page, a refused and an accepted POST with the
 * page as Referer, the page's assets and the next page with it as Referer, a used link again, and
 * URLs under the link that fail (unknown route, overlong, malformed) — and the whole log is
 * searched for the token: it must be nowhere (url, messages, errors, referer…).
 */

const NEW_PASSWORD = 'a brand new horse staple';

/** Everything a browser (and a careless or hostile one) sends to a link's path. */
async function driveLink(t: TestApp, path: string, assetPath: string, after: string) {
  const origin = `http://${HOST}`;
  const b = browser(t);
  const referer = { referer: `${origin}${path}` };
  assert.equal((await b.get(path)).statusCode, 200, `${path} opens`);
  await t.app.inject({ method: 'HEAD', url: path, headers: { host: HOST } });
  await b.get(`${path}?utm=1`);
  await t.app.inject({ method: 'GET', url: assetPath, headers: { host: HOST, ...referer } });
  const refused = await b.post(path, { password: 'short', confirm: 'short' }, referer);
  assert.equal(refused.statusCode, 400, refused.body.slice(0, 200));
  const used = await b.post(path, { password: NEW_PASSWORD, confirm: NEW_PASSWORD }, referer);
  assert.equal(used.statusCode, 303, used.body.slice(0, 300));
  await t.app.inject({ method: 'GET', url: after, headers: { host: HOST, ...referer } });
  // The link again, once used; and URLs that fail under it.
  assert.equal((await b.post(path, { password: NEW_PASSWORD, confirm: NEW_PASSWORD }, referer)).statusCode, 404);
  for (const url of [`${path}/more`, `${path}${'x'.repeat(220)}`, `${path}%E0%A4%A`, `${path}/%`]) {
    const r = await t.app.inject({ method: 'GET', url, headers: { host: HOST, ...referer } });
    assert.ok(r.statusCode >= 400, `${url}: ${r.statusCode}`);
  }
  // A form post from the used link's page with a foreign Origin (refused by the same-origin check).
  await t.app.inject({
    method: 'POST',
    url: path,
    payload: 'password=x&confirm=x',
    headers: { host: HOST, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded', ...referer },
  });
}

const tokenOf = (path: string) => path.slice(path.lastIndexOf('/') + 1);

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`secret-bearing paths never reach the logs (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    const lines: string[] = [];
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const routes: RouteOptions[] = [];
    const t = useApp(dialect, { LOG_LEVEL: 'trace' }, { logStream, onRoute: (route) => routes.push(route) });

    it('every route with a token in its path is a secret path (domain/secrets.ts, SECRET_PATHS)', () => {
      // A path parameter that names a credential; `tokenId` is an id, `code` a warehouse or channel code.
      const secretParam = /:(token|secret|key|password)(?=\/|$)/i;
      const sample = 'SampleToken0123456789abcdefABCDEF';
      const secret = [...new Set(routes.map((r) => r.url).filter((url) => secretParam.test(url)))].sort();
      assert.deepEqual(secret, ['/console/password-reset/:token', '/manager/invitations/:token', '/manager/password-reset/:token']);
      for (const url of secret) assert.equal(redactSecretPaths(url.replace(secretParam, sample)), url.replace(secretParam, '[redacted]'), url);
    });

    /** Asserts the log holds none of the tokens, and that it did log the requests (their paths cut). */
    const assertRedacted = (tokens: Record<string, string>, prefixes: string[]) => {
      const log = lines.join('');
      assert.ok(lines.length > 20, 'the log was captured');
      for (const [what, token] of Object.entries(tokens)) {
        assert.ok(token.length >= 20, `${what}: a token to look for (${token})`);
        // Any 16 characters of it would do to guess the rest faster: none may appear.
        for (let i = 0; i + 16 <= token.length; i += 8) {
          const part = token.slice(i, i + 16);
          const at = log.indexOf(part);
          assert.equal(at, -1, `${what} appears in the log: …${log.slice(Math.max(0, at - 200), at + 100)}…`);
        }
      }
      for (const prefix of prefixes) assert.ok(log.includes(`"url":"${prefix}[redacted]`), `${prefix} requests are logged, redacted`);
    };

    it('a staff password reset link (/console/password-reset/…)', async () => {
      const target = await staff(t, 'logged-target@example.com', 'support');
      await staff(t, 'logged-owner@example.com', 'owner');
      const owner = await signedIn(t, 'logged-owner@example.com');
      const csrf = await owner.csrf('/console/staff');
      const made = await follow(owner, await owner.post(`/console/staff/${target.id}/reset-password`, { _csrf: csrf }));
      const link = new URL(/data-reset-url>([^<]+)</.exec(made.body)![1]).pathname;
      assert.match(link, /^\/console\/password-reset\/[A-Za-z0-9_-]+$/);
      await driveLink(t, link, '/console/assets/console.css', '/console/sign-in');
      const signIn = await browser(t).post('/console/sign-in', { email: 'logged-target@example.com', password: NEW_PASSWORD });
      assert.equal(signIn.statusCode, 303, 'the link worked');
      assertRedacted({ 'the staff reset token': tokenOf(link) }, ['/console/password-reset/']);
    });

    it('a business manager invitation link and a merchant user password reset link (/manager/invitations/…, /manager/password-reset/…)', async () => {
      const m = await newMerchant(t, 'Logged links shop');
      const invitation = await invite(t, m.merchantId, 'logged-member@example.com', 'developer');
      assert.match(invitation, /^\/manager\/invitations\/[A-Za-z0-9_-]+$/);
      await driveLink(t, invitation, '/manager/assets/manager.css', '/manager');
      const made = await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/password-resets`, { email: 'logged-member@example.com' });
      assert.equal(made.status, 200, made.raw);
      const reset = new URL(made.body.data.resetUrl).pathname;
      assert.match(reset, /^\/manager\/password-reset\/[A-Za-z0-9_-]+$/);
      await driveLink(t, reset, '/manager/assets/manager.css', '/manager/sign-in');
      const member: Browser = browser(t);
      assert.equal((await member.post('/manager/sign-in', { email: 'logged-member@example.com', password: NEW_PASSWORD })).statusCode, 303);
      assert.notEqual(NEW_PASSWORD, PASSWORD);
      assertRedacted({ 'the invitation token': tokenOf(invitation), 'the merchant user reset token': tokenOf(reset) }, [
        '/manager/invitations/',
        '/manager/password-reset/',
      ]);
    });

    it('any log line that quotes a secret path is cut, whoever writes it (a message, an error, a Referer)', async () => {
      const path = '/console/password-reset/ThisIsNotARealTokenButLooksLikeOne0123';
      const seen = lines.length;
      t.app.log.warn({ err: new Error(`failed at ${path}`), referer: `https://console.example${path}?x=1`, next: path.toUpperCase() }, `GET ${path} failed`);
      const written = lines.slice(seen).join('');
      assert.match(written, /GET \/console\/password-reset\/\[redacted\] failed/);
      assert.match(written, /"referer":"https:\/\/console\.example\/console\/password-reset\/\[redacted\]\?x=1"/);
      assert.ok(!written.includes('ThisIsNotARealToken') && !written.toLowerCase().includes('thisisnotarealtoken'), written);
    });
  });
}
