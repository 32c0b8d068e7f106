import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.ts';
import { installMerchantRateLimit, memoryBuckets, merchantBucketUse } from '../../src/http/rate-limit.ts';
import { RECENT_ERRORS_PER_MERCHANT, USAGE_DAYS } from '../../src/domain/usage.ts';
import { Purger, purgeTasks } from '../../src/jobs/purger.ts';
import { merchantUsage } from '../../src/services/usage.service.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';
import { ADMIN_KEY, DIALECTS, buildTestApp, freshStore, loadCatalogue, newMerchant, testConfig, type TestApp } from '../helpers.ts';

/**
 * Issue 20, page 5: the per-merchant usage counters behind the business manager's Usage page —
 * counted per request in memory, added to the database by a flush (never a write per request),
 * additive across processes, bounded, purged after 30 days, on UTC days.
 */

const DAY = 86_400_000;
const STOCKS = '/openapi/v1/product/stocks?skus=SKU-A';

/** A clock the tests move by hand (usage days, rate-limit buckets and token checks all read it). */
function fakeClock(iso: string) {
  const clock = { ms: Date.parse(iso), now: () => clock.ms };
  return clock;
}

const usageRows = async (store: Store) => ({
  daily: await store.db.selectFrom('merchant_usage_daily').selectAll().execute(),
  recent: await store.db.selectFrom('merchant_recent_errors').selectAll().orderBy('id').execute(),
});

const get = (t: TestApp, token: string, url: string, requestId?: string) =>
  t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}`, ...(requestId ? { 'x-request-id': requestId } : {}) } });

for (const dialect of DIALECTS) {
  describe(`usage counters (${dialect})`, () => {
    it('counts exactly, by status class and error code, only after a flush, and per merchant', async (ctx) => {
      const clock = fakeClock('2026-11-20T12:00:00Z');
      const t = await buildTestApp(ctx, dialect, { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '6' }, { now: clock.now });
      await loadCatalogue(t);
      const a = await newMerchant(t, 'Counted');
      const b = await newMerchant(t, 'Other');
      const readOnly = await newMerchant(t, 'Read only', { scopes: ['catalog:read'] });
      const codes: number[] = [];
      for (let i = 0; i < 3; i++) assert.equal((await get(t, a.token, STOCKS)).statusCode, 200);
      const missing = await get(t, a.token, '/openapi/v2/order/orders/999999999');
      assert.equal(missing.statusCode, 404);
      codes.push(missing.json().code);
      const invalid = await t.app.inject({
        method: 'POST',
        url: '/openapi/v2/order/orders',
        headers: { authorization: `Bearer ${a.token}` },
        payload: { orderAddress: { recipient: 'BODY-MARKER-7f3a' } },
      });
      assert.equal(invalid.statusCode, 400);
      codes.push(invalid.json().code);
      assert.equal((await get(t, a.token, STOCKS)).statusCode, 200); // the burst's 6th
      for (let i = 0; i < 2; i++) {
        const limited = await get(t, a.token, STOCKS);
        assert.equal(limited.statusCode, 429);
        assert.equal(limited.json().code, 42900);
      }
      assert.equal((await get(t, 'stk_test_not-a-token', STOCKS)).statusCode, 401, 'a refused token belongs to nobody');
      const refused = await get(t, readOnly.token, STOCKS);
      assert.equal(refused.statusCode, 403);
      assert.equal((await get(t, b.token, STOCKS)).statusCode, 200);

      const before = await usageRows(t.store);
      assert.deepEqual(before, { daily: [], recent: [] }, 'no write per request: nothing is stored before the flush');
      await t.app.usageRecorder!.flush();

      const usage = await merchantUsage(forMerchant(t.store.db, Number(a.merchantId)), 'sandbox', clock.ms);
      assert.equal(usage.days.length, USAGE_DAYS);
      assert.equal(usage.days.at(-1)!.day, '2026-11-20');
      assert.deepEqual(usage.days.at(-1)!.byClass, { 2: 4, 3: 0, 4: 4, 5: 0 });
      assert.equal(usage.days.at(-1)!.total, 8);
      assert.ok(
        usage.days.slice(0, -1).every((d) => d.total === 0),
        'earlier days are zero-filled',
      );
      const expected = new Map<number, number>([[42900, 2]]);
      for (const code of codes) expected.set(code, (expected.get(code) ?? 0) + 1);
      assert.deepEqual(new Map(usage.byCode.map((c) => [c.code, c.count])), expected);
      assert.ok(usage.byCode.every((c) => c.lastDay === '2026-11-20'));
      assert.deepEqual(
        usage.recent.map((r) => [r.status, r.code, r.method, r.route]),
        [
          [429, 42900, 'GET', '/openapi/v1/product/stocks'],
          [429, 42900, 'GET', '/openapi/v1/product/stocks'],
          [400, codes[1], 'POST', '/openapi/v2/order/orders'],
          [404, codes[0], 'GET', '/openapi/v2/order/orders/:id'],
        ],
        'newest first, route patterns',
      );
      assert.equal(usage.recent[3].requestId, missing.headers['x-request-id']);
      assert.doesNotMatch(JSON.stringify(await usageRows(t.store)), /BODY-MARKER|skus=/, 'no bodies, no query strings');
      assert.equal(usage.recent[0].at, clock.ms);

      const other = await merchantUsage(forMerchant(t.store.db, Number(b.merchantId)), 'sandbox', clock.ms);
      assert.deepEqual(other.days.at(-1)!.byClass, { 2: 1, 3: 0, 4: 0, 5: 0 });
      assert.deepEqual(other.recent, []);
      const scoped = await merchantUsage(forMerchant(t.store.db, Number(readOnly.merchantId)), 'sandbox', clock.ms);
      assert.deepEqual(scoped.byCode, [{ code: refused.json().code, count: 1, lastDay: '2026-11-20' }], 'a refused scope counts for its merchant');
      const production = await merchantUsage(forMerchant(t.store.db, Number(a.merchantId)), 'production', clock.ms);
      assert.equal(production.days.at(-1)!.total, 0, 'counted under the environment that served it');

      // A second flush with nothing new adds nothing.
      await t.app.usageRecorder!.flush();
      const again = await merchantUsage(forMerchant(t.store.db, Number(a.merchantId)), 'sandbox', clock.ms);
      assert.deepEqual(again.days, usage.days);
    });

    it('keeps only the newest 4xx per merchant, with route patterns and no query strings or bodies', async (ctx) => {
      const clock = fakeClock('2026-11-21T08:00:00Z');
      const t = await buildTestApp(ctx, dialect, {}, { now: clock.now });
      const m = await newMerchant(t, 'Noisy');
      const quiet = await newMerchant(t, 'Quiet');
      await get(t, quiet.token, '/openapi/v2/order/orders/1', 'quiet-1');
      // 60 + 60 errors over two flushes: the table keeps the newest 100 of the merchant.
      for (let round = 0; round < 2; round++) {
        for (let i = 0; i < 60; i++) {
          const r = await get(t, m.token, `/openapi/v2/order/orders/${900000 + i}?secret=QUERY-MARKER-${round}-${i}`, `err-${round}-${i}`);
          assert.equal(r.statusCode, 404);
        }
        await t.app.usageRecorder!.flush();
      }
      const { recent } = await usageRows(t.store);
      const mine = recent.filter((r) => String(r.merchant_id) === String(m.merchantId));
      assert.equal(mine.length, RECENT_ERRORS_PER_MERCHANT);
      assert.equal(mine[0].request_id, 'err-0-20', 'the oldest 20 were trimmed');
      assert.equal(mine.at(-1)!.request_id, 'err-1-59');
      assert.deepEqual(
        recent.filter((r) => String(r.merchant_id) === String(quiet.merchantId)).map((r) => r.request_id),
        ['quiet-1'],
        'another merchant’s list is not trimmed by this one’s',
      );
      const stored = JSON.stringify(recent);
      assert.doesNotMatch(stored, /QUERY-MARKER|\?|secret/);
      assert.ok(mine.every((r) => r.route === '/openapi/v2/order/orders/:id'));
      const usage = await merchantUsage(forMerchant(t.store.db, Number(m.merchantId)), 'sandbox', clock.ms);
      assert.equal(usage.recent.length, RECENT_ERRORS_PER_MERCHANT);
      assert.equal(usage.days.at(-1)!.byClass[4], 120, 'counts are not trimmed with the list');
    });

    it('two app instances on one database add up, and closing flushes', async (ctx) => {
      const db = await freshStore(dialect);
      ctx.after(() => db.drop());
      const config = testConfig({ USAGE_FLUSH_MS: '600000' });
      const clock = fakeClock('2026-11-23T08:00:00Z');
      // Two connections (two pools) to one database, as two processes would have.
      const second = await openStore(db.url, db.schema ? { schema: db.schema } : {});
      const one = await buildApp({ config, store: db.store, adminApiKey: ADMIN_KEY }, { logger: false, now: clock.now });
      const two = await buildApp({ config, store: second, adminApiKey: ADMIN_KEY }, { logger: false, now: clock.now });
      let closed = false;
      ctx.after(async () => {
        if (!closed) await Promise.all([one.close(), two.close()]);
        await second.close();
      });
      const merchant = await one.inject({
        method: 'POST',
        url: '/admin/v1/merchants',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        payload: { name: 'Twice' },
      });
      const merchantId = merchant.json().data.merchantId;
      const token = (
        await one.inject({ method: 'POST', url: `/admin/v1/merchants/${merchantId}/tokens`, headers: { authorization: `Bearer ${ADMIN_KEY}` }, payload: {} })
      ).json().data.accessToken;
      const call = (app: typeof one, url: string) => app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
      for (let i = 0; i < 5; i++) await call(one, STOCKS);
      for (let i = 0; i < 7; i++) await call(two, STOCKS);
      for (let i = 0; i < 3; i++) await call(two, '/openapi/v2/order/orders/424242');
      // Both flush the same keys (merchant, day, 2xx): the second adds to the first's row.
      await one.usageRecorder!.flush();
      for (let i = 0; i < 2; i++) await call(one, '/openapi/v2/order/orders/424242');
      // Nothing flushed by hand now: close() must write what is left (graceful shutdown). One after
      // the other: two SQLite connections in one process would block each other's event loop (two
      // processes wait for the lock instead).
      await one.close();
      await two.close();
      closed = true;
      const usage = await merchantUsage(forMerchant(db.store.db, Number(merchantId)), 'sandbox', clock.ms);
      assert.deepEqual(usage.days.at(-1)!.byClass, { 2: 12, 3: 0, 4: 5, 5: 0 });
      assert.equal(usage.byCode.length, 1);
      assert.equal(usage.byCode[0].count, 5);
      assert.equal(usage.recent.length, 5);
    });

    it('counts on UTC days, shows 30 of them and purges older ones', async (ctx) => {
      const clock = fakeClock('2026-03-01T23:59:59.999Z');
      const t = await buildTestApp(ctx, dialect, {}, { now: clock.now });
      const m = await newMerchant(t, 'Night owl');
      await get(t, m.token, STOCKS);
      await get(t, m.token, '/openapi/v2/order/orders/31337');
      clock.ms += 1; // 2026-03-02T00:00:00.000Z
      await get(t, m.token, STOCKS);
      await get(t, m.token, STOCKS);
      await t.app.usageRecorder!.flush();
      const id = Number(m.merchantId);
      const usage = await merchantUsage(forMerchant(t.store.db, id), 'sandbox', clock.ms);
      assert.deepEqual(
        usage.days.slice(-2).map((d) => [d.day, d.byClass[2], d.byClass[4]]),
        [
          ['2026-03-01', 1, 1],
          ['2026-03-02', 2, 0],
        ],
      );
      assert.equal(usage.days[0].day, '2026-02-01', '30 days: 2026-02-01 … 2026-03-02');

      const purger = new Purger(purgeTasks(t.store, t.config).find((task) => task.what === 'old usage counters')!, {
        error: () => undefined,
        info: () => undefined,
      });
      // On 2026-03-30 the first day shown is 2026-03-01: nothing is purged yet.
      const day30 = Date.parse('2026-03-30T12:00:00Z');
      assert.equal(await purger.runOnce(day30), 0);
      const late = await merchantUsage(forMerchant(t.store.db, id), 'sandbox', day30);
      assert.deepEqual([late.days[0].day, late.days[0].total, late.days[1].total], ['2026-03-01', 2, 2]);
      assert.equal(late.recent.length, 1);
      // On 2026-03-31, 2026-03-01 has left the window: its rows (counts and its 404) go.
      const day31 = Date.parse('2026-03-31T00:00:00Z');
      const purged = await purger.runOnce(day31);
      assert.equal(purged, 3, 'two counter rows (2xx, 404) and one recent error of 2026-03-01');
      const rows = await usageRows(t.store);
      assert.deepEqual(
        rows.daily.map((r) => [Number(r.day), Number(r.request_count)]),
        [[Math.floor(Date.parse('2026-03-02T00:00:00Z') / DAY), 2]],
      );
      assert.deepEqual(rows.recent, []);
      assert.equal(await purger.runOnce(day31), 0);
    });

    it('a failed flush loses nothing and counts nothing twice', async (ctx) => {
      const clock = fakeClock('2026-11-22T08:00:00Z');
      const t = await buildTestApp(ctx, dialect, {}, { now: clock.now });
      const m = await newMerchant(t, 'Patient');
      for (let i = 0; i < 3; i++) await get(t, m.token, STOCKS);
      await get(t, m.token, '/openapi/v2/order/orders/77');
      // The counter table refuses writes for a while (the recent-error insert of the same
      // transaction would have worked: it must be rolled back with it).
      if (dialect === 'sqlite') {
        await sql`create trigger refuse_usage before insert on merchant_usage_daily begin select raise(abort, 'refused by the test'); end`.execute(t.store.db);
      } else {
        await sql`create function refuse_usage() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`.execute(
          t.store.db,
        );
        await sql`create trigger refuse_usage before insert on merchant_usage_daily for each row execute function refuse_usage()`.execute(t.store.db);
      }
      await t.app.usageRecorder!.flush();
      assert.deepEqual(await usageRows(t.store), { daily: [], recent: [] });
      await get(t, m.token, STOCKS);
      await sql`drop trigger refuse_usage${sql.raw(dialect === 'postgres' ? ' on merchant_usage_daily' : '')}`.execute(t.store.db);
      await t.app.usageRecorder!.flush();
      const usage = await merchantUsage(forMerchant(t.store.db, Number(m.merchantId)), 'sandbox', clock.ms);
      assert.deepEqual(usage.days.at(-1)!.byClass, { 2: 4, 3: 0, 4: 1, 5: 0 });
      assert.equal(usage.recent.length, 1);
    });

    it('USAGE_FLUSH_MS=0 turns counting off', async (ctx) => {
      const t = await buildTestApp(ctx, dialect, { USAGE_FLUSH_MS: '0' });
      const m = await newMerchant(t, 'Uncounted');
      assert.equal((await get(t, m.token, STOCKS)).statusCode, 200);
      assert.equal(t.app.usageRecorder, null);
      await t.app.close();
      assert.deepEqual(await usageRows(t.store), { daily: [], recent: [] });
    });
  });
}

describe('the current rate-limit budget', () => {
  it('reads what the merchant limit left, without taking from it', async (ctx) => {
    const clock = fakeClock('2026-11-20T12:00:00Z');
    const config = testConfig({ RATE_LIMIT_PER_SECOND: '2', RATE_LIMIT_BURST: '5' });
    const buckets = memoryBuckets(clock.now);
    const merchant = { merchantId: 7, clientId: 'client-7' };
    // The real limiter, on a bare app whose requests are this merchant's.
    const app = Fastify({ logger: false });
    ctx.after(() => app.close());
    app.decorateRequest('principal', null);
    app.addHook('onRequest', async (request) => {
      request.principal = { ...merchant, scopes: new Set() } as never;
    });
    await installMerchantRateLimit(app, config, buckets);
    app.get('/x', async () => 'ok');
    const requests = async (m = merchant) => (await merchantBucketUse(buckets, config, m))!.requests;
    assert.deepEqual(await requests(), { available: 5, capacity: 5, perSecond: 2 });
    for (let i = 0; i < 3; i++) assert.equal((await app.inject('/x')).statusCode, 200);
    assert.equal((await requests()).available, 2);
    assert.equal((await requests()).available, 2, 'looking takes nothing');
    assert.equal((await requests({ merchantId: 8, clientId: 'client-8' })).available, 5, 'another merchant’s bucket');
    clock.ms += 1000; // two tokens a second come back
    assert.equal((await requests()).available, 4);
  });
});
