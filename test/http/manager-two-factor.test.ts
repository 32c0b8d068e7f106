import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashSecret } from '../../src/domain/secrets.ts';
import { sql } from 'kysely';
import { DIALECTS, newMerchant, tableDigests, tableNames, useApp, type TestApp } from '../helpers.ts';
import { browser, enrolWithCodes, follow, member, PASSWORD, recoveryCodesOf, totpCode, type Browser } from './manager-helpers.ts';

/**
 * Issue 29, 13, from the browser's side: the enrolment page's QR code (inline SVG made on the
 * server), ten one-time recovery codes (hashes only, shown once, each signs in once, new ones on
 * demand), and the reset of a locked-out member's two-factor by an admin. As every web form
 * (docs/web.md): turning it on and new codes answer 303 to the two-factor page, which shows the
 * codes once (sealed while they wait), and apply once (a one-time form key); the reset asks first.
 */

const auditRows = async (t: TestApp) =>
  (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list as { action: string; actorKind: string; target: string; after: any }[];

const csrfOf = (body: string) => /name="_csrf" value="([A-Za-z0-9]+)"/.exec(body)![1];

/** The one-time key the page rendered into the form posting to `action`. */
function keyOf(html: string, action: string): string {
  const form = html.slice(html.indexOf(`action="${action}"`));
  const key = /name="_formKey" value="([A-Za-z0-9_-]+)"/.exec(form.slice(0, form.indexOf('</form>')))?.[1];
  assert.ok(key, `the form posting to ${action} carries a one-time key`);
  return key;
}

/** Every row of every table, as text: to look for a secret stored in the clear. */
const everyRow = async (t: TestApp) => {
  const rows: unknown[] = [];
  for (const table of await tableNames(t.store)) rows.push((await sql`select * from ${sql.table(table)}`.execute(t.store.db)).rows);
  return JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
};

const codesLeft = async (b: Browser) => Number(/data-recovery-codes-left="(\d+)"/.exec((await b.get('/manager/two-factor')).body)?.[1]);

const recoveryRows = (t: TestApp, email: string) =>
  t.store.db
    .selectFrom('merchant_recovery_codes')
    .innerJoin('merchant_users', 'merchant_users.id', 'merchant_recovery_codes.user_id')
    .select(['merchant_recovery_codes.code_hash', 'merchant_recovery_codes.used_at', 'merchant_recovery_codes.merchant_id'])
    .where('merchant_users.email_key', '=', email)
    .execute();

for (const dialect of DIALECTS) {
  describe(`business manager two-factor: QR code, recovery codes, reset (${dialect})`, () => {
    const clock = { now: Date.now() };
    const t = useApp(dialect, {}, { now: () => clock.now });
    // Enrolling and every code tried draw on the account's sign-in limit: each test starts with it refilled.
    const later = () => {
      clock.now += 10 * 60_000;
    };

    /** A password sign-in that stops at the code page; returns the browser and its CSRF token. */
    const halfSignedIn = async (email: string) => {
      const b = browser(t);
      const r = await b.post('/manager/sign-in', { email, password: PASSWORD });
      assert.equal(r.headers.location, '/manager/sign-in/code');
      return { b, token: csrfOf((await b.get('/manager/sign-in/code')).body) };
    };

    it('successful sign-ins do not use up the sign-in limit: six two-factor sign-ins in a row pass; wrong passwords still meet it', async () => {
      const m = await newMerchant(t, 'Often shop');
      const b = await member(t, m.merchantId, 'often@example.com', 'developer');
      const { recoveryCodes } = await enrolWithCodes(b, clock.now);
      later();
      // Each sign-in is two steps (password, then a code), each drawing on the account's five
      // attempts per five minutes; the clock stands still, so nothing refills meanwhile.
      for (const code of recoveryCodes.slice(0, 6)) {
        const { b: s, token } = await halfSignedIn('often@example.com');
        const done = await s.post('/manager/sign-in/code', { _csrf: token, code });
        assert.equal(done.statusCode, 303, done.body.slice(0, 300));
        assert.equal(done.headers.location, '/manager');
        assert.equal((await s.get('/manager/credentials')).statusCode, 200, 'signed in');
      }
      for (let i = 0; i < 5; i++)
        assert.equal((await browser(t).post('/manager/sign-in', { email: 'often@example.com', password: 'not the password' })).statusCode, 401);
      const limited = await browser(t).post('/manager/sign-in', { email: 'often@example.com', password: PASSWORD });
      assert.equal(limited.statusCode, 429, 'five wrong passwords still close the account for a while');
      later();
    });

    it('shows the key as an inline SVG QR code made on the server (no script, no image request), and the code as text', async () => {
      const m = await newMerchant(t, 'QR shop');
      const b = await member(t, m.merchantId, 'qr@example.com', 'viewer');
      const page = await b.get('/manager/two-factor');
      assert.equal(page.statusCode, 200);
      const svg = /<figure class="qr" data-totp-qr>(<svg[\s\S]*?<\/svg>)/.exec(page.body)?.[1];
      assert.ok(svg, 'an inline SVG in the page');
      assert.match(
        svg,
        /^<svg role="img" aria-label="QR code of the key, for an authenticator app to scan" class="qr-code" xmlns="http:\/\/www\.w3\.org\/2000\/svg"/,
      );
      assert.doesNotMatch(svg, /<script|href=|style=|<image/i, 'paths only');
      assert.match(String(page.headers['content-security-policy']), /script-src 'self';/, 'the CSP is unchanged');
      assert.match(page.body, /data-totp-secret>[A-Z2-7]{32}</);
      // The same pending key until it is confirmed: the QR code does not change between views.
      assert.equal(/<svg[\s\S]*?<\/svg>/.exec((await b.get('/manager/two-factor')).body)?.[0], svg);
    });

    it('turns two-factor on: 303 to the two-factor page, which shows ten recovery codes once (sealed while they wait, only their hashes kept); then says how many are left', async () => {
      const m = await newMerchant(t, 'Codes shop');
      const b = await member(t, m.merchantId, 'codes@example.com', 'developer');
      const page = await b.get('/manager/two-factor');
      const secret = /data-totp-secret>([A-Z2-7]+)</.exec(page.body)![1];
      const on = await b.post('/manager/two-factor/enable', {
        _csrf: csrfOf(page.body),
        _formKey: keyOf(page.body, '/manager/two-factor/enable'),
        password: PASSWORD,
        code: totpCode(secret, clock.now),
      });
      assert.equal(on.statusCode, 303, on.body);
      assert.equal(on.headers.location, '/manager/two-factor');
      assert.equal(on.body, '', 'no codes in the answer to the POST');
      const waiting = await everyRow(t);
      const shown = await follow(b, on);
      const recoveryCodes = recoveryCodesOf(shown.body);
      assert.equal(recoveryCodes.length, 10);
      assert.equal(new Set(recoveryCodes).size, 10);
      assert.match(shown.body, /data-two-factor="on"/);
      for (const c of recoveryCodes) assert.match(c, /^[a-hj-km-np-z2-9]{4}(-[a-hj-km-np-z2-9]{4}){3}$/);
      assert.ok(!recoveryCodes.some((c) => waiting.includes(c) || waiting.includes(c.replace(/-/g, ''))), 'sealed while waiting for the page');
      const rows = await recoveryRows(t, 'codes@example.com');
      assert.deepEqual(rows.map((r) => r.code_hash).sort(), recoveryCodes.map((c) => hashSecret(c.replace(/-/g, ''))).sort(), 'hashes only');
      assert.ok(rows.every((r) => r.used_at === null && Number(r.merchant_id) === Number(m.merchantId)));
      const dump = await everyRow(t);
      assert.ok(!recoveryCodes.some((c) => dump.includes(c) || dump.includes(c.replace(/-/g, ''))), 'no code stored in the clear');
      const again = await b.get('/manager/two-factor');
      assert.deepEqual(recoveryCodesOf(again.body), [], 'shown once: a reload shows none');
      assert.match(again.body, /You have 10 unused recovery codes left\./);
      const enabled = (await auditRows(t)).find((r) => r.action === 'merchant_user.enable_two_factor' && r.target === 'merchant_user:codes@example.com');
      assert.deepEqual(enabled?.after, { twoFactor: true, recoveryCodes: 10 });
    });

    it('a resubmitted “Turn on” or “Make new recovery codes” form applies once: 303 back to the two-factor page, no other codes made or shown', async () => {
      const m = await newMerchant(t, 'Resubmit shop');
      const b = await member(t, m.merchantId, 'resubmit@example.com', 'developer');
      const page = await b.get('/manager/two-factor');
      const secret = /data-totp-secret>([A-Z2-7]+)</.exec(page.body)![1];
      const enable = {
        _csrf: csrfOf(page.body),
        _formKey: keyOf(page.body, '/manager/two-factor/enable'),
        password: PASSWORD,
        code: totpCode(secret, clock.now),
      };
      const first = recoveryCodesOf((await follow(b, await b.post('/manager/two-factor/enable', enable))).body);
      assert.equal(first.length, 10);
      const audits = (await auditRows(t)).length;
      const before = await tableDigests(t.store);
      const resent = await b.post('/manager/two-factor/enable', enable);
      assert.equal(resent.statusCode, 303);
      assert.equal(resent.headers.location, '/manager/two-factor', 'the page the first submission led to');
      const after = await follow(b, resent);
      assert.match(after.body, /data-notice>That form was sent already: it took effect once/);
      assert.deepEqual(recoveryCodesOf(after.body), [], 'the codes are not shown again');
      assert.equal(before.merchant_recovery_codes, (await tableDigests(t.store)).merchant_recovery_codes, 'the same codes');
      assert.equal((await auditRows(t)).length, audits, 'nothing more applied');

      // New codes: once by the same form sent again, once when sent twice at once (a double click).
      later();
      const on = await b.get('/manager/two-factor');
      const regenerate = { _csrf: csrfOf(on.body), _formKey: keyOf(on.body, '/manager/two-factor/recovery-codes'), proof: PASSWORD };
      const fresh = recoveryCodesOf((await follow(b, await b.post('/manager/two-factor/recovery-codes', regenerate))).body);
      assert.equal(fresh.length, 10);
      const codes = (await recoveryRows(t, 'resubmit@example.com')).map((r) => r.code_hash).sort();
      const again = await b.post('/manager/two-factor/recovery-codes', regenerate);
      assert.equal(again.headers.location, '/manager/two-factor');
      assert.deepEqual(recoveryCodesOf((await follow(b, again)).body), []);
      assert.deepEqual((await recoveryRows(t, 'resubmit@example.com')).map((r) => r.code_hash).sort(), codes, 'not replaced again');

      later();
      clock.now += 30_000;
      const twice = await b.get('/manager/two-factor');
      const byCode = { _csrf: csrfOf(twice.body), _formKey: keyOf(twice.body, '/manager/two-factor/recovery-codes'), proof: totpCode(secret, clock.now) };
      const answers = await Promise.all([b.post('/manager/two-factor/recovery-codes', byCode), b.post('/manager/two-factor/recovery-codes', byCode)]);
      assert.deepEqual(
        answers.map((r) => r.statusCode),
        [303, 303],
        'both answer 303: the second does not fail on the code the first used',
      );
      const newest = recoveryCodesOf((await b.get('/manager/two-factor')).body);
      assert.equal(newest.length, 10, 'the applied submission’s codes, shown once');
      assert.deepEqual(
        (await recoveryRows(t, 'resubmit@example.com')).map((r) => r.code_hash).sort(),
        newest.map((c) => hashSecret(c.replace(/-/g, ''))).sort(),
        'the codes shown are the codes kept',
      );
      const regenerated = (await auditRows(t)).filter(
        (r) => r.action === 'merchant_user.regenerate_recovery_codes' && r.target === 'merchant_user:resubmit@example.com',
      );
      assert.equal(regenerated.length, 2, 'two forms, two replacements');

      // Turning it on with a double click: the second submission is caught by the form's key, not
      // refused for the code the first one just used (nor for two-factor being on by then).
      const other = await member(t, m.merchantId, 'double@example.com', 'developer');
      const offPage = await other.get('/manager/two-factor');
      const otherSecret = /data-totp-secret>([A-Z2-7]+)</.exec(offPage.body)![1];
      const fields = {
        _csrf: csrfOf(offPage.body),
        _formKey: keyOf(offPage.body, '/manager/two-factor/enable'),
        password: PASSWORD,
        code: totpCode(otherSecret, clock.now),
      };
      const both = await Promise.all([other.post('/manager/two-factor/enable', fields), other.post('/manager/two-factor/enable', fields)]);
      assert.deepEqual(
        both.map((r) => r.statusCode),
        [303, 303],
        both.map((r) => r.body.slice(0, 200)).join('\n'),
      );
      const otherCodes = recoveryCodesOf((await other.get('/manager/two-factor')).body);
      assert.equal(otherCodes.length, 10);
      assert.deepEqual(
        (await recoveryRows(t, 'double@example.com')).map((r) => r.code_hash).sort(),
        otherCodes.map((c) => hashSecret(c.replace(/-/g, ''))).sort(),
      );
      assert.equal(
        (await auditRows(t)).filter((r) => r.action === 'merchant_user.enable_two_factor' && r.target === 'merchant_user:double@example.com').length,
        1,
      );
    });

    it('turning two-factor on without the form’s one-time key is refused (400, reload), nothing written', async () => {
      const m = await newMerchant(t, 'Keyless shop');
      const b = await member(t, m.merchantId, 'keyless@example.com', 'developer');
      const page = await b.get('/manager/two-factor');
      const secret = /data-totp-secret>([A-Z2-7]+)</.exec(page.body)![1];
      const before = await tableDigests(t.store);
      const r = await b.post('/manager/two-factor/enable', { _csrf: csrfOf(page.body), _formKey: '', password: PASSWORD, code: totpCode(secret, clock.now) });
      assert.equal(r.statusCode, 400);
      assert.match(r.body, /no valid one-time key; reload the page/);
      assert.deepEqual(await tableDigests(t.store), before);
    });

    it('signs in with a recovery code once (any case, with or without dashes); a second use is refused; audited with how many are left', async () => {
      const m = await newMerchant(t, 'Recovery shop');
      const b = await member(t, m.merchantId, 'recover@example.com', 'developer');
      const { recoveryCodes } = await enrolWithCodes(b, clock.now);
      later();
      const [first, second] = recoveryCodes;

      const one = await halfSignedIn('recover@example.com');
      const ok = await one.b.post('/manager/sign-in/code', { _csrf: one.token, code: ` ${first.toUpperCase().replace(/-/g, ' ')} ` });
      assert.equal(ok.statusCode, 303, ok.body);
      assert.equal(ok.headers.location, '/manager');
      assert.equal((await one.b.get('/manager/credentials')).statusCode, 200, 'signed in');
      assert.equal(await codesLeft(one.b), 9);

      const two = await halfSignedIn('recover@example.com');
      const again = await two.b.post('/manager/sign-in/code', { _csrf: two.token, code: first });
      assert.equal(again.statusCode, 401, 'a recovery code works once');
      assert.match(again.body, /not right \(or was used already\)/);
      assert.equal((await two.b.get('/manager/credentials')).headers.location, '/manager/sign-in/code', 'still half signed in');
      const wrong = await two.b.post('/manager/sign-in/code', { _csrf: two.token, code: 'aaaa-bbbb-cccc-dddd' });
      assert.equal(wrong.statusCode, 401);
      later(); // (the wrong tries drew on the account's sign-in limit)
      assert.equal((await two.b.post('/manager/sign-in/code', { _csrf: two.token, code: second })).statusCode, 303);

      const used = (await auditRows(t)).filter((r) => r.action === 'merchant_user.use_recovery_code' && r.target === 'merchant_user:recover@example.com');
      assert.deepEqual(
        used.map((r) => [r.actorKind, r.after]),
        [
          ['merchant_user', { recoveryCodesLeft: 8 }],
          ['merchant_user', { recoveryCodesLeft: 9 }],
        ],
      );
      assert.equal((await recoveryRows(t, 'recover@example.com')).filter((r) => r.used_at !== null).length, 2);
    });

    it('makes new recovery codes with the password or a current code (the old ones stop); a wrong proof writes nothing', async () => {
      const m = await newMerchant(t, 'Regenerate shop');
      const b = await member(t, m.merchantId, 'regen@example.com', 'viewer');
      const token = await b.csrf('/manager/two-factor');
      const off = await b.post('/manager/two-factor/recovery-codes', { _csrf: token, proof: PASSWORD });
      assert.equal(off.statusCode, 409, 'two-factor is off: nothing to regenerate');

      const { secret, recoveryCodes: old } = await enrolWithCodes(b, clock.now);
      later();
      await b.get('/manager/two-factor'); // (the session's last-seen time moves here, not in a refusal)
      for (const proof of ['not the password at all', '000000', '']) {
        const before = await tableDigests(t.store);
        const r = await b.post('/manager/two-factor/recovery-codes', {
          _csrf: token,
          proof: proof === '000000' && totpCode(secret, clock.now) === proof ? '111111' : proof,
        });
        assert.equal(r.statusCode, 400, proof);
        assert.match(r.body, /The password or code is not your current password nor a current code/);
        assert.match(r.body, /action="\/manager\/two-factor\/recovery-codes"/, 'the form again, with the reason');
        assert.deepEqual(recoveryCodesOf(r.body), []);
        assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
      }
      later();
      const byPassword = await b.post('/manager/two-factor/recovery-codes', { _csrf: token, proof: PASSWORD });
      assert.equal(byPassword.headers.location, '/manager/two-factor', byPassword.body);
      const shown = await follow(b, byPassword);
      const fresh = recoveryCodesOf(shown.body);
      assert.equal(fresh.length, 10);
      assert.ok(!fresh.some((c) => old.includes(c)));
      assert.match(shown.body, /You have 10 unused recovery codes left\./);
      assert.deepEqual(recoveryCodesOf((await b.get('/manager/two-factor')).body), [], 'shown once');
      clock.now += 30_000;
      const byCode = await b.post('/manager/two-factor/recovery-codes', { _csrf: token, proof: totpCode(secret, clock.now) });
      assert.equal(byCode.headers.location, '/manager/two-factor', byCode.body);
      const newest = recoveryCodesOf((await follow(b, byCode)).body);
      assert.equal(newest.length, 10);
      assert.equal((await recoveryRows(t, 'regen@example.com')).length, 10, 'replaced, not added');

      later();
      for (const stale of [old[0], fresh[0]]) {
        const s = await halfSignedIn('regen@example.com');
        assert.equal((await s.b.post('/manager/sign-in/code', { _csrf: s.token, code: stale })).statusCode, 401, 'replaced codes stop working');
      }
      later();
      const s = await halfSignedIn('regen@example.com');
      assert.equal((await s.b.post('/manager/sign-in/code', { _csrf: s.token, code: newest[9] })).statusCode, 303);
      const audited = (await auditRows(t))
        .filter((r) => r.action === 'merchant_user.regenerate_recovery_codes' && r.target === 'merchant_user:regen@example.com')
        .map((r) => r.after);
      assert.deepEqual(audited, [
        { recoveryCodes: 10, proof: 'code' },
        { recoveryCodes: 10, proof: 'password' },
      ]);
    });

    it('turning two-factor off deletes the recovery codes', async () => {
      const m = await newMerchant(t, 'Off shop');
      const b = await member(t, m.merchantId, 'off@example.com', 'developer');
      const { secret } = await enrolWithCodes(b, clock.now);
      later();
      const r = await b.post('/manager/two-factor/disable', {
        _csrf: await b.csrf('/manager/two-factor'),
        password: PASSWORD,
        code: totpCode(secret, clock.now),
      });
      assert.equal(r.statusCode, 303);
      assert.deepEqual(await recoveryRows(t, 'off@example.com'), []);
    });

    it('lets an admin reset another member’s two-factor after a confirmation on the Team page (key and codes gone, sessions ended, audited; 303 with a notice), never their own or one without two-factor', async () => {
      const m = await newMerchant(t, 'Reset shop');
      const admin = await member(t, m.merchantId, 'reset-admin@example.com', 'admin');
      const dev = await member(t, m.merchantId, 'reset-dev@example.com', 'developer');
      const plain = await member(t, m.merchantId, 'reset-plain@example.com', 'viewer');
      await enrolWithCodes(dev, clock.now);
      await enrolWithCodes(admin, clock.now);
      const ids = Object.fromEntries(
        (await t.store.db.selectFrom('merchant_users').select(['id', 'email_key']).where('merchant_id', '=', Number(m.merchantId)).execute()).map((u) => [
          u.email_key,
          String(u.id),
        ]),
      );
      const team = await admin.get('/manager/team');
      assert.ok(team.body.includes(`action="/manager/team/${ids['reset-dev@example.com']}/reset-two-factor"`));
      assert.ok(!team.body.includes(`action="/manager/team/${ids['reset-plain@example.com']}/reset-two-factor"`), 'only members with two-factor on');
      assert.ok(!team.body.includes(`action="/manager/team/${ids['reset-admin@example.com']}/reset-two-factor"`), 'not your own');
      // Destructive (it ends the member's sessions): asked first, on the page, naming what happens.
      const row = team.body.slice(team.body.indexOf(`data-member="${ids['reset-dev@example.com']}"`));
      const confirm = /<details class="confirm">\s*<summary data-confirm-open="reset-two-factor">Reset two-factor…[\s\S]*?<\/details>/.exec(row)?.[0];
      assert.ok(confirm, 'the reset sits in a confirmation');
      assert.match(
        confirm,
        /Two-factor sign-in of reset-dev@example\.com is turned off: their authenticator key and recovery codes stop working, and they are signed out everywhere at once/,
      );
      assert.match(confirm, new RegExp(`action="/manager/team/${ids['reset-dev@example.com']}/reset-two-factor"`));
      assert.match(confirm, /<button type="submit" data-action="reset-two-factor">Reset two-factor of reset-dev@example\.com<\/button>/);
      const token = csrfOf(team.body);

      for (const [who, status] of [
        ['reset-admin@example.com', 409],
        ['reset-plain@example.com', 409],
      ] as const) {
        const before = await tableDigests(t.store);
        const r = await admin.post(`/manager/team/${ids[who]}/reset-two-factor`, { _csrf: token });
        assert.equal(r.statusCode, status, who);
        assert.deepEqual(await tableDigests(t.store), before, `${who}: nothing written`);
      }
      assert.equal((await plain.get('/manager/two-factor')).statusCode, 200);

      const done = await admin.post(`/manager/team/${ids['reset-dev@example.com']}/reset-two-factor`, { _csrf: token });
      assert.equal(done.headers.location, '/manager/team', done.body);
      const shown = await follow(admin, done);
      assert.match(shown.body, /data-notice>Two-factor sign-in of reset-dev@example\.com is off, and their sessions have ended \(1\)/);
      assert.doesNotMatch((await admin.get('/manager/team')).body, /data-notice>/, 'said once');
      assert.equal((await dev.get('/manager/credentials')).statusCode, 303, 'the member was signed out');
      const user = await t.store.db.selectFrom('merchant_users').selectAll().where('email_key', '=', 'reset-dev@example.com').executeTakeFirstOrThrow();
      assert.deepEqual([user.totp_secret, user.totp_pending_secret, user.totp_last_step], [null, null, null]);
      assert.deepEqual(await recoveryRows(t, 'reset-dev@example.com'), []);
      assert.equal((await recoveryRows(t, 'reset-admin@example.com')).length, 10, 'nobody else’s codes');
      later();
      const back = browser(t);
      const signIn = await back.post('/manager/sign-in', { email: 'reset-dev@example.com', password: PASSWORD });
      assert.equal(signIn.headers.location, '/manager', 'the password alone signs in again');
      assert.match((await back.get('/manager/two-factor')).body, /data-two-factor="off"/);
      const audited = (await auditRows(t)).find((r) => r.action === 'merchant_user.reset_two_factor');
      assert.equal(audited?.target, 'merchant_user:reset-dev@example.com');
      assert.equal(audited?.actorKind, 'merchant_user');
      assert.deepEqual(audited?.after, { twoFactor: false, sessionsEnded: 1 });
      const again = await admin.post(`/manager/team/${ids['reset-dev@example.com']}/reset-two-factor`, { _csrf: token });
      assert.equal(again.statusCode, 409, 'already off');
    });
  });
}
