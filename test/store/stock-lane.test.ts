import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newWebhookSecret } from '../../src/domain/webhook-signature.ts';
import { forMerchant } from '../../src/store/scope-mint.ts';
import { claimDueDeliveries, insertEndpoint, insertStockBatch, insertStockDeliveries, insertStockEvents } from '../../src/store/webhooks.repository.ts';
import { DIALECTS, PG_SKIP, freshStore } from '../helpers.ts';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`the stock.changed lane (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('is held by a delivery that gave up, unlike an order lane: skipping it would leave a gap in the feed', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const now = Date.now();
      const { id: merchantId } = await db.store.db
        .insertInto('merchants')
        .values({ name: 'Lane', status: 'active', client_id: 'lane', client_secret_hash: 'x', created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      // Written as the services do: in a transaction (store functions that write take one).
      const { endpointId, eventId1, eventId2 } = await db.store.db.transaction().execute(async (trx) => {
        const scope = forMerchant(trx, merchantId);
        const endpointId = await insertEndpoint(scope, {
          url: 'http://127.0.0.1:9/lane',
          events: '["stock.changed"]',
          secret: newWebhookSecret(),
          previous_secret: null,
          previous_secret_until: null,
          status: 'active',
          disabled_reason: null,
          disabled_at: null,
          failing_since: null,
          created_at: now,
          updated_at: now,
        });
        const [eventId1, eventId2] = await insertStockEvents(scope, [await insertStockBatch(trx, '{}', now), await insertStockBatch(trx, '{}', now)], now);
        await insertStockDeliveries(
          scope,
          [
            { endpointId, eventId: eventId1, cursorFrom: 'sc1_1', cursorTo: 'sc1_2' },
            { endpointId, eventId: eventId2, cursorFrom: 'sc1_2', cursorTo: 'sc1_3' },
          ],
          now,
          now + 1000,
        );
        return { endpointId, eventId1, eventId2 };
      });
      const ids = await db.store.db.selectFrom('webhook_deliveries').select(['id', 'event_id']).where('endpoint_id', '=', endpointId).orderBy('id').execute();
      assert.deepEqual(
        ids.map((r) => r.event_id),
        [eventId1, eventId2],
        'one statement, ids in the order given (the lane is sent in id order)',
      );
      const [first, second] = ids.map((r) => r.id);
      const claim = (worker: string) => db.store.db.transaction().execute((trx) => claimDueDeliveries(trx, dialect, worker, now + 10, now + 20, 10));
      assert.deepEqual(await claim('w1'), [first], 'one at a time, oldest first');
      await db.store.db.updateTable('webhook_deliveries').set({ status: 'failed', claimed_by: null, claimed_until: null }).where('id', '=', first).execute();
      assert.deepEqual(await claim('w2'), [], 'the given-up delivery still holds the lane');
      await db.store.db.updateTable('webhook_deliveries').set({ status: 'succeeded' }).where('id', '=', first).execute();
      assert.deepEqual(await claim('w3'), [second]);
    });
  });
}
