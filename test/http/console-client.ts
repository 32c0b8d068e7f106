import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InjectOptions } from 'fastify';
import type { StaffRole } from '../../src/domain/staff.ts';
import { createStaff } from '../../src/services/staff.service.ts';
import { tableDigests, type TestApp } from '../helpers.ts';

/** A console client for app.inject tests: a browser's cookie and Origin handling, one address each. */

export const PASSWORD = 'correct horse battery staple';
export const ORIGIN = 'http://localhost:80';
export const HOST = 'localhost:80';
let addressSeq = 0;
/** Each test signs in from an address of its own, so the per-address limit of one test never meets another's. */
export const freshAddress = () => `10.0.${Math.floor(++addressSeq / 250)}.${(addressSeq % 250) + 1}`;

export async function staff(t: TestApp, email: string, role: StaffRole) {
  return createStaff(t.store.db, { kind: 'cli', id: 'test', requestId: null }, { email, role, password: PASSWORD }, Date.now());
}

/** Form-encoded fields; a list repeats its field (ticked checkboxes). */
export const form = (fields: Record<string, string | readonly string[]>) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) params.append(name, one);
  return params.toString();
};

export interface Browser {
  cookie: string | null;
  address: string;
  get(url: string): Promise<Awaited<ReturnType<TestApp['app']['inject']>>>;
  post(
    url: string,
    fields: Record<string, string | readonly string[]>,
    headers?: Record<string, string>,
  ): Promise<Awaited<ReturnType<TestApp['app']['inject']>>>;
  /** The CSRF token of a page (default the console's dashboard). */
  csrf(url?: string): Promise<string>;
}

/** A browser (of the console or the business manager): keeps the session cookie, sends Origin on every POST (as browsers do). */
export function browser(t: TestApp, address = freshAddress()): Browser {
  const b: Browser = {
    cookie: null,
    address,
    async get(url) {
      return t.app.inject({ method: 'GET', url, remoteAddress: address, headers: { host: HOST, ...(b.cookie ? { cookie: b.cookie } : {}) } });
    },
    async post(url, fields, headers = {}) {
      const opts: InjectOptions = {
        method: 'POST',
        url,
        remoteAddress: address,
        // Like a page the browser just loaded, every form carries a fresh one-time key unless the test sends its own.
        payload: form({ _formKey: freshFormKey(), ...fields }),
        headers: { host: HOST, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...(b.cookie ? { cookie: b.cookie } : {}), ...headers },
      };
      const r = await t.app.inject(opts);
      const set = r.headers['set-cookie'];
      if (typeof set === 'string') b.cookie = /Max-Age=0/.test(set) ? null : set.split(';')[0];
      return r;
    },
    async csrf(url = '/console') {
      const page = await b.get(url);
      const m = /name="_csrf" value="([A-Za-z0-9]+)"/.exec(page.body);
      assert.ok(m, `the page carries the CSRF token: ${page.statusCode} ${page.body.slice(0, 200)}`);
      return m[1];
    },
  };
  return b;
}

/** A one-time form key as a rendered form carries it (web/foundation.ts). */
export const freshFormKey = () => randomBytes(18).toString('base64url');

/** The page a POST's 303 leads to (what a browser shows next); the POST must have answered 303. */
export async function follow(b: Browser, posted: Awaited<ReturnType<Browser['post']>>) {
  assert.equal(posted.statusCode, 303, `${posted.statusCode} ${posted.body.slice(0, 300)}`);
  return b.get(String(posted.headers.location));
}

export async function signedIn(t: TestApp, email: string, address?: string) {
  const b = browser(t, address);
  const r = await b.post('/console/sign-in', { email, password: PASSWORD });
  assert.equal(r.statusCode, 303, r.body);
  assert.equal(r.headers.location, '/console');
  return b;
}

/**
 * Changes `me`'s own password on `front`'s account page (console and manager alike), expects the
 * notice to say one open reset link was revoked, and that `link` (that reset link) neither opens
 * nor takes a password any more, writing nothing.
 */
export async function changeOwnPasswordRevokingLink(t: TestApp, me: Browser, front: '/console' | '/manager', link: string, newPassword: string) {
  const changed = await follow(
    me,
    await me.post(`${front}/account/password`, { _csrf: await me.csrf(`${front}/account`), current: PASSWORD, password: newPassword, confirm: newPassword }),
  );
  assert.equal(changed.statusCode, 200, changed.body.slice(0, 300));
  assert.match(changed.body, /Password changed; 0 other sessions signed out; 1 open password reset link revoked\./);
  assert.equal((await browser(t).get(link)).statusCode, 404, 'the link no longer opens');
  const before = await tableDigests(t.store);
  assert.equal((await browser(t).post(link, { password: 'a reset link horse', confirm: 'a reset link horse' })).statusCode, 404);
  assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
}

/** Follows an import's page until it is no longer running (the import runs in the background). */
export async function importOutcome(b: Browser, location: string) {
  for (let i = 0; i < 500; i++) {
    const r = await b.get(location);
    assert.equal(r.statusCode, 200, r.body);
    const state = /id="import-job" data-state="([a-z]+)"/.exec(r.body)?.[1];
    if (state !== 'running') return { state, body: r.body };
    await sleep(10);
  }
  throw new Error(`the import at ${location} never finished`);
}
