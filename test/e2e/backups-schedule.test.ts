import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { isArchiveName } from '../../src/domain/backup.ts';
import { BackupService } from '../../src/services/backup-runs.service.ts';
import { testEngine } from '../backup-engine.ts';
import { urlOf } from '../backup-data.ts';
import { buildTestApp, DIALECTS, freshStore, PG_SKIP } from '../helpers.ts';
import { exited, freePort, runCli, startProcess, tempDir } from './process.ts';

/**
 * Issue 39, items 3–5, with the real archive maker and real processes: `serve` backing up every
 * second (BACKUP_SCHEDULE with seconds) keeps the newest two verified archives, reports them in
 * /metrics, and takes "Back up now" from a signed-in owner; `stockist backup` into BACKUP_DIR goes
 * through the same lease and records its run, while `--to` writes a plain archive.
 */

interface RunRow {
  id: number;
  status: string;
  trigger: string;
  requested_by: string | null;
  file: string | null;
  verified: number | null;
  pruned_at: number | null;
  error: string | null;
}

/** The backup_runs table as another process sees it: read from the SQLite file. */
function runsReader(file: string) {
  return async (): Promise<RunRow[]> => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      return db.prepare('select id, status, "trigger", requested_by, file, verified, pruned_at, error from backup_runs order by id').all() as RunRow[];
    } catch (error) {
      // Before the server has migrated, there is no table yet.
      if (/no such table/.test(String(error))) return [];
      throw error;
    } finally {
      db.close();
    }
  };
}

/** Polls `probe` until it returns a value (not undefined); the test's own timeout bounds the wait. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, c: TestContext): Promise<T> {
  for (let tries = 1; ; tries++) {
    const value = await probe();
    if (value !== undefined) {
      c.diagnostic(`${what}: after ${tries} looks`);
      return value;
    }
    await sleep(50);
  }
}

const archivesIn = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).filter(isArchiveName).sort() : []);

// The schedule, pruning, metrics and "Back up now" are the same code on both databases; what differs
// (pg_dump, the lease row) runs on PostgreSQL in the BACKUP_DIR case below and in
// test/store/backups.test.ts. So the every-second schedule, the slowest case, runs on SQLite only.
describe('scheduled backups with the real archive maker (sqlite, real processes)', () => {
  const dialect = 'sqlite';
  it('every second, KEEP=2: three verified runs, two archives kept, metrics, backup verify, and "Back up now" adds one', { timeout: 180_000 }, async (c) => {
    const dataDir = tempDir();
    c.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const backupDir = path.join(dataDir, 'backups');
    const adminKey = `e2e-${randomBytes(12).toString('hex')}`;
    const runs = runsReader(path.join(dataDir, 'stockist.db'));
    const port = await freePort();
    const env = {
      DATA_DIR: dataDir,
      TLS: 'off',
      LOG_LEVEL: 'warn',
      ADMIN_API_KEY: adminKey,
      BACKUP_SCHEDULE: '* * * * * *',
      BACKUP_KEEP: '2',
      BACKUP_DIR: backupDir,
    };
    const server = await startProcess(['serve', '--port', String(port), '--seed', 'demo'], env, /Stop: Ctrl-C/);
    c.after(() => {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    });
    const base = `http://127.0.0.1:${port}`;

    // A moment between two runs: nothing running before and after a look at BACKUP_DIR, and the
    // same runs both times, so the listing belongs to that table.
    const settled = await until(
      'three runs succeeded, seen between two runs',
      async () => {
        const before = await runs();
        if (before.filter((r) => r.status === 'succeeded').length < 3 || before.some((r) => r.status === 'running')) return undefined;
        // A run is marked succeeded before it prunes: until the prune is done, one too many is kept.
        if (before.filter((r) => r.status === 'succeeded' && r.pruned_at === null).length > 2) return undefined;
        const files = archivesIn(backupDir);
        const after = await runs();
        return JSON.stringify(after) === JSON.stringify(before) ? { runs: before, files } : undefined;
      },
      c,
    );
    assert.deepEqual(
      settled.runs.filter((r) => r.status !== 'succeeded'),
      [],
      'no run failed',
    );
    assert.ok(
      settled.runs.every((r) => r.trigger === 'schedule' && r.verified === 1),
      JSON.stringify(settled.runs),
    );
    const kept = settled.runs.filter((r) => r.pruned_at === null).map((r) => r.file!);
    assert.equal(kept.length, 2, `BACKUP_KEEP=2 keeps two: ${JSON.stringify(settled.runs)}`);
    assert.deepEqual(settled.files, [...kept].sort(), 'BACKUP_DIR holds exactly the two kept, verified archives');
    assert.deepEqual(
      kept,
      settled.runs.slice(-2).map((r) => r.file!),
      'the two newest',
    );
    for (const name of settled.files) assert.match(name, new RegExp(`^stockist-${dialect}-\\d{8}T\\d{6}Z\\.tar$`));

    // The newest archive, copied aside before the schedule prunes it, passes `stockist backup verify`.
    const newest = path.join(dataDir, 'newest.tar');
    fs.copyFileSync(path.join(backupDir, kept[1]), newest);
    const verifyDir = tempDir();
    c.after(() => fs.rmSync(verifyDir, { recursive: true, force: true }));
    const verified = runCli(['backup', 'verify', newest], { DATA_DIR: verifyDir });
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
    assert.match(verified.stdout, /^backup verify: every checksum, the ledger, stock = stock ledger and the counts hold$/m);
    assert.match(verified.stdout, /^manifest merchants 1, orders 0, refunds 0, journal entries \d+, stock rows \d+$/m);

    const metrics = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } })).text();
    const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
    assert.ok(metric('stockist_backup_last_success_timestamp_seconds') > 0, metrics);
    assert.ok(metric('stockist_backup_last_duration_seconds') >= 0, metrics);
    assert.equal(metric('stockist_backup_failures_total'), 0);

    // "Back up now" from the demo owner signed in through HTTP; refused while a scheduled run
    // holds the lease (a notice), so asked again until it starts.
    const owner = /Demo console owner \(password shown once\): (\S+) {2}(\S+)$/m.exec(server.output());
    assert.ok(owner, server.output());
    const signIn = await fetch(`${base}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: owner[1], password: owner[2], _formKey: randomBytes(18).toString('base64url') }),
    });
    assert.equal(signIn.status, 303);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0];
    const page = async (url: string) => (await fetch(`${base}${url}`, { headers: { cookie } })).text();
    const lastRun = settled.runs.at(-1)!.id;
    let refusals = 0;
    await until(
      '"Back up now" started',
      async () => {
        const csrf = /name="_csrf" value="([A-Za-z0-9]+)"/.exec(await page('/console/backups'))![1];
        const posted = await fetch(`${base}/console/backups`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ _csrf: csrf, _formKey: randomBytes(18).toString('base64url') }),
        });
        assert.equal(posted.status, 303);
        const notice = await page(posted.headers.get('location')!);
        if (/Backup started\./.test(notice)) return true;
        // Who holds the lease is named when its run's row can be read: not between the lease and the
        // row of a run starting, nor once a run has just ended (the lease still being let go).
        assert.match(notice, /Not started: a backup is running already( \(asked by the schedule\))?\. Try again when it has finished\./);
        refusals++;
        return undefined;
      },
      c,
    );
    c.diagnostic(`"Back up now" refused ${refusals} times while a scheduled run held the lease`);
    const asked = await until(
      'the console run verified',
      async () => {
        const run = (await runs()).find((r) => r.id > lastRun && r.trigger === 'console');
        return run && run.status !== 'running' ? run : undefined;
      },
      c,
    );
    assert.equal(asked.status, 'succeeded', asked.error ?? '');
    assert.equal(asked.verified, 1);
    assert.equal(asked.requested_by, owner[1]);
    const listed = await page('/console/backups');
    assert.match(listed, new RegExp(`console \\(${owner[1].replace(/\./g, '\\.')}\\)`), 'the page names who asked');

    server.child.kill('SIGTERM');
    assert.equal(await exited(server.child), 0, 'SIGTERM stops the schedule and the server cleanly');
  });
});

for (const dialect of DIALECTS) {
  describe(`stockist backup into BACKUP_DIR (${dialect}, real processes)`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    it('takes the lease (refused in one line while another backup runs), records a verified run by the OS user; --to stays a plain archive', {
      timeout: 180_000,
    }, async (c) => {
      const backupDir = tempDir();
      c.after(() => fs.rmSync(backupDir, { recursive: true, force: true }));
      const t = await buildTestApp(c, dialect, { BACKUP_DIR: backupDir, BACKUP_KEEP: '1' });
      const dataDir = tempDir();
      c.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const env = { DATABASE_URL: urlOf(t.store), DATA_DIR: dataDir, BACKUP_DIR: backupDir, BACKUP_KEEP: '1' };

      // Another process's backup holds the lease (this test's, with a stand-in archive maker held mid-way).
      const engine = testEngine();
      const other = new BackupService({ config: t.config, store: t.store, engine, log: { info() {}, warn() {}, error() {} } });
      const release = engine.hold();
      assert.equal((await other.start('console', null)).started, true);
      await engine.begunCount(1);
      const refused = runCli(['backup'], env);
      assert.equal(refused.status, 1, refused.stdout + refused.stderr);
      assert.equal(refused.stdout, '');
      const lines = refused.stderr.trim().split('\n');
      assert.match(lines[0], /^stockist: database /);
      assert.equal(lines.length, 2, refused.stderr);
      assert.match(
        lines[1],
        /^stockist: not started: a backup is running already \(started \S+ by a staff member\); one backup runs at a time, try again when it has finished$/,
      );
      release();
      await other.idle();

      const r = runCli(['backup'], env);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const line = /^backup (\S+\.tar) {2}.+ {2}merchants 0, orders 0, refunds 0, journal entries 0, stock rows 0 {2}\d+\.\d s$/m.exec(r.stdout);
      assert.ok(line, r.stdout);
      assert.equal(path.dirname(line[1]), backupDir);
      assert.match(
        r.stdout,
        /^verified: every checksum, the ledger, stock = stock ledger and the counts hold \(run \d+, listed in the console's Backups page\)$/m,
      );
      // KEEP=1: the stand-in's archive, older and verified, is pruned once this one is verified.
      assert.match(r.stdout, /^pruned \(BACKUP_KEEP=1\): stockist-sqlite-\d{8}T\d{6}Z\.tar$/m);
      assert.deepEqual(archivesIn(backupDir), [path.basename(line[1])]);
      const run = await t.store.db.selectFrom('backup_runs').selectAll().where('trigger', '=', 'cli').executeTakeFirstOrThrow();
      assert.equal(run.status, 'succeeded');
      assert.equal(run.verified, 1);
      assert.equal(run.file, path.basename(line[1]));
      assert.equal(run.requested_by, os.userInfo().username);
      const audit = await t.store.db.selectFrom('audit_log').selectAll().where('action', '=', 'backup.start').where('actor_kind', '=', 'cli').execute();
      assert.equal(audit.length, 1);
      const [listed] = await t.backups!.archives();
      assert.equal(listed.name, run.file);
      assert.equal(listed.verified, true, 'the console lists it as verified');

      // --to: one archive, no lease, no run recorded, nothing pruned.
      const elsewhere = tempDir();
      c.after(() => fs.rmSync(elsewhere, { recursive: true, force: true }));
      const plain = runCli(['backup', '--to', elsewhere], env);
      assert.equal(plain.status, 0, plain.stderr);
      assert.doesNotMatch(plain.stdout, /^verified:/m);
      assert.equal(archivesIn(elsewhere).length, 1);
      assert.equal((await t.store.db.selectFrom('backup_runs').select('id').execute()).length, 2, 'the stand-in’s run and the CLI’s');
      assert.deepEqual(archivesIn(backupDir), [run.file]);
    });
  });
}

describe('stockist backup of a database before the backup tables (sqlite, real processes)', () => {
  it('into BACKUP_DIR: refused in one line naming --to and migrate, nothing written; --to backs it up as it is', { timeout: 120_000 }, async (c) => {
    const db = await freshStore('sqlite', { upTo: '0041_console_list_indexes' });
    c.after(() => db.drop());
    const backupDir = tempDir();
    c.after(() => fs.rmSync(backupDir, { recursive: true, force: true }));
    const env = { DATABASE_URL: db.url, DATA_DIR: backupDir, BACKUP_DIR: path.join(backupDir, 'backups') };
    const refused = runCli(['backup'], env);
    assert.equal(refused.status, 1, refused.stdout + refused.stderr);
    assert.equal(refused.stdout, '');
    assert.match(
      refused.stderr.trim().split('\n').at(-1)!,
      /^stockist: the database is at schema 0041_console_list_indexes, before 0042_backups \(where backup runs are recorded\): `stockist backup --to DIR` writes a one-off archive/,
    );
    assert.deepEqual(archivesIn(path.join(backupDir, 'backups')), []);
    const plain = runCli(['backup', '--to', path.join(backupDir, 'by-hand')], env);
    assert.equal(plain.status, 0, plain.stderr);
    assert.match(plain.stdout, /^backup \S+ {2}.+ {2}schema 0041_console_list_indexes {2}/);
  });
});
