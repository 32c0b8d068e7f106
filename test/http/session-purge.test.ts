import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Purger, purgeTasks } from '../../src/jobs/purger.ts';
import { createStaff } from '../../src/services/staff.service.ts';
import { systemActor } from '../../src/domain/audit.ts';
import { DIALECTS, PG_SKIP, buildTestApp, type TestApp } from '../helpers.ts';
import { member } from './manager-helpers.ts';

/**
 * The worker's purge of expired sessions: console sessions signed in through the console page
 * survive until their idle or absolute expiry, then go; a large backlog goes in bounded batches;
 * business manager sessions likewise.
 */

const PASSWORD = 'correct horse battery staple';
const HOST = 'localhost:80';
let addressSeq = 0;

/** Signs in through the console's form, as a browser does; returns the session cookie. */
async function signIn(t: TestApp, email: string): Promise<string> {
  const r = await t.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    remoteAddress: `10.9.0.${++addressSeq}`,
    payload: new URLSearchParams({ email, password: PASSWORD }).toString(),
    headers: { host: HOST, origin: 'http://localhost:80', 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(r.statusCode, 303, r.body);
  return String(r.headers['set-cookie']).split(';')[0];
}

const sessionCount = async (t: TestApp) =>
  Number(
    (
      await t.store.db
        .selectFrom('console_sessions')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

const MINUTE = 60_000;
const silentLog = { error: () => {}, info: () => {} };
const purgerOf = (t: TestApp, what: string) => new Purger(purgeTasks(t.store, t.config).find((task) => task.what === what)!, silentLog);
const consolePurger = (t: TestApp) => purgerOf(t, 'expired console sessions');

for (const dialect of DIALECTS) {
  describe(`console session purge (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    /**
     * Each test on an app and a database of its own (closed when the test ends), so the sessions it
     * counts are its own: console sessions idle out after 30 minutes and last 2 hours at most; one
     * staff member, purge@example.com, who signs in with PASSWORD.
     */
    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect, { CONSOLE_SESSION_IDLE_MINUTES: '30', CONSOLE_SESSION_MAX_HOURS: '2' });
      await createStaff(t.store.db, systemActor('test'), { email: 'purge@example.com', role: 'support', password: PASSWORD }, Date.now());
      return t;
    };

    it('deletes sessions past their idle or absolute expiry and keeps the live ones', async (ctx) => {
      const t = await build(ctx);
      const purger = consolePurger(t);
      const started = Date.now();
      const cookies = [await signIn(t, 'purge@example.com'), await signIn(t, 'purge@example.com')];
      assert.equal(await sessionCount(t), 2);
      assert.equal(await purger.runOnce(started + 29 * MINUTE), 0, 'idle for less than 30 minutes: kept');
      assert.equal(await sessionCount(t), 2);
      const live = await t.app.inject({ method: 'GET', url: '/console', headers: { host: HOST, cookie: cookies[0] } });
      assert.equal(live.statusCode, 200, 'the kept session still signs in');
      // Idle past 30 minutes (measured from the last activity, a moment ago): both go.
      assert.equal(await purger.runOnce(Date.now() + 31 * MINUTE), 2);
      assert.equal(await sessionCount(t), 0);
      const gone = await t.app.inject({ method: 'GET', url: '/console', headers: { host: HOST, cookie: cookies[1] } });
      assert.equal(gone.statusCode, 303, 'a purged session signs nobody in');
    });

    it('goes through a backlog in bounded batches', async (ctx) => {
      const t = await build(ctx);
      const staff = await t.store.db.selectFrom('staff_users').select('id').executeTakeFirstOrThrow();
      // Signed in first: signing in also drops its own account's expired sessions.
      await signIn(t, 'purge@example.com');
      const now = Date.now();
      // A backlog of 1,200 sessions nobody came back for (absolute expiry passed), and one live one.
      const rows = Array.from({ length: 1200 }, (_, i) => ({
        id_hash: `expired-${i}`,
        staff_id: staff.id,
        csrf_secret: 'x',
        address: null,
        created_at: now - 3 * 60 * MINUTE,
        last_seen_at: now - 3 * 60 * MINUTE,
        idle_expires_at: now - 150 * MINUTE,
        expires_at: now - 60 * MINUTE,
      }));
      for (let i = 0; i < rows.length; i += 200)
        await t.store.db
          .insertInto('console_sessions')
          .values(rows.slice(i, i + 200))
          .execute();
      const purger = consolePurger(t);
      assert.equal(await purger.runOnce(now, 2), 1000, 'two batches of 500, then it stops for this round');
      assert.equal(await purger.runOnce(now, 2), 200, 'the rest');
      assert.equal(await purger.runOnce(now, 2), 0);
      assert.equal(await sessionCount(t), 1, 'the live session is kept');
    });

    it('deletes business manager sessions past their idle expiry, as their own task, and keeps the live ones', async (ctx) => {
      const t = await build(ctx);
      const m = (await t.admin('POST', '/admin/v1/merchants', { name: 'Purged Ltd' })).body.data;
      const b = await member(t, m.merchantId, 'purged-user@example.com', 'viewer');
      const managerSessions = async () =>
        Number(
          (
            await t.store.db
              .selectFrom('manager_sessions')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      assert.equal(await managerSessions(), 1);
      const purger = purgerOf(t, 'expired business manager sessions');
      assert.equal(await purger.runOnce(Date.now()), 0, 'a live session is kept');
      assert.equal((await b.get('/manager')).statusCode, 200, 'and still signs in');
      // MANAGER_SESSION_IDLE_MINUTES is 30 by default.
      assert.equal(await purger.runOnce(Date.now() + 31 * MINUTE), 1);
      assert.equal(await managerSessions(), 0);
      assert.equal((await b.get('/manager')).statusCode, 303, 'a purged session signs nobody in');
    });
  });
}
