import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { STAFF_ROLES, type StaffRole } from '../../src/domain/staff.ts';
import { CONSOLE_ROUTES } from '../../src/web/console/console-routes.ts';
import { PASSWORD, HOST, changeOwnPasswordRevokingLink, follow, ORIGIN, freshAddress, staff, form, browser, signedIn, type Browser } from './console-client.ts';
import { ADMIN_KEY, countWrites, DIALECTS, buildTestApp, loadCatalogue, newMerchant, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';

/**
 * SPEC §14, the operator console's foundation, from the browser's side: sign-in and its limits,
 * the session cookie and its expiry, sign-out, CSRF, roles, and the audit row of every change.
 */

type Clock = { now: number };

const EVERYONE: readonly StaffRole[] = ['owner', 'support', 'warehouse'];
const SUPPORT: readonly StaffRole[] = ['owner', 'support'];
const WAREHOUSE: readonly StaffRole[] = ['owner', 'warehouse'];
const OWNER: readonly StaffRole[] = ['owner'];

/**
 * Who may use each console route, written out by hand from SPEC §14 and the roles' definitions
 * (owner: everything; support: orders, refund review, claim decisions, merchants read-only, webhooks;
 * warehouse: ship and deliver, stock, imports, claims' returned goods) — not computed from CONSOLE_ROUTES and the role table, so a
 * route given the wrong permission there fails here (Hardening III, 11).
 */
const EXPECTED_ACCESS: Record<string, readonly StaffRole[] | 'public'> = {
  'GET /sign-in': 'public',
  'POST /sign-in': 'public',
  'GET /assets/:file': 'public',
  'POST /sign-out': EVERYONE,
  'GET ': EVERYONE,
  'GET /refunds': SUPPORT,
  'POST /refunds/:refundNo/approve': SUPPORT,
  'POST /refunds/:refundNo/reject': SUPPORT,
  // Claims after shipment (SPEC §18, issue 40 item 6): everyone reads the queue; support decides, the warehouse marks goods received.
  'GET /claims': EVERYONE,
  'GET /claims.csv': EVERYONE,
  'GET /claims/files/:fileId': EVERYONE,
  'GET /claims/:claimNo': EVERYONE,
  'POST /claims/:claimNo/approve': SUPPORT,
  'POST /claims/:claimNo/require-return': SUPPORT,
  'POST /claims/:claimNo/reject': SUPPORT,
  'POST /claims/:claimNo/resolution': SUPPORT,
  'POST /claims/:claimNo/received': WAREHOUSE,
  'GET /orders': EVERYONE,
  'GET /orders/:id': EVERYONE,
  'POST /orders/:id/note': SUPPORT,
  'POST /splits/:id/ship': WAREHOUSE,
  'POST /splits/:id/deliver': WAREHOUSE,
  // Cancelling an unshipped split credits the merchant: owner and support, not the warehouse.
  'GET /splits/:id/cancel': SUPPORT,
  'POST /splits/:id/cancel': SUPPORT,
  'GET /merchants': SUPPORT,
  'POST /merchants': OWNER,
  'GET /merchants/:id': SUPPORT,
  'POST /merchants/:id/disable': OWNER,
  'POST /merchants/:id/enable': OWNER,
  'POST /merchants/:id/tokens': OWNER,
  'POST /merchants/:id/tokens/:tokenId/revoke': OWNER,
  'GET /webhooks': SUPPORT,
  'GET /webhooks/:id': SUPPORT,
  'POST /webhooks/:id/disable': SUPPORT,
  'POST /webhooks/:id/enable': SUPPORT,
  'POST /webhooks/:id/deliveries/:deliveryId/retry': SUPPORT,
  'GET /products': WAREHOUSE,
  'GET /products/:sku': WAREHOUSE,
  'POST /products/:sku/adjust': WAREHOUSE,
  'GET /import': WAREHOUSE,
  'POST /import': WAREHOUSE,
  'GET /import/:jobId': WAREHOUSE,
  // The import's CSV templates and dry run (issue 29, 9): whoever may import.
  'GET /import/template.csv': WAREHOUSE,
  'POST /import/preview': WAREHOUSE,
  'GET /import/preview/:previewId': WAREHOUSE,
  'POST /import/preview/:previewId/apply': WAREHOUSE,
  // Creating and editing products, warehouses and channels (issue 29, 9–10): the owner only.
  'GET /new-product': OWNER,
  'POST /new-product': OWNER,
  'GET /products/:sku/edit': OWNER,
  'POST /products/:sku/edit': OWNER,
  'GET /warehouses': OWNER,
  'GET /warehouses/new': OWNER,
  'POST /warehouses/new': OWNER,
  'GET /warehouses/:code/edit': OWNER,
  'POST /warehouses/:code/edit': OWNER,
  'GET /channels': OWNER,
  'GET /channels/new': OWNER,
  'POST /channels/new': OWNER,
  'GET /channels/:code/edit': OWNER,
  'POST /channels/:code/edit': OWNER,
  'GET /staff': OWNER,
  'POST /staff': OWNER,
  'POST /staff/:staffId/disable': OWNER,
  'POST /staff/:staffId/enable': OWNER,
  'POST /staff/:staffId/reset-password': OWNER,
  'POST /staff/:staffId/role': OWNER,
  'GET /audit': OWNER,
  'POST /merchants/:id/users': OWNER,
  'POST /merchants/:id/account/top-ups': OWNER,
  'POST /merchants/:id/account/adjustments': OWNER,
  'POST /merchants/:id/account': OWNER,
  'GET /merchants/:id/transactions': SUPPORT,
  // The merchant page's users and invitations (issue 29, item 12): support reads them, owners act.
  'POST /merchants/:id/users/:userId/remove': OWNER,
  'POST /merchants/:id/users/:userId/reset-two-factor': OWNER,
  'POST /merchants/:id/invitations/:invitationId/cancel': OWNER,
  'POST /merchants/:id/invitations/:invitationId/resend': OWNER,
  // CSV exports: whoever may read the list may download it.
  'GET /orders.csv': EVERYONE,
  'GET /refunds.csv': SUPPORT,
  'GET /refunds/all': SUPPORT,
  'GET /refunds/all.csv': SUPPORT,
  'GET /products.csv': WAREHOUSE,
  'GET /audit.csv': OWNER,
  // Backups (issue 39): an archive holds every merchant's data.
  'GET /backups': OWNER,
  'POST /backups': OWNER,
  'GET /backups/:name': OWNER,
  // The supplier's books (issue 41, 9): every merchant's money at once.
  'GET /books': OWNER,
  'GET /books/journal.csv': OWNER,
  'POST /books/bank-match': OWNER,
  'GET /merchants/:id/transactions.csv': SUPPORT,
  'GET /account': EVERYONE,
  'POST /account/password': EVERYONE,
  'POST /account/sign-out-everywhere': EVERYONE,
  // A staff password reset link: the token is the permission, no session (issue 32, 5).
  'GET /password-reset/:token': 'public',
  'POST /password-reset/:token': 'public',
};

/** A pending refund (REFUND_REVIEW=manual): its number. */
async function pendingRefund(t: TestApp): Promise<string> {
  await loadCatalogue(t, ORDER_CATALOGUE);
  const m = await newMerchant(t, 'Console shop');
  const o = await placeOrder(t, m.token, [{ sku: 'C', quantity: 2 }]);
  const r = await t.merchant(m.token, 'POST', `/openapi/v2/order/orders/${o.id}/refund`, { skuCode: 'C', quantity: 1, refundReason: 'Other' });
  assert.equal(r.status, 200, r.raw);
  return r.body.data;
}

const refundStatus = async (t: TestApp, refundNo: string) =>
  (await t.store.db.selectFrom('refunds').select('status').where('id', '=', Number(refundNo)).executeTakeFirstOrThrow()).status;
const auditRows = async (t: TestApp) =>
  (await t.admin('GET', '/admin/v1/audit?limit=200')).body.data.list as {
    action: string;
    actorKind: string;
    actorId: string;
    target: string;
    before: any;
    after: any;
    requestId: string | null;
  }[];

for (const dialect of DIALECTS) {
  describe(`operator console (${dialect})`, () => {
    const clock: Clock = { now: Date.now() };
    const registered: string[] = [];
    const t = useApp(
      dialect,
      { REFUND_REVIEW: 'manual', CONSOLE_SESSION_IDLE_MINUTES: '30', CONSOLE_SESSION_MAX_HOURS: '12' },
      {
        now: () => clock.now,
        onRoute: (r) => {
          if ((r.url ?? '').startsWith('/console'))
            registered.push(
              ...[r.method]
                .flat()
                .filter((m) => m !== 'HEAD')
                .map((m) => `${m} ${r.url}`),
            );
        },
      },
    );

    it('serves exactly the routes of the role matrix written out above, and every one that is not public checks the session, the role and (POST) the CSRF token', async () => {
      assert.deepEqual([...registered].sort(), CONSOLE_ROUTES.map((r) => `${r.method} /console${r.path}`).sort());
      assert.deepEqual(
        CONSOLE_ROUTES.map((r) => `${r.method} ${r.path}`).sort(),
        Object.keys(EXPECTED_ACCESS).sort(),
        'every route has a line in EXPECTED_ACCESS',
      );
      for (const r of CONSOLE_ROUTES) assert.equal(r.permission === 'public', EXPECTED_ACCESS[`${r.method} ${r.path}`] === 'public', `${r.method} ${r.path}`);
      // Hundreds of "refused: nothing written" checks: the tables are digested only when something wrote.
      await countWrites(t.store);
      const roles = { owner: 'table-owner@example.com', support: 'table-support@example.com', warehouse: 'table-warehouse@example.com' } as const;
      const browsers: Partial<Record<StaffRole, { b: Browser; token: string }>> = {};
      for (const [role, email] of Object.entries(roles) as [StaffRole, string][]) {
        await staff(t, email, role);
        const b = await signedIn(t, email);
        browsers[role] = { b, token: await b.csrf() };
      }
      // Signing out last, each with sessions of its own: they end the sessions the other routes are tried with.
      const ending = ['POST /sign-out', 'POST /account/sign-out-everywhere'];
      const routes = Object.entries(EXPECTED_ACCESS)
        .filter((e): e is [string, readonly StaffRole[]] => e[1] !== 'public')
        .sort(([a], [b]) => Number(ending.includes(a)) - Number(ending.includes(b)));
      for (const [key, allowed] of routes) {
        const [method, path] = key.split(' ');
        if (ending.includes(key))
          for (const [role, email] of Object.entries(roles) as [StaffRole, string][]) {
            const b = await signedIn(t, email);
            browsers[role] = { b, token: await b.csrf() };
          }
        const url = `/console${path}`.replace(/:[^/]+/g, '987654321');
        const anonymous = method === 'GET' ? await browser(t).get(url) : await browser(t).post(url, { _csrf: 'none' });
        assert.equal(anonymous.statusCode, method === 'GET' ? 303 : 401, `${key} without a session`);
        for (const role of STAFF_ROLES) {
          const { b, token } = browsers[role]!;
          const before = await tableDigests(t.store);
          const r = method === 'GET' ? await b.get(url) : await b.post(url, { _csrf: token });
          // The owner's "Back up now" runs a real backup in the background: done before the next
          // role's "nothing written" comparison.
          await t.backups!.idle();
          if (allowed.includes(role)) assert.ok(![401, 403].includes(r.statusCode), `${role} may ${key} (got ${r.statusCode})`);
          else {
            assert.equal(r.statusCode, 403, `${role} may not ${key}`);
            assert.deepEqual(await tableDigests(t.store), before, `${role}: refused and nothing written`);
          }
        }
      }
    });

    it('successful sign-ins do not use up the sign-in limit: six in a row pass; wrong passwords still meet it', async () => {
      await staff(t, 'often-staff@example.com', 'support');
      clock.now += 10 * 60_000;
      for (let i = 0; i < 6; i++) {
        const r = await browser(t).post('/console/sign-in', { email: 'often-staff@example.com', password: PASSWORD });
        assert.equal(r.statusCode, 303, `sign-in ${i + 1}: ${r.body.slice(0, 200)}`);
      }
      for (let i = 0; i < 5; i++)
        assert.equal((await browser(t).post('/console/sign-in', { email: 'often-staff@example.com', password: 'wrong!' })).statusCode, 401);
      assert.equal((await browser(t).post('/console/sign-in', { email: 'often-staff@example.com', password: PASSWORD })).statusCode, 429);
      clock.now += 10 * 60_000;
    });

    it('changes the own password with the current one (other sessions end), lists the sessions and signs out everywhere (Hardening III, 5)', async () => {
      await staff(t, 'own-staff@example.com', 'warehouse');
      const me = await signedIn(t, 'own-staff@example.com');
      const elsewhere = await signedIn(t, 'own-staff@example.com');
      const page = await me.get('/console/account');
      assert.equal(page.statusCode, 200);
      assert.equal((page.body.match(/<tr data-session/g) ?? []).length, 2, 'both sessions listed');
      assert.equal((page.body.match(/data-current/g) ?? []).length, 1);
      const token = /name="_csrf" value="([A-Za-z0-9]+)"/.exec(page.body)![1];
      const NEW = 'a brand new staff staple';
      for (const [fields, message] of [
        [{ current: 'not my password!', password: NEW, confirm: NEW }, /current password is not your current password/],
        [{ current: PASSWORD, password: 'short', confirm: 'short' }, /at least 12 characters/],
        [{ current: PASSWORD, password: NEW, confirm: `${NEW}!` }, /differ/],
      ] as const) {
        const before = await tableDigests(t.store);
        const r = await me.post('/console/account/password', { _csrf: token, ...fields });
        assert.equal(r.statusCode, 400, JSON.stringify(fields));
        assert.match(r.body, message);
        assert.deepEqual(await tableDigests(t.store), before, 'refused: nothing written');
      }
      clock.now += 5 * 60_000; // (two sign-ins and three tries drew on the account's sign-in limit: five per five minutes)
      await me.get('/console');
      await elsewhere.get('/console');
      const changed = await follow(me, await me.post('/console/account/password', { _csrf: token, current: PASSWORD, password: NEW, confirm: NEW }));
      assert.equal(changed.statusCode, 200, changed.body.slice(0, 300));
      assert.match(changed.body, /Password changed; 1 other session signed out/);
      assert.equal((await elsewhere.get('/console')).statusCode, 303, 'the other session ended');
      assert.equal((await me.get('/console')).statusCode, 200, 'this one stays');
      clock.now += 5 * 60_000; // (the attempts above drew on the account's sign-in limit)
      await me.get('/console');
      assert.equal(
        (await browser(t).post('/console/sign-in', { email: 'own-staff@example.com', password: PASSWORD })).statusCode,
        401,
        'the old password is gone',
      );
      const third = browser(t);
      assert.equal((await third.post('/console/sign-in', { email: 'own-staff@example.com', password: NEW })).statusCode, 303);
      const out = await me.post('/console/account/sign-out-everywhere', { _csrf: token });
      assert.equal(out.statusCode, 303);
      assert.equal(out.headers.location, '/console/sign-in?everywhere=1');
      assert.match(
        (await me.get(String(out.headers.location))).body,
        /id="sign-in-done">Signed out everywhere: every session of your account has ended/,
        'the page says what was done',
      );
      assert.equal(me.cookie, null);
      assert.equal((await third.get('/console')).statusCode, 303, 'every session ended');
      const actions = (await auditRows(t)).filter((r) => r.target === 'staff:own-staff@example.com').map((r) => [r.action, r.after?.sessionsEnded]);
      assert.deepEqual(actions[0], ['staff.sign_out_everywhere', 2]);
      assert.ok(actions.some(([a, n]) => a === 'staff.change_password' && n === 1));
      clock.now += 5 * 60_000;
    });

    it('changing one’s own password revokes one’s open reset links, and says so (issue 44, 12)', async () => {
      await staff(t, 'revoke-owner@example.com', 'owner');
      const target = await staff(t, 'revoke-target@example.com', 'warehouse');
      const boss = await signedIn(t, 'revoke-owner@example.com');
      const made = await follow(boss, await boss.post(`/console/staff/${target.id}/reset-password`, { _csrf: await boss.csrf('/console/staff') }));
      const link = new URL(/data-reset-url>([^<]+)</.exec(made.body)![1]).pathname;
      assert.equal((await browser(t).get(link)).statusCode, 200, 'the link opens');
      const me = await signedIn(t, 'revoke-target@example.com');
      await changeOwnPasswordRevokingLink(t, me, '/console', link, 'my own staff horse staple');
      const [entry] = (await auditRows(t)).filter((a) => a.action === 'staff.change_password' && a.target === 'staff:revoke-target@example.com');
      assert.equal(entry.after.revokedResets, 1);
      clock.now += 5 * 60_000;
    });

    it('resets a staff password through a one-time link only an owner makes: once, 24 hours, newest only, for that account only, every session ended (issue 32, 5)', async () => {
      const owner = await staff(t, 'reset-owner@example.com', 'owner');
      const target = await staff(t, 'reset-target@example.com', 'support');
      const other = await staff(t, 'reset-other@example.com', 'warehouse');
      const boss = await signedIn(t, 'reset-owner@example.com');
      const token = await boss.csrf('/console/staff');
      const held = await signedIn(t, 'reset-target@example.com');
      const heldToo = await signedIn(t, 'reset-target@example.com');
      const otherSession = await signedIn(t, 'reset-other@example.com');
      const makeLink = async (staffId: number, by = boss, csrf = token) => {
        const posted = await by.post(`/console/staff/${staffId}/reset-password`, { _csrf: csrf });
        assert.equal(posted.statusCode, 303, posted.body.slice(0, 300));
        const r = await follow(by, posted);
        assert.doesNotMatch(r.body, /data-password>/, 'no password is shown: the staff member chooses one');
        return new URL(/data-reset-url>([^<]+)</.exec(r.body)![1]).pathname;
      };
      const NEW = 'reset staff horse staple';
      const gone = async (path: string, what: string) => {
        const opened = await browser(t).get(path);
        assert.equal(opened.statusCode, 404, `${what}: the link no longer opens`);
        assert.match(opened.body, /This password reset link is not valid/);
        const before = await tableDigests(t.store);
        const r = await browser(t).post(path, { password: 'yet another staff horse', confirm: 'yet another staff horse' });
        assert.equal(r.statusCode, 404, what);
        assert.match(r.body, /This password reset link is not valid/);
        assert.deepEqual(await tableDigests(t.store), before, `${what}: nothing written`);
      };

      // Only an owner makes one; for the others it is 403 and nothing is written.
      for (const [b, who] of [
        [held, 'support'],
        [otherSession, 'warehouse'],
      ] as const) {
        const csrf = await b.csrf();
        const before = await tableDigests(t.store);
        assert.equal((await b.post(`/console/staff/${target.id}/reset-password`, { _csrf: csrf })).statusCode, 403, who);
        assert.deepEqual(await tableDigests(t.store), before, `${who}: refused, nothing written`);
      }
      const before = await tableDigests(t.store);
      assert.equal((await boss.post('/console/staff/987654321/reset-password', { _csrf: token })).statusCode, 404, 'an unknown account');
      assert.deepEqual(await tableDigests(t.store), before);

      const first = await makeLink(target.id);
      const link = await makeLink(target.id);
      await gone(first, 'a link replaced by a newer one');
      const stored = await t.store.db.selectFrom('staff_password_resets').selectAll().where('staff_id', '=', target.id).execute();
      assert.equal(stored.length, 2);
      for (const row of stored) assert.ok(!link.includes(row.token_hash) && /^[0-9a-f]{64}$/.test(row.token_hash), 'only a hash of the token is kept');
      assert.equal((await held.get('/console')).statusCode, 200, 'nothing changes until the link is used');
      const otherLink = await makeLink(other.id);

      const opened = await browser(t).get(link);
      assert.equal(opened.statusCode, 200);
      assert.match(opened.body, /reset-target@example\.com/);
      assert.doesNotMatch(opened.body, /reset-other@example\.com/);
      for (const [password, confirm, message] of [
        ['short', 'short', /at least 12 characters/],
        ['password1234', 'password1234', /too easy to guess/],
        // Staff passwords are estimated as merchant users' are (zxcvbn-ts).
        ['P@ssw0rd2024', 'P@ssw0rd2024', /too easy to guess.*look-alike characters/],
        ['Summer2024!!', 'Summer2024!!', /too easy to guess/],
        [NEW, `${NEW}!`, /differ/],
      ] as const) {
        const before = await tableDigests(t.store);
        const r = await browser(t).post(link, { password, confirm });
        assert.equal(r.statusCode, 400, password);
        assert.match(r.body, message);
        assert.deepEqual(await tableDigests(t.store), before, `${password}: refused, nothing written`);
      }
      // The link names its account: an address typed beside it changes nothing.
      const used = await browser(t).post(link, { username: 'reset-other@example.com', password: NEW, confirm: NEW });
      assert.equal(used.statusCode, 303, used.body.slice(0, 300));
      assert.equal(used.headers.location, '/console/sign-in?reset=1');
      assert.match((await browser(t).get('/console/sign-in?reset=1')).body, /Your new password is set/);
      assert.equal((await held.get('/console')).statusCode, 303, 'every session of the account ended');
      assert.equal((await heldToo.get('/console')).statusCode, 303, 'every session of the account ended');
      assert.equal((await otherSession.get('/console')).statusCode, 200, 'another account’s session goes on');
      await gone(link, 'a used link');
      clock.now += 5 * 60_000; // (the sign-ins above drew on the accounts' limits)
      await boss.get('/console');
      assert.equal((await browser(t).post('/console/sign-in', { email: 'reset-target@example.com', password: PASSWORD })).statusCode, 401, 'the old password');
      assert.equal((await browser(t).post('/console/sign-in', { email: 'reset-target@example.com', password: NEW })).statusCode, 303, 'the new one');
      assert.equal((await browser(t).post('/console/sign-in', { email: 'reset-other@example.com', password: NEW })).statusCode, 401, 'not another account’s');
      assert.equal(
        (await browser(t).post('/console/sign-in', { email: 'reset-other@example.com', password: PASSWORD })).statusCode,
        303,
        'whose password stays',
      );
      assert.equal((await browser(t).get(otherLink)).statusCode, 200, 'another account’s link is its own, untouched');

      // Expired after 24 hours; disabling the account ends its link; a disabled account gets none.
      clock.now += 24 * 3600 * 1000;
      await boss.get('/console'); // (kept alive: the owner's session would idle out)
      await gone(otherLink, 'an expired link (24 hours)');
      const boss2 = await signedIn(t, 'reset-owner@example.com');
      const token2 = await boss2.csrf('/console/staff');
      const beforeDisable = await makeLink(other.id, boss2, token2);
      assert.match((await follow(boss2, await boss2.post(`/console/staff/${other.id}/disable`, { _csrf: token2 }))).body, /Disabled reset-other@example\.com/);
      await gone(beforeDisable, 'a disabled account’s link');
      const refusedBefore = await tableDigests(t.store);
      const refused = await boss2.post(`/console/staff/${other.id}/reset-password`, { _csrf: token2 });
      assert.equal(refused.statusCode, 409);
      assert.match(refused.body, /is disabled: enable it before making a password reset link/);
      assert.deepEqual(await tableDigests(t.store), refusedBefore, 'refused: nothing written');

      const rows = await auditRows(t);
      const made = rows.filter((r) => r.action === 'staff.create_password_reset');
      assert.ok(
        made.some(
          (r) => r.target === 'staff:reset-target@example.com' && r.actorKind === 'staff' && r.actorId === String(owner.id) && r.after.revokedResets === 1,
        ),
      );
      const done = rows.filter((r) => r.action === 'staff.reset_password' && r.target === 'staff:reset-target@example.com');
      assert.equal(done.length, 1, 'applied once');
      assert.deepEqual([done[0].actorKind, done[0].actorId, done[0].after.sessionsEnded], ['staff', String(target.id), 2]);
      const disabled = rows.find((r) => r.action === 'staff.disable' && r.target === 'staff:reset-other@example.com')!;
      assert.equal(disabled.after.revokedResets, 1);
      const tokenOf = (path: string) => path.split('/').at(-1)!;
      for (const path of [first, link, otherLink, beforeDisable]) assert.ok(!JSON.stringify(rows).includes(tokenOf(path)), 'no link in the audit log');
    });

    it('signs in with the right password: a 303 to the dashboard and an HttpOnly, SameSite=Strict session cookie (not Secure over plain HTTP)', async () => {
      const who = await staff(t, 'Owner.One@Example.com', 'owner');
      const b = browser(t);
      const form = await b.get('/console/sign-in');
      assert.equal(form.statusCode, 200);
      assert.match(String(form.headers['content-type']), /^text\/html/);
      assert.match(form.body, /<form method="post" action="\/console\/sign-in"/);
      assert.match(String(form.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
      const r = await b.post('/console/sign-in', { email: 'owner.one@example.COM', password: PASSWORD });
      assert.equal(r.statusCode, 303);
      const cookie = String(r.headers['set-cookie']);
      assert.match(cookie, /^stockist_console=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/);
      assert.doesNotMatch(cookie, /Secure/);
      const dash = await b.get('/console');
      assert.equal(dash.statusCode, 200);
      assert.match(dash.body, /Owner\.One@Example\.com \(owner\)/);
      assert.match(dash.body, /data-stat="orders">\d+</);
      // Only a hash of the session id is stored.
      const sessions = await t.store.db.selectFrom('console_sessions').selectAll().where('staff_id', '=', who.id).execute();
      assert.equal(sessions.length, 1);
      assert.notEqual(sessions[0].id_hash, b.cookie!.split('=')[1]);
      assert.match(sessions[0].id_hash, /^[0-9a-f]{64}$/);
    });

    it('refuses a wrong password, an unknown email and a disabled account alike, and writes nothing', async () => {
      await staff(t, 'wrong@example.com', 'support');
      const before = await tableDigests(t.store);
      for (const [email, password] of [
        ['wrong@example.com', 'not the password!!'],
        ['nobody@example.com', PASSWORD],
      ]) {
        const r = await browser(t).post('/console/sign-in', { email, password });
        assert.equal(r.statusCode, 401);
        assert.match(r.body, /Wrong email or password/);
        assert.equal(r.headers['set-cookie'], undefined);
      }
      assert.deepEqual(await tableDigests(t.store), before);
      const gone = await staff(t, 'gone@example.com', 'owner');
      await t.store.db.updateTable('staff_users').set({ status: 'disabled' }).where('id', '=', gone.id).execute();
      assert.equal((await browser(t).post('/console/sign-in', { email: 'gone@example.com', password: PASSWORD })).statusCode, 401);
    });

    it('limits sign-in attempts per account (5, then 429 with Retry-After even with the right password) and per address', async () => {
      await staff(t, 'limited@example.com', 'owner');
      for (let i = 0; i < 5; i++) {
        const r = await browser(t).post('/console/sign-in', { email: 'limited@example.com', password: 'guess number one' });
        assert.equal(r.statusCode, 401, `attempt ${i + 1}`);
      }
      const refused = await browser(t).post('/console/sign-in', { email: 'LIMITED@example.com', password: PASSWORD });
      assert.equal(refused.statusCode, 429);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal(refused.headers['set-cookie'], undefined);
      // One address trying many accounts is limited too (30 attempts).
      const address = freshAddress();
      let last = 0;
      for (let i = 0; i < 31; i++)
        last = (await browser(t, address).post('/console/sign-in', { email: `spray${i}@example.com`, password: 'guess number one' })).statusCode;
      assert.equal(last, 429);
      // A minute later the account has one attempt again.
      clock.now += 61_000;
      assert.equal((await browser(t).post('/console/sign-in', { email: 'limited@example.com', password: PASSWORD })).statusCode, 303);
    });

    it('sends GET without a session to the sign-in page, and refuses a POST without one', async () => {
      const r = await browser(t).get('/console/refunds');
      assert.equal(r.statusCode, 303);
      assert.equal(r.headers.location, '/console/sign-in');
      const post = await browser(t).post('/console/refunds/8000000000001/approve', { _csrf: 'x' });
      assert.equal(post.statusCode, 401);
      assert.match(String(post.headers['content-type']), /^text\/html/);
    });

    it('ends a session after CONSOLE_SESSION_IDLE_MINUTES without use, and after CONSOLE_SESSION_MAX_HOURS however busy', async () => {
      await staff(t, 'idle@example.com', 'support');
      const idle = await signedIn(t, 'idle@example.com');
      clock.now += 29 * 60_000;
      assert.equal((await idle.get('/console')).statusCode, 200, 'used within the idle limit');
      clock.now += 29 * 60_000;
      assert.equal((await idle.get('/console')).statusCode, 200, 'the last use restarted the idle limit');
      clock.now += 30 * 60_000 + 1;
      const expired = await idle.get('/console');
      assert.equal(expired.statusCode, 303, 'idle for 30 minutes');
      assert.equal(expired.headers.location, '/console/sign-in');

      const busy = await signedIn(t, 'idle@example.com');
      for (let h = 0; h < 12 * 4 - 1; h++) {
        clock.now += 15 * 60_000;
        assert.equal((await busy.get('/console')).statusCode, 200, `${(h + 1) * 15} minutes in`);
      }
      clock.now += 15 * 60_000;
      assert.equal((await busy.get('/console')).statusCode, 303, '12 hours after sign-in');
    });

    it('signs out server-side: the old cookie no longer works', async () => {
      await staff(t, 'leaving@example.com', 'warehouse');
      const b = await signedIn(t, 'leaving@example.com');
      const stolen = b.cookie;
      const out = await b.post('/console/sign-out', { _csrf: await b.csrf() });
      assert.equal(out.statusCode, 303);
      assert.equal(out.headers.location, '/console/sign-in');
      assert.match(String(out.headers['set-cookie']), /^stockist_console=; .*Max-Age=0/);
      const replay = await t.app.inject({ method: 'GET', url: '/console', headers: { host: HOST, cookie: stolen! } });
      assert.equal(replay.statusCode, 303, 'the session is gone from the server, not just from the browser');
      const actions = (await auditRows(t)).filter((a) => a.target === 'staff:leaving@example.com').map((a) => a.action);
      assert.deepEqual(actions, ['staff.sign_out', 'staff.sign_in', 'staff.create']);
    });

    it('refuses state changes without the CSRF token, with a wrong one, or from another origin: 403, nothing written', async () => {
      await staff(t, 'csrf@example.com', 'support');
      const refundNo = await pendingRefund(t);
      const b = await signedIn(t, 'csrf@example.com');
      const token = await b.csrf();
      const before = await tableDigests(t.store);
      const url = `/console/refunds/${refundNo}/approve`;
      const attempts: [string, Record<string, string>, Record<string, string>][] = [
        ['no token', {}, {}],
        ['a wrong token', { _csrf: 'A'.repeat(32) }, {}],
        ['another origin', { _csrf: token }, { origin: 'https://evil.example' }],
        ['a cross-site fetch', { _csrf: token }, { 'sec-fetch-site': 'cross-site' }],
        ['no Origin or Referer', { _csrf: token }, { origin: '' }],
      ];
      for (const [what, fields, headers] of attempts) {
        const h = { ...headers };
        if (h.origin === '') delete (h as Record<string, string | undefined>).origin;
        const r =
          what === 'no Origin or Referer'
            ? await t.app.inject({
                method: 'POST',
                url,
                payload: form(fields),
                headers: { host: HOST, cookie: b.cookie!, 'content-type': 'application/x-www-form-urlencoded' },
              })
            : await b.post(url, fields, h);
        assert.equal(r.statusCode, 403, `${what}: ${r.body.slice(0, 300)}`);
        assert.match(String(r.headers['content-type']), /^text\/html/);
      }
      assert.deepEqual(await tableDigests(t.store), before, 'nothing was written');
      assert.equal(await refundStatus(t, refundNo), 'pending_review');
      // The header form of the token (htmx) works like the field.
      const ok = await b.post(url, {}, { 'x-csrf-token': token, 'hx-request': 'true' });
      assert.equal(ok.statusCode, 200, ok.body);
      assert.match(ok.body, /data-status="refund_successfully"/);
    });

    it('enforces roles on the server: a warehouse account cannot approve a refund (403, nothing written) or open the queue', async () => {
      await staff(t, 'picker@example.com', 'warehouse');
      const refundNo = await pendingRefund(t);
      const b = await signedIn(t, 'picker@example.com');
      const token = await b.csrf();
      assert.doesNotMatch((await b.get('/console')).body, /href="\/console\/refunds"/, 'the queue is not offered');
      assert.equal((await b.get('/console/refunds')).statusCode, 403);
      const before = await tableDigests(t.store);
      const r = await b.post(`/console/refunds/${refundNo}/approve`, { _csrf: token });
      assert.equal(r.statusCode, 403);
      assert.match(r.body, /the warehouse role may not do this/);
      assert.deepEqual(await tableDigests(t.store), before);
      assert.equal(await refundStatus(t, refundNo), 'pending_review');
    });

    it('approves and rejects from the queue, each with its audit row written with the change', async () => {
      const agent = await staff(t, 'agent@example.com', 'support');
      const first = await pendingRefund(t);
      const second = await pendingRefund(t);
      const b = await signedIn(t, 'agent@example.com');
      const queue = await b.get('/console/refunds');
      assert.equal(queue.statusCode, 200);
      assert.match(queue.body, new RegExp(`id="refund-${first}"`));
      const token = await b.csrf();
      const approved = await b.post(`/console/refunds/${first}/approve`, { _csrf: token });
      assert.equal(approved.statusCode, 303, approved.body);
      assert.equal(approved.headers.location, '/console/refunds');
      assert.equal(await refundStatus(t, first), 'refund_successfully');
      const rejected = await b.post(`/console/refunds/${second}/reject`, { _csrf: token, reason: 'opened box' }, { 'hx-request': 'true' });
      assert.equal(rejected.statusCode, 200);
      assert.match(rejected.body, /Rejected: opened box/);
      assert.match(rejected.body, /<a href="\/console\/merchants\/\d+" data-merchant="\d+">Console shop<\/a>/, 'the decided row keeps the merchant by name');
      const again = await b.post(`/console/refunds/${first}/approve`, { _csrf: token });
      assert.equal(again.statusCode, 409);
      assert.match(again.body, /already decided/);

      const rows = await auditRows(t);
      const approve = rows.find((r) => r.action === 'refund.approve' && r.target === `refund:${first}`)!;
      assert.deepEqual([approve.actorKind, approve.actorId], ['staff', String(agent.id)]);
      assert.equal(approve.before.status, 'pending_review');
      assert.equal(approve.after.status, 'refund_successfully');
      assert.match(approve.requestId!, /^req_/);
      const reject = rows.find((r) => r.action === 'refund.reject' && r.target === `refund:${second}`)!;
      assert.deepEqual(reject.after, { status: 'refund_failed', amount: 3, failureReason: 'opened box' });
      assert.equal(rows.filter((r) => r.target === `refund:${first}`).length, 1, 'the refused second approval wrote no row');
    });

    it('refuses form posts in another content type (415) and answers unknown console pages with an HTML 404', async () => {
      await staff(t, 'types@example.com', 'owner');
      const b = await signedIn(t, 'types@example.com');
      const token = await b.csrf();
      const json = await t.app.inject({
        method: 'POST',
        url: '/console/sign-out',
        payload: { _csrf: token },
        headers: { host: HOST, origin: ORIGIN, cookie: b.cookie! },
      });
      assert.equal(json.statusCode, 415);
      const missing = await b.get('/console/nothing-here');
      assert.equal(missing.statusCode, 404);
      assert.match(String(missing.headers['content-type']), /^text\/html/);
      for (const asset of ['htmx.min.js', 'console.css', 'console.js']) {
        const r = await b.get(`/console/assets/${asset}`);
        assert.equal(r.statusCode, 200, asset);
      }
      assert.equal((await b.get('/console/assets/..%2F..%2Fpackage.json')).statusCode, 404);
    });
  });
}

describe('operator console over HTTPS and in production', () => {
  it('marks the cookie Secure (and __Host-) when the client is on HTTPS behind the proxy', async (t) => {
    const app = await buildTestApp(t, 'sqlite', { TRUST_PROXY: '1' });
    await staff(app, 'tls@example.com', 'owner');
    const r = await app.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      payload: form({ email: 'tls@example.com', password: PASSWORD }),
      headers: {
        host: 'ops.example.com',
        origin: 'https://ops.example.com',
        'x-forwarded-proto': 'https',
        'content-type': 'application/x-www-form-urlencoded',
      },
    });
    assert.equal(r.statusCode, 303, r.body);
    assert.match(String(r.headers['set-cookie']), /^__Host-stockist_console=\w+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=\d+; Secure$/);
  });

  it('answers only over HTTPS in production (403 over plain HTTP through the proxy)', async (t) => {
    const app = await buildTestApp(t, 'sqlite', { STOCKIST_ENV: 'production', TRUST_PROXY: '1' });
    const plain = await app.app.inject({ method: 'GET', url: '/console/sign-in', headers: { 'x-forwarded-proto': 'http' } });
    assert.equal(plain.statusCode, 403);
    assert.match(plain.body, /HTTPS is required/);
    const secure = await app.app.inject({ method: 'GET', url: '/console/sign-in', headers: { 'x-forwarded-proto': 'https' } });
    assert.equal(secure.statusCode, 200);
    assert.match(String(secure.headers['strict-transport-security']), /max-age=/);
  });
});

describe('GET /admin/v1/audit', () => {
  it('records the operator API’s refund decisions as the admin key, and pages by cursor', async (t) => {
    const app = await buildTestApp(t, DIALECTS.at(-1)!, { REFUND_REVIEW: 'manual' });
    const refunds = [await pendingRefund(app), await pendingRefund(app), await pendingRefund(app)];
    for (const refundNo of refunds) assert.equal((await app.admin('POST', `/admin/v1/refunds/${refundNo}/approve`, {})).status, 200);
    const page1 = await app.admin('GET', '/admin/v1/audit?limit=2');
    assert.equal(page1.status, 200, page1.raw);
    assert.equal(page1.body.data.list.length, 2);
    assert.equal(page1.body.data.hasMore, true);
    assert.deepEqual(
      page1.body.data.list.map((r: { target: string }) => r.target),
      [`refund:${refunds[2]}`, `refund:${refunds[1]}`],
    );
    const row = page1.body.data.list[0];
    assert.equal(row.actorKind, 'admin_key');
    assert.match(row.actorId, /^key_[0-9a-f]{12}$/);
    assert.ok(!JSON.stringify(page1.body).includes(ADMIN_KEY), 'the key itself is never recorded');
    assert.match(row.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const page2 = await app.admin('GET', `/admin/v1/audit?limit=2&cursor=${page1.body.data.nextCursor}`);
    assert.equal(page2.body.data.list[0].target, `refund:${refunds[0]}`);
    // Before the decisions: the setup's own operator writes (catalogue import, merchants, tokens), also audited.
    assert.equal(page2.body.data.hasMore, true);
    const rest = await app.admin('GET', `/admin/v1/audit?limit=200&cursor=${page2.body.data.nextCursor}`);
    assert.equal(rest.body.data.list.at(-1).target, 'catalog:import', 'the oldest row is the first write: the catalogue import');
    assert.equal(rest.body.data.hasMore, false);
    assert.equal(rest.body.data.nextCursor, null);
    const bad = await app.admin('GET', '/admin/v1/audit?cursor=nonsense');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 40000);
    assert.equal((await app.app.inject({ method: 'GET', url: '/admin/v1/audit' })).statusCode, 401, 'the admin key is required');
  });
});
