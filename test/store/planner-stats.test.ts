import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { generate } from '../../bench/generate.ts';
import { openStore } from '../../src/store/db.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { ORDER_ID_START } from '../../src/store/migrations/0004_orders.ts';

describe('planner statistics of a long-lived SQLite connection', () => {
  it('are refreshed while the server runs: orders by id stay primary-key lookups as the orders grow from none', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-stats-'));
    try {
      // The same start twice: a new database, opened before its orders exist (a server started on
      // an empty database), then orders added through that connection.
      const planAfterGrowth = async (plannerStatsEveryMs: number) => {
        const store = await openStore(`sqlite:${path.join(dir, `every-${plannerStatsEveryMs}.db`)}`, { plannerStatsEveryMs, checkpointEveryMs: 0 });
        try {
          await migrateToLatest(store);
          const { merchantId } = await generate(store, { skus: 20, orders: 3000, ledgerRows: 60, onProgress: () => {} });
          const ids = Array.from({ length: 10 }, (_, i) => ORDER_ID_START + 1 + i * 250);
          const plan = async () =>
            (
              await sql<{ detail: string }>`explain query plan select * from orders where merchant_id = ${merchantId} and id in (${sql.join(ids)})
                order by created_at desc, id desc`.execute(store.db)
            ).rows
              .map((r) => r.detail)
              .join(' | ');
          for (let i = 0; i < 100 && plannerStatsEveryMs > 0 && !(await plan()).includes('PRIMARY KEY'); i++) await new Promise((r) => setTimeout(r, 20));
          return await plan();
        } finally {
          await store.close();
        }
      };
      // Without the refresh the connection keeps the empty tables' plan: every order of the merchant.
      assert.match(await planAfterGrowth(0), /USING (COVERING )?INDEX orders_merchant/);
      assert.match(await planAfterGrowth(20), /SEARCH orders USING INTEGER PRIMARY KEY/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
