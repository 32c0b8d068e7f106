import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { makeDatabase } from '../../scripts/chaos/harness.ts';
import { isRunning } from '../../src/runtime/pid-file.ts';
import { ADDRESS, ORDER_CATALOGUE } from '../fixtures.ts';
import { PG_URL } from '../helpers.ts';
import { spawn } from 'node:child_process';
import { BIN, ROOT, exited, freePort, runCli, serverTestEnv, startProcess, tempDir } from './process.ts';

const ADMIN_KEY = 'processes-admin-key-0123456789';
const BURST = 10;

/** One request on a connection of its own (`agent: false`), so the primary hands each to the next process in turn. */
function request(port: number, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: { authorization: `Bearer ${token}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
        timeout: 60_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** The pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(fields[1]) === pid && fields[0] !== 'Z';
      } catch {
        return false;
      }
    })
    .map(Number);
}

async function until(what: string, check: () => boolean | Promise<boolean>, withinMs = 60_000): Promise<void> {
  const end = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${withinMs} ms: ${what}`);
    await sleep(50);
  }
}

/** The pids that logged a completed request (pino's `pid` on every line; LOG_LEVEL=info). */
function servingPids(output: string): Set<number> {
  const pids = new Set<number>();
  for (const line of output.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const entry = JSON.parse(line) as { msg?: string; pid?: number };
      if (entry.msg === 'request completed' && entry.pid) pids.add(entry.pid);
    } catch {}
  }
  return pids;
}

const DIALECTS = [
  { name: 'SQLite', dialect: 'sqlite' as const, skip: false },
  { name: 'PostgreSQL', dialect: 'postgres' as const, skip: !PG_URL },
];

/**
 * Issue 43 item 4: `serve --processes 2` — one port, two API processes over one database, and what
 * one process guarantees held across both: no oversell, one rate budget per merchant, a revoked
 * token refused everywhere, `stockist stop` ending every process, a dead process replaced, and the
 * processes ending with their primary.
 */
for (const db of DIALECTS) {
  describe(`serve --processes 2 on ${db.name}`, { skip: db.skip && 'PostgreSQL suites skipped (TEST_DATABASE_URL is not set)' }, () => {
    it('shares the port, the stock, the rate budget and the token word; stop ends every process', { timeout: 600_000 }, async (t) => {
      const dir = tempDir();
      const database = await makeDatabase(db.dialect, dir, PG_URL ?? undefined);
      const port = await freePort();
      const env = {
        DATA_DIR: dir,
        DATABASE_URL: database.url,
        TLS: 'off',
        LOG_LEVEL: 'info',
        LOG_FORMAT: 'json',
        STOCKIST_ENV: 'sandbox',
        ADMIN_API_KEY: ADMIN_KEY,
        SEED: 'none',
        RATE_LIMIT_PER_SECOND: '1',
        RATE_LIMIT_BURST: String(BURST),
        // Longer than the test waits below: only the processes' word can make the revocation hold in time.
        TOKEN_CACHE_SECONDS: '30',
        OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
        DB_CONNECT_TIMEOUT_MS: '60000',
      };
      const server = await startProcess(['serve', '--processes', '2', '--port', String(port)], env, /Stop: Ctrl-C/);
      const primary = server.child.pid!;
      t.after(async () => {
        for (const pid of [...childrenOf(primary), primary]) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
        await exited(server.child);
        await database.drop();
        fs.rmSync(dir, { recursive: true, force: true });
      });
      assert.match(server.output(), /Stockist listening on http:\/\/127\.0\.0\.1:\d+ \(sandbox, \w+, role all, 2 processes\)/);
      assert.equal(server.output().match(/Stockist listening on/g)?.length, 1, 'one banner, from the primary');
      const workers = childrenOf(primary);
      assert.equal(workers.length, 2, 'two API processes under the primary');

      // The operator's set-up, through whichever process takes each connection.
      assert.equal((await request(port, 'POST', '/admin/v1/import', ADMIN_KEY, ORDER_CATALOGUE)).status, 200);
      assert.equal((await request(port, 'PUT', '/admin/v1/stocks', ADMIN_KEY, { items: [{ sku: 'B', warehouseCode: 'G006', qty: 10 }] })).status, 200);
      const merchant = (await request(port, 'POST', '/admin/v1/merchants', ADMIN_KEY, { name: 'Processes' })).body.data.merchantId;
      const issue = async () => (await request(port, 'POST', `/admin/v1/merchants/${merchant}/tokens`, ADMIN_KEY, {})).body.data;
      // Each process writes its request log lines itself, asynchronously: on a loaded machine a line
      // can reach the pipe seconds after its answer, so wait for them (a bound, not a sleep).
      for (const until = Date.now() + 60_000; servingPids(server.output()).size < 2 && Date.now() < until; ) await sleep(250);
      assert.deepEqual([...servingPids(server.output())].sort(), [...workers].sort(), 'both processes answered requests');

      // One rate budget: BURST requests at once, then more as fast as they go. Two budgets would let
      // about twice the burst through; one lets the burst and one a second.
      const rated = await issue();
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: 4 * BURST }, () => request(port, 'GET', '/openapi/v1/account', rated.accessToken)));
      const seconds = Math.ceil((Date.now() - started) / 1000);
      const passed = answers.filter((r) => r.status === 200).length;
      assert.equal(answers.filter((r) => r.status !== 200 && r.status !== 429).length, 0);
      assert.ok(seconds < BURST, `the requests took ${seconds} s: too slow to tell one budget from two`);
      assert.ok(passed <= BURST + seconds, `one budget: ${passed} passed in ${seconds} s (burst ${BURST}, 1/s)`);

      // A revoked token stops everywhere: both processes have it cached (30 s), one revokes it.
      // (Another merchant: the budget is per merchant, and the first one's is spent.)
      const other = (await request(port, 'POST', '/admin/v1/merchants', ADMIN_KEY, { name: 'Processes 2' })).body.data.merchantId;
      const revoked = (await request(port, 'POST', `/admin/v1/merchants/${other}/tokens`, ADMIN_KEY, {})).body.data;
      for (let i = 0; i < 4; i++) assert.equal((await request(port, 'GET', '/openapi/v1/product/stocks?skus=B', revoked.accessToken)).status, 200);
      assert.equal((await request(port, 'DELETE', `/admin/v1/tokens/${revoked.tokenId}`, ADMIN_KEY)).status, 200);
      // The word goes from process to primary to process: give it a moment, far below the cache's 30 s.
      await until(
        'the revoked token is refused by both processes',
        async () => {
          const after = await Promise.all(Array.from({ length: 4 }, () => request(port, 'GET', '/openapi/v1/product/stocks?skus=B', revoked.accessToken)));
          return after.every((r) => r.status === 401);
        },
        5_000,
      );

      // `stockist stop` signals the primary, which stops both processes, then exits.
      const stopped = runCli(['stop'], { DATA_DIR: dir });
      assert.equal(stopped.status, 0, stopped.stderr);
      assert.equal(await exited(server.child), 0);
      for (const pid of workers) assert.equal(isRunning(pid), false, `process ${pid} ended with the primary`);
      assert.equal(fs.existsSync(`${dir}/stockist.pid`), false, 'the pid file is removed');
    });

    it('stops while its processes are still starting', { timeout: 300_000 }, async (t) => {
      const dir = tempDir();
      const database = await makeDatabase(db.dialect, dir, PG_URL ?? undefined);
      const env = { DATA_DIR: dir, DATABASE_URL: database.url, TLS: 'off', LOG_LEVEL: 'warn', STOCKIST_ENV: 'sandbox', ADMIN_API_KEY: ADMIN_KEY, SEED: 'none' };
      const child = spawn(process.execPath, [BIN, 'serve', '--processes', '2', '--port', String(await freePort())], {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: 'ignore',
      });
      const primary = child.pid!;
      t.after(async () => {
        for (const pid of [...childrenOf(primary), primary]) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
        await exited(child);
        await database.drop();
        fs.rmSync(dir, { recursive: true, force: true });
      });
      // Forked and opening the database (SQLite: the file is open), not yet listening: a SIGTERM
      // now must still end the group (a signal listener a process installed before `serve` had
      // its own once swallowed it, and the primary waited for ever).
      const opened = (pid: number) => {
        if (db.dialect !== 'sqlite') return true;
        try {
          return fs.readdirSync(`/proc/${pid}/fd`).some((fd) => {
            try {
              return fs.readlinkSync(`/proc/${pid}/fd/${fd}`).endsWith('.db');
            } catch {
              return false;
            }
          });
        } catch {
          return false;
        }
      };
      await until('the processes were forked and opened the database', () => {
        const forked = childrenOf(primary);
        return forked.length === 2 && forked.every(opened);
      });
      const forked = childrenOf(primary);
      process.kill(primary, 'SIGTERM');
      await until('the primary exited', () => child.exitCode !== null || child.signalCode !== null);
      await until('the processes ended', () => forked.every((pid) => !isRunning(pid)));
    });

    it('replaces a process that dies; the processes end when the primary is killed', { timeout: 600_000 }, async (t) => {
      const dir = tempDir();
      const database = await makeDatabase(db.dialect, dir, PG_URL ?? undefined);
      const port = await freePort();
      const env = {
        DATA_DIR: dir,
        DATABASE_URL: database.url,
        ...serverTestEnv(ADMIN_KEY, 'warn'),
        DB_CONNECT_TIMEOUT_MS: '60000',
      };
      const server = await startProcess(['serve', '--processes', '2', '--port', String(port)], env, /Stop: Ctrl-C/);
      const primary = server.child.pid!;
      t.after(async () => {
        for (const pid of [...childrenOf(primary), primary]) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
        await exited(server.child);
        await database.drop();
        fs.rmSync(dir, { recursive: true, force: true });
      });
      const first = childrenOf(primary);
      assert.equal(first.length, 2);

      assert.equal((await request(port, 'POST', '/admin/v1/import', ADMIN_KEY, ORDER_CATALOGUE)).status, 200);
      assert.equal((await request(port, 'PUT', '/admin/v1/stocks', ADMIN_KEY, { items: [{ sku: 'B', warehouseCode: 'G006', qty: 10 }] })).status, 200);
      const merchant = (await request(port, 'POST', '/admin/v1/merchants', ADMIN_KEY, { name: 'Processes' })).body.data.merchantId;
      const buyer = (await request(port, 'POST', `/admin/v1/merchants/${merchant}/tokens`, ADMIN_KEY, {})).body.data;
      // No oversell: 30 buyers of 10 units, each on its own connection, both processes at once.
      const oneB = { orderAddress: ADDRESS, orderItemsList: [{ sku: 'B', quantity: 1 }] };
      const bought = await Promise.all(Array.from({ length: 30 }, () => request(port, 'POST', '/openapi/v1/order/orders', buyer.accessToken, oneB)));
      const codes = bought.map((r) => r.body.code);
      assert.deepEqual(
        codes.filter((c) => c !== 10000 && c !== 42201),
        [],
        `every buyer got an order or "out of stock": ${codes.join(',')}`,
      );
      assert.equal(codes.filter((c) => c === 10000).length, 10, 'exactly the 10 units in stock were sold');
      const stock = await request(port, 'GET', '/openapi/v1/product/stocks?skus=B', buyer.accessToken);
      assert.equal(
        stock.body.data.list[0].warehouseStockList.reduce((n: number, w: { qty: number }) => n + w.qty, 0),
        0,
        'nothing left',
      );

      // Past the primary's "died while starting" window, a dead process is replaced.
      await sleep(5_500);
      process.kill(first[0], 'SIGKILL');
      await until('a new process took its place', () => {
        const now = childrenOf(primary);
        return now.length === 2 && !now.includes(first[0]);
      });
      await until('the group answers', async () => (await request(port, 'GET', '/healthz', '').catch(() => ({ status: 0 }))).status === 200);
      const second = childrenOf(primary);

      // kill -9 of the primary: nothing supervises the processes any more, and they end.
      process.kill(primary, 'SIGKILL');
      await exited(server.child);
      await until('the processes ended with their primary', () => second.every((pid) => !isRunning(pid)));
    });
  });
}
