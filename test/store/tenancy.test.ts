import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { transactionIn, within, type MerchantOwnedTable, type MerchantScope } from '../../src/store/tenancy.ts';
import { merchantOfScope } from '../../src/store/merchants.repository.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';
import { handleOf } from '../../src/store/scope-handle.ts';
import { DIALECTS, PG_SKIP, freshStore } from '../helpers.ts';

// Compile-time part of the rule: only tables with a merchant_id column can be scoped.
const owned: MerchantOwnedTable[] = ['api_tokens', 'oauth_refresh_tokens'];
// @ts-expect-error the catalogue is shared by every merchant
const shared: MerchantOwnedTable = 'products';
void owned;
void shared;

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`forMerchant: storage scoped to one merchant (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('reads, updates, deletes and inserts only the merchant’s own rows', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const now = Date.now();
      const merchant = (name: string) =>
        db.store.db
          .insertInto('merchants')
          .values({ name, status: 'active', client_id: `cli_${name}`, client_secret_hash: 'x', created_at: now, updated_at: now })
          .returning('id')
          .executeTakeFirstOrThrow();
      const a = (await merchant('a')).id;
      const b = (await merchant('b')).id;
      const token = (hash: string) => ({
        token_hash: hash,
        environment: 'sandbox' as const,
        scopes: 'stock:read',
        expires_at: null,
        revoked_at: null,
        created_at: now,
      });

      const scopeA = forMerchant(db.store.db, a);
      const scopeB = forMerchant(db.store.db, b);
      await scopeA.insertInto('api_tokens', [token('a1'), token('a2')]).execute();
      // A merchant_id smuggled into the values is overwritten by the scope's.
      await scopeB.insertInto('api_tokens', { ...token('b1'), merchant_id: a } as never).execute();

      const seenByA = await scopeA.selectFrom('api_tokens').select('token_hash').orderBy('token_hash').execute();
      assert.deepEqual(
        seenByA.map((r) => r.token_hash),
        ['a1', 'a2'],
      );
      const b1 = await db.store.db.selectFrom('api_tokens').selectAll().where('token_hash', '=', 'b1').executeTakeFirstOrThrow();
      assert.equal(b1.merchant_id, b);

      // Looking up B's row by its id through A's scope finds nothing, exactly like a missing id.
      assert.equal(await scopeA.selectFrom('api_tokens').selectAll().where('id', '=', b1.id).executeTakeFirst(), undefined);
      assert.equal(await scopeA.selectFrom('api_tokens').selectAll().where('id', '=', 987654321).executeTakeFirst(), undefined);
      const updated = await scopeA.updateTable('api_tokens').set({ revoked_at: now }).where('id', '=', b1.id).executeTakeFirst();
      assert.equal(Number(updated.numUpdatedRows), 0);
      const deleted = await scopeA.deleteFrom('api_tokens').where('id', '=', b1.id).executeTakeFirst();
      assert.equal(Number(deleted.numDeletedRows), 0);
      assert.equal((await db.store.db.selectFrom('api_tokens').select('revoked_at').where('id', '=', b1.id).executeTakeFirstOrThrow()).revoked_at, null);

      // Joins keep the filter on the scoped table.
      const joined = await scopeB
        .selectFrom('api_tokens')
        .innerJoin('merchants', 'merchants.id', 'api_tokens.merchant_id')
        .select(['merchants.name', 'api_tokens.token_hash'])
        .execute();
      assert.deepEqual(joined, [{ name: 'b', token_hash: 'b1' }]);

      // Inside a transaction too.
      await db.store.db.transaction().execute(async (trx) => {
        const inTrx = forMerchant(trx, b);
        assert.equal(handleOf(inTrx), trx);
        assert.equal((await inTrx.selectFrom('api_tokens').selectAll().execute()).length, 1);
      });
      assert.throws(() => forMerchant(db.store.db, 0), /bad merchant id/);
    });

    it('a copy of a scope with another merchant’s number reaches nothing: the store knows only the scopes it made', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const now = Date.now();
      const merchant = async (name: string) =>
        (
          await db.store.db
            .insertInto('merchants')
            .values({ name, status: 'active', client_id: `cli_${name}`, client_secret_hash: 'x', created_at: now, updated_at: now })
            .returning('id')
            .executeTakeFirstOrThrow()
        ).id;
      const a = await merchant('a');
      const victim = await merchant('victim');
      const own = forMerchant(db.store.db, a);
      // Type-checks (a spread keeps every property), so the store must not trust `merchantId`.
      const forged: MerchantScope = { ...own, merchantId: victim };
      await assert.rejects(async () => merchantOfScope(forged), /not a merchant scope the store made/);
      await assert.rejects(
        transactionIn(forged, async () => 'ran'),
        /not a merchant scope the store made/,
      );
      await db.store.db.transaction().execute(async (trx) => {
        assert.throws(() => within(forged, trx), /not a merchant scope the store made/);
        assert.equal(within(own, trx).merchantId, a);
      });
      assert.equal((await merchantOfScope(own))?.name, 'a');
    });
  });
}
