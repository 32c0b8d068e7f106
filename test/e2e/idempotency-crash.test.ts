import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { makeDatabase } from '../../scripts/chaos/harness.ts';
import { ADDRESS, ORDER_CATALOGUE } from '../fixtures.ts';
import { DIALECTS, PG_URL } from '../helpers.ts';
import { exited, freePort, startProcess, tempDir } from './process.ts';

const ADMIN_KEY = 'crash-key-admin-key-0123456';

/**
 * SPEC §4.4 across a real crash: the owner of an Idempotency-Key is killed (-9) in the middle of
 * its order; the retry after the restart is answered at once (here: it runs, since nothing of the
 * owner's order committed). An earlier design committed an "in flight" claim before the work and
 * answered the retry 409 until 60 s had passed.
 */
for (const dialect of DIALECTS) {
  describe(`a killed key owner (${dialect}, real processes)`, () => {
    it('leaves no claim behind: the retry after the restart creates the order once', { timeout: 300_000 }, async (t) => {
      const dir = tempDir();
      const database = await makeDatabase(dialect, dir, PG_URL ?? undefined);
      const env = {
        DATA_DIR: dir,
        DATABASE_URL: database.url,
        TLS: 'off',
        LOG_LEVEL: 'error',
        STOCKIST_ENV: 'sandbox',
        ADMIN_API_KEY: ADMIN_KEY,
        SEED: 'none',
        OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
      };
      let server: Awaited<ReturnType<typeof startProcess>> | null = null;
      const cleanups: (() => Promise<unknown> | unknown)[] = [];
      t.after(async () => {
        if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
        for (const c of cleanups.reverse()) await c();
        await database.drop();
        fs.rmSync(dir, { recursive: true, force: true });
      });
      const start = async () => {
        const port = await freePort();
        server = await startProcess(['serve', '--port', String(port)], env, /Stockist listening/);
        return `http://127.0.0.1:${port}`;
      };
      const call = async (base: string, method: string, url: string, token: string, body?: unknown, headers: Record<string, string> = {}) => {
        const r = await fetch(base + url, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(60_000),
        });
        return { status: r.status, body: (await r.json()) as any };
      };

      const countOrders = async () => {
        if (dialect === 'sqlite') {
          const file = new SQLite(database.url.slice('sqlite:'.length), { readonly: true });
          try {
            return (file.prepare('select count(*) as n from orders').get() as { n: number }).n;
          } finally {
            file.close();
          }
        }
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          return Number((await client.query('select count(*) as n from orders')).rows[0].n);
        } finally {
          await client.end();
        }
      };

      let base = await start();
      assert.equal((await call(base, 'POST', '/admin/v1/import', ADMIN_KEY, ORDER_CATALOGUE)).status, 200);
      assert.equal((await call(base, 'PUT', '/admin/v1/stocks', ADMIN_KEY, { items: [{ sku: 'B', warehouseCode: 'G006', qty: 10 }] })).status, 200);
      const merchant = await call(base, 'POST', '/admin/v1/merchants', ADMIN_KEY, { name: 'Crash' });
      const token = (await call(base, 'POST', `/admin/v1/merchants/${merchant.body.data.merchantId}/tokens`, ADMIN_KEY, {})).body.data.accessToken;
      const order = { orderAddress: ADDRESS, orderItemsList: [{ sku: 'B', quantity: 1 }] };
      const key = { 'idempotency-key': 'order-before-the-crash' };

      // Hold the order back inside its work: a lock on the stock row (PostgreSQL) or the database's
      // write lock (SQLite), taken from outside the server.
      let release: () => Promise<void>;
      if (dialect === 'postgres') {
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        cleanups.push(() => client.end());
        await client.query('begin');
        await client.query("select s.qty from stocks s join products p on p.id = s.product_id where p.sku = 'B' for update");
        release = async () => void (await client.query('rollback'));
      } else {
        const file = new SQLite(database.url.slice('sqlite:'.length));
        cleanups.push(() => file.close());
        file.exec('begin immediate');
        release = async () => void file.exec('rollback');
      }
      const owner = call(base, 'POST', '/openapi/v1/order/orders', token, order, key).catch((error: Error) => error);
      // Until the owner has reached the lock (PostgreSQL: it waits on the row; SQLite: on the write lock).
      await new Promise((resolve) => setTimeout(resolve, 1500));
      server!.child.kill('SIGKILL');
      await exited(server!.child);
      assert.ok((await owner) instanceof Error, 'the owner never answered');
      await release!();

      base = await start();
      const retry = await call(base, 'POST', '/openapi/v1/order/orders', token, order, key);
      assert.equal(retry.status, 200, `the retry is answered, not told the key is in flight: ${JSON.stringify(retry.body)}`);
      const replay = await call(base, 'POST', '/openapi/v1/order/orders', token, order, key);
      assert.equal(replay.body.data, retry.body.data, 'and then replayed');
      assert.equal(await countOrders(), 1, 'one order for one key');
    });
  });
}
