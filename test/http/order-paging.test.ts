import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { refreshOrder } from '../../src/services/order-state.service.ts';
import { pageOrders } from '../../src/store/orders.repository.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';
import { DIALECTS, PG_SKIP, loadCatalogue, newMerchant, useApp } from '../helpers.ts';

/**
 * SPEC §4.6 (issue 13 item 14): the order query's keyset `cursor`. A walk that follows
 * `nextCursor` never skips a row that existed when it began, even while orders are created,
 * shipped and refunded between its pages — in both orders (newest first, and update-window
 * ascending). Page-number walks can repeat or skip under the same writes (documented).
 */
for (const dialect of DIALECTS) {
  describe(`order paging under writes (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    const t = useApp(dialect);
    let token = '';
    let merchantId = '';
    let otherToken = '';
    const create = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const r = await t.merchant(token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 2 }]));
        assert.equal(r.status, 200, r.raw);
        ids.push(r.body.data);
      }
      return ids;
    };
    const get = async (query: string, as = token) => {
      const r = await t.merchant(as, 'GET', `/openapi/v2/order/orders?${query}`);
      assert.equal(r.status, 200, r.raw);
      return r.body.data as {
        total: number;
        pageNumber: number;
        pageSize: number;
        list: { id: string; updateDate: string; splitOrders: { id: string; status: string }[] }[];
        nextCursor: string | null;
      };
    };
    const shipped = new Set<string>();
    const refunded = new Set<string>();
    /** Changes orders: ship one (first waiting split), refund one unit of another. */
    const ship = async (orderId: string) => {
      const o = (await t.merchant(token, 'GET', `/openapi/v2/order/orders/${orderId}`)).body.data;
      const split = o.splitOrders.find((s: { status: string }) => s.status === 'waiting_to_ship');
      // A split order with a refund pending cannot ship (SPEC §5.4).
      if (!split || shipped.has(orderId) || refunded.has(orderId)) return;
      const r = await t.admin('POST', `/admin/v1/split-orders/${split.id}/ship`, { carrier: 'UPS', trackingCode: `1Z${orderId}` });
      assert.equal(r.status, 200, r.raw);
      shipped.add(orderId);
    };
    const refundOne = async (orderId: string) => {
      if (shipped.has(orderId)) return;
      const r = await t.merchant(token, 'POST', `/openapi/v2/order/orders/${orderId}/refund`, { skuCode: 'C', quantity: 1 });
      assert.ok(r.status === 200 || r.body.code === 40902, r.raw);
      refunded.add(orderId);
    };

    before(async () => {
      await loadCatalogue(t, ORDER_CATALOGUE);
      const m = await newMerchant(t, 'Walker');
      token = m.token;
      merchantId = m.merchantId;
      otherToken = (await newMerchant(t, 'Other')).token;
      await t.merchant(otherToken, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 }]));
    });

    it('newest-first keyset walk: every row that existed is returned once while orders are created, shipped and refunded', async () => {
      const initial = await create(25);
      let page = await get('pageSize=4');
      const seen: string[] = [];
      const created: string[] = [];
      let pages = 0;
      for (;;) {
        pages++;
        seen.push(...page.list.map((o) => o.id));
        if (page.nextCursor === null) break;
        assert.equal(page.pageNumber, pages);
        // Between pages: new orders, and changes to rows already read and not read yet.
        created.push(...(await create(2)));
        const unseen = initial.filter((id) => !seen.includes(id));
        if (unseen.length) await ship(unseen[0]);
        if (unseen.length > 1) await refundOne(unseen.at(-1)!);
        await refundOne(seen[0]);
        page = await get(`cursor=${encodeURIComponent(page.nextCursor)}`);
      }
      assert.deepEqual(
        initial.filter((id) => !seen.includes(id)),
        [],
        'no row that existed was skipped',
      );
      assert.equal(new Set(seen).size, seen.length, 'newest first, no row repeats (its position never moves)');
      assert.deepEqual(
        seen.filter((id) => created.includes(id)),
        [],
        'orders created during the walk are newer than its start',
      );
      assert.ok(pages >= 7);
    });

    it('update-window keyset walk: nothing that existed is skipped while rows move to the end', async () => {
      const since = new Date(Date.now() - 60_000).toISOString();
      const all = (await get('pageSize=250')).list.map((o) => o.id);
      let page = await get(`updateStartTime=${since}&pageSize=5`);
      const seen: string[] = [];
      for (let round = 0; ; round++) {
        seen.push(...page.list.map((o) => o.id));
        if (page.nextCursor === null) break;
        assert.ok(round < 100, 'the walk ends');
        // Move rows already read and rows not yet read to the end of the window; add new ones.
        const unseen = all.filter((id) => !seen.includes(id));
        if (round < 6) {
          await refundOne(seen[seen.length - 1]);
          if (unseen.length) await ship(unseen[Math.floor(unseen.length / 2)]);
          await create(1);
        }
        // The filters may be left out: the cursor carries them.
        page = await get(`cursor=${encodeURIComponent(page.nextCursor)}${round % 2 ? `&updateStartTime=${since}` : ''}`);
      }
      assert.deepEqual(
        all.filter((id) => !seen.includes(id)),
        [],
        'no row that existed was skipped',
      );
      const updates = page.list.map((o) => o.updateDate);
      assert.deepEqual(updates, [...updates].sort(), 'ascending updateDate');
    });

    it('page-number walks repeat (newest first) and skip (update window) under the same writes — the documented reason for the cursor', async () => {
      await create(10); // orders of its own to page through, so it runs alone
      // Newest first: two new orders between pages push two rows of page 1 onto page 2.
      const p1 = await get('pageSize=5&pageNumber=1');
      await create(2);
      const p2 = await get('pageSize=5&pageNumber=2');
      assert.equal(p2.list.filter((o) => p1.list.some((x) => x.id === o.id)).length, 2, 'page 2 repeats two rows of page 1');
      // Update window: a row of page 1 moving to the end shifts every later row back one place.
      const since = new Date(Date.now() - 120_000).toISOString();
      const q1 = await get(`updateStartTime=${since}&pageSize=5&pageNumber=1`);
      const boundary = (await get(`updateStartTime=${since}&pageSize=5&pageNumber=2`)).list[0].id;
      const mover = q1.list.find((o) => !shipped.has(o.id));
      assert.ok(mover);
      await refundOne(mover.id);
      const q2 = await get(`updateStartTime=${since}&pageSize=5&pageNumber=2`);
      assert.ok(!q1.list.some((o) => o.id === boundary) && !q2.list.some((o) => o.id === boundary), 'the row at the page boundary is skipped');
      // The cursor does not skip it.
      const c2 = await get(`cursor=${encodeURIComponent(q1.nextCursor!)}`);
      assert.ok(c2.list.some((o) => o.id === boundary) || boundary === mover.id);
    });

    it('carries nextCursor on every page in both modes, null at the end; a page-number page continues by cursor', async () => {
      await create(10); // orders of its own to page through, so it runs alone
      const p1 = await get('pageSize=3&pageNumber=1');
      const p2 = await get('pageSize=3&pageNumber=2');
      assert.ok(p1.nextCursor?.startsWith('oc1_'));
      const c2 = await get(`cursor=${encodeURIComponent(p1.nextCursor!)}`);
      assert.deepEqual(
        c2.list.map((o) => o.id),
        p2.list.map((o) => o.id),
      );
      assert.deepEqual([c2.pageNumber, c2.pageSize, c2.total], [2, 3, p1.total]);
      assert.equal((await get(`cursor=${encodeURIComponent(p1.nextCursor!)}&pageSize=7`)).list.length, 7, 'pageSize may change along the walk');
      const everything = await get('pageSize=250');
      assert.equal(everything.nextCursor, null, 'the last page');
      assert.equal(everything.total, everything.list.length);
      const last = await get(`pageSize=${everything.total - 1}`);
      const tail = await get(`cursor=${encodeURIComponent(last.nextCursor!)}`);
      assert.deepEqual([tail.list.length, tail.nextCursor], [1, null]);
      const none = await get('createStartTime=2999-01-01T00:00:00Z');
      assert.deepEqual([none.total, none.list, none.nextCursor], [0, [], null]);
      // Another merchant's walk never sees these orders, with or without a cursor taken from this one.
      const theirs = await get(`cursor=${encodeURIComponent(p1.nextCursor!)}`, otherToken);
      assert.ok(theirs.list.every((o) => !everything.list.some((m) => m.id === o.id)));
    });

    it('pages an ids query like any other window: by number and by cursor, in both orders, counting split ids once with their parent', async () => {
      await create(10); // orders of its own to page through, so it runs alone
      const everything = await get('pageSize=250');
      const chosen = everything.list.slice(0, 7);
      // A split id names its parent: listed once, counted once.
      const ids = [...chosen.map((o) => o.id), chosen[2].splitOrders[0].id].join(',');
      for (const window of ['', '&updateStartTime=2020-01-01T00:00:00Z']) {
        const all = await get(`ids=${ids}${window}&pageSize=100`);
        assert.equal(all.total, 7);
        assert.deepEqual(all.list.map((o) => o.id).sort(), chosen.map((o) => o.id).sort());
        const walked: string[] = [];
        let page = await get(`ids=${ids}${window}&pageSize=3`);
        assert.equal(page.total, 7);
        walked.push(...page.list.map((o) => o.id));
        while (page.nextCursor) {
          page = await get(`cursor=${encodeURIComponent(page.nextCursor)}`);
          assert.equal(page.total, 7);
          walked.push(...page.list.map((o) => o.id));
        }
        assert.deepEqual(
          walked,
          all.list.map((o) => o.id),
          `the cursor walk returns the window once, in its order (${window || 'newest first'})`,
        );
        const second = await get(`ids=${ids}${window}&pageSize=3&pageNumber=2`);
        assert.deepEqual(
          second.list.map((o) => o.id),
          all.list.slice(3, 6).map((o) => o.id),
        );
        assert.deepEqual((await get(`ids=${ids}${window}&pageSize=3&pageNumber=4`)).list, []);
      }
      const newestFirst = (await get(`ids=${ids}&pageSize=100`)).list.map((o) => o.id);
      assert.deepEqual(
        newestFirst,
        chosen.map((o) => o.id),
        'newest first, as the unfiltered list',
      );
    });

    it('refuses pageNumber with cursor, a cursor it did not issue, and a cursor of other filters', async () => {
      await create(10); // orders of its own to page through, so it runs alone
      const p1 = await get('pageSize=2&createStartTime=2020-01-01T00:00:00Z');
      const cursor = encodeURIComponent(p1.nextCursor!);
      const cases: [string, string][] = [
        [`cursor=${cursor}&pageNumber=2`, 'pageNumber'],
        ['cursor=abc', 'cursor'],
        ['cursor=oc1_e30', 'cursor'],
        [`cursor=${cursor.slice(0, -3)}`, 'cursor'],
        [
          `cursor=${encodeURIComponent(`oc1_${Buffer.from('{"m":"c","a":[1,-1],"f":[null,null,null,null,null,null],"s":2,"p":2}').toString('base64url')}`)}`,
          'cursor',
        ],
        [`cursor=${cursor}&createStartTime=2021-01-01T00:00:00Z`, 'cursor'],
        [`cursor=${cursor}&updateStartTime=2020-01-01T00:00:00Z`, 'cursor'],
        [`cursor=${'x'.repeat(5000)}`, 'cursor'],
      ];
      for (const [query, field] of cases) {
        const r = await t.merchant(token, 'GET', `/openapi/v2/order/orders?${query}`);
        assert.equal(r.status, 400, `${query}: ${r.raw}`);
        assert.equal(r.body.code, 40000);
        assert.deepEqual(
          r.body.errors.map((e: { field: string }) => e.field),
          [field],
          query,
        );
      }
      assert.equal(
        (await t.merchant(token, 'GET', `/openapi/v2/order/orders?cursor=${cursor}&createStartTime=2020-01-01T00:00:00Z`)).status,
        200,
        'the same filters repeated',
      );
    });

    it('lets the operator walk by cursor, one merchant or all', async () => {
      const walk = async (query: string) => {
        const ids: string[] = [];
        let r = await t.admin('GET', `/admin/v1/orders?pageSize=7&${query}`);
        for (;;) {
          assert.equal(r.status, 200, r.raw);
          ids.push(...r.body.data.list.map((o: { id: string }) => o.id));
          if (r.body.data.nextCursor === null) return ids;
          r = await t.admin('GET', `/admin/v1/orders?cursor=${encodeURIComponent(r.body.data.nextCursor)}`);
        }
      };
      const mine = (await get('pageSize=250')).list.map((o) => o.id);
      assert.deepEqual(await walk(`merchantId=${merchantId}`), mine, 'the cursor keeps the merchant filter');
      assert.equal((await walk('')).length, mine.length + 1);
      const since = new Date(Date.now() - 600_000).toISOString();
      assert.equal((await walk(`updateStartTime=${since}`)).length, mine.length + 1);
    });

    it('never moves an order’s updateDate backwards (a transaction that read the clock before waiting for a lock)', async () => {
      const [id] = await create(1);
      const updatedAt = async () =>
        (await t.store.db.selectFrom('orders').select('updated_at').where('id', '=', Number(id)).executeTakeFirstOrThrow()).updated_at;
      const before = await updatedAt();
      await t.store.db.transaction().execute((trx) => refreshOrder(trx, Number(id), before - 5000));
      assert.equal(await updatedAt(), before);
      await t.store.db.transaction().execute((trx) => refreshOrder(trx, Number(id), before + 5000));
      assert.equal(await updatedAt(), before + 5000);
    });

    it('counts total up to a cap, whatever the window holds', async () => {
      await create(10); // orders of its own to page through, so it runs alone
      const scope = forMerchant(t.store.db, Number(merchantId));
      const base = { ids: null, createStart: null, createEnd: null, updateStart: null, updateEnd: null, after: null, offset: 0, limit: 2 };
      const capped = await pageOrders(scope, { ...base, totalCap: 5 });
      assert.equal(capped.total, 5);
      assert.equal(capped.orders.length, 2);
      const exact = await pageOrders(scope, { ...base, totalCap: 100_000 });
      assert.equal(exact.total, (await get('pageSize=250')).list.length);
    });
  });
}
