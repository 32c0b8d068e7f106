import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { BackupRefused, createBackup, readManifest, restoreBackup, verifyBackup, type BackupProgress } from '../../src/services/backup.service.ts';
import { archiveName, archiveTime } from '../../src/domain/backup.ts';
import { LATEST_MIGRATION } from '../../src/store/migrate.ts';
import { shopWithOrders, urlOf } from '../backup-data.ts';
import { order } from '../fixtures.ts';
import { buildTestApp, DIALECTS, PG_SKIP } from '../helpers.ts';

const tmp = (t: { after(fn: () => void): void }) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-backup-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** SPEC §17 through the service: online and consistent under order intake; checks a trial restore runs. */
for (const dialect of DIALECTS) {
  describe(`backup service (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    it('takes a consistent snapshot while orders keep coming: the manifest counts what the archive holds', async (c) => {
      const t = await buildTestApp(c, dialect);
      const shop = await shopWithOrders(t);
      const dir = tmp(c);
      const config = loadConfig({ DATABASE_URL: urlOf(t.store), DATA_DIR: dir });
      const phases = new Set<BackupProgress['phase']>();
      const ordersBefore = 3;
      // Orders placed one after another for as long as the backup runs, and a few more after it.
      let running = true;
      let placed = 0;
      const intake = (async () => {
        while (running || placed < 3) {
          const r = await t.merchant(shop.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 }]));
          assert.equal(r.status, 200, r.raw);
          placed++;
        }
      })();
      const result = await createBackup({ config, store: t.store }, { toDir: dir, onProgress: (p) => phases.add(p.phase) }).finally(() => {
        running = false;
      });
      await intake;
      assert.deepEqual([...phases].sort(), ['archive', 'snapshot']);
      const m = result.manifest;
      assert.equal(m.schemaVersion, LATEST_MIGRATION);
      assert.equal(m.dialect, dialect);
      assert.ok(m.counts.orders >= ordersBefore && m.counts.orders < ordersBefore + placed, `${m.counts.orders} orders in the snapshot`);
      // Each order is charged once: entries = orders + the one refund credit, at the snapshot's instant too.
      assert.equal(m.counts.journalEntries, m.counts.orders + 1);
      assert.deepEqual(await readManifest(result.file), m);
      assert.equal(fs.statSync(result.file).size, result.bytes);

      const report = await verifyBackup({ config }, result.file);
      assert.deepEqual(report.problems, []);
      assert.equal(report.ok, true);
      assert.deepEqual(report.counts, m.counts);
    });

    it('reports a ledger that does not add up, and restore refuses it without writing', async (c) => {
      const t = await buildTestApp(c, dialect);
      await shopWithOrders(t);
      await sql`update ledger_accounts set balance_cents = balance_cents + 7 where kind = 'merchant'`.execute(t.store.db);
      await sql`update stocks set qty = qty + 1 where product_id = (select min(product_id) from stocks) and warehouse_id = (select min(warehouse_id) from stocks where product_id = (select min(product_id) from stocks))`.execute(
        t.store.db,
      );
      const dir = tmp(c);
      const config = loadConfig({ DATABASE_URL: urlOf(t.store), DATA_DIR: dir });
      const { file } = await createBackup({ config, store: t.store }, { toDir: dir });
      const report = await verifyBackup({ config }, file);
      assert.equal(report.ok, false);
      // The changed balance is named twice: against its lines, and against its newest entry's balanceAfter.
      assert.equal(report.problems.length, 3, report.problems.join('\n'));
      assert.match(report.problems[0], /^ledger entry_chain: account merchant:\d+:sandbox: balance .+ but its newest entry's balanceAfter is /);
      assert.match(report.problems[1], /^ledger account_balance: account merchant:\d+:sandbox: balance .+ but its lines sum to /);
      assert.match(report.problems[2], /^stock of product \d+ in warehouse \d+ is \d+, its stock ledger sums to \d+$/);

      if (dialect === 'sqlite') {
        const target = tmp(c);
        await assert.rejects(
          restoreBackup({ config: loadConfig({ DATA_DIR: target }) }, file),
          (e: unknown) => e instanceof BackupRefused && /the restored copy fails 3 checks: ledger entry_chain/.test(e.message),
        );
        assert.deepEqual(fs.readdirSync(target), [], 'nothing written beside the target');
      }
    });
  });
}

describe('archive names, one a second (sqlite)', () => {
  it('a backup that starts in a second whose name is taken (written, or being written) waits for the next free second instead of failing', async (c) => {
    const t = await buildTestApp(c, 'sqlite');
    await shopWithOrders(t);
    const dir = tmp(c);
    const config = loadConfig({ DATABASE_URL: urlOf(t.store), DATA_DIR: dir });
    // This second's name is an archive already; the next second's is being written by a live backup.
    const now = Date.now();
    const written = archiveName('sqlite', new Date(now));
    const beingWritten = archiveName('sqlite', new Date(now + 1000));
    fs.writeFileSync(path.join(dir, written), 'an archive of this second');
    fs.mkdirSync(path.join(dir, `.${beingWritten}.work-${process.pid}`));
    const first = await createBackup({ config, store: t.store }, { toDir: dir });
    // Back to back: the second starts in the second the first finished in, as a schedule of every second does.
    const second = await createBackup({ config, store: t.store }, { toDir: dir });
    const names = [first.file, second.file].map((f) => path.basename(f));
    for (const name of names) {
      assert.ok(name > beingWritten, `${name} is later than the taken ${written} and ${beingWritten}`);
      assert.equal(archiveTime(name) !== null, true, name);
    }
    assert.ok(names[1] > names[0], `${names[1]} after ${names[0]}`);
    assert.equal(fs.readFileSync(path.join(dir, written), 'utf8'), 'an archive of this second', 'the existing archive is untouched');
    for (const f of [first.file, second.file]) assert.equal((await verifyBackup({ config }, f)).ok, true, f);
  });
});

describe('backup archives that are not', () => {
  it('readManifest refuses a file that is not an archive, an empty one and a missing one', async (c) => {
    const dir = tmp(c);
    const junk = path.join(dir, 'junk.tar');
    fs.writeFileSync(junk, 'x'.repeat(4096));
    const empty = path.join(dir, 'empty.tar');
    fs.writeFileSync(empty, '');
    await assert.rejects(readManifest(junk), (e: unknown) => e instanceof BackupRefused && /junk\.tar: damaged or truncated/.test(e.message));
    await assert.rejects(
      readManifest(empty),
      (e: unknown) => e instanceof BackupRefused && /empty\.tar: an empty file, not a Stockist backup$/.test(e.message),
    );
    await assert.rejects(readManifest(path.join(dir, 'nope.tar')), (e: unknown) => e instanceof BackupRefused && /nope\.tar: no such file$/.test(e.message));
  });
});

describe('backup --with-secrets (sqlite)', () => {
  it('carries the admin key and TLS files of DATA_DIR, and restore writes them where none are, mode 0600', async (c) => {
    const t = await buildTestApp(c, 'sqlite');
    const source = tmp(c);
    fs.writeFileSync(path.join(source, 'admin-key'), 'sk_admin_from_the_lost_disk\n', { mode: 0o600 });
    fs.mkdirSync(path.join(source, 'tls'));
    fs.writeFileSync(path.join(source, 'tls/key.pem'), 'KEY\n', { mode: 0o600 });
    fs.writeFileSync(path.join(source, 'tls/cert.pem'), 'CERT\n');
    const config = loadConfig({ DATABASE_URL: urlOf(t.store), DATA_DIR: source });
    const plain = await createBackup({ config, store: t.store }, { toDir: path.join(source, 'plain') });
    assert.deepEqual(Object.keys(plain.manifest.files), ['database/stockist.db']);
    assert.equal(plain.manifest.withSecrets, false);
    const { file, manifest } = await createBackup({ config, store: t.store }, { toDir: source, withSecrets: true });
    assert.equal(manifest.withSecrets, true);
    assert.deepEqual(Object.keys(manifest.files), ['database/stockist.db', 'secrets/admin-key', 'secrets/tls/key.pem', 'secrets/tls/cert.pem']);

    const target = tmp(c);
    fs.mkdirSync(path.join(target, 'tls'));
    fs.writeFileSync(path.join(target, 'tls/cert.pem'), 'NEWER CERT\n');
    const r = await restoreBackup({ config: loadConfig({ DATA_DIR: target }) }, file);
    assert.deepEqual(r.secretsWritten, [path.join(target, 'admin-key'), path.join(target, 'tls/key.pem')]);
    assert.deepEqual(r.secretsKept, [path.join(target, 'tls/cert.pem')]);
    assert.equal(fs.readFileSync(path.join(target, 'admin-key'), 'utf8'), 'sk_admin_from_the_lost_disk\n');
    assert.equal(fs.statSync(path.join(target, 'admin-key')).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.join(target, 'tls/key.pem')).mode & 0o777, 0o600);
    assert.equal(fs.readFileSync(path.join(target, 'tls/cert.pem'), 'utf8'), 'NEWER CERT\n', 'an existing file is kept');
    assert.equal(fs.statSync(path.join(target, 'stockist.db')).isFile(), true);
  });
});
