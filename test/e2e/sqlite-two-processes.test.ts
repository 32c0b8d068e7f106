import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { exited, freePort, runCli, startProcess, tempDir } from './process.ts';

/**
 * Issue 13 item 16: two server processes on one SQLite file. A write transaction that began
 * deferred read first and then found the other process had written meanwhile
 * (SQLITE_BUSY_SNAPSHOT): SQLite cannot wait for that, so busy_timeout never applied and the
 * order was an immediate 503. Write transactions now BEGIN IMMEDIATE and wait their turn.
 */
describe('two processes on one SQLite file (real processes)', () => {
  it('places 200 concurrent orders through both processes without a 503', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const base = {
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${path.join(dir, 'shared.db')}`,
      TLS: 'off',
      LOG_LEVEL: 'warn',
      ADMIN_API_KEY: 'two-procs-admin-key-0123456789',
      STOCKIST_ENV: 'sandbox',
      REFUND_REVIEW: 'manual',
      RATE_LIMIT_PER_SECOND: '100000',
      RATE_LIMIT_BURST: '100000',
      // A loaded test machine is not an overloaded server (this test is about SQLite's lock, not shedding).
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    };
    assert.equal(runCli(['seed', 'demo'], base).status, 0);
    const ports = [await freePort(), await freePort()];
    const servers = [];
    for (const port of ports) {
      const s = await startProcess(['serve', '--role', 'api', '--port', String(port)], base, /Stockist listening/);
      t.after(() => s.child.kill('SIGKILL'));
      servers.push(s);
    }
    const token = fs.readFileSync(path.join(dir, 'demo-token-sandbox'), 'utf8').trim();
    // Spread over 40 SKUs so that stock rarely runs out; a 42201 would still be a clean answer.
    const bodyOf = (i: number) =>
      JSON.stringify({
        orderAddress: { country: 'US', phone: '1', recipient: 'R', province: 'CA' },
        orderItemsList: [{ sku: `DEMO-${String(1 + (i % 40)).padStart(4, '0')}`, quantity: 1 }],
      });
    const statuses = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const r = await fetch(`http://127.0.0.1:${ports[i % 2]}/openapi/v1/order/orders`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: bodyOf(i),
          signal: AbortSignal.timeout(120_000),
        });
        const json = (await r.json()) as { code: number; message: string };
        return `${r.status} ${json.code}${r.status === 200 ? '' : ` ${json.message}`}`;
      }),
    );
    const counts: Record<string, number> = {};
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
    // Every order either succeeds or is refused for stock; none is an outage.
    assert.deepEqual(
      Object.keys(counts).filter((k) => !k.startsWith('200 ') && !k.startsWith('422 42201')),
      [],
      JSON.stringify(counts),
    );
    assert.ok((counts['200 10000'] ?? 0) > 0, JSON.stringify(counts));
    for (const s of servers) s.child.kill('SIGTERM');
    for (const s of servers) assert.equal(await exited(s.child), 0);
  });
});
