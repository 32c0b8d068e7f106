import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import * as tar from 'tar';
import { LATEST_MIGRATION } from '../../src/store/migrate.ts';
import { shopWithOrders, urlOf } from '../backup-data.ts';
import { order } from '../fixtures.ts';
import { buildTestApp, DIALECTS, emptyPgSchema, PG_SKIP } from '../helpers.ts';
import { BIN, exited, freePort, ROOT, runCli, startProcess, tempDir } from './process.ts';

/**
 * SPEC §17 with the real `stockist` program: `backup` of a database that orders, refunds and the
 * ledger went through, `restore` into a new place, `ledger verify` and a merchant's token there;
 * every refusal (damaged, truncated, newer schema, a target with data) one line and nothing
 * written; an archive of an older schema migrated forward; a backup killed mid-way.
 */

const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const dirListing = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

function backupInto(dir: string, env: Record<string, string>): string {
  const r = runCli(['backup', '--to', dir], env);
  assert.equal(r.status, 0, r.stderr);
  const m = /^backup (\S+\.tar) {2}.+ {2}merchants \d+, orders \d+.* \d+\.\d s\n/.exec(r.stdout);
  assert.ok(m, r.stdout);
  return m[1];
}

/** The byte offset of a member's content in a tar (512-byte header before each member, content padded to 512). */
function memberOffset(archive: string, member: string): number {
  const buf = fs.readFileSync(archive);
  for (let at = 0; at + 512 <= buf.length; ) {
    const name = buf
      .subarray(at, at + 100)
      .toString('utf8')
      .replace(/\0.*$/s, '');
    const size = Number.parseInt(
      buf
        .subarray(at + 124, at + 136)
        .toString('utf8')
        .replace(/\0.*$/s, '')
        .trim(),
      8,
    );
    if (name === member) return at + 512;
    at += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error(`${member} not in ${archive}`);
}

/** The same archive with its manifest edited (every member kept, in order; checksums untouched). */
async function withManifest(archive: string, dest: string, edit: (m: Record<string, unknown>) => void): Promise<void> {
  const dir = tempDir();
  try {
    await tar.x({ file: archive, cwd: dir });
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    edit(manifest);
    fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
    await tar.c({ file: dest, cwd: dir, portable: true }, ['manifest.json', ...Object.keys(manifest.files)]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A place to restore into, and how to tell that nothing was written there. */
async function emptyTarget(c: TestContext, dialect: string): Promise<{ env: Record<string, string>; untouched(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = tempDir();
    c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    return { env: { DATA_DIR: dir }, untouched: async () => assert.deepEqual(dirListing(dir), []) };
  }
  const target = await emptyPgSchema(c, 'restore');
  const dataDir = tempDir();
  c.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  return {
    env: { DATABASE_URL: target.url, DATA_DIR: dataDir },
    untouched: async () => {
      const { rows } = await target.client.query(
        'select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1',
        [target.schema],
      );
      assert.equal(rows[0].n, 0, 'the target schema is still empty');
    },
  };
}

function assertRefused(r: { status: number | null; stderr: string; stdout: string }, pattern: RegExp) {
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, `exactly one line:\n${r.stderr}`);
  assert.match(r.stderr, pattern);
  assert.equal(r.stdout, '');
}

for (const dialect of DIALECTS) {
  describe(`stockist backup and restore (${dialect}, real processes)`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    it('restores orders, refunds and the ledger into a new place, where the merchant’s token reads its orders', { timeout: 300_000 }, async (c) => {
      const t = await buildTestApp(c, dialect);
      const shop = await shopWithOrders(t);
      const dir = tempDir();
      c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const source = { DATABASE_URL: urlOf(t.store), DATA_DIR: dir };

      // Taken while the source's app (a server's connection) holds the database open.
      const archive = backupInto(path.join(dir, 'backups'), source);
      assert.equal(path.dirname(archive), path.join(dir, 'backups'));
      assert.match(path.basename(archive), new RegExp(`^stockist-${dialect}-\\d{8}T\\d{6}Z\\.tar$`));
      assert.equal(fs.statSync(archive).mode & 0o777, 0o600);
      assert.deepEqual(dirListing(path.join(dir, 'backups')), [path.basename(archive)], 'no .partial or working folder left');

      const target = await emptyTarget(c, dialect);
      const restored = runCli(['restore', archive], target.env);
      assert.equal(restored.status, 0, restored.stderr);
      assert.equal(restored.stderr, '');
      const manifestLine = /^manifest (.+)$/m.exec(restored.stdout)?.[1];
      assert.equal(manifestLine, 'merchants 1, orders 3, refunds 1, journal entries 4, stock rows 5');
      assert.equal(/^restored (merchants.+)$/m.exec(restored.stdout)?.[1], manifestLine, 'the counts found match the manifest');
      assert.match(restored.stdout, /^ledger: 4 entries, every invariant holds; stock equals its ledger in all 5 rows$/m);
      assert.match(restored.stdout, /^note: the archive has no secrets of DATA_DIR/m);

      const verified = runCli(['ledger', 'verify'], target.env);
      assert.equal(verified.status, 0, verified.stdout + verified.stderr);
      assert.match(verified.stdout, /4 entries over \d+ accounts, every invariant holds/);

      // A server on the restored database: the merchant's existing token reads its orders.
      const port = await freePort();
      const server = await startProcess(['serve', '--port', String(port)], { ...target.env, TLS: 'off', LOG_LEVEL: 'warn' }, /Stop: Ctrl-C/);
      try {
        const res = await fetch(`http://127.0.0.1:${port}/openapi/v2/order/orders/${shop.orderIds[2]}`, { headers: { authorization: `Bearer ${shop.token}` } });
        const body = (await res.json()) as { code: number; data: { id: string; refundStatus: string } };
        assert.equal(res.status, 200, JSON.stringify(body));
        assert.equal(body.data.id, shop.orderIds[2]);
        assert.equal(body.data.refundStatus, 'partial_refund');
        // And writes: a new order (its stock ledger row, its charge) after the restored ones, on their sequences.
        const placed = await fetch(`http://127.0.0.1:${port}/openapi/v1/order/orders`, {
          method: 'POST',
          headers: { authorization: `Bearer ${shop.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(order([{ sku: 'C', quantity: 1 }])),
        });
        const created = (await placed.json()) as { data: string };
        assert.equal(placed.status, 200, JSON.stringify(created));
        assert.ok(!shop.orderIds.includes(created.data) && BigInt(created.data) > BigInt(shop.orderIds[2]), created.data);
      } finally {
        server.child.kill('SIGTERM');
        await exited(server.child);
      }

      // Restoring again onto what is now there: refused, and the restored database is unchanged.
      const again = runCli(['restore', archive], target.env);
      assertRefused(again, /^stockist: restore refused, nothing was changed: .*already holds (data|tables)/);
      const after = runCli(['ledger', 'verify'], target.env);
      assert.equal(after.status, 0, after.stdout);
      assert.match(after.stdout, /5 entries over \d+ accounts, every invariant holds/, 'the new order was charged once');
    });

    it('refuses a damaged, a truncated and a newer-schema archive with one line, writing nothing', { timeout: 300_000 }, async (c) => {
      const t = await buildTestApp(c, dialect);
      await shopWithOrders(t);
      const dir = tempDir();
      c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const archive = backupInto(dir, { DATABASE_URL: urlOf(t.store), DATA_DIR: dir });
      const snapshot = dialect === 'sqlite' ? 'database/stockist.db' : 'database/stockist.pgdump';

      const flipped = path.join(dir, 'flipped.tar');
      const bytes = fs.readFileSync(archive);
      bytes[memberOffset(archive, snapshot) + 200] ^= 0x01;
      fs.writeFileSync(flipped, bytes);
      const truncated = path.join(dir, 'truncated.tar');
      fs.writeFileSync(truncated, fs.readFileSync(archive).subarray(0, Math.floor(fs.statSync(archive).size / 2)));
      const newer = path.join(dir, 'newer.tar');
      await withManifest(archive, newer, (m) => {
        m.schemaVersion = '9999_from_the_future';
      });
      assert.ok('9999_from_the_future' > LATEST_MIGRATION);

      const cases: [string, RegExp][] = [
        [flipped, /database\/stockist\.(db|pgdump) does not match its SHA-256 in the manifest: the archive is damaged$/],
        [truncated, /(damaged or truncated|truncated: database\/stockist\.(db|pgdump) missing)/],
        [newer, /made by a newer Stockist \(schema 9999_from_the_future; this build knows up to 0\d{3}_\w+\)/],
        [path.join(dir, `.${path.basename(archive)}.partial`), /a \.partial file is an unfinished backup$/],
      ];
      for (const [file, why] of cases) {
        const target = await emptyTarget(c, dialect);
        const r = runCli(['restore', file], target.env);
        const quoted = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        assertRefused(r, new RegExp(`^stockist: restore refused, nothing was changed: ${quoted}: .*${why.source}`, 'm'));
        await target.untouched();
        const v = runCli(['backup', 'verify', file], target.env);
        assertRefused(v, /^stockist: backup verify failed: /);
        await target.untouched();
      }
      if (dialect === 'postgres') {
        // pg_dump missing from PATH, and one older than the server: one line naming the fix, nothing written.
        const tools = tempDir();
        c.after(() => fs.rmSync(tools, { recursive: true, force: true }));
        const out = path.join(dir, 'tools-test');
        const env = { DATABASE_URL: urlOf(t.store), DATA_DIR: dir, PATH: tools };
        const missing = runCli(['backup', '--to', out], env);
        assert.equal(missing.status, 1);
        assert.match(missing.stderr.trim().split('\n').at(-1)!, /^stockist: pg_dump is not installed or not on PATH: install PostgreSQL \d+'s client tools/);
        fs.writeFileSync(path.join(tools, 'pg_dump'), '#!/bin/sh\necho "pg_dump (PostgreSQL) 9.6.24"\n', { mode: 0o755 });
        const old = runCli(['backup', '--to', out], env);
        assert.equal(old.status, 1);
        assert.match(
          old.stderr.trim().split('\n').at(-1)!,
          /^stockist: pg_dump 9 is older than the PostgreSQL \d+ server and cannot dump it: install postgresql-client-\d+/,
        );
        assert.deepEqual(dirListing(out), [], 'no archive, partial or working folder');
      }
      // The good archive still verifies (the refusals above were the edits, not the archive).
      const good = runCli(['backup', 'verify', archive], { DATABASE_URL: urlOf(t.store), DATA_DIR: dir });
      assert.equal(good.status, 0, good.stdout + good.stderr);
      assert.match(good.stdout, /^backup verify: every checksum, the ledger, stock = stock ledger and the counts hold$/m);
    });
  });
}

describe('stockist restore and backup (SQLite files, real processes)', () => {
  it('migrates an archive made at an older schema (0040) forward and verifies it', { timeout: 120_000 }, (c) => {
    const dir = tempDir();
    c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const fixture = path.join(ROOT, 'test/fixtures/backup-sqlite-0040.tar');
    const verified = runCli(['backup', 'verify', fixture], { DATA_DIR: dir });
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
    assert.deepEqual(dirListing(dir), [], 'backup verify restores into a temporary place only');
    const r = runCli(['restore', fixture], { DATA_DIR: dir });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^schema {3}0040_delivery_responses_order_notes, migrated forward: 0041_console_list_indexes/m);
    assert.match(r.stdout, /^restored merchants 1, orders 3, refunds 1, journal entries 4, stock rows 5$/m);
    assert.deepEqual(dirListing(dir), ['stockist.db'], 'no -wal, -shm or staging file beside it');
    const db = new Database(path.join(dir, 'stockist.db'), { readonly: true });
    assert.equal((db.prepare('select max(name) as n from kysely_migration').get() as { n: string }).n, LATEST_MIGRATION);
    db.close();
    assert.equal(runCli(['ledger', 'verify'], { DATA_DIR: dir }).status, 0);
  });

  it('refuses a target file that holds data and leaves it byte for byte', { timeout: 120_000 }, (c) => {
    const dir = tempDir();
    c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const env = { DATA_DIR: dir };
    assert.equal(runCli(['migrate'], env).status, 0);
    const file = path.join(dir, 'stockist.db');
    const before = sha(file);
    const r = runCli(['restore', path.join(ROOT, 'test/fixtures/backup-sqlite-0040.tar')], env);
    assertRefused(r, /^stockist: restore refused, nothing was changed: sqlite:.+stockist\.db already holds data/);
    assert.equal(sha(file), before);
    assert.deepEqual(
      dirListing(dir).filter((f) => !/^stockist\.db(-wal|-shm)?$/.test(f)),
      [],
    );
  });

  it('a backup killed mid-way leaves nothing that restore or verify accepts, and the next one succeeds', { timeout: 300_000 }, async (c) => {
    const dir = tempDir();
    c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const env = { DATA_DIR: dir };
    assert.equal(runCli(['restore', path.join(ROOT, 'test/fixtures/backup-sqlite-0040.tar')], env).status, 0);
    // Big enough that the copy, hashing and archiving take a moment (64 MiB of pages).
    const db = new Database(path.join(dir, 'stockist.db'));
    db.exec('create table ballast (b blob)');
    const insert = db.prepare('insert into ballast values (randomblob(65536))');
    db.transaction(() => {
      for (let i = 0; i < 1024; i++) insert.run();
    })();
    db.close();
    const out = path.join(dir, 'backups');
    fs.mkdirSync(out);
    const restoreDir = tempDir();
    c.after(() => fs.rmSync(restoreDir, { recursive: true, force: true }));
    // SIGKILL as soon as its working folder appears (mid-snapshot), then as soon as its .partial
    // archive does (mid-archive).
    for (const killAt of ['.work-', '.partial']) {
      const child = spawn(process.execPath, [BIN, 'backup', '--to', out], { cwd: ROOT, env: { ...process.env, ...env, LOG_LEVEL: 'warn' }, stdio: 'ignore' });
      while (child.exitCode === null && child.signalCode === null && !fs.readdirSync(out).some((f) => f.includes(killAt))) await sleep(1);
      child.kill('SIGKILL');
      await exited(child);
      c.diagnostic(`left by the backup killed at its ${killAt}: ${dirListing(out).join(', ') || 'nothing'}`);
      for (const f of fs.readdirSync(out).filter((e) => fs.statSync(path.join(out, e)).isFile())) {
        // A file with an archive's real name would have to be whole; anything else must be refused.
        const whole = /^stockist-sqlite-\d{8}T\d{6}Z\.tar$/.test(f);
        const verify = runCli(['backup', 'verify', path.join(out, f)], { DATA_DIR: restoreDir });
        if (whole) assert.equal(verify.status, 0, `${f} has an archive's name, so it must be whole: ${verify.stderr}`);
        else {
          assertRefused(verify, /^stockist: backup verify failed: /);
          assertRefused(runCli(['restore', path.join(out, f)], { DATA_DIR: restoreDir }), /^stockist: restore refused, nothing was changed: /);
          assert.deepEqual(dirListing(restoreDir), []);
        }
      }
    }
    const next = backupInto(out, env);
    assert.deepEqual(
      dirListing(out).filter((f) => f.startsWith('.')),
      [],
      'the next backup removed the killed one’s working folder and .partial',
    );
    const verified = runCli(['backup', 'verify', next], { DATA_DIR: restoreDir });
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
  });
});
