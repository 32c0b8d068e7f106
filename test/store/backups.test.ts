import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createInterface } from 'node:readline';
import os from 'node:os';
import path from 'node:path';
import { BackupService, type BackupLog } from '../../src/services/backup-runs.service.ts';
import { currentLease, insertRun, recentRuns, storedArchiveRuns, takeLease } from '../../src/store/backups.repository.ts';
import type { Store } from '../../src/store/db.ts';
import { DIALECTS, freshStore } from '../helpers.ts';
import { TEST_COUNTS, testEngine, type TestEngine } from '../backup-engine.ts';

/**
 * Issue 39, items 3 and 4: one backup at a time across processes (a lease row the database grants,
 * on SQLite and PostgreSQL), each run recorded, and pruning that keeps the newest BACKUP_KEEP
 * verified archives and never removes anything after a failed backup.
 */

interface Logged {
  level: 'info' | 'warn' | 'error';
  msg: string;
}

const recorder = () => {
  const lines: Logged[] = [];
  const log: BackupLog = {
    info: (_o, msg) => lines.push({ level: 'info', msg }),
    warn: (_o, msg) => lines.push({ level: 'warn', msg }),
    error: (_o, msg) => lines.push({ level: 'error', msg }),
  };
  return { lines, log };
};

const tempDir = (ctx: TestContext) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-backups-'));
  ctx.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
};

const archivesIn = (dir: string) =>
  fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.tar'))
    .sort();

function service(store: Store, dir: string, engine: TestEngine, options: { keep?: number; now?: () => number; log?: BackupLog; leaseMs?: number } = {}) {
  return new BackupService({
    config: { backupDir: dir, backupKeep: options.keep ?? 14, backupS3: null },
    store,
    engine,
    log: options.log ?? recorder().log,
    now: options.now,
    leaseMs: options.leaseMs,
  });
}

/**
 * A second server process as far as the lease is concerned: opens the database, and on `go` asks
 * for a backup whose archive it holds open until `finish`; answers one JSON line each time.
 * A process, not a second connection in this one: SQLite's driver is synchronous, so two
 * connections of one thread cannot wait on each other's transactions.
 */
const RACER = `
  const [url, schema, dir] = process.argv.slice(1);
  const { openStore } = await import(${JSON.stringify(path.resolve(import.meta.dirname, '../../src/store/db.ts'))});
  const { BackupService } = await import(${JSON.stringify(path.resolve(import.meta.dirname, '../../src/services/backup-runs.service.ts'))});
  const { testEngine } = await import(${JSON.stringify(path.resolve(import.meta.dirname, '../backup-engine.ts'))});
  const store = await openStore(url, schema ? { schema } : {});
  const engine = testEngine();
  const release = engine.hold();
  const quiet = { info() {}, warn() {}, error() {} };
  const backups = new BackupService({ config: { backupDir: dir, backupKeep: 14, backupS3: null }, store, engine, log: quiet });
  const lines = (await import('node:readline')).createInterface({ input: process.stdin });
  const next = lines[Symbol.asyncIterator]();
  console.log(JSON.stringify({ ready: true }));
  await next.next();
  const r = await backups.start('schedule');
  console.log(JSON.stringify({ started: r.started, running: !r.started && r.running !== null }));
  await next.next();
  release();
  await backups.idle();
  console.log(JSON.stringify({ begun: engine.begun }));
  lines.close();
  await store.close();
`;

function racer(ctx: TestContext, url: string, schema: string | undefined, dir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', RACER, url, schema ?? '', dir], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  ctx.after(() => {
    if (child.exitCode === null) child.kill();
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return {
    async line(): Promise<string> {
      const { value, done } = await lines.next();
      if (done) throw new Error(`the racer process ended (exit ${child.exitCode})`);
      return value;
    },
    send: (text: string) => child.stdin!.write(`${text}\n`),
  };
}

for (const dialect of DIALECTS) {
  describe(`scheduled backups: lease, runs and pruning (${dialect})`, () => {
    it('two processes racing for the lease: exactly one backup runs, the other is told one is running', async (ctx) => {
      const db = await freshStore(dialect);
      ctx.after(() => db.drop());
      const racers = [racer(ctx, db.url, db.schema, tempDir(ctx)), racer(ctx, db.url, db.schema, tempDir(ctx))];
      await Promise.all(racers.map((r) => r.line()));
      // Both ask at once (each process holds its backup open until told to finish).
      for (const r of racers) r.send('go');
      const answers = await Promise.all(racers.map(async (r) => JSON.parse(await r.line()) as { started: boolean; running: boolean }));
      assert.deepEqual(answers.map((a) => a.started).sort(), [false, true], 'exactly one process got the lease');
      assert.equal(answers.find((a) => !a.started)?.running, true, 'the other is told a backup is running');
      const here = service(db.store, tempDir(ctx), testEngine());
      assert.ok(await here.running(), 'a third process sees the running backup');
      assert.equal(await here.run('console'), 'busy', 'and is refused too');
      for (const r of racers) r.send('finish');
      const ends = await Promise.all(racers.map(async (r) => JSON.parse(await r.line()) as { begun: number }));
      assert.equal(ends[0].begun + ends[1].begun, 1, 'exactly one archive was begun');
      assert.deepEqual(
        (await recentRuns(db.store.db, 10)).map((r) => r.status),
        ['succeeded'],
      );
      assert.equal(await currentLease(db.store.db, Date.now()), null, 'the lease is released at the end');
      assert.equal(await here.run('console'), 'succeeded', 'released: the next request runs');
    });

    it('a lease whose holder stopped renewing lapses: the next backup takes over and marks the dead run failed', async (ctx) => {
      const db = await freshStore(dialect);
      ctx.after(() => db.drop());
      let now = Date.UTC(2026, 5, 1);
      // A process took the lease and began a run, then died.
      await db.store.db.transaction().execute(async (trx) => {
        assert.equal(await takeLease(trx, 'dead-host:1:x', now, 60_000), true);
        await insertRun(trx, { status: 'running', trigger: 'schedule', requested_by: null, holder: 'dead-host:1:x', started_at: now });
      });
      const dir = tempDir(ctx);
      const live = service(db.store, dir, testEngine(), { now: () => now });
      now += 59_999;
      assert.equal(await live.run('schedule'), 'busy', 'still within the dead holder’s lease');
      now += 2;
      assert.equal(await live.run('schedule'), 'succeeded', 'past its expiry the lease is taken over');
      const runs = await recentRuns(db.store.db, 10);
      assert.deepEqual(
        runs.map((r) => [r.status, r.error?.startsWith('abandoned') ?? false]),
        [
          ['succeeded', false],
          ['failed', true],
        ],
      );
    });

    it('records a run: file, size, the manifest’s counts, verified; the archive mode 0600', async (ctx) => {
      const db = await freshStore(dialect);
      ctx.after(() => db.drop());
      const dir = tempDir(ctx);
      assert.equal(await service(db.store, dir, testEngine()).run('schedule'), 'succeeded');
      const [run] = await recentRuns(db.store.db, 1);
      assert.equal(run.status, 'succeeded');
      assert.equal(run.verified, 1);
      assert.equal(run.location, 'local');
      assert.deepEqual(archivesIn(dir), [run.file]);
      assert.equal(Number(run.bytes), fs.statSync(path.join(dir, run.file!)).size);
      assert.deepEqual(
        { merchants: run.merchants, orders: run.orders, refunds: run.refunds, journalEntries: run.journal_entries, stockRows: run.stock_rows },
        TEST_COUNTS,
      );
      assert.equal(fs.statSync(path.join(dir, run.file!)).mode & 0o777, 0o600);
      assert.ok(Number(run.finished_at) >= Number(run.started_at));
    });

    it('KEEP=2: keeps the two newest verified archives; a failing verify removes nothing; the next good run prunes', async (ctx) => {
      const db = await freshStore(dialect);
      ctx.after(() => db.drop());
      const dir = tempDir(ctx);
      const engine = testEngine();
      const { lines, log } = recorder();
      let now = Date.UTC(2026, 5, 1);
      const backups = service(db.store, dir, engine, { keep: 2, now: () => (now += 1000), log });

      for (let i = 0; i < 3; i++) assert.equal(await backups.run('schedule'), 'succeeded');
      const [a1, a2, a3] = (await recentRuns(db.store.db, 10)).map((r) => r.file!).reverse();
      assert.deepEqual(archivesIn(dir), [a2, a3], 'the oldest of three was pruned');

      engine.verifyOk = false;
      assert.equal(await backups.run('schedule'), 'failed');
      assert.equal(await backups.run('schedule'), 'failed');
      const failed = (await recentRuns(db.store.db, 2)).map((r) => r.file!).reverse();
      assert.deepEqual(archivesIn(dir), [a2, a3, ...failed].sort(), 'failed backups removed nothing, and are kept for a look');
      const errors = lines.filter((l) => l.level === 'error');
      assert.equal(errors.length, 2, 'each failure is one error line');
      assert.match(
        errors[0].msg,
        /^backup failed: could not verify it: the archive stockist-.*\.tar failed verification: the restored ledger does not balance$/,
      );

      engine.verifyOk = true;
      assert.equal(await backups.run('schedule'), 'succeeded');
      const [a6] = (await recentRuns(db.store.db, 1)).map((r) => r.file!);
      assert.deepEqual(archivesIn(dir), [a3, a6], 'a newer verified archive: the older one beyond KEEP and the failed ones go');
      const stored = await storedArchiveRuns(db.store.db);
      assert.deepEqual(stored.map((r) => r.file).sort(), [a3, a6]);
      assert.ok(!archivesIn(dir).includes(a1));
    });

    it('never removes an archive no run recorded (one put into BACKUP_DIR by hand)', async (ctx) => {
      const db = await freshStore(dialect);
      ctx.after(() => db.drop());
      const dir = tempDir(ctx);
      const byHand = testEngine({ firstSeq: 1000 });
      const manual = (await byHand.createBackup({ toDir: dir })).file;
      const backups = service(db.store, dir, testEngine(), { keep: 1 });
      for (let i = 0; i < 2; i++) assert.equal(await backups.run('schedule'), 'succeeded');
      assert.equal(archivesIn(dir).length, 2);
      assert.ok(archivesIn(dir).includes(manual));
      const listed = await backups.archives();
      const hand = listed.find((a) => a.name === manual);
      assert.deepEqual(hand?.counts, TEST_COUNTS, 'its counts come from its manifest');
      assert.equal(hand?.verified, null, 'not checked by this server');
    });

    it('stopping the server aborts a running backup: recorded failed, lease released', async (ctx) => {
      const db = await freshStore(dialect);
      ctx.after(() => db.drop());
      const engine = testEngine();
      engine.hold();
      const { lines, log } = recorder();
      const backups = service(db.store, tempDir(ctx), engine, { log });
      const started = await backups.start('schedule');
      assert.equal(started.started, true);
      await engine.begunCount(1);
      await backups.stop();
      const [run] = await recentRuns(db.store.db, 1);
      assert.equal(run.status, 'failed');
      assert.match(run.error ?? '', /shutting down/);
      assert.equal(await currentLease(db.store.db, Date.now()), null);
      assert.equal(lines.filter((l) => l.level === 'error').length, 1);
    });
  });
}
