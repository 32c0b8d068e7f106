import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { isStorageUnavailable } from '../../src/http/errors.ts';
import { describeStorageFault, storageFaultKind } from '../../src/store/faults.ts';
import { migrateToLatest } from '../../src/store/migrate.ts';
import { ADDRESS, ORDER_CATALOGUE } from '../fixtures.ts';
import { ADMIN_KEY, tableDigests, testConfig } from '../helpers.ts';

const HOLD_MS = 300;

/** An app on its own SQLite file whose /readyz forgets a storage fault after HOLD_MS. */
async function sqliteApp(t: { after(fn: () => Promise<void>): void }, dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-faults-'))) {
  const store = await openStore(`sqlite:${path.join(dir, 'faults.db')}`, { faultHoldMs: HOLD_MS });
  await migrateToLatest(store);
  const app = await buildApp({ config: testConfig(), store, adminApiKey: ADMIN_KEY }, { logger: false });
  t.after(async () => {
    await app.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const admin = (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    app.inject({ method, url, payload: payload as never, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  assert.equal((await admin('POST', '/admin/v1/import', ORDER_CATALOGUE)).statusCode, 200);
  const m = (await admin('POST', '/admin/v1/merchants', { name: 'Faults' })).json().data;
  const token = (await admin('POST', `/admin/v1/merchants/${m.merchantId}/tokens`, {})).json().data.accessToken;
  const placeOrder = (remark = 'x') =>
    app.inject({
      method: 'POST',
      url: '/openapi/v1/order/orders',
      headers: { authorization: `Bearer ${token}` },
      payload: { orderAddress: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 1 }], remark },
    });
  const readyz = () => app.inject({ method: 'GET', url: '/readyz' });
  return { app, store, token, placeOrder, readyz };
}

const pragma = (store: Store, text: string) => sql.raw(`pragma ${text}`).execute(store.db);

async function waitReady(readyz: () => Promise<{ statusCode: number }>) {
  for (let i = 0; i < 100; i++) {
    if ((await readyz()).statusCode === 200) return;
    await sleep(HOLD_MS / 3);
  }
  assert.fail('/readyz did not become ready again');
}

/**
 * Issue 13 item 15 (SPEC §1 503/50300, §10 /readyz): a SQLite database that stops taking writes —
 * read-only, or full — answers writes with 503/50300 (never a 500), keeps serving reads, and
 * /readyz says not ready while writes fail; both recover without a restart.
 */
describe('SQLite read-only or full', () => {
  it('answers 503/50300 while the database is read-only, says so on /readyz, and recovers', async (t) => {
    const { store, token, app, placeOrder, readyz } = await sqliteApp(t);
    const first = await placeOrder();
    assert.equal(first.statusCode, 200, first.body);
    assert.equal((await readyz()).statusCode, 200);
    // query_only makes every write fail with SQLITE_READONLY, as a file or disk that became read-only does (and it works as root).
    await pragma(store, 'query_only = 1');
    const before = await tableDigests(store);
    const refused = await placeOrder();
    assert.equal(refused.statusCode, 503, refused.body);
    assert.equal(refused.json().code, 50300);
    assert.equal(refused.headers['retry-after'], '1');
    assert.deepEqual(await tableDigests(store), before, 'nothing written');
    const read = await app.inject({ method: 'GET', url: `/openapi/v2/order/orders/${first.json().data}`, headers: { authorization: `Bearer ${token}` } });
    assert.equal(read.statusCode, 200, 'reads still work');
    const notReady = await readyz();
    assert.equal(notReady.statusCode, 503);
    assert.equal(notReady.json().code, 50300);
    assert.match(notReady.json().message, /does not take writes: read-only \(SQLITE_READONLY/);
    await pragma(store, 'query_only = 0');
    await waitReady(readyz);
    assert.equal((await placeOrder()).statusCode, 200);
  });

  it('answers 503/50300 while the database is full, says so on /readyz, and recovers', async (t) => {
    const { store, placeOrder, readyz } = await sqliteApp(t);
    const pages = Number((await pragma(store, 'page_count')).rows.map((r) => (r as { page_count: number }).page_count)[0]);
    assert.ok(pages > 0);
    // The database may not grow: as a full disk (or quota) does, this fails writes that need a new page with SQLITE_FULL.
    await pragma(store, `max_page_count = ${pages}`);
    let full = null;
    for (let i = 0; i < 500 && full === null; i++) {
      const r = await placeOrder('r'.repeat(1000));
      if (r.statusCode !== 200) full = r;
    }
    assert.ok(full, 'the database filled up');
    assert.equal(full.statusCode, 503, full.body);
    assert.equal(full.json().code, 50300);
    const notReady = await readyz();
    assert.equal(notReady.statusCode, 503, 'the probe write fits in place, but a write failed just now');
    assert.match(notReady.json().message, /does not take writes: full \(SQLITE_FULL/);
    await pragma(store, `max_page_count = ${pages * 100}`);
    await waitReady(readyz);
    assert.equal((await placeOrder()).statusCode, 200);
  });

  // Hardening III item 2: on a real full filesystem SQLite rolls the transaction back itself
  // (SQLITE_FULL); Kysely's ROLLBACK then failed with "cannot rollback - no transaction is active",
  // and that error, not the full disk, reached the client as a 500.
  it('answers 503/50300 on a filesystem that is really full, serves reads, and recovers when space returns', async (t) => {
    const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-full-'));
    const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mountPoint], { encoding: 'utf8' });
    if (mounted.status !== 0) {
      fs.rmSync(mountPoint, { recursive: true, force: true });
      t.skip(`cannot mount a small tmpfs here (${(mounted.stderr || mounted.error?.message || 'mount failed').trim()}): needs root, as CI has`);
      return;
    }
    t.after(async () => {
      spawnSync('umount', ['-l', mountPoint]);
      fs.rmSync(mountPoint, { recursive: true, force: true });
    });
    const { app, token, placeOrder, readyz } = await sqliteApp(t, mountPoint);
    const first = await placeOrder();
    assert.equal(first.statusCode, 200, first.body);
    // Fill what is left of the filesystem.
    const filler = path.join(mountPoint, 'filler');
    const fd = fs.openSync(filler, 'w');
    const chunk = Buffer.alloc(64 * 1024, 1);
    try {
      for (;;) fs.writeSync(fd, chunk);
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
    }
    for (let size = 4096; size >= 1; size = Math.floor(size / 2)) {
      try {
        for (;;) fs.writeSync(fd, chunk.subarray(0, size));
      } catch {}
    }
    fs.closeSync(fd);
    let full = null;
    for (let i = 0; i < 500 && full === null; i++) {
      const r = await placeOrder('r'.repeat(1000));
      if (r.statusCode !== 200) full = r;
    }
    assert.ok(full, 'the filesystem filled up');
    assert.equal(full.statusCode, 503, full.body);
    assert.equal(full.json().code, 50300);
    assert.equal((await placeOrder('again')).statusCode, 503, 'still full: every write is refused cleanly');
    // Right after a refused write: /readyz's own probe may fit into pages the database already has,
    // and the refused writes' fault is held for 10 s (store/faults.ts) — on a loaded machine the
    // read below could take that long.
    assert.equal((await readyz()).statusCode, 503);
    const read = await app.inject({ method: 'GET', url: `/openapi/v2/order/orders/${first.json().data}`, headers: { authorization: `Bearer ${token}` } });
    assert.equal(read.statusCode, 200, 'reads still work');
    fs.rmSync(filler);
    await waitReady(readyz);
    assert.equal((await placeOrder()).statusCode, 200, 'writes work again once there is space');
  });

  it('classifies storage faults of both databases', () => {
    for (const [code, kind] of [
      ['SQLITE_READONLY', 'read-only'],
      ['SQLITE_READONLY_DIRECTORY', 'read-only'],
      ['SQLITE_FULL', 'full'],
      ['SQLITE_IOERR_WRITE', 'io'],
      ['SQLITE_CANTOPEN', 'io'],
      ['SQLITE_CORRUPT', 'corrupt'],
      ['SQLITE_NOTADB', 'corrupt'],
      ['25006', 'read-only'],
      ['53100', 'full'],
      ['58030', 'io'],
    ]) {
      assert.equal(storageFaultKind({ code }), kind, code);
      assert.equal(isStorageUnavailable({ code }), true, code);
    }
    for (const code of ['SQLITE_CONSTRAINT_UNIQUE', '23505', 'SQLITE_ERROR', undefined]) assert.equal(storageFaultKind({ code }), null, String(code));
    assert.match(
      describeStorageFault({ code: 'SQLITE_READONLY' }, 'file /x/y.db')!,
      /^the database file \/x\/y\.db is read-only \(SQLITE_READONLY\)\. .*permissions|owns/,
    );
    assert.equal(describeStorageFault({ code: 'SQLITE_CONSTRAINT' }, 'file /x'), null);
  });
});
