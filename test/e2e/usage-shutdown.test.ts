import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openStore } from '../../src/store/db.ts';
import { DIALECTS, emptyPgSchema } from '../helpers.ts';
import { exited, freePort, startProcess, tempDir } from './process.ts';

/**
 * The usage counters of a real server process reach the database when it is stopped (SIGTERM, as
 * `npx stockist stop` sends): the flush interval is set far beyond the test, so only the shutdown
 * flush can have written them.
 */
for (const dialect of DIALECTS) {
  describe(`usage counters at shutdown (real process, ${dialect})`, () => {
    it('SIGTERM flushes the counts of the requests served', { timeout: 300_000 }, async (t) => {
      const dir = tempDir();
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const pg = dialect === 'postgres' ? await emptyPgSchema(t, 'usage_stop') : null;
      const port = await freePort();
      const env = {
        DATA_DIR: dir,
        DATABASE_URL: pg ? pg.url : `sqlite:${path.join(dir, 'stockist.db')}`,
        PORT: String(port),
        TLS: 'off',
        LOG_LEVEL: 'warn',
        STOCKIST_ENV: 'sandbox',
        ADMIN_API_KEY: 'usage-stop-admin-key-0123456789',
        USAGE_FLUSH_MS: '600000',
      };
      const { child, output } = await startProcess(['serve', '--seed', 'demo'], env, /Demo merchant token: \S+/);
      t.after(() => child.kill('SIGKILL'));
      const token = /Demo merchant token: (\S+)/.exec(output())![1];
      const call = (url: string) => fetch(`http://127.0.0.1:${port}${url}`, { headers: { authorization: `Bearer ${token}` } });
      for (let i = 0; i < 3; i++) assert.equal((await call('/openapi/v1/product/category')).status, 200);
      const missing = await call('/openapi/v2/order/orders/123456789?note=QUERY-MARKER');
      assert.equal(missing.status, 404);
      const code = (await missing.json()).code;

      child.kill('SIGTERM');
      assert.equal(await exited(child), 0, output());

      const rows = pg
        ? (await pg.client.query(`select status_class, error_code, request_count from ${pg.schema}.merchant_usage_daily order by status_class`)).rows
        : await (async () => {
            const store = await openStore(env.DATABASE_URL);
            try {
              return await store.db
                .selectFrom('merchant_usage_daily')
                .select(['status_class', 'error_code', 'request_count'])
                .orderBy('status_class')
                .execute();
            } finally {
              await store.close();
            }
          })();
      assert.deepEqual(
        rows.map((r) => [Number(r.status_class), Number(r.error_code), Number(r.request_count)]),
        [
          [2, 0, 3],
          [4, code, 1],
        ],
      );
    });
  });
}
