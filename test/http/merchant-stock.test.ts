import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildTestApp, DIALECTS, PG_SKIP, loadCatalogue, newMerchant, secondBoundary } from '../helpers.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';

const STOCKS = '/openapi/v1/product/stocks';
const skusOf = (res: { body: any }) => res.body.data.list.map((r: { sku: string }) => r.sku);
/** An instant strictly between changes made before and after it, as a start bound (ledger times are milliseconds). */
async function instant(): Promise<string> {
  await sleep(3);
  const at = new Date().toISOString();
  await sleep(3);
  return at;
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`merchant stock query (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    /**
     * Each test on an app and a database of its own (closed when the test ends), so any one runs
     * alone: a merchant, then (after `t0`, a second boundary) the test catalogue.
     */
    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect);
      const token = (await newMerchant(t)).token;
      const t0 = await secondBoundary();
      await loadCatalogue(t);
      const get = (query: string, path = STOCKS) => t.merchant(token, 'GET', `${path}?${query}`);
      const refused = async (query: string, field: string) => {
        const r = await get(query);
        assert.equal(r.status, 400, `${query}: ${r.raw}`);
        assert.equal(r.body.code, 40000);
        assert.deepEqual(
          r.body.errors.map((e: { field: string }) => e.field),
          [field],
          query,
        );
        return r.body;
      };
      return { t, token, t0, get, refused };
    };

    it('answers by SKU list: request order, duplicates and empty entries ignored, unknown SKUs absent', async (ctx) => {
      const { get } = await build(ctx);
      const r = await get('skus=SKU-B,,SKU-A, SKU-B ,NOPE,');
      assert.equal(r.status, 200, r.raw);
      assert.deepEqual(r.body.data, {
        total: 2,
        pageNumber: 1,
        pageSize: 30,
        list: [
          { sku: 'SKU-B', warehouseStockList: [{ qty: 7, warehouseCode: 'G006', countryCode: 'CN' }] },
          {
            sku: 'SKU-A',
            warehouseStockList: [
              { qty: 10, warehouseCode: 'G007', countryCode: 'CN' },
              { qty: 5, warehouseCode: 'US01', countryCode: 'US' },
            ],
          },
        ],
      });
      assert.deepEqual(skusOf(await get('skus=SKU-C')), ['SKU-C'], 'a known SKU without stock rows is listed with an empty list');
    });

    it('allows 30 distinct SKUs and refuses 31, naming the limit', async (ctx) => {
      const { get, refused } = await build(ctx);
      const thirty = Array.from({ length: 30 }, (_, i) => `X${i}`);
      assert.equal((await get(`skus=${[...thirty, 'X0', '', 'X1'].join(',')}`)).status, 200);
      const body = await refused(`skus=${[...thirty, 'X30'].join(',')}`, 'skus');
      assert.equal(body.errors[0].limit, 30);
      assert.match(body.message, /30/);
    });

    it('filters by warehouseCode (a SKU-list record may be left with no rows)', async (ctx) => {
      const { get } = await build(ctx);
      const r = await get('skus=SKU-A,SKU-B&warehouseCode=US01');
      assert.deepEqual(r.body.data.list, [
        { sku: 'SKU-A', warehouseStockList: [{ qty: 5, warehouseCode: 'US01', countryCode: 'US' }] },
        { sku: 'SKU-B', warehouseStockList: [] },
      ]);
      assert.deepEqual((await get('skus=SKU-A&warehouseCode=MARS')).body.data.list, []);
    });

    it('needs skus or a time, and pageNumber > 0 when querying by time', async (ctx) => {
      const { t0, refused } = await build(ctx);
      await refused('', 'skus');
      await refused('warehouseCode=G007', 'skus');
      await refused(`dateStartTime=${t0.start}`, 'pageNumber');
      await refused(`dateStartTime=${t0.start}&pageNumber=0`, 'pageNumber');
      await refused(`dateStartTime=${t0.start}&pageNumber=-1`, 'pageNumber');
      await refused(`dateStartTime=${t0.start}&pageNumber=1&pageSize=101`, 'pageSize');
      await refused(`dateStartTime=${t0.start}&pageNumber=1&pageSize=0`, 'pageSize');
    });

    it('refuses invalid timestamps naming the parameter, and a start after the end', async (ctx) => {
      const { get, refused } = await build(ctx);
      await refused('dateStartTime=yesterday&pageNumber=1', 'dateStartTime');
      await refused('dateEndTime=2024-02-30T00:00:00Z&pageNumber=1', 'dateEndTime');
      await refused('dateEndTime=2024-01-01T00:00:00&pageNumber=1', 'dateEndTime');
      await refused('dateStartTime=2024-01-02T00:00:00Z&dateEndTime=2024-01-01T00:00:00Z&pageNumber=1', 'dateStartTime');
      assert.equal(
        (await get('dateStartTime=2024-01-01T08:00:00%2B08:00&dateEndTime=2024-01-01T00:00:00Z&pageNumber=1')).status,
        200,
        'offsets are converted to UTC',
      );
    });

    it('answers by time window, open at either end, and by SKU list within a window', async (ctx) => {
      const { t, t0, get } = await build(ctx);
      const t1 = await secondBoundary();
      await t.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'SKU-C', warehouseCode: 'US01', qty: 3 }] });
      const t2 = await secondBoundary();
      await t.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'SKU-A', warehouseCode: 'G007', delta: -1 }] });

      const all = await get(`dateStartTime=${t0.start}&pageNumber=1`);
      assert.equal(all.body.data.total, 3);
      assert.deepEqual(skusOf(all), ['SKU-A', 'SKU-B', 'SKU-C'], 'ordered by first change in the window, then SKU');
      assert.equal(all.body.data.pageSize, 30);
      assert.deepEqual(skusOf(await get(`dateStartTime=${t1.start}&pageNumber=1`)), ['SKU-C', 'SKU-A']);
      assert.deepEqual(skusOf(await get(`dateStartTime=${t1.start}&dateEndTime=${t2.end}&pageNumber=1`)), ['SKU-C']);
      assert.deepEqual(skusOf(await get(`dateEndTime=${t1.end}&pageNumber=1`)), ['SKU-A', 'SKU-B'], 'SKU-A changed again later, but it did change before t1');
      assert.deepEqual(skusOf(await get(`dateEndTime=${t0.end}&pageNumber=1`)), []);
      assert.deepEqual(skusOf(await get(`dateStartTime=${t1.start}&pageNumber=1&warehouseCode=US01`)), ['SKU-C']);
      const both = await get(`skus=SKU-B,SKU-A,SKU-C&dateStartTime=${t2.start}`);
      assert.deepEqual(both.body.data.list, [
        {
          sku: 'SKU-A',
          warehouseStockList: [
            { qty: 9, warehouseCode: 'G007', countryCode: 'CN' },
            { qty: 5, warehouseCode: 'US01', countryCode: 'US' },
          ],
        },
      ]);
      const paged = await get(`dateStartTime=${t0.start}&pageNumber=2&pageSize=2`);
      assert.deepEqual({ ...paged.body.data, list: skusOf(paged) }, { total: 3, pageNumber: 2, pageSize: 2, list: ['SKU-C'] });
    });

    it('walks every page of a window while stock changes: no SKU skipped or repeated', async (ctx) => {
      const { t, get } = await build(ctx);
      const start = await instant();
      const products = Array.from({ length: 23 }, (_, i) => ({ sku: `P-${String(i).padStart(2, '0')}`, name: `P${i}`, price: 1, weightGrams: 1 }));
      await loadCatalogue(t, { products, stocks: products.map((p, i) => ({ sku: p.sku, warehouseCode: i % 2 ? 'G007' : 'US01', qty: 50 })) });
      const expected = new Set(products.map((p) => p.sku));
      const seen: string[] = [];
      for (let page = 1; ; page++) {
        const r = await get(`dateStartTime=${start}&pageNumber=${page}&pageSize=4`);
        assert.equal(r.status, 200, r.raw);
        const skus: string[] = skusOf(r);
        seen.push(...skus);
        if (skus.length === 0) break;
        // Between pages: change a SKU already read, one not read yet, and bring a new SKU into the window.
        await t.admin('POST', '/admin/v1/stocks/adjust', {
          items: [
            { sku: skus[0], warehouseCode: Number(skus[0].slice(2)) % 2 ? 'G007' : 'US01', delta: -1 },
            { sku: 'P-22', warehouseCode: 'US01', delta: -1 },
            { sku: `SKU-${'ABC'[page % 3]}`, warehouseCode: 'G006', delta: 1 },
          ],
        });
      }
      const counts = new Map<string, number>();
      for (const s of seen) counts.set(s, (counts.get(s) ?? 0) + 1);
      assert.deepEqual(
        [...counts].filter(([, n]) => n > 1),
        [],
        'no SKU repeated',
      );
      assert.deepEqual(
        [...expected].filter((s) => !counts.has(s)),
        [],
        'no SKU skipped',
      );
      assert.deepEqual(await ledgerMismatches(t.store.db), []);
    });

    it('answers under the /openapi/openapi alias and needs the stock:read scope', async (ctx) => {
      const { t, get } = await build(ctx);
      const r = await get('skus=SKU-B', `/openapi${STOCKS}`);
      assert.equal(r.status, 200);
      assert.deepEqual(skusOf(r), ['SKU-B']);
      const catalogOnly = (await newMerchant(t, 'Reader', { scopes: ['catalog:read'] })).token;
      assert.equal((await t.merchant(catalogOnly, 'GET', `${STOCKS}?skus=SKU-A`)).body.code, 40300);
      assert.equal((await t.app.inject({ method: 'GET', url: `/openapi${STOCKS}?skus=SKU-A` })).statusCode, 401);
    });
  });
}
