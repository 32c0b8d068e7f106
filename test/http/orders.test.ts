import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, PG_SKIP, buildTestApp, loadCatalogue, newMerchant, tableDigests, type TestApp } from '../helpers.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';
import { ADDRESS, ORDER_CATALOGUE, order, placeOrder } from '../fixtures.ts';

async function counts(t: TestApp) {
  const n = async (table: 'orders' | 'split_orders' | 'order_items' | 'stock_ledger') =>
    Number(
      (
        await t.store.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const stock = await t.store.db.selectFrom('stocks').select(['product_id', 'warehouse_id', 'qty']).orderBy('product_id').orderBy('warehouse_id').execute();
  // The digests cover every table's content, so an UPDATE by a refused request shows too.
  const tables = await tableDigests(t.store);
  return { orders: await n('orders'), splits: await n('split_orders'), items: await n('order_items'), ledger: await n('stock_ledger'), stock, tables };
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`orders (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    /**
     * Each test on an app and a database of its own (closed when the test ends), so any one runs
     * alone: the order catalogue, a merchant ('Shop', `token`) and another ('Other Shop', `other`).
     */
    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect);
      await loadCatalogue(t, ORDER_CATALOGUE);
      const token = (await newMerchant(t, 'Shop')).token;
      const other = (await newMerchant(t, 'Other Shop')).token;
      const post = (body: unknown, headers: Record<string, string> = {}, url = '/openapi/v1/order/orders') =>
        t.app
          .inject({ method: 'POST', url, payload: body as object, headers: { authorization: `Bearer ${token}`, ...headers } })
          .then((r) => ({ status: r.statusCode, headers: r.headers, body: r.json() }));
      const get = (url: string, as = token) => t.merchant(as, 'GET', url);
      return { t, token, other, post, get };
    };
    /** Orders for the list tests: five for 'Shop' (one split over two warehouses), two for 'Other Shop'. */
    const placeOrders = async (t: TestApp, token: string, other: string) => {
      await placeOrder(t, token, [
        { sku: 'A', quantity: 1 },
        { sku: 'B', quantity: 1 },
      ]);
      for (let i = 0; i < 4; i++) await placeOrder(t, token, [{ sku: 'C', quantity: 1 }]);
      for (let i = 0; i < 2; i++) await placeOrder(t, other, [{ sku: 'C', quantity: 1 }]);
    };

    it('creates an order split by warehouse and returns the kkOrderId string', async (ctx) => {
      const { t, post, get } = await build(ctx);
      const r = await post(
        order(
          [
            { sku: 'A', quantity: '7' },
            { sku: 'B', quantity: 2 },
          ],
          { salePlatform: 'SHOPIFY', remark: ' gift ', customOrderId: 'c-1' },
        ),
      );
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.code, 10000);
      assert.match(r.body.data, /^\d{13}$/);
      const o = (await get(`/openapi/v2/order/orders/${r.body.data}`)).body.data;
      assert.equal(o.id, r.body.data);
      assert.equal(o.customOrderId, 'c-1');
      assert.equal(o.salePlatform, 'Shopify');
      assert.equal(o.remark, 'gift');
      assert.equal(o.status, 'processing');
      assert.equal(o.financialStatus, 'paid');
      assert.equal(o.fulfillmentStatus, 'waiting_to_ship');
      assert.equal(o.refundStatus, null);
      assert.equal(o.currencyCode, 'USD');
      assert.equal(o.channelType, 'Standard');
      assert.equal(o.shippingAddress.country, 'US');
      // US destination: A takes US01's 5 first, then 2 from G007; B comes from G006.
      const pieces = o.orderItems.map((i: any) => [i.skuCode, i.warehouseCode, i.productNum]).sort();
      assert.deepEqual(pieces, [
        ['A', 'G007', 2],
        ['A', 'US01', 5],
        ['B', 'G006', 2],
      ]);
      assert.equal(o.splitOrders.length, 3);
      for (const s of o.splitOrders) {
        assert.match(s.id, /^\d{13}$/);
        assert.notEqual(s.id, o.id);
        assert.equal(s.status, 'waiting_to_ship');
        assert.deepEqual(
          s.itemIds,
          o.orderItems.filter((i: any) => i.splitOrderId === s.id).map((i: any) => i.itemId),
        );
      }
      // US01 → US ships by the cheaper US-STD: 1 + 1 × 1.75 kg = 2.75; G007 (0.7 kg): 2 + 1.05 = 3.05; G006 (1 kg): 2 + 1.5 = 3.5.
      const freight = Object.fromEntries(o.splitOrders.map((s: any) => [s.warehouseCode, [s.channelCode, s.freightAmount]]));
      assert.deepEqual(freight, { US01: ['US-STD', 2.75], G007: ['STD', 3.05], G006: ['STD', 3.5] });
      assert.equal(o.subTotalAmount, 74.24); // 7 × 9.32 + 2 × 4.50
      assert.equal(o.freightAmount, 9.3);
      assert.equal(o.finalAmount, 83.54);
      assert.equal(o.refundableAmount, 83.54);
      assert.equal(o.refundedAmount, 0);
      const a = o.orderItems.find((i: any) => i.warehouseCode === 'US01');
      assert.deepEqual(
        [a.amount, a.total, a.productName, a.imageUrl, a.countryCode, a.refundedQuantity, a.fulfillmentStatus, a.refundStatus],
        [9.32, 46.6, 'Mug', 'https://img/a.jpg', 'US', 0, 'waiting_to_ship', null],
      );
      assert.match(o.createDate, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      // A split id finds the same order.
      assert.equal((await get(`/openapi/v2/order/orders/${o.splitOrders[0].id}`)).body.data.id, o.id);
      // Stock moved, as merchants see it (A: G007 10 → 8, US01 5 → 0; B: G006 7 → 5), with ledger rows.
      const stock = await get('/openapi/v1/product/stocks?skus=A,B');
      assert.equal(stock.status, 200, stock.raw);
      const qty = Object.fromEntries(stock.body.data.list.flatMap((r: any) => r.warehouseStockList.map((w: any) => [`${r.sku}@${w.warehouseCode}`, w.qty])));
      assert.deepEqual([qty['A@G007'], qty['A@US01'] ?? 0, qty['B@G006']], [8, 0, 5], JSON.stringify(qty));
      const sales = await t.store.db.selectFrom('stock_ledger').select(['delta', 'kind']).where('order_id', '=', Number(o.id)).orderBy('delta').execute();
      assert.deepEqual(sales, [
        { delta: -5, kind: 'sale' },
        { delta: -2, kind: 'sale' },
        { delta: -2, kind: 'sale' },
      ]);
      assert.deepEqual(await ledgerMismatches(t.store.db), []);
    });

    it('honours channel type and requested channel, and falls back when unmatched', async (ctx) => {
      const { post, get } = await build(ctx);
      const express = await post(order([{ sku: 'C', quantity: 1 }], { channelType: 'express' }));
      assert.equal(express.status, 200, JSON.stringify(express.body));
      const e = (await get(`/openapi/v2/order/orders/${express.body.data}`)).body.data;
      assert.equal(e.splitOrders[0].channelCode, 'EXP');
      assert.equal(e.channelType, 'Express');
      const named = await post(order([{ sku: 'C', quantity: 1, channelCode: 'STD' }], { channelCode: 'EXP' }));
      assert.equal((await get(`/openapi/v2/order/orders/${named.body.data}`)).body.data.splitOrders[0].channelCode, 'STD');
      const unmatched = await post({ ...order([{ sku: 'A', quantity: 1, warehouseCode: 'G007' }], { chinnelCode: 'EXP', channelCode: 'NOPE' }) });
      assert.equal(unmatched.status, 200, 'an unmatched channelCode falls back; unknown fields are ignored');
      assert.equal((await get(`/openapi/v2/order/orders/${unmatched.body.data}`)).body.data.splitOrders[0].channelCode, 'STD');
    });

    it('accepts orderAddresses and the v2 alias; refuses two different addresses', async (ctx) => {
      const { t, post } = await build(ctx);
      const r = await post({ orderAddresses: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 1 }] }, {}, '/openapi/v2/order/orders');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const both = await post({ orderAddress: ADDRESS, orderAddresses: ADDRESS, orderItemsList: [{ sku: 'B', quantity: 1 }] });
      assert.equal(both.status, 200);
      const before = await counts(t);
      const diff = await post({ orderAddress: ADDRESS, orderAddresses: { ...ADDRESS, zip: '1' }, orderItemsList: [{ sku: 'B', quantity: 1 }] });
      assert.equal(diff.status, 400);
      assert.equal(diff.body.errors[0].field, 'orderAddresses');
      assert.deepEqual(await counts(t), before);
    });

    it('refuses unknown SKUs with 42200 and short stock with 42201, writing nothing', async (ctx) => {
      const { t, post } = await build(ctx);
      assert.equal((await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'B', warehouseCode: 'G006', qty: 4 }] })).status, 200);
      const before = await counts(t);
      const unknown = await post(
        order([
          { sku: 'A', quantity: 1 },
          { sku: 'NOPE', quantity: 1 },
          { sku: 'NOPE2', quantity: 1 },
        ]),
      );
      assert.equal(unknown.status, 422);
      assert.equal(unknown.body.code, 42200);
      assert.deepEqual(
        unknown.body.errors.map((e: any) => [e.field, e.sku]),
        [
          ['orderItemsList[1].sku', 'NOPE'],
          ['orderItemsList[2].sku', 'NOPE2'],
        ],
      );
      const short = await post(
        order([
          { sku: 'B', quantity: 3 },
          { sku: 'B', quantity: 100 },
          { sku: 'Z', quantity: 1 },
        ]),
      );
      assert.equal(short.status, 422);
      assert.equal(short.body.code, 42201);
      assert.deepEqual(
        short.body.errors.map((e: any) => [e.field, e.sku, e.requested, e.available]),
        [
          ['orderItemsList[1].quantity', 'B', 100, 1],
          ['orderItemsList[2].quantity', 'Z', 1, 0],
        ],
      );
      assert.deepEqual(await counts(t), before);
    });

    it('refuses a destination no channel serves with 42202, writing nothing', async (ctx) => {
      const { t, post } = await build(ctx);
      await t.admin('POST', '/admin/v1/channels', {
        channelCode: 'STD',
        name: 'Standard Shipping',
        channelType: 'Standard',
        warehouseCodes: ['G007', 'G006', 'US01'],
        countries: ['US', 'CN', 'GB'],
        baseFee: 2,
        perKgFee: '1.50',
        deliveryDaysMin: 6,
        deliveryDaysMax: 10,
      });
      const before = await counts(t);
      const r = await post(order([{ sku: 'B', quantity: 1 }], { orderAddress: { ...ADDRESS, country: 'FR' } }));
      assert.equal(r.status, 422);
      assert.equal(r.body.code, 42202);
      assert.equal(r.body.errors[0].warehouseCode, 'G006');
      assert.deepEqual(await counts(t), before);
      await t.admin('POST', '/admin/v1/channels', ORDER_CATALOGUE.channels[0]);
    });

    it('validates every field with its path, writing nothing', async (ctx) => {
      const { t, post } = await build(ctx);
      const line = { sku: 'A', quantity: 1 };
      const cases: [unknown, string][] = [
        [{ orderItemsList: [line] }, 'orderAddress'],
        [order([]), 'orderItemsList'],
        [order(Array.from({ length: 101 }, () => line)), 'orderItemsList'],
        [order([{ sku: 'A', quantity: 0 }]), 'orderItemsList[0].quantity'],
        [order([{ sku: 'A', quantity: -2 }]), 'orderItemsList[0].quantity'],
        [order([{ sku: 'A', quantity: 1.5 }]), 'orderItemsList[0].quantity'],
        [order([{ sku: 'A', quantity: '1.5' }]), 'orderItemsList[0].quantity'],
        [order([{ sku: 'A', quantity: true }]), 'orderItemsList[0].quantity'],
        [order([{ sku: 'A', quantity: '12345678901234567' }]), 'orderItemsList[0].quantity'],
        [order([{ sku: 'A' }]), 'orderItemsList[0].quantity'],
        [order([{ quantity: 1 }]), 'orderItemsList[0].sku'],
        [order([{ sku: 'S'.repeat(65), quantity: 1 }]), 'orderItemsList[0].sku'],
        [order([{ ...line, channelCode: 'C'.repeat(33) }]), 'orderItemsList[0].channelCode'],
        [order([{ ...line, warehouseCode: 'W'.repeat(33) }]), 'orderItemsList[0].warehouseCode'],
        [order([{ ...line, channelType: 'Teleport' }]), 'orderItemsList[0].channelType'],
        [order([line], { channelType: 'Rocket' }), 'channelType'],
        [order([line], { salePlatform: 'P'.repeat(33) }), 'salePlatform'],
        [order([line], { customOrderId: 'X'.repeat(65) }), 'customOrderId'],
        [order([line], { orderAddress: { ...ADDRESS, country: 'USA' } }), 'orderAddress.country'],
        [order([line], { orderAddress: { ...ADDRESS, phone: undefined } }), 'orderAddress.phone'],
        [order([line], { orderAddress: { ...ADDRESS, recipient: 'R'.repeat(33) } }), 'orderAddress.recipient'],
        [order([line], { orderAddress: { ...ADDRESS, province: '' } }), 'orderAddress.province'],
        [order([line], { orderAddress: { ...ADDRESS, street1: 'S'.repeat(65) } }), 'orderAddress.street1'],
        [order([line], { orderAddress: { ...ADDRESS, zip: 'Z'.repeat(33) } }), 'orderAddress.zip'],
        [order([line], { orderAddress: { ...ADDRESS, ioss: 'I'.repeat(33) } }), 'orderAddress.ioss'],
        [order([line], { orderAddress: { ...ADDRESS, vat: 5 } }), 'orderAddress.vat'],
        [{ ...order([line]), orderItemsList: 'A' }, 'orderItemsList'],
      ];
      const before = await counts(t);
      for (const [body, field] of cases) {
        const r = await post(body);
        assert.equal(r.status, 400, `${field}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 40000);
        assert.ok(
          r.body.errors.some((e: any) => e.field === field),
          `${field} not in ${JSON.stringify(r.body.errors)}`,
        );
      }
      // Bounds apply after trimming.
      const trimmed = await post(order([{ sku: '  C  ', quantity: ' 1 ' }], { orderAddress: { ...ADDRESS, recipient: `  ${'R'.repeat(32)}  ` } }));
      assert.equal(trimmed.status, 200, JSON.stringify(trimmed.body));
      const after = await counts(t);
      assert.equal(after.orders, before.orders + 1);
    });

    it('replays a customOrderId with the same request and refuses a different one', async (ctx) => {
      const { t, other, post } = await build(ctx);
      const body = order([{ sku: 'C', quantity: 1 }], { customOrderId: 'dup-1' });
      const first = await post(body);
      assert.equal(first.status, 200);
      const again = await post(body);
      assert.equal(again.status, 200);
      assert.equal(again.body.data, first.body.data);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      const conflict = await post(order([{ sku: 'C', quantity: 2 }], { customOrderId: 'dup-1' }));
      assert.equal(conflict.status, 409);
      assert.equal(conflict.body.code, 40900);
      // Another merchant may use the same customOrderId.
      const theirs = await t.app.inject({ method: 'POST', url: '/openapi/v1/order/orders', payload: body, headers: { authorization: `Bearer ${other}` } });
      assert.equal(theirs.statusCode, 200, theirs.body);
      assert.notEqual(theirs.json().data, first.body.data);
    });

    it('replays an Idempotency-Key, refuses a different body, and stores refusals too', async (ctx) => {
      const { t, other, post } = await build(ctx);
      await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'C', warehouseCode: 'G007', qty: 500 }] });
      const body = order([{ sku: 'C', quantity: 1 }]);
      const first = await post(body, { 'idempotency-key': 'key-1' });
      assert.equal(first.status, 200);
      const again = await post(body, { 'idempotency-key': 'key-1' });
      assert.deepEqual(again.body, first.body);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      const conflict = await post(order([{ sku: 'C', quantity: 2 }]), { 'idempotency-key': 'key-1' });
      assert.equal(conflict.status, 409);
      assert.equal(conflict.body.code, 40900);
      const short = await post(order([{ sku: 'C', quantity: 5000 }]), { 'idempotency-key': 'key-2' });
      assert.equal(short.status, 422);
      const shortAgain = await post(order([{ sku: 'C', quantity: 5000 }]), { 'idempotency-key': 'key-2' });
      assert.equal(shortAgain.status, 422);
      assert.equal(shortAgain.headers['idempotent-replayed'], 'true');
      assert.equal(shortAgain.body.requestId, short.body.requestId);
      const long = await post(body, { 'idempotency-key': 'k'.repeat(256) });
      assert.equal(long.status, 400);
      // Keys are per merchant.
      const theirs = await t.app.inject({
        method: 'POST',
        url: '/openapi/v1/order/orders',
        payload: body,
        headers: { authorization: `Bearer ${other}`, 'idempotency-key': 'key-1' },
      });
      assert.equal(theirs.statusCode, 200);
      assert.notEqual(theirs.json().data, first.body.data);
    });

    it('refuses a key an earlier version left in flight, and takes it over after the longest request', async (ctx) => {
      const { t, post } = await build(ctx);
      const merchantId = (await t.store.db.selectFrom('api_tokens').select('merchant_id').orderBy('id').executeTakeFirstOrThrow()).merchant_id;
      const body = order([{ sku: 'C', quantity: 1 }]);
      const { requestHash } = await import('../../src/services/idempotency.service.ts');
      const { normalizeOrder } = await import('../../src/services/orders.service.ts');
      const hash = requestHash({ route: 'orders.create', hash: requestHash(normalizeOrder(body as any)) });
      const now = Date.now();
      await t.store.db
        .insertInto('idempotency_keys')
        .values({
          merchant_id: merchantId,
          idempotency_key: 'busy',
          request_hash: hash,
          state: 'in_flight',
          response_status: null,
          response_body: null,
          created_at: now,
          expires_at: now + 86_400_000,
        })
        .execute();
      const busy = await post(body, { 'idempotency-key': 'busy' });
      assert.equal(busy.status, 409);
      assert.match(busy.body.message, /in flight/);
      // Such a row comes only from an earlier version; it is honoured for the longest request (1 h).
      await t.store.db
        .updateTable('idempotency_keys')
        .set({ created_at: now - 3_700_000 })
        .where('idempotency_key', '=', 'busy')
        .execute();
      assert.equal((await post(body, { 'idempotency-key': 'busy' })).status, 200);
      // An expired key is forgotten.
      await t.store.db
        .updateTable('idempotency_keys')
        .set({ expires_at: now - 1 })
        .where('idempotency_key', '=', 'busy')
        .execute();
      const fresh = await post(order([{ sku: 'C', quantity: 2 }]), { 'idempotency-key': 'busy' });
      assert.equal(fresh.status, 200);
      assert.equal(fresh.headers['idempotent-replayed'], undefined);
    });

    it('quotes channels per warehouse group and per channel type without reserving', async (ctx) => {
      const { t, token } = await build(ctx);
      const before = await counts(t);
      const body = {
        shipToCountry: 'us',
        products: [
          { sku: 'A', quantity: 7 },
          { sku: 'B', quantity: 2 },
        ],
      };
      const r = await t.merchant(token, 'POST', '/openapi/v2/order/orders/channel', body);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(Array.isArray(r.body.data));
      const byWarehouse = (w: string) => r.body.data.filter((c: any) => c.warehouseCode === w).map((c: any) => c.channelCode);
      assert.deepEqual(byWarehouse('G007'), ['EXP', 'STD']);
      assert.ok(
        r.body.data.every(
          (c: any) => c.estimatedFreightCurrency === 'USD' && /^\d+~\d+ Business Days$/.test(c.deliveryTime) && typeof c.channelNameEn === 'string',
        ),
      );
      const types = await t.merchant(token, 'POST', '/openapi/v2/order/orders/automaticSplit/channel', body);
      assert.equal(types.status, 200);
      assert.deepEqual(
        types.body.data.map((q: any) => q.channelType),
        ['Standard'],
      );
      assert.equal(typeof types.body.data[0].estimatedFreight, 'number');
      const one = await t.merchant(token, 'POST', '/openapi/v2/order/orders/automaticSplit/channel', {
        shipToCountry: 'DE',
        products: [{ sku: 'C', quantity: 1, warehouseCode: 'G007' }],
      });
      assert.deepEqual(
        one.body.data.map((q: any) => q.channelType),
        ['Standard', 'Express'],
      );
      assert.deepEqual(await counts(t), before);
      const short = await t.merchant(token, 'POST', '/openapi/v2/order/orders/channel', { shipToCountry: 'US', products: [{ sku: 'B', quantity: 1000 }] });
      assert.equal(short.body.code, 42201);
      const bad = await t.merchant(token, 'POST', '/openapi/v2/order/orders/channel', { shipToCountry: 'USA', products: [] });
      assert.deepEqual(bad.body.errors.map((e: any) => e.field).sort(), ['products', 'shipToCountry']);
    });

    it('queries orders with filters, paging and ordering, scoped to the merchant', async (ctx) => {
      const { t, token, other, get } = await build(ctx);
      await placeOrders(t, token, other);
      const all = await get('/openapi/v2/order/orders?pageSize=250');
      assert.equal(all.status, 200);
      const list = all.body.data.list;
      // Every order this merchant placed (counted in the database, not by the API).
      const merchantId = (await t.store.db.selectFrom('api_tokens').select('merchant_id').orderBy('id').executeTakeFirstOrThrow()).merchant_id;
      const mine = await t.store.db.selectFrom('orders').select('id').where('merchant_id', '=', merchantId).execute();
      const placed = mine.length;
      assert.ok(placed >= 5, `this merchant placed orders (${placed})`);
      assert.equal(list.length, placed);
      assert.equal(all.body.data.total, list.length);
      assert.equal(all.body.data.pageSize, 250);
      const created = list.map((o: any) => [o.createDate, o.id]);
      assert.deepEqual(created, [...created].sort().reverse(), 'newest first');
      const page2 = await get('/openapi/v2/order/orders?pageSize=2&pageNumber=2');
      assert.deepEqual(
        page2.body.data.list.map((o: any) => o.id),
        list.slice(2, 4).map((o: any) => o.id),
      );
      assert.equal((await get('/openapi/v2/order/orders')).body.data.pageSize, 10);
      const ids = `${list[0].id},${list[1].splitOrders[0].id}, ${list[0].id}`;
      const byIds = await get(`/openapi/v2/order/orders?ids=${encodeURIComponent(ids)}`);
      assert.deepEqual(byIds.body.data.list.map((o: any) => o.id).sort(), [list[0].id, list[1].id].sort());
      const since = list.at(-1).updateDate;
      const sync = await get(`/openapi/v2/order/orders?updateStartTime=${since}`);
      const updates = sync.body.data.list.map((o: any) => [o.updateDate, o.id]);
      assert.ok(updates.length >= 2, `the update window holds orders (${updates.length})`);
      assert.deepEqual(updates, [...updates].sort(), 'update window: ascending updateDate then id');
      const future = await get('/openapi/v2/order/orders?createStartTime=2999-01-01T00:00:00Z');
      assert.equal(future.body.data.total, 0);
      // The other merchant sees only its own.
      const theirs = await get('/openapi/v2/order/orders', other);
      assert.ok(theirs.body.data.list.length >= 2, `the other merchant has orders too (${theirs.body.data.list.length})`);
      assert.ok(theirs.body.data.list.every((o: any) => !list.some((m: any) => m.id === o.id)));
      // Nor by ids: the other merchant's order and split-order ids name nothing here.
      const theirIds = `${theirs.body.data.list[0].id},${theirs.body.data.list[1].splitOrders[0].id}`;
      const notMine = await get(`/openapi/v2/order/orders?ids=${encodeURIComponent(theirIds)}`);
      assert.equal(notMine.status, 200);
      assert.equal(notMine.body.data.total, 0);
      assert.deepEqual(notMine.body.data.list, []);
      for (const bad of [
        'pageSize=0',
        'pageSize=251',
        'pageNumber=0',
        `ids=${Array.from({ length: 101 }, (_, i) => i + 1).join(',')}`,
        'ids=abc',
        'createStartTime=yesterday',
        'updateStartTime=2022-01-02T00:00:00Z&updateEndTime=2022-01-01T00:00:00Z',
      ]) {
        const r = await get(`/openapi/v2/order/orders?${bad}`);
        assert.equal(r.status, 400, bad);
        assert.equal(r.body.code, 40000);
      }
    });

    it('answers another merchant’s order exactly like a missing one', async (ctx) => {
      const { t, token, other, get } = await build(ctx);
      await placeOrders(t, token, other);
      const mine = (await get('/openapi/v2/order/orders')).body.data.list[0];
      const a = await t.app.inject({
        method: 'GET',
        url: `/openapi/v2/order/orders/${mine.id}`,
        headers: { authorization: `Bearer ${other}`, 'x-request-id': 'same' },
      });
      const b = await t.app.inject({
        method: 'GET',
        url: '/openapi/v2/order/orders/1999999999999',
        headers: { authorization: `Bearer ${other}`, 'x-request-id': 'same' },
      });
      assert.equal(a.statusCode, 404);
      assert.equal(a.body, b.body);
      const { date: _d1, ...ha } = a.headers;
      const { date: _d2, ...hb } = b.headers;
      assert.deepEqual(ha, hb);
      assert.equal((await t.merchant(other, 'GET', `/openapi/v2/order/orders/${mine.splitOrders[0].id}`)).status, 404);
      assert.equal((await get('/openapi/v2/order/orders/not-a-number')).status, 404);
    });

    it('lets the operator read every merchant’s orders', async (ctx) => {
      const { t, token, other, get } = await build(ctx);
      await placeOrders(t, token, other);
      const all = await t.admin('GET', '/admin/v1/orders?pageSize=250');
      const mine = await get('/openapi/v2/order/orders?pageSize=250');
      const theirs = await get('/openapi/v2/order/orders?pageSize=250', other);
      assert.equal(all.body.data.total, mine.body.data.total + theirs.body.data.total);
      const one = await t.admin('GET', `/admin/v1/orders/${theirs.body.data.list[0].id}`);
      assert.equal(one.body.data.id, theirs.body.data.list[0].id);
      const merchantId = (await t.admin('GET', '/admin/v1/merchants')).body.data.list.find((m: any) => m.name === 'Other Shop').merchantId;
      const filtered = await t.admin('GET', `/admin/v1/orders?merchantId=${merchantId}`);
      assert.equal(filtered.body.data.total, theirs.body.data.total);
    });

    it('needs the orders scopes', async (ctx) => {
      const { t } = await build(ctx);
      const readOnly = (await newMerchant(t, 'Reader', { scopes: ['orders:read'] })).token;
      const r = await t.merchant(readOnly, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 }]));
      assert.equal(r.status, 403);
      assert.match(r.body.message, /orders:write/);
      const writeOnly = (await newMerchant(t, 'Writer', { scopes: ['orders:write'] })).token;
      assert.equal((await t.merchant(writeOnly, 'GET', '/openapi/v2/order/orders')).status, 403);
    });
  });
}
