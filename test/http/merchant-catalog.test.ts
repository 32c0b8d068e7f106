import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp, DIALECTS, PG_SKIP, loadCatalogue, newMerchant, secondBoundary } from '../helpers.ts';

const CATEGORY = '/openapi/v1/product/category';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`merchant catalogue API (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;
    /**
     * Each test on an app and a database of its own (closed when the test ends), so any one runs
     * alone: a merchant, the test catalogue and two more categories (Cups under Kitchen, Garden).
     */
    const build = async (ctx: TestContext) => {
      const t = await buildTestApp(ctx, dialect);
      const token = (await newMerchant(t)).token;
      await loadCatalogue(t);
      await loadCatalogue(t, {
        categories: [
          { categoryId: 12, name: 'Cups', parentId: 11, imgUrl: 'https://img/cups.png' },
          { categoryId: 5, name: 'Garden', parentId: 0 },
        ],
      });
      const get = (url: string, headers: Record<string, string> = {}) =>
        t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}`, ...headers } });
      return { t, get };
    };

    it('returns the category tree with level, fullCategoryId and child', async (ctx) => {
      const { get } = await build(ctx);
      const r = await get(CATEGORY);
      assert.equal(r.statusCode, 200);
      const leaf = { categoryId: 12, name: 'Cups', parentId: 11, level: 3, fullCategoryId: '10/11/12', imgUrl: 'https://img/cups.png', child: [] };
      assert.deepEqual(r.json(), {
        code: 10000,
        message: 'success',
        data: {
          list: [
            { categoryId: 5, name: 'Garden', parentId: 0, level: 1, fullCategoryId: '5', imgUrl: null, child: [] },
            {
              categoryId: 10,
              name: 'Home',
              parentId: 0,
              level: 1,
              fullCategoryId: '10',
              imgUrl: null,
              child: [{ categoryId: 11, name: 'Kitchen', parentId: 10, level: 2, fullCategoryId: '10/11', imgUrl: null, child: [leaf] }],
            },
          ],
        },
      });
    });

    it('sends an ETag, answers If-None-Match with 304, and changes the tag when any category changes', async (ctx) => {
      const { t, get } = await build(ctx);
      const first = await get(CATEGORY);
      const etag = String(first.headers.etag);
      assert.match(etag, /^"[\w-]+"$/);
      const same = await get(CATEGORY, { 'if-none-match': etag });
      assert.equal(same.statusCode, 304);
      assert.equal(same.body, '');
      assert.equal(same.headers.etag, etag);
      assert.equal((await get(CATEGORY, { 'if-none-match': `"other", W/${etag}` })).statusCode, 304, 'weak comparison over a list');
      assert.equal((await get(`/openapi${CATEGORY}`, { 'if-none-match': etag })).statusCode, 304, 'the alias path too');
      assert.equal((await get(CATEGORY, { 'if-none-match': '"stale"' })).statusCode, 200);
      // Re-saving identical data is no change; a rename deep in the tree is.
      await t.admin('POST', '/admin/v1/categories', { categoryId: 12, name: 'Cups', parentId: 11, imgUrl: 'https://img/cups.png' });
      assert.equal((await get(CATEGORY, { 'if-none-match': etag })).statusCode, 304);
      await t.admin('POST', '/admin/v1/categories', { categoryId: 12, name: 'Mugs & cups', parentId: 11, imgUrl: 'https://img/cups.png' });
      const changed = await get(CATEGORY, { 'if-none-match': etag });
      assert.equal(changed.statusCode, 200);
      assert.notEqual(changed.headers.etag, etag);
      await t.admin('POST', '/admin/v1/categories', { categoryId: 13, name: 'Jars', parentId: 5 });
      assert.notEqual((await get(CATEGORY)).headers.etag, changed.headers.etag, 'a new category changes the tag');
    });

    it('lists warehouses with their countries and status', async (ctx) => {
      const { t, get } = await build(ctx);
      await t.admin('POST', '/admin/v1/warehouses', { warehouseCode: 'G006', name: 'Yiwu', countryCode: 'CN', status: 0 });
      const r = await get('/openapi/openapi/v1/product/countryAndWarehouse');
      assert.equal(r.statusCode, 200);
      const list = r.json().data.list;
      assert.deepEqual(
        list.map((w: Record<string, unknown>) => ({ ...w, warehouseId: typeof w.warehouseId })),
        [
          { warehouseId: 'number', warehouseCode: 'G007', warehouseNameExt: 'Shenzhen', countryCode: 'CN', countryCn: 'China', status: 1 },
          { warehouseId: 'number', warehouseCode: 'G006', warehouseNameExt: 'Yiwu', countryCode: 'CN', countryCn: 'China', status: 0 },
          { warehouseId: 'number', warehouseCode: 'US01', warehouseNameExt: 'Los Angeles', countryCode: 'US', countryCn: 'United States', status: 1 },
        ],
      );
    });

    it('pages the product catalogue, filtered by category subtree and update window', async (ctx) => {
      const { t, get } = await build(ctx);
      const r = await get('/openapi/v1/product/products');
      assert.equal(r.statusCode, 200, r.body);
      const data = r.json().data;
      assert.deepEqual({ ...data, list: data.list.length }, { total: 3, pageNumber: 1, pageSize: 30, list: 3 });
      assert.deepEqual(Object.keys(data.list[0]).sort(), ['categoryId', 'imageUrl', 'name', 'price', 'sku', 'updateDate', 'weightGrams']);
      assert.deepEqual(data.list[0], { ...data.list[0], sku: 'SKU-A', name: 'Mug', categoryId: 11, price: 9.32, weightGrams: 350, imageUrl: null });
      const skus = async (query: string) => (await get(`/openapi/v1/product/products?${query}`)).json().data.list.map((p: { sku: string }) => p.sku);
      assert.deepEqual(await skus('pageSize=2&pageNumber=2'), ['SKU-C']);
      const since = await secondBoundary();
      await t.admin('POST', '/admin/v1/products', { sku: 'GARDEN-1', name: 'Rake', categoryId: 5, price: 12, weightGrams: 900 });
      await t.admin('POST', '/admin/v1/products', { sku: 'SKU-A', name: 'Mug', categoryId: 11, price: 9.5, weightGrams: 350 });
      assert.deepEqual(await skus('categoryId=10'), ['SKU-A', 'SKU-B', 'SKU-C'], 'a category includes its subcategories');
      assert.deepEqual(await skus('categoryId=5'), ['GARDEN-1']);
      assert.deepEqual(await skus('categoryId=999'), []);
      assert.deepEqual(await skus(`updateStartTime=${since.start}`), ['GARDEN-1', 'SKU-A'], 'ascending update time');
      assert.deepEqual(await skus(`updateEndTime=${since.end}`), ['SKU-B', 'SKU-C']);
      assert.deepEqual(await skus(`updateStartTime=${since.start}&categoryId=11`), ['SKU-A']);
      for (const [query, field] of [
        ['pageSize=101', 'pageSize'],
        ['pageNumber=0', 'pageNumber'],
        ['categoryId=x', 'categoryId'],
        ['updateStartTime=soon', 'updateStartTime'],
        ['updateStartTime=2024-01-02T00:00:00Z&updateEndTime=2024-01-01T00:00:00Z', 'updateStartTime'],
      ]) {
        const bad = await get(`/openapi/v1/product/products?${query}`);
        assert.equal(bad.statusCode, 400, query);
        assert.deepEqual(
          bad.json().errors.map((e: { field: string }) => e.field),
          [field],
          query,
        );
      }
    });

    it('needs the catalog:read scope on every catalogue route', async (ctx) => {
      const { t } = await build(ctx);
      const stockOnly = (await newMerchant(t, 'Stock only', { scopes: ['stock:read'] })).token;
      for (const url of [CATEGORY, '/openapi/v1/product/countryAndWarehouse', '/openapi/openapi/v1/product/products']) {
        const r = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${stockOnly}` } });
        assert.equal(r.statusCode, 403, url);
        assert.equal(r.json().code, 40300);
        assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 401, url);
      }
    });
  });
}
