import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, PG_SKIP, SMALL_CATALOGUE, buildTestApp, loadCatalogue, tableDigests, type TestApp } from '../helpers.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';

/** Asserts a 4xx envelope with the code and that the database did not change. */
async function refused(t: TestApp, call: () => Promise<{ status: number; body: any }>, status: number, code: number, fields?: string[]) {
  const before = await tableDigests(t.store);
  const r = await call();
  assert.equal(r.status, status, JSON.stringify(r.body));
  assert.equal(r.body.code, code);
  assert.equal(r.body.data, null);
  if (fields) assert.deepEqual(r.body.errors.map((e: { field: string }) => e.field).sort(), [...fields].sort());
  assert.deepEqual(await tableDigests(t.store), before, 'a refused request wrote nothing');
  return r.body;
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`operator catalogue API (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    /** Each test on an app and a database of its own (closed when the test ends), so any one runs alone. */
    const build = async (ctx: TestContext) => ({ t: await buildTestApp(ctx, dialect) });
    /** What the tests need that others test making: warehouses (G007, then US01), categories 1 and 2, product MUG-1, its stock. */
    const given = {
      warehouses: async (t: TestApp, codes: ('G007' | 'US01')[]) => {
        const made = { G007: { name: 'Shenzhen Central', countryCode: 'CN' }, US01: { name: 'LA', countryCode: 'US' } };
        for (const code of codes) assert.equal((await t.admin('POST', '/admin/v1/warehouses', { warehouseCode: code, ...made[code] })).status, 200);
      },
      categories: async (t: TestApp) => {
        assert.equal((await t.admin('POST', '/admin/v1/categories', { categoryId: 1, name: 'Home', parentId: 0 })).status, 200);
        assert.equal((await t.admin('POST', '/admin/v1/categories', { categoryId: 2, name: 'Kitchen', parentId: 1 })).status, 200);
      },
      product: async (t: TestApp) => {
        assert.equal((await t.admin('POST', '/admin/v1/products', { sku: 'MUG-1', name: 'Mug v2', price: 9.32, weightGrams: 340 })).status, 200);
      },
      stock: async (t: TestApp) => {
        const items = [
          { sku: 'MUG-1', warehouseCode: 'G007', qty: 10 },
          { sku: 'MUG-1', warehouseCode: 'US01', qty: 4 },
        ];
        assert.equal((await t.admin('PUT', '/admin/v1/stocks', { items })).status, 200);
      },
    };

    it('refuses requests without the admin key', async (ctx) => {
      const { t } = await build(ctx);
      const none = await t.app.inject({ method: 'GET', url: '/admin/v1/warehouses' });
      assert.equal(none.statusCode, 401);
      assert.equal(none.json().code, 40100);
      assert.match(String(none.headers['www-authenticate']), /^Bearer /);
      const wrong = await t.app.inject({ method: 'GET', url: '/admin/v1/warehouses', headers: { authorization: 'Bearer not-the-key' } });
      assert.equal(wrong.statusCode, 401);
    });

    it('upserts warehouses idempotently', async (ctx) => {
      const { t } = await build(ctx);
      const r = await t.admin('POST', '/admin/v1/warehouses', { warehouseCode: ' G007 ', name: 'Shenzhen', countryCode: 'cn' });
      assert.equal(r.status, 200);
      assert.equal(r.body.code, 10000);
      assert.deepEqual(
        { ...r.body.data, updateDate: undefined },
        {
          warehouseId: r.body.data.warehouseId,
          warehouseCode: 'G007',
          name: 'Shenzhen',
          countryCode: 'CN',
          countryName: 'China',
          status: 1,
          updateDate: undefined,
        },
      );
      const again = await t.admin('POST', '/admin/v1/warehouses', { warehouseCode: 'G007', name: 'Shenzhen Central', countryCode: 'CN', status: '0' });
      assert.equal(again.body.data.warehouseId, r.body.data.warehouseId);
      assert.equal(again.body.data.status, 0);
      const list = await t.admin('GET', '/admin/v1/warehouses');
      assert.equal(list.body.data.list.length, 1);
      assert.equal(list.body.data.list[0].name, 'Shenzhen Central');
      await t.admin('POST', '/admin/v1/warehouses', { warehouseCode: 'G007', name: 'Shenzhen Central', countryCode: 'CN', status: 1 });
    });

    it('refuses bad warehouse bodies', async (ctx) => {
      const { t } = await build(ctx);
      await refused(t, () => t.admin('POST', '/admin/v1/warehouses', { warehouseCode: 'X'.repeat(33), name: 'n', countryCode: 'CHN' }), 400, 40000, [
        'countryCode',
        'warehouseCode',
      ]);
      await refused(t, () => t.admin('POST', '/admin/v1/warehouses', { name: 5, countryCode: 'US', status: 2 }), 400, 40000, [
        'name',
        'status',
        'warehouseCode',
      ]);
      await refused(t, () => t.admin('POST', '/admin/v1/warehouses', [1, 2]), 400, 40000);
    });

    it('builds the category tree and refuses broken parents', async (ctx) => {
      const { t } = await build(ctx);
      assert.equal((await t.admin('POST', '/admin/v1/categories', { categoryId: 1, name: 'Home', parentId: 0 })).status, 200);
      assert.equal((await t.admin('POST', '/admin/v1/categories', { categoryId: '2', name: 'Kitchen', parentId: 1, imgUrl: 'https://x/y.png' })).status, 200);
      await refused(t, () => t.admin('POST', '/admin/v1/categories', { categoryId: 3, name: 'Orphan', parentId: 99 }), 400, 40000, ['parentId']);
      await refused(t, () => t.admin('POST', '/admin/v1/categories', { categoryId: 1, name: 'Home', parentId: 2 }), 400, 40000, ['parentId']);
      await refused(t, () => t.admin('POST', '/admin/v1/categories', { categoryId: 0, name: '', parentId: -1 }), 400, 40000, [
        'categoryId',
        'name',
        'parentId',
      ]);
      const list = await t.admin('GET', '/admin/v1/categories');
      assert.deepEqual(
        list.body.data.list.map((c: { categoryId: number; parentId: number }) => [c.categoryId, c.parentId]),
        [
          [1, 0],
          [2, 1],
        ],
      );
    });

    it('upserts products with money in cents inside and amounts outside', async (ctx) => {
      const { t } = await build(ctx);
      await given.categories(t);
      const r = await t.admin('POST', '/admin/v1/products', {
        sku: 'MUG-1',
        name: 'Mug',
        categoryId: 2,
        price: '12.50',
        weightGrams: '350',
        options: { color: 'red' },
      });
      assert.equal(r.status, 200, r.raw);
      assert.equal(r.body.data.price, 12.5);
      assert.equal(r.body.data.weightGrams, 350);
      assert.deepEqual(r.body.data.options, { color: 'red' });
      const row = await t.store.db.selectFrom('products').selectAll().where('sku', '=', 'MUG-1').executeTakeFirstOrThrow();
      assert.equal(row.price_cents, 1250);
      const again = await t.admin('POST', '/admin/v1/products', { sku: 'MUG-1', name: 'Mug v2', price: 9.32, weightGrams: 340 });
      assert.equal(again.body.data.price, 9.32);
      assert.equal(again.body.data.categoryId, null);
    });

    it('refuses bad product bodies', async (ctx) => {
      const { t } = await build(ctx);
      await refused(t, () => t.admin('POST', '/admin/v1/products', { sku: 'P', name: 'n', price: 1.234, weightGrams: 1 }), 400, 40000, ['price']);
      await refused(t, () => t.admin('POST', '/admin/v1/products', { sku: 'P', name: 'n', price: -1, weightGrams: 1 }), 400, 40000, ['price']);
      await refused(t, () => t.admin('POST', '/admin/v1/products', { sku: 'P', name: 'n', price: 1, weightGrams: true }), 400, 40000, ['weightGrams']);
      await refused(t, () => t.admin('POST', '/admin/v1/products', { sku: 'S'.repeat(65), name: 'n'.repeat(256), price: 1, weightGrams: 1.5 }), 400, 40000, [
        'name',
        'sku',
        'weightGrams',
      ]);
      await refused(t, () => t.admin('POST', '/admin/v1/products', { sku: 'P', name: 'n', price: 1, weightGrams: 1, categoryId: 777 }), 400, 40000, [
        'categoryId',
      ]);
      // Trimmed before bounds: 64 characters plus spaces fits.
      assert.equal((await t.admin('POST', '/admin/v1/products', { sku: `  ${'S'.repeat(64)}  `, name: 'n', price: 1, weightGrams: 1 })).status, 200);
    });

    it('accepts only absolute http(s) URLs as a product’s imageUrl and a category’s imgUrl, by one rule, in the API and its import (issue 44, 13)', async (ctx) => {
      const { t } = await build(ctx);
      const product = { sku: 'P', name: 'n', price: 1, weightGrams: 1 };
      for (const url of [
        'javascript:alert(1)',
        'JavaScript:alert(1)',
        'data:image/png;base64,AAAA',
        '//img.example/a.jpg',
        '/a.jpg',
        'ftp://img.example/a.jpg',
        'https://',
        'https://img.example/a b.jpg',
      ]) {
        const body = await refused(t, () => t.admin('POST', '/admin/v1/products', { ...product, imageUrl: url }), 400, 40000, ['imageUrl']);
        assert.match(body.errors[0].message, /must be an absolute http:\/\/ or https:\/\/ URL/, url);
        await refused(t, () => t.admin('POST', '/admin/v1/categories', { categoryId: 9, name: 'C', parentId: 0, imgUrl: url }), 400, 40000, ['imgUrl']);
        await refused(t, () => t.admin('POST', '/admin/v1/import', { products: [{ ...product, imageUrl: url }] }), 400, 40000, ['products[0].imageUrl']);
      }
      for (const url of ['https://img.example/a.jpg', 'http://img.example/a.jpg?size=2', 'HTTPS://IMG.EXAMPLE/A.JPG', '', null]) {
        const r = await t.admin('POST', '/admin/v1/products', { ...product, imageUrl: url });
        assert.equal(r.status, 200, `${url}: ${r.raw}`);
      }
      assert.equal((await t.admin('POST', '/admin/v1/categories', { categoryId: 9, name: 'C', parentId: 0, imgUrl: 'https://img.example/c.png' })).status, 200);
    });

    it('sets stock absolutely and writes a ledger row per change', async (ctx) => {
      const { t } = await build(ctx);
      await given.warehouses(t, ['G007']);
      await given.product(t);
      await t.admin('POST', '/admin/v1/warehouses', { warehouseCode: 'US01', name: 'LA', countryCode: 'US' });
      const r = await t.admin('PUT', '/admin/v1/stocks', {
        items: [
          { sku: 'MUG-1', warehouseCode: 'G007', qty: 10 },
          { sku: 'MUG-1', warehouseCode: 'US01', qty: '4' },
        ],
      });
      assert.equal(r.status, 200, r.raw);
      assert.deepEqual(r.body.data.items, [
        { sku: 'MUG-1', warehouseCode: 'G007', qty: 10, delta: 10 },
        { sku: 'MUG-1', warehouseCode: 'US01', qty: 4, delta: 4 },
      ]);
      const same = await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'MUG-1', warehouseCode: 'G007', qty: 10 }] });
      assert.equal(same.body.data.items[0].delta, 0);
      const ledger = await t.store.db.selectFrom('stock_ledger').selectAll().execute();
      assert.equal(ledger.length, 2, 'an unchanged quantity writes no ledger row');
    });

    it('refuses bad stock rows, writing nothing', async (ctx) => {
      const { t } = await build(ctx);
      await given.warehouses(t, ['G007']);
      await given.product(t);
      await refused(
        t,
        () =>
          t.admin('PUT', '/admin/v1/stocks', {
            items: [
              { sku: 'MUG-1', warehouseCode: 'G007', qty: 3 },
              { sku: 'MUG-1', warehouseCode: 'NOPE', qty: 1 },
            ],
          }),
        400,
        40000,
        ['items[1].warehouseCode'],
      );
      await refused(t, () => t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'GHOST', warehouseCode: 'G007', qty: 1 }] }), 400, 40000, ['items[0].sku']);
      await refused(t, () => t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'MUG-1', warehouseCode: 'G007', qty: -1 }] }), 400, 40000, ['items[0].qty']);
      await refused(t, () => t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'MUG-1', warehouseCode: 'G007', qty: 2.5 }] }), 400, 40000, ['items[0].qty']);
      await refused(t, () => t.admin('PUT', '/admin/v1/stocks', { items: [] }), 400, 40000, ['items']);
      await refused(
        t,
        () =>
          t.admin('PUT', '/admin/v1/stocks', {
            items: [
              { sku: 'MUG-1', warehouseCode: 'G007', qty: 1 },
              { sku: 'MUG-1', warehouseCode: 'G007', qty: 2 },
            ],
          }),
        400,
        40000,
        ['items[1].sku'],
      );
    });

    it('adjusts stock relatively, never below zero', async (ctx) => {
      const { t } = await build(ctx);
      await given.warehouses(t, ['G007', 'US01']);
      await given.product(t);
      await given.stock(t);
      const r = await t.admin('POST', '/admin/v1/stocks/adjust', {
        items: [
          { sku: 'MUG-1', warehouseCode: 'G007', delta: -3 },
          { sku: 'MUG-1', warehouseCode: 'US01', delta: 2 },
        ],
      });
      assert.equal(r.status, 200, r.raw);
      assert.deepEqual(
        r.body.data.items.map((i: { qty: number }) => i.qty),
        [7, 6],
      );
      const body = await refused(
        t,
        () =>
          t.admin('POST', '/admin/v1/stocks/adjust', {
            items: [
              { sku: 'MUG-1', warehouseCode: 'US01', delta: 1 },
              { sku: 'MUG-1', warehouseCode: 'G007', delta: -8 },
            ],
          }),
        409,
        40903,
        ['items[1].delta'],
      );
      assert.equal(body.errors[0].qty, 7);
      assert.equal(body.errors[0].sku, 'MUG-1');
      await refused(t, () => t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'MUG-1', warehouseCode: 'G006', delta: -1 }] }), 400, 40000, [
        'items[0].warehouseCode',
      ]);
      const rows = await t.store.db.selectFrom('stocks').select('qty').orderBy('warehouse_id').execute();
      assert.deepEqual(
        rows.map((x) => x.qty),
        [7, 6],
      );
    });

    it('keeps Σ ledger deltas equal to stock after a mixed sequence', async (ctx) => {
      const { t } = await build(ctx);
      await given.warehouses(t, ['G007', 'US01']);
      await given.product(t);
      const seq: [string, unknown][] = [
        ['PUT', { items: [{ sku: 'MUG-1', warehouseCode: 'G007', qty: 50 }] }],
        [
          'ADJ',
          {
            items: [
              { sku: 'MUG-1', warehouseCode: 'G007', delta: -20 },
              { sku: 'MUG-1', warehouseCode: 'G007', delta: 5 },
            ],
          },
        ],
        ['PUT', { items: [{ sku: 'MUG-1', warehouseCode: 'US01', qty: 0 }] }],
        ['ADJ', { items: [{ sku: 'MUG-1', warehouseCode: 'US01', delta: -1 }] }],
        ['ADJ', { items: [{ sku: 'MUG-1', warehouseCode: 'US01', delta: 9 }] }],
        ['PUT', { items: [{ sku: 'MUG-1', warehouseCode: 'G007', qty: 12 }] }],
      ];
      for (const [op, body] of seq) await t.admin(op === 'PUT' ? 'PUT' : 'POST', op === 'PUT' ? '/admin/v1/stocks' : '/admin/v1/stocks/adjust', body);
      assert.deepEqual(await ledgerMismatches(t.store.db), []);
      const rows = await t.store.db.selectFrom('stocks').select('qty').orderBy('warehouse_id').execute();
      assert.deepEqual(
        rows.map((x) => x.qty),
        [12, 9],
      );
    });

    it('keeps the ledger exact under concurrent adjustments', async (ctx) => {
      const { t } = await build(ctx);
      await given.warehouses(t, ['G007']);
      await given.product(t);
      await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'MUG-1', warehouseCode: 'G007', qty: 20 }] });
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          i % 4 === 0
            ? t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'MUG-1', warehouseCode: 'G007', qty: 15 }] })
            : t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'MUG-1', warehouseCode: 'G007', delta: i % 2 ? -1 : 2 }] }),
        ),
      );
      // Stock never gets near zero here (20, set to 15, ±1 or +2 at a time): every request succeeds.
      assert.deepEqual(
        results.map((r) => r.status),
        results.map(() => 200),
        JSON.stringify(results.filter((r) => r.status !== 200).map((r) => r.body)),
      );
      assert.deepEqual(await ledgerMismatches(t.store.db), []);
    });

    it('upserts channels and refuses bad ones', async (ctx) => {
      const { t } = await build(ctx);
      await given.warehouses(t, ['G007', 'US01']);
      const body = {
        channelCode: 'STD',
        name: 'Standard Shipping',
        channelType: 'standard',
        warehouseCodes: ['G007', 'US01'],
        countries: ['*'],
        baseFee: '2.00',
        perKgFee: 1.5,
        deliveryDaysMin: 6,
        deliveryDaysMax: 10,
      };
      const r = await t.admin('POST', '/admin/v1/channels', body);
      assert.equal(r.status, 200, r.raw);
      assert.deepEqual(
        { ...r.body.data, updateDate: undefined },
        {
          ...body,
          channelType: 'Standard',
          baseFee: 2,
          perKgFee: 1.5,
          warehouseCodes: ['G007', 'US01'],
          carriers: [],
          trackingUrlTemplate: null,
          updateDate: undefined,
        },
      );
      const again = await t.admin('POST', '/admin/v1/channels', { ...body, warehouseCodes: ['US01'], countries: ['us', 'CA'] });
      assert.deepEqual(again.body.data.warehouseCodes, ['US01']);
      assert.deepEqual(again.body.data.countries, ['US', 'CA']);
      assert.equal((await t.admin('GET', '/admin/v1/channels')).body.data.list.length, 1);
      await refused(t, () => t.admin('POST', '/admin/v1/channels', { ...body, channelType: 'Teleport' }), 400, 40000, ['channelType']);
      await refused(t, () => t.admin('POST', '/admin/v1/channels', { ...body, warehouseCodes: ['G007', 'XX'] }), 400, 40000, ['warehouseCodes[1]']);
      await refused(t, () => t.admin('POST', '/admin/v1/channels', { ...body, deliveryDaysMin: 9, deliveryDaysMax: 3 }), 400, 40000, ['deliveryDaysMax']);
      await refused(t, () => t.admin('POST', '/admin/v1/channels', { ...body, countries: ['*', 'US'] }), 400, 40000, ['countries']);
      await refused(t, () => t.admin('POST', '/admin/v1/channels', { ...body, baseFee: '1.999', countries: ['USA'] }), 400, 40000, ['baseFee', 'countries[0]']);
      // Carriers and a tracking URL template (issue 29, 10): an https URL with {trackingNo}; at most 20 carriers.
      await refused(t, () => t.admin('POST', '/admin/v1/channels', { ...body, trackingUrlTemplate: 'https://t.example/' }), 400, 40000, [
        'trackingUrlTemplate',
      ]);
      await refused(t, () => t.admin('POST', '/admin/v1/channels', { ...body, trackingUrlTemplate: 'javascript:{trackingNo}' }), 400, 40000, [
        'trackingUrlTemplate',
      ]);
      const many = Array.from({ length: 21 }, (_, i) => `C${i}`);
      await refused(t, () => t.admin('POST', '/admin/v1/channels', { ...body, carriers: many }), 400, 40000, ['carriers']);
      const withCarriers = await t.admin('POST', '/admin/v1/channels', {
        ...body,
        carriers: [' UPS', 'ups', 'DHL'],
        trackingUrlTemplate: 'https://t.example/{trackingNo}',
      });
      assert.deepEqual([withCarriers.body.data.carriers, withCarriers.body.data.trackingUrlTemplate], [['UPS', 'DHL'], 'https://t.example/{trackingNo}']);
      const cleared = await t.admin('POST', '/admin/v1/channels', { ...body, carriers: [], trackingUrlTemplate: '' });
      assert.deepEqual([cleared.body.data.carriers, cleared.body.data.trackingUrlTemplate], [[], null]);
    });

    it('imports a whole document in one transaction, all or nothing', async (ctx) => {
      const { t } = await build(ctx);
      const bad = structuredClone(SMALL_CATALOGUE) as any;
      bad.stocks.push({ sku: 'SKU-C', warehouseCode: 'MARS', qty: 1 });
      const body = await refused(t, () => t.admin('POST', '/admin/v1/import', bad), 400, 40000, ['stocks[3].warehouseCode']);
      assert.match(body.errors[0].message, /MARS/);
      const summary = await loadCatalogue(t);
      assert.deepEqual(summary, { warehouses: 3, categories: 2, products: 3, stocks: 3, channels: 1 });
      const again = await loadCatalogue(t);
      assert.deepEqual(again, summary, 'importing the same document twice is idempotent');
      assert.deepEqual(await ledgerMismatches(t.store.db), []);
      // Every bad row of every section is listed in one answer, not just the first.
      const many = structuredClone(SMALL_CATALOGUE) as any;
      many.products[1].categoryId = 999;
      many.stocks.push({ sku: 'SKU-C', warehouseCode: 'MARS', qty: 1 }, { sku: 'GHOST', warehouseCode: 'G007', qty: 1 });
      many.channels[0].warehouseCodes.push('XX');
      const all = await refused(t, () => t.admin('POST', '/admin/v1/import', many), 400, 40000, [
        'products[1].categoryId',
        'stocks[3].warehouseCode',
        'stocks[4].sku',
        'channels[0].warehouseCodes[3]',
      ]);
      assert.equal(all.message, 'validation failed');
      // Past the cap: the first 50 are listed and the message counts them all.
      const flood = { stocks: Array.from({ length: 70 }, (_, i) => ({ sku: `NOPE-${i}`, warehouseCode: 'G007', qty: i })) };
      const capped = await refused(t, () => t.admin('POST', '/admin/v1/import', flood), 400, 40000);
      assert.equal(capped.errors.length, 50);
      assert.equal(capped.errors[49].field, 'stocks[49].sku');
      assert.equal(capped.message, 'validation failed (70 problems; the first 50 are listed)');
      // Children may come before their parents within one document.
      assert.equal(
        (
          await t.admin('POST', '/admin/v1/import', {
            categories: [
              { categoryId: 502, name: 'Child', parentId: 501 },
              { categoryId: 501, name: 'Parent', parentId: 0 },
            ],
          })
        ).status,
        200,
      );
    });
  });
}
