import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import type { TestApp } from '../helpers.ts';

/** Shared by the business manager tests: a browser over app.inject, invitations, TOTP codes. */

export const PASSWORD = 'correct horse battery staple';
const ORIGIN = 'http://localhost:80';
const HOST = 'localhost:80';
let addressSeq = 0;
/** Each test signs in from an address of its own, so one test's per-address limit never meets another's. */
export const freshAddress = () => `10.9.${Math.floor(++addressSeq / 250)}.${(addressSeq % 250) + 1}`;

type Response = Awaited<ReturnType<TestApp['app']['inject']>>;

export interface Browser {
  cookie: string | null;
  get(url: string): Promise<Response>;
  post(url: string, fields: Record<string, string | string[]>, headers?: Record<string, string>): Promise<Response>;
  csrf(url?: string): Promise<string>;
}

const form = (fields: Record<string, string | string[]>) => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) params.append(k, one);
  return params.toString();
};

/** Keeps the session cookie and sends Origin on every POST, as browsers do. */
export function browser(t: TestApp, address = freshAddress()): Browser {
  const b: Browser = {
    cookie: null,
    async get(url) {
      return t.app.inject({ method: 'GET', url, remoteAddress: address, headers: { host: HOST, ...(b.cookie ? { cookie: b.cookie } : {}) } });
    },
    async post(url, fields, headers = {}) {
      const opts: InjectOptions = {
        method: 'POST',
        url,
        remoteAddress: address,
        payload: form(fields),
        headers: { host: HOST, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...(b.cookie ? { cookie: b.cookie } : {}), ...headers },
      };
      const r = await t.app.inject(opts);
      const set = r.headers['set-cookie'];
      if (typeof set === 'string') b.cookie = /Max-Age=0/.test(set) ? null : set.split(';')[0];
      return r;
    },
    async csrf(url = '/manager/two-factor') {
      const page = await b.get(url);
      const m = /name="_csrf" value="([A-Za-z0-9]+)"/.exec(page.body);
      assert.ok(m, `the page carries the CSRF token: ${page.statusCode} ${page.body.slice(0, 300)}`);
      return m[1];
    },
  };
  return b;
}

/** The operator invites `email`; returns the link's path (/manager/invitations/<token>). */
export async function invite(t: TestApp, merchantId: string, email: string, role: 'admin' | 'developer' | 'viewer'): Promise<string> {
  const r = await t.admin('POST', `/admin/v1/merchants/${merchantId}/users`, { email, role });
  assert.equal(r.status, 200, r.raw);
  return new URL(r.body.data.invitationUrl).pathname;
}

/** Invited, password set, signed in (the invitation signs the new user in). */
export async function member(t: TestApp, merchantId: string, email: string, role: 'admin' | 'developer' | 'viewer', address?: string): Promise<Browser> {
  const b = browser(t, address);
  const r = await b.post(await invite(t, merchantId, email, role), { password: PASSWORD, confirm: PASSWORD });
  assert.equal(r.statusCode, 303, r.body);
  assert.ok(b.cookie, 'signed in by accepting');
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
  const page = await b.get('/manager/two-factor');
  const secret = /data-totp-secret>([A-Z2-7]+)</.exec(page.body)?.[1];
  assert.ok(secret, page.body.slice(0, 500));
  const token = /name="_csrf" value="([A-Za-z0-9]+)"/.exec(page.body)![1];
  const r = await b.post('/manager/two-factor/enable', { _csrf: token, code: totpCode(secret, at) });
  assert.equal(r.statusCode, 303, r.body);
  return secret;
}
