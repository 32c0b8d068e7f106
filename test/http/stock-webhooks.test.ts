import { describe, it, before, type TestContext } from 'node:test';
import { ALL_IMPORT_RIGHTS } from '../../src/domain/import-format.ts';
import { systemActor } from '../../src/domain/audit.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { RefundWorker } from '../../src/jobs/refund.worker.ts';
import { WebhookWorker, type WebhookWorkerOptions } from '../../src/jobs/webhook.worker.ts';
import { importFiles } from '../../src/services/import.service.ts';
import type { WebhookRequest } from '../../src/jobs/webhook-sender.ts';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, tableDigests, useApp, type TestApp } from '../helpers.ts';
import { checkWebhookBody } from '../contract.ts';
import { fakeSender, startReceiver } from './webhook-receivers.ts';

const FEED = '/openapi/v1/product/stocks/changes';
const HOOKS = '/openapi/v1/webhooks';
const WAREHOUSES = ['G007', 'G006', 'US01'];
const SKUS = ['A', 'B', 'C'];

interface StockChange {
  sku: string;
  warehouseCode: string;
  qty: number;
  updateDate: string;
}
interface StockChanged {
  changes: StockChange[];
  cursor: string;
}

/**
 * Receivers behind one scripted sender, by URL path: each applies every stock.changed it accepts,
 * in the order received (de-duplicated by webhook-id), as a merchant's storefront would.
 */
function stockReceivers() {
  const clients = new Map<string, { state: Map<string, number>; applied: StockChanged[]; ids: Set<string>; attempts: number; down: boolean }>();
  const client = (path: string, state = new Map<string, number>()) => {
    const c = { state, applied: [] as StockChanged[], ids: new Set<string>(), attempts: 0, down: false };
    clients.set(path, c);
    return c;
  };
  const sender = fakeSender((r: WebhookRequest) => {
    const body = JSON.parse(r.body);
    const c = clients.get(r.url.pathname);
    if (!c || body.type !== 'stock.changed') return 200;
    c.attempts++;
    if (c.down) return 503;
    if (!c.ids.has(r.headers['webhook-id'])) {
      c.ids.add(r.headers['webhook-id']);
      c.applied.push(body.data);
      for (const change of body.data.changes as StockChange[]) c.state.set(`${change.sku}/${change.warehouseCode}`, change.qty);
    }
    return 200;
  });
  return { sender, client };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`stock.changed webhooks (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    // Big fixtures (imports, 10,000-SKU lists) can stall a loaded machine's event loop: no overload shedding here.
    const t = useApp(dialect, { OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' });
    let shop: { token: string; merchantId: string };

    const worker = (ctx: TestContext, options: Partial<WebhookWorkerOptions> & { intervalMs?: number } = {}) => {
      const { intervalMs = 5000, ...rest } = options;
      const w = new WebhookWorker({ store: t.store, config: { env: 'sandbox', stockWebhookIntervalMs: intervalMs }, random: () => 1, ...rest });
      ctx.after(() => w.stop());
      return w;
    };
    /** Registers an endpoint for this test only (deleted after it, so later tests' rounds do not fan out to it). */
    const register = async (ctx: TestContext, body: Record<string, unknown>, token = shop.token) => {
      const r = await t.merchant(token, 'POST', HOOKS, { events: ['stock.changed'], ...body });
      assert.equal(r.status, 200, r.raw);
      ctx.after(() => t.merchant(token, 'DELETE', `${HOOKS}/${r.body.data.id}`));
      return r.body.data as { id: string; secret: string; skus: string[] | null };
    };
    const log = async (endpointId: string, token = shop.token) => {
      const r = await t.merchant(token, 'GET', `${HOOKS}/${endpointId}/deliveries?pageSize=250`);
      assert.equal(r.status, 200, r.raw);
      return (r.body.data.list as any[]).reverse();
    };
    const head = async () => (await t.merchant(shop.token, 'GET', `${FEED}?cursor=now`)).body.data.nextCursor as string;
    const setStock = async (items: { sku: string; warehouseCode: string; qty: number }[]) =>
      assert.equal((await t.admin('PUT', '/admin/v1/stocks', { items })).status, 200);
    /** Every stock row of the catalogue, as GET /v1/product/stocks shows it. */
    const stocks = async (skus = SKUS) => {
      const r = await t.merchant(shop.token, 'GET', `/openapi/v1/product/stocks?skus=${skus.join(',')}`);
      assert.equal(r.status, 200, r.raw);
      return new Map<string, number>(
        (r.body.data.list as any[]).flatMap((rec) => rec.warehouseStockList.map((w: any) => [`${rec.sku}/${w.warehouseCode}`, w.qty] as [string, number])),
      );
    };
    const assertSynced = async (state: Map<string, number>, skus = SKUS) => {
      const truth = await stocks(skus);
      assert.ok(truth.size > 0);
      for (const [key, qty] of truth) assert.equal(state.get(key), qty, `${key}: the client holds ${state.get(key)}, /v1/product/stocks says ${qty}`);
    };
    /** Baseline from the change feed: the state and the cursor it ends at. */
    const baseline = async () => {
      const state = new Map<string, number>();
      let cursor: string | null = null;
      for (;;) {
        const r = await t.merchant(shop.token, 'GET', `${FEED}?limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
        for (const c of r.body.data.changes) state.set(`${c.sku}/${c.warehouseCode}`, c.qty);
        cursor = r.body.data.nextCursor;
        if (!r.body.data.hasMore) return { state, cursor: cursor! };
      }
    };
    /** Runs worker rounds until the receiver has applied a delivery whose cursor is `target` (bounded). */
    const until = async (w: WebhookWorker, done: () => boolean | Promise<boolean>, rounds = 200) => {
      for (let i = 0; i < rounds; i++) {
        if (await done()) return;
        await w.runOnce();
      }
      assert.fail(`not done after ${rounds} worker rounds`);
    };

    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      await setStock(WAREHOUSES.flatMap((warehouseCode) => SKUS.map((sku) => ({ sku, warehouseCode, qty: 100_000 }))));
      const m = await newMerchant(t, 'Storefront');
      shop = { token: m.token, merchantId: m.merchantId };
    });

    it('registers with a SKU list, shows it, and refuses bad subscriptions with field errors, writing nothing', async (ctx) => {
      const e = await register(ctx, {
        url: 'http://127.0.0.1:9/list',
        events: ['stock.changed', 'refund.failed'],
        skus: ['B', 'A', 'B', 'Å'.normalize('NFD')],
      });
      assert.deepEqual(e.skus, ['B', 'A', 'Å'.normalize('NFC')], 'repeats dropped, NFC, in request order');
      const listed = (await t.merchant(shop.token, 'GET', HOOKS)).body.data.list.find((x: any) => x.id === e.id);
      assert.deepEqual([listed.events, listed.skus], [['refund.failed', 'stock.changed'], e.skus]);
      const all = await register(ctx, { url: 'http://127.0.0.1:9/all' });
      assert.equal(all.skus, null, 'no list: every SKU');

      const before = await tableDigests(t.store);
      const cases: [unknown, string][] = [
        [{ url: 'http://127.0.0.1:9/a', events: ['stock.changed'], skus: [] }, 'skus'],
        [{ url: 'http://127.0.0.1:9/a', events: ['stock.changed'], skus: Array.from({ length: 10_001 }, (_, i) => `S${i}`) }, 'skus'],
        [{ url: 'http://127.0.0.1:9/a', events: ['stock.changed'], skus: ['A,B'] }, 'skus[0]'],
        [{ url: 'http://127.0.0.1:9/a', events: ['stock.changed'], skus: ['A', 'x y'] }, 'skus[1]'],
        [{ url: 'http://127.0.0.1:9/a', events: ['stock.changed'], skus: ['A', 7] }, 'skus[1]'],
        [{ url: 'http://127.0.0.1:9/a', events: ['stock.changed'], skus: ['x'.repeat(65)] }, 'skus[0]'],
        [{ url: 'http://127.0.0.1:9/a', events: ['refund.failed'], skus: ['A'] }, 'skus'],
        [{ url: 'http://127.0.0.1:9/a', events: ['refund.failed'], cursor: 'now' }, 'cursor'],
        [{ url: 'http://127.0.0.1:9/a', events: ['stock.changed'], cursor: 'sc1_garbage' }, 'cursor'],
        [{ url: 'http://127.0.0.1:9/a', events: ['stock.changed'], cursor: `sc1_${Buffer.from('999999999.999999999').toString('base64url')}` }, 'cursor'],
        [{ url: 'http://10.0.0.1/a', events: ['stock.changed'] }, 'url'],
      ];
      for (const [body, field] of cases) {
        const r = await t.merchant(shop.token, 'POST', HOOKS, body);
        assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 100)} → ${r.raw.slice(0, 300)}`);
        assert.equal(r.body.code, 40000);
        assert.equal(r.body.errors[0].field, field, r.raw.slice(0, 300));
        const put = await t.app.inject({
          method: 'PUT',
          url: `${HOOKS}/${all.id}`,
          payload: body as object,
          headers: { authorization: `Bearer ${shop.token}` },
        });
        assert.equal(put.statusCode, 400, put.body.slice(0, 300));
        assert.equal(put.json().errors[0].field, field);
      }
      assert.deepEqual(await tableDigests(t.store), before, 'nothing written');
      // A list of 10,000 is the limit, not beyond it.
      const big = await register(ctx, { url: 'http://127.0.0.1:9/big', skus: Array.from({ length: 10_000 }, (_, i) => `S${i}`) });
      assert.equal(big.skus!.length, 10_000);
    });

    it('writes nothing for stock.changed in the transactions that change stock: the worker fans out', async (ctx) => {
      for (let i = 0; i < 3; i++) await register(ctx, { url: `http://127.0.0.1:9/quiet${i}` });
      const before = await webhookRowCounts(t.store);
      assert.equal((await t.merchant(shop.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 }]))).status, 200);
      assert.equal((await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'A', warehouseCode: 'G007', delta: -1 }] })).status, 200);
      const after = await webhookRowCounts(t.store);
      assert.deepEqual([after.webhook_events, after.webhook_deliveries], [before.webhook_events, before.webhook_deliveries]);
      const batches = async () =>
        Number(
          (
            await t.store.db
              .selectFrom('stock_batches')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const batchesBefore = await batches();
      await worker(ctx).fanOutStock();
      const counts = await webhookRowCounts(t.store);
      assert.equal(counts.webhook_deliveries, before.webhook_deliveries + 3, 'one delivery per endpoint, from the worker');
      assert.equal(await batches(), batchesBefore + 1, 'endpoints at the same place in the feed share one stored body');
      assert.equal(counts.webhook_events, before.webhook_events + 1, 'and, for one merchant, one event (one webhook-id)');
    });

    it('coalesces: at most one delivery per interval, each (sku, warehouse) once with its latest quantity, signed, with the feed cursor', async (ctx) => {
      const receiver = await startReceiver();
      ctx.after(() => receiver.close());
      const e = await register(ctx, { url: receiver.url });
      const t0 = Date.now();
      let now = t0;
      const w = worker(ctx, { now: () => now });
      const c0 = await stocks();
      for (let i = 0; i < 5; i++)
        assert.equal((await t.merchant(shop.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 }]))).status, 200);
      await setStock([{ sku: 'A', warehouseCode: 'US01', qty: 77 }]);
      const cursor1 = await head();
      assert.deepEqual(await w.runOnce(), { succeeded: 1, failed: 0 });
      assert.equal(receiver.received.length, 1);
      const first = receiver.received[0];
      const body = new Webhook(e.secret).verify(first.body, first.headers) as { type: string; timestamp: string; data: StockChanged };
      assert.equal(checkWebhookBody(first.body), null, 'the body matches the documented stock.changed');
      assert.equal(body.type, 'stock.changed');
      assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const truth = await stocks();
      const sold = body.data.changes[0].warehouseCode;
      const sold0 = c0.get(`C/${sold}`)!;
      assert.equal(truth.get(`C/${sold}`), sold0 - 5);
      assert.deepEqual(
        body.data.changes.map((c) => ({ ...c, updateDate: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(c.updateDate) })),
        [
          { sku: 'C', warehouseCode: sold, qty: sold0 - 5, updateDate: true },
          { sku: 'A', warehouseCode: 'US01', qty: 77, updateDate: true },
        ],
        'five sales of C are one entry with the latest quantity, in the order of each pair’s latest change',
      );
      assert.equal(body.data.cursor, cursor1, 'the cursor is the change feed’s, after the last change included');
      assert.deepEqual(
        (await t.merchant(shop.token, 'GET', `${FEED}?cursor=${body.data.cursor}`)).body.data.changes,
        [],
        'switching to the feed: nothing repeated',
      );

      // Within the interval: changes wait, coalesced.
      for (let i = 0; i < 3; i++) await t.merchant(shop.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 2 }]));
      const polled = (await t.merchant(shop.token, 'GET', `${FEED}?cursor=${body.data.cursor}`)).body.data;
      now = t0 + 1000;
      assert.deepEqual(await w.runOnce(), { succeeded: 0, failed: 0 }, 'not before the interval has passed');
      now = t0 + 4999;
      assert.deepEqual(await w.runOnce(), { succeeded: 0, failed: 0 });
      // Due at the interval, rounded up to a quarter of it (so endpoints share rounds and batches).
      now = t0 + 5000 + 1250;
      assert.deepEqual(await w.runOnce(), { succeeded: 1, failed: 0 });
      const second = JSON.parse(receiver.received[1].body).data as StockChanged;
      assert.deepEqual(
        second.changes.map((c) => [c.sku, c.warehouseCode, c.qty]),
        [['C', sold, sold0 - 11]],
      );
      assert.equal(second.cursor, polled.nextCursor, 'push and poll agree on where the same changes end');
      const [d1, d2] = await log(e.id);
      assert.deepEqual(
        [d1.type, d1.orderId, d1.status, d1.cursorTo, d2.cursorFrom, d2.cursorTo],
        ['stock.changed', null, 'succeeded', cursor1, cursor1, second.cursor],
      );
      assert.match(d1.cursorFrom, /^sc1_/);
    });

    it('follows only the listed SKUs; PUT replaces the list (honouring Idempotency-Key) for every change not yet delivered', async (ctx) => {
      const { sender, client } = stockReceivers();
      const onlyA = client('/only');
      const every = client('/every');
      const e = await register(ctx, { url: 'http://127.0.0.1:9/only', skus: ['A'] });
      await register(ctx, { url: 'http://127.0.0.1:9/every' });
      const w = worker(ctx, { sender, intervalMs: 0 });
      await setStock([
        { sku: 'A', warehouseCode: 'G007', qty: 11 },
        { sku: 'B', warehouseCode: 'G006', qty: 12 },
      ]);
      await w.runOnce();
      assert.deepEqual([...onlyA.state], [['A/G007', 11]]);
      assert.deepEqual(
        [...every.state],
        [
          ['A/G007', 11],
          ['B/G006', 12],
        ],
      );

      // B changes before the PUT but is not fanned out yet: the new list applies to it.
      await setStock([{ sku: 'B', warehouseCode: 'G006', qty: 13 }]);
      const put = (body: unknown, key: string) =>
        t.app.inject({
          method: 'PUT',
          url: `${HOOKS}/${e.id}`,
          payload: body as object,
          headers: { authorization: `Bearer ${shop.token}`, 'idempotency-key': key },
        });
      const replaced = await put({ url: 'http://127.0.0.1:9/only', events: ['stock.changed'], skus: ['B'] }, 'swap-1');
      assert.equal(replaced.statusCode, 200, replaced.body);
      assert.deepEqual(replaced.json().data.skus, ['B']);
      assert.equal(replaced.json().data.id, e.id);
      const replay = await put({ url: 'http://127.0.0.1:9/only', events: ['stock.changed'], skus: ['B'] }, 'swap-1');
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, replaced.body);
      const conflict = await put({ url: 'http://127.0.0.1:9/only', events: ['stock.changed'], skus: ['C'] }, 'swap-1');
      assert.equal(conflict.statusCode, 409);
      assert.equal(conflict.json().code, 40900);
      assert.deepEqual((await t.merchant(shop.token, 'GET', HOOKS)).body.data.list.find((x: any) => x.id === e.id).skus, ['B']);

      await setStock([
        { sku: 'A', warehouseCode: 'G007', qty: 14 },
        { sku: 'B', warehouseCode: 'US01', qty: 15 },
      ]);
      await w.runOnce();
      assert.deepEqual(
        [...onlyA.state],
        [
          ['A/G007', 11],
          ['B/G006', 13],
          ['B/US01', 15],
        ],
        'A no longer followed; B from before the PUT included',
      );
      assert.equal(every.state.get('A/G007'), 14);

      // Dropping stock.changed stops the lane; adding it back starts at that moment.
      assert.equal((await put({ url: 'http://127.0.0.1:9/only', events: ['refund.failed'] }, 'swap-2')).statusCode, 200);
      await setStock([{ sku: 'B', warehouseCode: 'G006', qty: 16 }]);
      await w.runOnce();
      assert.equal(onlyA.state.get('B/G006'), 13);
      const back = await put({ url: 'http://127.0.0.1:9/only', events: ['stock.changed'] }, 'swap-3');
      assert.equal(back.json().data.skus, null);
      await setStock([{ sku: 'C', warehouseCode: 'G006', qty: 17 }]);
      await w.runOnce();
      assert.equal(onlyA.state.get('B/G006'), 13, 'the change made while unsubscribed is not sent');
      assert.equal(onlyA.state.get('C/G006'), 17);
    });

    it('splits more than 500 changes into deliveries in cursor order; a failing one holds the later ones back', async (ctx) => {
      const { sender, client } = stockReceivers();
      const c = client('/split');
      const e = await register(ctx, { url: 'http://127.0.0.1:9/split' });
      const skus = Array.from({ length: 1200 }, (_, i) => `SPLIT-${i}`);
      await loadCatalogue(t, {
        products: skus.map((sku) => ({ sku, name: sku, price: 1, weightGrams: 1 })),
        stocks: skus.map((sku, i) => ({ sku, warehouseCode: 'G006', qty: i + 1 })),
      });
      c.down = true;
      const t0 = Date.now();
      let now = t0;
      const w = worker(ctx, { sender, now: () => now });
      assert.deepEqual(await w.runOnce(), { succeeded: 0, failed: 1 });
      assert.equal(c.attempts, 1, 'only the first was tried: the others wait behind it');
      const pending = await log(e.id);
      assert.deepEqual(
        pending.map((d) => [d.status, d.attempts]),
        [
          ['pending', 1],
          ['pending', 0],
          ['pending', 0],
        ],
      );
      now = t0 + 5000;
      assert.deepEqual(await w.runOnce(), { succeeded: 0, failed: 0 }, 'the retry is not due yet, and nothing overtakes it');
      c.down = false;
      now = Date.parse(pending[0].nextAttemptAt) + 1000;
      assert.deepEqual(await w.runOnce(), { succeeded: 3, failed: 0 }, 'then all three, one after another');
      assert.deepEqual(
        c.applied.map((d) => d.changes.length),
        [500, 500, 200],
      );
      assert.deepEqual(
        c.applied.flatMap((d) => d.changes.map((x) => x.sku)),
        skus,
        'in feed order',
      );
      const done = await log(e.id);
      assert.deepEqual(
        done.map((d) => d.cursorTo),
        c.applied.map((d) => d.cursor),
      );
      for (let i = 1; i < done.length; i++) assert.equal(done[i].cursorFrom, done[i - 1].cursorTo, 'consecutive ranges');
      await assertSynced(c.state, skus.slice(0, 30));
      assert.deepEqual(sender.problems, []);
    });

    it('a receiver that fails for a while then recovers misses nothing; its changes wait in the feed and come coalesced', async (ctx) => {
      const { sender, client } = stockReceivers();
      const base = await baseline();
      const c = client('/flaky', base.state);
      const e = await register(ctx, { url: 'http://127.0.0.1:9/flaky', cursor: base.cursor });
      const t0 = Date.now();
      let now = t0;
      const w = worker(ctx, { sender, now: () => now });
      c.down = true;
      await t.merchant(shop.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'B', quantity: 1 }]));
      await w.runOnce();
      // Down for an hour of retries, while stock keeps changing.
      for (let i = 0; i < 6; i++) {
        await t.merchant(shop.token, 'POST', '/openapi/v1/order/orders', order([{ sku: SKUS[i % 3], quantity: 1 }]));
        await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'A', warehouseCode: 'US01', delta: i + 1 }] });
        now += 10 * 60_000;
        await w.runOnce();
      }
      const waiting = await log(e.id);
      assert.equal(waiting.length, 1, 'no backlog of deliveries while the lane is held: the changes wait in the feed');
      assert.ok(waiting[0].attempts > 1);
      assert.ok(c.attempts > 1);
      c.down = false;
      now = Date.parse(waiting[0].nextAttemptAt) + 1000;
      await until(w, async () => c.applied.at(-1)?.cursor === (await head()));
      assert.equal((await log(e.id)).length, 2, 'everything since in one coalesced delivery');
      await assertSynced(c.state);
    });

    it('a delivery that gave up after 24 h keeps holding the lane; re-enabling the endpoint sends it, then the rest', async (ctx) => {
      const { sender, client } = stockReceivers();
      const base = await baseline();
      const c = client('/gone', base.state);
      const e = await register(ctx, { url: 'http://127.0.0.1:9/gone', cursor: base.cursor });
      let now = Date.now();
      const w = worker(ctx, { sender, now: () => now });
      c.down = true;
      await setStock([{ sku: 'A', warehouseCode: 'G006', qty: 5 }]);
      for (let i = 0; i < 40; i++) {
        await w.runOnce();
        const [d] = await log(e.id);
        if (d.status !== 'pending') break;
        now = Date.parse(d.nextAttemptAt) + 999;
      }
      const [gaveUp] = await log(e.id);
      assert.equal(gaveUp.status, 'failed');
      assert.equal((await t.merchant(shop.token, 'GET', HOOKS)).body.data.list.find((x: any) => x.id === e.id).status, 'disabled');
      await setStock([
        { sku: 'A', warehouseCode: 'G006', qty: 6 },
        { sku: 'B', warehouseCode: 'G007', qty: 7 },
      ]);
      now += 60_000;
      await w.runOnce();
      assert.equal((await log(e.id)).length, 1, 'nothing is queued for a disabled endpoint; its position waits');
      c.down = false;
      assert.equal((await t.admin('PATCH', `/admin/v1/webhooks/${e.id}`, { status: 'active' })).status, 200);
      assert.equal((await log(e.id))[0].status, 'pending', 're-enabling makes the given-up delivery due again');
      now += 1000;
      await until(w, async () => c.applied.at(-1)?.cursor === (await head()));
      const done = await log(e.id);
      assert.deepEqual(
        done.map((d) => d.status),
        ['succeeded', 'succeeded'],
      );
      assert.equal(done[1].cursorFrom, done[0].cursorTo);
      assert.deepEqual(
        c.applied[0].changes.map((x) => [x.sku, x.warehouseCode, x.qty]),
        [['A', 'G006', 5]],
        'the old delivery first',
      );
      await assertSynced(c.state);
    });

    it('a client applying every delivery in order holds exactly the quantities of /v1/product/stocks while orders, refunds and adjustments run concurrently', async (ctx) => {
      const { sender, client } = stockReceivers();
      await setStock(WAREHOUSES.flatMap((warehouseCode) => SKUS.map((sku) => ({ sku, warehouseCode, qty: 100_000 }))));
      // Switch from polling to push: the feed up to a cursor, then deliveries after it.
      const base = await baseline();
      const c = client('/sync', base.state);
      const e = await register(ctx, { url: 'http://127.0.0.1:9/sync', cursor: base.cursor });
      const filtered = client('/sync-b');
      await register(ctx, { url: 'http://127.0.0.1:9/sync-b', skus: ['B'] });
      const w = worker(ctx, { sender, intervalMs: 20 });
      const refunds = new RefundWorker({ store: t.store, config: { refundReview: 'auto', refundAutoDelayMs: 0 } });
      const random = (n: number) => Math.floor(Math.random() * n);
      let writing = true;
      const orders: string[] = [];
      const ordering = async () => {
        for (let i = 0; i < 15; i++) {
          const r = await t.merchant(
            shop.token,
            'POST',
            '/openapi/v1/order/orders',
            order([
              { sku: SKUS[random(3)], quantity: 1 + random(3) },
              { sku: 'A', quantity: 1, warehouseCode: 'US01' },
            ]),
          );
          assert.equal(r.status, 200, r.raw);
          orders.push(r.body.data);
        }
      };
      const refunding = async () => {
        for (let i = 0; i < 15; i++) {
          const id = orders.shift();
          if (id) {
            const r = await t.merchant(shop.token, 'POST', `/openapi/v2/order/orders/${id}/refund`, {});
            assert.equal(r.status, 200, r.raw);
          }
          await refunds.runOnce();
          await sleep(random(5));
        }
      };
      const adjusting = async () => {
        for (let i = 0; i < 15; i++) {
          const items = [{ sku: SKUS[random(3)], warehouseCode: WAREHOUSES[random(3)], delta: random(2) ? 1 + random(9) : -(1 + random(9)) }];
          assert.equal((await t.admin('POST', '/admin/v1/stocks/adjust', { items })).status, 200);
          if (i % 5 === 0) await setStock([{ sku: SKUS[random(3)], warehouseCode: WAREHOUSES[random(3)], qty: 50_000 + random(1000) }]);
        }
      };
      const delivering = async () => {
        while (writing) {
          await w.runOnce();
          await sleep(random(10));
        }
      };
      const deliveries = delivering();
      await Promise.all([ordering(), refunding(), adjusting()]);
      writing = false;
      await deliveries;
      await refunds.runOnce();
      const final = await head();
      await until(w, async () => c.applied.at(-1)?.cursor === final);
      assert.ok(c.applied.length >= 1);
      await assertSynced(c.state);
      assert.deepEqual(
        [...filtered.state.keys()].filter((k) => !k.startsWith('B/')),
        [],
        'the filtered endpoint got only B',
      );
      for (const [key, qty] of await stocks(['B'])) if (filtered.state.has(key)) assert.equal(filtered.state.get(key), qty);
      const ranges = (await log(e.id)).filter((d) => d.status === 'succeeded');
      assert.equal(ranges[0].cursorFrom, base.cursor, 'the first delivery starts where polling stopped');
      for (let i = 1; i < ranges.length; i++)
        assert.equal(ranges[i].cursorFrom, ranges[i - 1].cursorTo, 'gap-free: each delivery starts where the previous ended');
      assert.deepEqual(sender.problems, [], 'bodies match the documented stock.changed');
    });

    // 100k rows through import and fan-out: minutes on a loaded machine, hence its own timeout.
    // 25,000 rows: three of the fan-out's 10,000-row windows and three rounds of 20 deliveries — every
    // mechanism a larger import meets (windows, rounds, a filtered endpoint gathering across windows).
    it('an import of 25,000 stock rows becomes ⌈25,000 / 500⌉ full deliveries, in order; a filtered endpoint gets one', { timeout: 900_000 }, async (ctx) => {
      const N = 25_000;
      const { sender, client } = stockReceivers();
      const all = client('/import-all');
      const few = client('/import-few');
      const e = await register(ctx, { url: 'http://127.0.0.1:9/import-all' });
      const f = await register(ctx, { url: 'http://127.0.0.1:9/import-few', skus: ['IMP-7', `IMP-${Math.floor((N - 1) / 3)}`] });
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-stock-hooks-'));
      ctx.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const write = (name: string, lines: string[]) => {
        fs.writeFileSync(path.join(dir, name), lines.join('\n'));
        return path.join(dir, name);
      };
      // Row i: SKU IMP-⌊i/3⌋ in the (i mod 3)-th warehouse, quantity 1 + i mod 1000.
      const key = (i: number) => `IMP-${Math.floor(i / 3)}/${WAREHOUSES[i % 3]}`;
      const qty = (i: number) => 1 + (i % 1000);
      const files = [
        write('products.csv', ['sku,name,price,weightGrams', ...Array.from({ length: Math.ceil(N / 3) }, (_, i) => `IMP-${i},Imported ${i},1.00,10`)]),
        write('stocks.csv', ['sku,warehouseCode,qty', ...Array.from({ length: N }, (_, i) => `${key(i).replace('/', ',')},${qty(i)}`)]),
      ];
      const imported = await importFiles(t.store, systemActor('test'), ALL_IMPORT_RIGHTS, files, Date.now());
      assert.equal(imported.ledgerRows, N);
      const w = worker(ctx, { sender, intervalMs: 0 });
      const last = await head();
      await until(w, () => all.applied.at(-1)?.cursor === last && few.applied.at(-1)?.cursor !== undefined, 100);
      const deliveries = await log(e.id);
      assert.equal(deliveries.length, N / 500, 'bounded: full deliveries of 500, not one event per row');
      assert.deepEqual([...new Set(all.applied.map((d) => d.changes.length))], [500]);
      for (let i = 1; i < deliveries.length; i++) assert.equal(deliveries[i].cursorFrom, deliveries[i - 1].cursorTo);
      assert.equal(all.state.size, N);
      for (const i of [0, 1001, N / 2, N - 1]) assert.equal(all.state.get(key(i)), qty(i), key(i));
      await assertSynced(
        all.state,
        Array.from({ length: 30 }, (_, i) => `IMP-${i * 277}`),
      );
      assert.equal((await log(f.id)).length, 1);
      assert.deepEqual(
        few.applied[0].changes.map((c) => `${c.sku}/${c.warehouseCode}=${c.qty}`),
        [21, 22, 23, N - 1].map((i) => `${key(i)}=${qty(i)}`),
      );
      assert.deepEqual(sender.problems, []);
    });
  });
}

/** Row counts of the webhook tables this suite reasons about. */
async function webhookRowCounts(store: TestApp['store']): Promise<Record<'webhook_events' | 'webhook_deliveries', number>> {
  const count = async (table: 'webhook_events' | 'webhook_deliveries') =>
    Number(
      (
        await store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { webhook_events: await count('webhook_events'), webhook_deliveries: await count('webhook_deliveries') };
}
