import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { hashSecret } from '../../src/domain/secrets.ts';
import { newMerchant, useApp } from '../helpers.ts';
import { basic, tokenRequest } from './oauth-helpers.ts';
import { browser, staff } from './console-client.ts';
import { emailFingerprint } from '../../src/domain/staff.ts';

const STOCK_URL = '/openapi/v1/product/stocks?skus=SKU-A';

describe('secrets never reach the logs', () => {
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  // trace: the most the server ever logs.
  const t = useApp('sqlite', { LOG_LEVEL: 'trace', OAUTH_FAILURE_LIMIT: '2' }, { logStream });

  it('logs requests without tokens, client secrets, refresh tokens or Basic credentials', async () => {
    const m = await newMerchant(t, 'Logged Co');
    const auth = basic(m.clientId, m.clientSecret);
    const first = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: auth });
    const second = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token,
      client_id: m.clientId,
      client_secret: m.clientSecret,
    });
    assert.equal(second.status, 200);
    // Failures, a reuse, a lock-out, a scope refusal, a 404 and a bad body.
    await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }, { authorization: auth });
    await tokenRequest(t, { grant_type: 'client_credentials', client_id: m.clientId, client_secret: `${m.clientSecret}x` });
    await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: auth });
    await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(m.clientId, 'wrong') });
    for (const token of [m.token, second.body.access_token, first.body.access_token]) {
      await t.merchant(token, 'GET', STOCK_URL);
      await t.merchant(token, 'GET', '/openapi/v1/nowhere');
      await t.merchant(token, 'POST', '/openapi/v1/order/orders', '{bad');
    }
    // A business manager invitation link is a one-time credential too.
    const invited = await t.admin('POST', `/admin/v1/merchants/${m.merchantId}/users`, { email: 'logged@example.com', role: 'viewer' });
    const invitation = new URL(invited.body.data.invitationUrl).pathname;
    await t.app.inject({ method: 'GET', url: invitation });
    await t.app.inject({ method: 'GET', url: `${invitation}?x=1` });
    const log = lines.join('');
    assert.ok(lines.length > 20, 'the log was captured');
    assert.match(log, /"url":"\/manager\/invitations\/\[redacted\]"/);
    assert.match(log, /"reqId"/);
    const secrets = {
      operatorToken: m.token,
      clientSecret: m.clientSecret,
      basicCredentials: auth.slice('Basic '.length),
      accessToken: first.body.access_token,
      rotatedAccessToken: second.body.access_token,
      refreshToken: first.body.refresh_token,
      rotatedRefreshToken: second.body.refresh_token,
      tokenHash: hashSecret(m.token),
      invitationToken: invitation.split('/').at(-1)!,
    };
    for (const [name, secret] of Object.entries(secrets)) {
      assert.ok(!log.includes(secret), `${name} appears in the log`);
      // Tokens' random parts too, in case a prefix were stripped somewhere.
      assert.ok(!log.includes(secret.slice(-24)), `the end of ${name} appears in the log`);
    }
  });
});

describe('failed sign-ins are logged without the address typed (issue 30, 4)', () => {
  const lines: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const t = useApp('sqlite', { LOG_LEVEL: 'info' }, { logStream });

  it('the console and the business manager log a fingerprint of the email, never the email', async () => {
    await staff(t, 'Logged.Staff@example.com', 'support');
    for (const [path, email] of [
      ['/console/sign-in', 'Logged.Staff@example.com'],
      ['/console/sign-in', 'nobody.here@example.com'],
      ['/manager/sign-in', 'nobody.there@example.com'],
    ]) {
      const b = browser(t);
      const r = await b.post(path, { email, password: 'not the password at all' });
      assert.equal(r.statusCode, 401, `${path}: ${r.body.slice(0, 200)}`);
    }
    const log = lines.join('');
    assert.match(log, /console sign-in failed/);
    assert.match(log, /manager sign-in failed/);
    for (const email of ['logged.staff@example.com', 'nobody.here@example.com', 'nobody.there@example.com']) {
      assert.ok(!log.toLowerCase().includes(email), `${email} appears in the log`);
      assert.ok(!log.toLowerCase().includes(email.split('@')[0]), `the local part of ${email} appears in the log`);
      // The same person's attempts can still be told apart and grouped: a stable fingerprint.
      assert.ok(log.includes(`"emailFingerprint":"${emailFingerprint(email)}"`), `${email}'s fingerprint is logged`);
    }
  });
});
