import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { makeDatabase } from '../../scripts/chaos/harness.ts';
import { openStore } from '../../src/store/db.ts';
import { ledgerMismatches } from '../../src/store/stocks.repository.ts';
import { verifyLedger } from '../../src/services/ledger-verify.service.ts';
import { PG_SKIP, PG_URL } from '../helpers.ts';
import { exited, freePort, runCli, startProcess, tempDir } from './process.ts';

const ADMIN_KEY = 'claims-two-processes-admin-key-01';
const ADDRESS = { country: 'US', phone: '+1 555 0100', recipient: 'Two Servers', province: 'CA', city: 'LA', street1: '1 Main St', zip: '90001' };

/**
 * SPEC §18 across real processes: two `stockist serve --role api` processes on one database (a
 * SQLite file, or PostgreSQL), the same claim decided through both at the same moment. One decision
 * wins; the other is 409/40903 and writes nothing — whether both approve a credit, both approve a
 * reshipment, one approves while the other rejects, or both mark the returned goods received. The
 * in-process test (test/http/claims.test.ts) runs two apps in one Node process; here nothing but the
 * database is shared.
 */
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`two server processes deciding one claim (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    it('one decision wins, the other is 409/40903 and changes nothing', { timeout: 300_000 }, async (t) => {
      const dir = tempDir();
      const database = await makeDatabase(dialect, dir, PG_URL ?? undefined);
      const env = {
        DATA_DIR: dir,
        DATABASE_URL: database.url,
        TLS: 'off',
        LOG_LEVEL: 'error',
        STOCKIST_ENV: 'sandbox',
        ADMIN_API_KEY: ADMIN_KEY,
        RATE_LIMIT_PER_SECOND: '100000',
        RATE_LIMIT_BURST: '100000',
        // A loaded test machine is not an overloaded server: no shedding, and patience for a pool connection.
        OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
        DB_CONNECT_TIMEOUT_MS: '60000',
      };
      const processes: Awaited<ReturnType<typeof startProcess>>[] = [];
      t.after(async () => {
        for (const p of processes) if (p.child.exitCode === null) p.child.kill('SIGKILL');
        await Promise.all(processes.map((p) => exited(p.child)));
        await database.drop();
        fs.rmSync(dir, { recursive: true, force: true });
      });
      const seeded = runCli(['seed', 'demo'], env);
      assert.equal(seeded.status, 0, seeded.stderr);
      const urls: string[] = [];
      for (let i = 0; i < 2; i++) {
        const port = await freePort();
        processes.push(await startProcess(['serve', '--role', 'api', '--port', String(port)], env, /Stockist listening/));
        urls.push(`http://127.0.0.1:${port}`);
      }
      const token = fs.readFileSync(path.join(dir, 'demo-token-sandbox'), 'utf8').trim();
      const call = async (base: string, method: string, url: string, auth: string, body?: unknown) => {
        const r = await fetch(base + url, {
          method,
          headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(60_000),
        });
        return { status: r.status, body: (await r.json()) as any };
      };
      const ok = (r: { status: number; body: any }) => {
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return r.body.data;
      };
      ok(await call(urls[0], 'PUT', '/admin/v1/stocks', ADMIN_KEY, { items: [{ sku: 'DEMO-0001', warehouseCode: 'G007', qty: 1000 }] }));
      const orderId = ok(
        await call(urls[1], 'POST', '/openapi/v1/order/orders', token, { orderAddress: ADDRESS, orderItemsList: [{ sku: 'DEMO-0001', quantity: 10 }] }),
      );
      const splits: { id: string }[] = ok(await call(urls[0], 'GET', `/admin/v1/orders/${orderId}`, ADMIN_KEY)).splitOrders;
      assert.equal(splits.length, 1);
      const splitId = splits[0].id;
      ok(await call(urls[1], 'POST', `/admin/v1/split-orders/${splitId}/ship`, ADMIN_KEY, { carrier: 'UPS', trackingCode: '1Z2PROC' }));

      const openClaim = async (resolution: 'refund' | 'reship') =>
        String(
          ok(
            await call(urls[0], 'POST', '/openapi/v1/claims', token, {
              orderId: splitId,
              reason: 'damaged',
              resolution,
              items: [{ sku: 'DEMO-0001', quantity: 1 }],
            }),
          ).claimNo,
        );
      /** The same claim decided through both processes at once: one 200, one 409/40903. */
      const race = async (claimNo: string, first: [string, unknown], second: [string, unknown]) => {
        const [one, two] = await Promise.all([
          call(urls[0], 'POST', `/admin/v1/claims/${claimNo}/${first[0]}`, ADMIN_KEY, first[1]),
          call(urls[1], 'POST', `/admin/v1/claims/${claimNo}/${second[0]}`, ADMIN_KEY, second[1]),
        ]);
        assert.deepEqual([one.status, two.status].sort(), [200, 409], `${JSON.stringify(one.body)} / ${JSON.stringify(two.body)}`);
        const [winner, loser] = one.status === 200 ? [one, two] : [two, one];
        assert.equal(loser.body.code, 40903, JSON.stringify(loser.body));
        return winner.body.data.status as string;
      };

      const credited = await openClaim('refund');
      assert.equal(await race(credited, ['approve', {}], ['approve', {}]), 'credited');
      const reshipped = await openClaim('reship');
      assert.equal(await race(reshipped, ['approve', {}], ['approve', {}]), 'reshipped');
      const contested = await openClaim('refund');
      const contestedStatus = await race(contested, ['approve', {}], ['reject', { reason: 'a duplicate of another claim' }]);
      assert.ok(['credited', 'rejected'].includes(contestedStatus), contestedStatus);
      const returned = await openClaim('reship');
      assert.equal(ok(await call(urls[0], 'POST', `/admin/v1/claims/${returned}/approve`, ADMIN_KEY, { returnRequired: true })).status, 'awaiting_return');
      ok(await call(urls[1], 'POST', `/openapi/v1/claims/${returned}/return`, token, { carrier: 'DHL', trackingCode: 'RET2PROC' }));
      assert.equal(await race(returned, ['received', { warehouseCode: 'G007' }], ['received', { warehouseCode: 'US01' }]), 'reshipped');

      // What the winners wrote, once each; nothing of the losers.
      const store = await openStore(database.url);
      t.after(() => store.close());
      const db = store.db;
      const credits = await db.selectFrom('journal_entries').select('cause').where('type', '=', 'claim_credit').execute();
      assert.deepEqual(
        credits.map((c) => c.cause).sort(),
        [credited, ...(contestedStatus === 'credited' ? [contested] : [])].map((n) => `claim:${n}`).sort(),
        'one claim_credit per credited claim',
      );
      const replacements = await db.selectFrom('orders').select(['id', 'custom_order_id']).where('custom_order_id', 'like', 'claim-%').execute();
      assert.deepEqual(
        replacements.map((o) => o.custom_order_id).sort(),
        [`claim-${reshipped}`, `claim-${returned}`].sort(),
        'one replacement order per reshipped claim',
      );
      for (const claimNo of [reshipped, returned]) {
        const claim = ok(await call(urls[0], 'GET', `/openapi/v1/claims/${claimNo}`, token));
        assert.equal(claim.replacementOrderId, String(replacements.find((o) => o.custom_order_id === `claim-${claimNo}`)!.id));
      }
      const resolutions = await db.selectFrom('claim_resolutions').select(['claim_id', 'kind']).execute();
      assert.equal(resolutions.length, contestedStatus === 'credited' ? 4 : 3);
      const back = await db.selectFrom('stock_ledger').select(['delta', 'warehouse_id']).where('reason', '=', 'claim_return').execute();
      assert.deepEqual(
        back.map((r) => r.delta),
        [1],
        'the returned unit came back into one warehouse, once',
      );
      assert.deepEqual((await verifyLedger(db)).breaches, []);
      assert.deepEqual(await ledgerMismatches(db), []);
      for (const p of processes) p.child.kill('SIGTERM');
      for (const p of processes) assert.equal(await exited(p.child), 0, p.output());
    });
  });
}
