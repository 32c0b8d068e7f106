import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECTS, PG_SKIP, freshStore } from '../helpers.ts';
import { up as nfcSkus } from '../../src/store/migrations/0007_nfc_skus.ts';
import type { Store } from '../../src/store/db.ts';

/** Migration 0007 (SPEC §1 Text): SKUs written before the NFC rule are rewritten in NFC. */
const addProduct = (store: Store, sku: string) => {
  const now = Date.now();
  return store.db
    .insertInto('products')
    .values({ sku, name: sku, category_id: null, price_cents: 1, weight_grams: 1, image_url: null, options: null, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
};
const skus = async (store: Store) => (await store.db.selectFrom('products').select('sku').orderBy('id').execute()).map((r) => r.sku);

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`migration 0007: SKUs in NFC (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('rewrites SKUs stored in another normalisation form, leaving the rest alone', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      for (const sku of ['PLAIN-1', 'CAFE\u0301', 'ANGSTROM-\u212b', 'NFC-\u00e9']) await addProduct(db.store, sku);
      await nfcSkus({ db: db.store.db, dialect });
      assert.deepEqual(await skus(db.store), ['PLAIN-1', 'CAF\u00c9', 'ANGSTROM-\u00c5', 'NFC-\u00e9']);
      await nfcSkus({ db: db.store.db, dialect });
      assert.deepEqual(await skus(db.store), ['PLAIN-1', 'CAF\u00c9', 'ANGSTROM-\u00c5', 'NFC-\u00e9'], 'a second run changes nothing');
    });

    it('stops, naming both, when two products differ only in normalisation', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const a = await addProduct(db.store, 'CAF\u00c9');
      const b = await addProduct(db.store, 'CAFE\u0301');
      await assert.rejects(nfcSkus({ db: db.store.db, dialect }), new RegExp(`products ${a.id} and ${b.id} .*merge them`));
    });
  });
}
