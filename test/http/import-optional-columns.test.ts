import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, loadCatalogue, SMALL_CATALOGUE, tableDigests, useApp } from '../helpers.ts';
import { follow, importOutcome, signedIn, staff, type Browser } from './console-client.ts';

/**
 * Front ends III item 9: a products CSV without the optional columns (categoryId, imageUrl) leaves
 * those fields as they are on existing products — in the console's dry run (no such change listed)
 * and in the import; the product's options, which a CSV cannot carry, stay too. A column the file
 * has, left empty, clears its value (and the dry run says so). The CLI: test/e2e/import.test.ts.
 */
for (const dialect of DIALECTS) {
  describe(`products CSV without optional columns (${dialect})`, () => {
    const t = useApp(dialect);
    let owner: Browser;
    let csrf: string;
    const product = (sku: string) =>
      t.store.db.selectFrom('products').select(['name', 'price_cents', 'category_id', 'image_url', 'options']).where('sku', '=', sku).executeTakeFirstOrThrow();
    /** The dry run's changes for `sku`: each field it lists. */
    const dryRunFields = async (fileName: string, fileText: string, sku: string) => {
      const before = await tableDigests(t.store);
      const posted = await owner.post('/console/import/preview', { _csrf: csrf, fileName, fileText });
      assert.equal(posted.statusCode, 303, posted.body.slice(0, 300));
      const preview = await follow(owner, posted);
      assert.equal(preview.statusCode, 200);
      assert.deepEqual(await tableDigests(t.store), before, 'a dry run writes nothing');
      const row = new RegExp(`<tr data-key="${sku}"[^>]*>([\\s\\S]*?)</tr>`).exec(preview.body);
      assert.ok(row, `the dry run lists ${sku}`);
      return [...row[1].matchAll(/data-field="([^"]+)"/g)].map((m) => m[1]);
    };
    const imported = async (fileName: string, fileText: string) => {
      const started = await owner.post('/console/import', { _csrf: csrf, fileName, fileText });
      assert.equal(started.statusCode, 303, started.body.slice(0, 300));
      assert.equal((await importOutcome(owner, started.headers.location as string)).state, 'done');
    };

    // Made once, before any test: a product with a category, an image and options for each test
    // (each imports over its own), the owner signed in.
    before(async () => {
      const mug = (sku: string) => ({
        sku,
        name: 'Mug',
        categoryId: 11,
        price: '9.32',
        weightGrams: 350,
        imageUrl: 'https://img.example/mug.jpg',
        options: { color: 'red' },
      });
      await loadCatalogue(t, { warehouses: SMALL_CATALOGUE.warehouses, categories: SMALL_CATALOGUE.categories, products: [mug('SKU-A'), mug('SKU-B')] });
      await staff(t, 'owner@example.com', 'owner');
      owner = await signedIn(t, 'owner@example.com');
      csrf = await owner.csrf();
    });

    it('sets up products with a category, an image and options', async () => {
      for (const sku of ['SKU-A', 'SKU-B']) {
        const p = await product(sku);
        assert.equal(p.category_id, 11);
      }
    });

    it('without the columns: the dry run lists only what the file changes, and the import keeps category, image and options', async () => {
      const text = 'sku,name,price,weightGrams\nSKU-A,Big mug,10.00,350\n';
      const fields = await dryRunFields('mugs.csv', text, 'SKU-A');
      assert.ok(fields.length > 0, 'the name and price change is listed');
      for (const f of fields) assert.doesNotMatch(f, /image|categor|option/i, `nothing said about ${f}`);
      await imported('mugs.csv', text);
      const a = await product('SKU-A');
      assert.equal(a.name, 'Big mug');
      assert.equal(a.price_cents, 1000);
      assert.equal(a.category_id, 11);
      assert.equal(a.image_url, 'https://img.example/mug.jpg');
      assert.deepEqual(JSON.parse(String(a.options)), { color: 'red' });
    });

    it('with the imageUrl column left empty: the dry run says the image goes, and the import clears it (the category stays)', async () => {
      const text = 'sku,name,price,weightGrams,imageUrl\nSKU-B,Big mug,10.00,350,\n';
      const fields = await dryRunFields('mugs.csv', text, 'SKU-B');
      assert.ok(
        fields.some((f) => /image/i.test(f)),
        `the image's removal is listed (${fields})`,
      );
      await imported('mugs.csv', text);
      const a = await product('SKU-B');
      assert.equal(a.image_url, null);
      assert.equal(a.category_id, 11);
    });
  });
}
