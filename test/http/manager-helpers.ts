import assert from 'node:assert/strict';
import { Secret, TOTP } from 'otpauth';
import type { TestApp } from '../helpers.ts';
import { browser, follow, PASSWORD, type Browser } from './console-client.ts';

/** Shared by the business manager tests: a browser over app.inject, invitations, TOTP codes. */

export { browser, follow, freshAddress, PASSWORD, type Browser } from './console-client.ts';

/** The operator invites `email`; returns the link's path (/manager/invitations/<token>). */
export async function invite(t: TestApp, merchantId: string, email: string, role: 'admin' | 'developer' | 'viewer'): Promise<string> {
  const r = await t.admin('POST', `/admin/v1/merchants/${merchantId}/users`, { email, role });
  assert.equal(r.status, 200, r.raw);
  return new URL(r.body.data.invitationUrl).pathname;
}

/**
 * Invited, password set, signed in (the invitation signs the new user in), and on the page the 303
 * leads to, as a browser is: that page shows (and so uses up) the welcome notice kept for the new
 * session, which a test's "nothing written" digest taken afterwards must not see go.
 */
export async function member(t: TestApp, merchantId: string, email: string, role: 'admin' | 'developer' | 'viewer', address?: string): Promise<Browser> {
  const b = browser(t, address);
  const r = await b.post(await invite(t, merchantId, email, role), { password: PASSWORD, confirm: PASSWORD });
  assert.equal(r.statusCode, 303, r.body);
  assert.ok(b.cookie, 'signed in by accepting');
  assert.equal((await follow(b, r)).statusCode, 200);
  return b;
}

export async function signedIn(t: TestApp, email: string, address?: string): Promise<Browser> {
  const b = browser(t, address);
  const r = await b.post('/manager/sign-in', { email, password: PASSWORD });
  assert.equal(r.statusCode, 303, r.body);
  return b;
}

/** The current code of a base32 secret at `at` (ms). */
export const totpCode = (secret: string, at: number) =>
  TOTP.generate({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30, timestamp: at });

/** Turns on two-factor for the signed-in user at `at`; returns the secret. */
export async function enrol(b: Browser, at: number): Promise<string> {
  return (await enrolWithCodes(b, at)).secret;
}

/** The recovery codes a page shows (once: the page after turning two-factor on, or after new codes). */
export const recoveryCodesOf = (body: string) => [...body.matchAll(/data-recovery-code>([a-z2-9-]+)</g)].map((m) => m[1]);

/** Turns on two-factor for the signed-in user at `at` (POST → 303 → GET); returns the secret and the ten recovery codes shown once. */
export async function enrolWithCodes(b: Browser, at: number): Promise<{ secret: string; recoveryCodes: string[] }> {
  const page = await b.get('/manager/two-factor');
  const secret = /data-totp-secret>([A-Z2-7]+)</.exec(page.body)?.[1];
  assert.ok(secret, page.body.slice(0, 500));
  const token = /name="_csrf" value="([A-Za-z0-9]+)"/.exec(page.body)![1];
  const r = await b.post('/manager/two-factor/enable', { _csrf: token, password: PASSWORD, code: totpCode(secret, at) });
  assert.equal(r.headers.location, '/manager/two-factor', r.body);
  return { secret, recoveryCodes: recoveryCodesOf((await follow(b, r)).body) };
}
