import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { clientCredentials, grantedScopes, type OAuthError, parseBasic } from '../../src/domain/oauth.ts';
import { environmentOfRefreshToken, environmentOfToken, newRefreshToken, redactSecretPaths, SECRET_PATHS } from '../../src/domain/secrets.ts';
import { invitationUrl, passwordResetUrl } from '../../src/domain/merchant-users.ts';
import { staffPasswordResetUrl } from '../../src/domain/staff.ts';
import { asRateLimitWindow, bucketLevel, msUntil, takeFromBucket } from '../../src/domain/token-bucket.ts';
import { memoryBuckets } from '../../src/http/rate-limit.ts';

const limits = { capacity: 4, refillMs: 2000 }; // 2 tokens per second, burst 4

describe('token bucket', () => {
  it('starts full, takes one token a request and refuses below one', () => {
    let state = undefined as ReturnType<typeof takeFromBucket>['state'] | undefined;
    const allowed: boolean[] = [];
    for (let i = 0; i < 5; i++) {
      const r = takeFromBucket(state, 1000, limits, 1);
      allowed.push(r.allowed);
      state = r.state;
    }
    assert.deepEqual(allowed, [true, true, true, true, false]);
    assert.equal(state!.tokens, 0, 'a refusal takes nothing');
  });

  it('refills continuously at capacity / refillMs, up to the capacity', () => {
    const empty = { tokens: 0, at: 0 };
    assert.equal(bucketLevel(empty, 250, limits), 0.5);
    assert.equal(bucketLevel(empty, 500, limits), 1);
    assert.equal(bucketLevel(empty, 60_000, limits), 4);
    assert.equal(bucketLevel(empty, -5, limits), 0, 'a clock going backwards adds nothing');
    assert.equal(takeFromBucket(empty, 499, limits, 1).allowed, false);
    assert.equal(takeFromBucket(empty, 500, limits, 1).allowed, true);
    assert.equal(takeFromBucket(empty, 100, limits, 0).allowed, true, 'looking (cost 0) always succeeds');
  });

  it('gives tokens back with a negative cost, never beyond the capacity', () => {
    const r = takeFromBucket({ tokens: 1, at: 0 }, 0, limits, -1);
    assert.deepEqual(r, { allowed: true, state: { tokens: 2, at: 0 } });
    assert.equal(takeFromBucket({ tokens: 3.5, at: 0 }, 500, limits, -1).state.tokens, 4, 'refilled to 4 by then: capped');
  });

  it('maps onto the rate-limit headers', () => {
    assert.equal(msUntil(0.5, 1, limits), 250);
    assert.equal(msUntil(3, 1, limits), 0);
    assert.deepEqual(asRateLimitWindow(2.5, false, limits), { current: 2, ttl: 750 }, 'remaining 2, full in 0.75 s');
    assert.deepEqual(asRateLimitWindow(0.2, true, limits), { current: 5, ttl: 400 }, 'refused: Retry-After until one token');
  });

  it('in process: shared per key and bounded in size', async () => {
    let now = 0;
    const buckets = memoryBuckets(() => now, 2);
    for (let i = 0; i < 4; i++) assert.equal((await buckets.take('a', limits, 1)).allowed, true);
    assert.equal((await buckets.take('a', limits, 1)).allowed, false);
    assert.equal((await buckets.take('b', limits, 1)).allowed, true);
    now += 500;
    assert.equal((await buckets.take('a', limits, 1)).allowed, true);
    // A third key evicts the least recently used ('b'), which then starts full again.
    await buckets.take('c', limits, 1);
    assert.equal((await buckets.take('b', limits, 0)).tokens, 4);
    await buckets.close();
  });
});

describe('OAuth requests', () => {
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  it('reads HTTP Basic credentials, form-decoded (RFC 6749 §2.3.1)', () => {
    assert.deepEqual(parseBasic(`Basic ${b64('cli_a:s%3Aecret+x')}`), { clientId: 'cli_a', clientSecret: 's:ecret x' });
    assert.deepEqual(parseBasic(`basic   ${b64('id:')}`), { clientId: 'id', clientSecret: '' });
    assert.equal(parseBasic(undefined), null);
    assert.equal(parseBasic('Bearer abc'), null);
    for (const bad of ['Basic ', 'Basic !!', `Basic ${b64('nocolon')}`, `Basic ${b64('%zz:x')}`]) {
      assert.throws(
        () => parseBasic(bad),
        (e: OAuthError) => e.error === 'invalid_client' && e.status === 401,
        bad,
      );
    }
  });

  it('takes client credentials from one place only', () => {
    const header = `Basic ${b64('cli_a:sec')}`;
    assert.deepEqual(clientCredentials(header, {}), { clientId: 'cli_a', clientSecret: 'sec', via: 'basic' });
    assert.deepEqual(clientCredentials(header, { client_id: 'cli_a' }), { clientId: 'cli_a', clientSecret: 'sec', via: 'basic' });
    assert.deepEqual(clientCredentials(undefined, { client_id: 'cli_b', client_secret: 's' }), { clientId: 'cli_b', clientSecret: 's', via: 'body' });
    assert.throws(
      () => clientCredentials(header, { client_secret: 'sec' }),
      (e: OAuthError) => e.error === 'invalid_request',
    );
    assert.throws(
      () => clientCredentials(header, { client_id: 'cli_other' }),
      (e: OAuthError) => e.error === 'invalid_request',
    );
    assert.throws(
      () => clientCredentials(undefined, {}),
      (e: OAuthError) => e.error === 'invalid_client' && 'WWW-Authenticate' in e.headers,
    );
    assert.throws(
      () => clientCredentials(undefined, { client_id: 'cli_b' }),
      (e: OAuthError) => e.error === 'invalid_client',
    );
  });

  it('grants scopes within what is allowed, in a stable order', () => {
    assert.deepEqual(grantedScopes(undefined), [
      'catalog:read',
      'stock:read',
      'orders:read',
      'orders:write',
      'refunds:write',
      'account:read',
      'claims:read',
      'claims:write',
    ]);
    assert.deepEqual(grantedScopes('  orders:write  stock:read stock:read'), ['stock:read', 'orders:write']);
    assert.deepEqual(grantedScopes(undefined, ['orders:read']), ['orders:read']);
    assert.throws(
      () => grantedScopes('root'),
      (e: OAuthError) => e.error === 'invalid_scope',
    );
    assert.throws(
      () => grantedScopes('orders:write', ['orders:read']),
      (e: OAuthError) => e.error === 'invalid_scope',
    );
  });

  it('gives refresh tokens their own prefix per environment', () => {
    const sandbox = newRefreshToken('sandbox');
    assert.match(sandbox, /^stkr_test_[0-9A-Za-z]{48}$/);
    assert.equal(environmentOfRefreshToken(sandbox), 'sandbox');
    assert.equal(environmentOfRefreshToken(newRefreshToken('production')), 'production');
    assert.equal(environmentOfToken(sandbox), null, 'never taken for an access token');
  });
});

describe('secret paths in logs (issue 44, 11)', () => {
  const T = 'Tok3n_with-every-kind0123456789';
  it('cuts the token of every secret path, wherever it is in the text, and nothing else', () => {
    for (const url of [staffPasswordResetUrl('https://ops.example', T), invitationUrl('https://shop.example', T), passwordResetUrl('', T)]) {
      assert.ok(
        Object.values(SECRET_PATHS).some((p) => url.includes(p)),
        `${url} is built from SECRET_PATHS`,
      );
      assert.equal(redactSecretPaths(url), url.replace(T, '[redacted]'));
    }
    const cases: [string, string][] = [
      [`/console/password-reset/${T}?next=1#x`, '/console/password-reset/[redacted]?next=1#x'],
      [`/manager/invitations/${T}/more`, '/manager/invitations/[redacted]/more'],
      [`"url":"/manager/password-reset/${T}","msg":"x"`, '"url":"/manager/password-reset/[redacted]","msg":"x"'],
      [`Route GET:/console/password-reset/${T} not found`, 'Route GET:/console/password-reset/[redacted] not found'],
      [`/CONSOLE/Password-Reset/${T}`, '/CONSOLE/Password-Reset/[redacted]'],
      [`/manager%2Finvitations%2f${T}`, '/manager%2Finvitations%2f[redacted]'],
      [`/console/password-reset/${T}%E0%A4%A`, '/console/password-reset/[redacted]'],
      [`a /manager/invitations/${T} and /manager/invitations/${T}x`, 'a /manager/invitations/[redacted] and /manager/invitations/[redacted]'],
    ];
    for (const [text, want] of cases) assert.equal(redactSecretPaths(text), want, text);
    // Other paths, and the list pages these links are made on, are left as they are.
    for (const text of [
      '/console/staff/3/reset-password',
      '/manager/team/invitations',
      '/manager/invitations',
      '/console/password-reset',
      '/openapi/v1/x?token=1',
    ])
      assert.equal(redactSecretPaths(text), text);
  });
});
