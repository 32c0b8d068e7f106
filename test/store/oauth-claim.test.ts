import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { claimRefreshToken, findRefreshTokenByHash, insertRefreshToken } from '../../src/store/oauth.repository.ts';
import type { Store } from '../../src/store/db.ts';
import { DIALECTS, freshStore } from '../helpers.ts';

/**
 * SPEC §2.2: a refresh token rotates once. Requests racing with one token all read it unused
 * before any of them claims it (app.inject rarely interleaves them that finely, so the HTTP race
 * test alone cannot see a claim that lets two through); the claim itself must let exactly one win.
 */
for (const dialect of DIALECTS) {
  describe(`refresh-token claim (${dialect})`, () => {
    let fresh: Awaited<ReturnType<typeof freshStore>>;
    let store: Store;
    before(async () => {
      fresh = await freshStore(dialect);
      store = fresh.store;
      await store.db
        .insertInto('merchants')
        .values({ name: 'Claim', status: 'active', client_id: 'claim-client', client_secret_hash: 'x', created_at: 0, updated_at: 0 })
        .execute();
    });
    after(() => fresh.drop());

    it('lets exactly one of several claims of a token read as unused win', async () => {
      const merchant = await store.db.selectFrom('merchants').select('id').executeTakeFirstOrThrow();
      const row = await store.db.transaction().execute((trx) =>
        insertRefreshToken(
          trx,
          {
            merchantId: merchant.id,
            familyId: 'fam_claim',
            tokenHash: 'hash-claim',
            environment: 'sandbox',
            scopes: ['stock:read'],
            expiresAt: Date.now() + 60_000,
          },
          Date.now(),
        ),
      );
      const seen = await Promise.all([1, 2, 3].map(() => findRefreshTokenByHash(store.db, 'hash-claim')));
      assert.ok(
        seen.every((r) => r?.used_at === null),
        'every racer read it unused',
      );
      const claims = await Promise.all([1, 2, 3].map(() => store.db.transaction().execute((trx) => claimRefreshToken(trx, row.id, Date.now()))));
      assert.deepEqual(claims.filter(Boolean).length, 1, `exactly one claim wins: ${claims}`);
      assert.notEqual((await findRefreshTokenByHash(store.db, 'hash-claim'))?.used_at, null);
    });
  });
}
