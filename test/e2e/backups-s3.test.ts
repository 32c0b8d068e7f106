import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { loadConfig } from '../../src/config.ts';
import { BackupSchedule } from '../../src/jobs/backup-schedule.ts';
import { BackupService, type BackupLog } from '../../src/services/backup-runs.service.ts';
import { recentRuns } from '../../src/store/backups.repository.ts';
import { freshStore } from '../helpers.ts';
import { testEngine } from '../backup-engine.ts';
import { startS3Server } from '../s3-server.ts';
import { BIN, ROOT, tempDir } from './process.ts';
import { spawn } from 'node:child_process';

/**
 * Issue 39, items 2, 3 and 6: the S3 target against a real S3-compatible server from the npm
 * registry (s3rver, started here; the AWS SDK client talks HTTP to it, nothing is mocked) — upload
 * (multipart for a large archive), list, download, prune — and the cron schedule firing.
 */

const quiet: BackupLog = { info() {}, warn() {}, error() {} };

const s3Server = (ctx: TestContext) => startS3Server(ctx, 'stockist-backups');

/** The real `stockist` command, awaited without blocking this process (where s3rver runs). */
function runCliAsync(args: string[], env: Record<string, string>): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const EVIDENCE = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2000, 0x41)]);
const EVIDENCE_KEY = '1/1700000000000-0123456789abcdef01234567';
const STRAY_KEY = '1/1700000000001-0123456789abcdef01234567';

describe('backups to an S3-compatible bucket (s3rver)', () => {
  it('uploads a verified archive (multipart when large), lists it, downloads it whole, removes the local copy, prunes with KEEP=2', async (ctx) => {
    const { endpoint, client } = await s3Server(ctx);
    const db = await freshStore('sqlite');
    ctx.after(() => db.drop());
    const backupDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-backups-'));
    ctx.after(() => fs.rmSync(backupDir, { recursive: true, force: true }));
    // As the environment configures it: the URL, the endpoint and the usual AWS variables.
    const config = loadConfig({
      BACKUP_DIR: backupDir,
      BACKUP_KEEP: '2',
      BACKUP_S3_URL: 's3://stockist-backups/nightly/eu',
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
    });
    // 12 MiB: more than one 8 MiB part, so lib-storage's multipart upload is what runs.
    const engine = testEngine({ payloadBytes: 12 * 1024 * 1024 });
    let now = Date.UTC(2026, 5, 1);
    const backups = new BackupService({ config, store: db.store, engine, log: quiet, now: () => (now += 1000) });
    ctx.after(() => backups.stop());
    assert.equal(backups.target.where, 's3://stockist-backups/nightly/eu');

    assert.equal(await backups.run('schedule'), 'succeeded');
    const [first] = await recentRuns(db.store.db, 1);
    assert.equal(first.location, 's3');
    assert.deepEqual(
      fs.readdirSync(backupDir).filter((n) => !n.startsWith('.')),
      [],
      'the local copy is removed once uploaded',
    );
    const objects = await client.send(new ListObjectsV2Command({ Bucket: 'stockist-backups' }));
    assert.deepEqual(
      objects.Contents?.map((o) => o.Key),
      [`nightly/eu/${first.file}`],
    );
    assert.equal(objects.Contents?.[0].Size, Number(first.bytes));

    const listed = await backups.archives();
    assert.deepEqual(
      listed.map((a) => [a.name, a.bytes, a.verified, a.location]),
      [[first.file, Number(first.bytes), true, 's3']],
    );

    // The download streams the object: the same bytes the archive had (its size and a digest of them).
    const audited = { kind: 'staff' as const, id: '1', requestId: 'test' };
    const download = await backups.download(audited, first.file!);
    const chunks: Buffer[] = [];
    for await (const chunk of download.stream) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    assert.equal(body.length, Number(first.bytes));
    assert.equal(body.subarray(257, 262).toString('latin1'), 'ustar', 'a tar archive came back');
    assert.match(sha256(body), /^[0-9a-f]{64}$/);
    await assert.rejects(backups.download(audited, 'stockist-sqlite-20990101T000000Z.tar'), /not found/);
    await assert.rejects(backups.download(audited, '../nightly/eu/x.tar'), /not found/);

    // Two more: KEEP=2 leaves the two newest in the bucket.
    assert.equal(await backups.run('schedule'), 'succeeded');
    assert.equal(await backups.run('schedule'), 'succeeded');
    const keys = (await client.send(new ListObjectsV2Command({ Bucket: 'stockist-backups', Prefix: 'nightly/eu/' }))).Contents?.map((o) => o.Key) ?? [];
    const newest = (await recentRuns(db.store.db, 2)).map((r) => `nightly/eu/${r.file}`);
    assert.deepEqual(keys.sort(), newest.sort());

    // A failing verify uploads nothing and removes nothing from the bucket.
    engine.verifyOk = false;
    assert.equal(await backups.run('schedule'), 'failed');
    const after = (await client.send(new ListObjectsV2Command({ Bucket: 'stockist-backups', Prefix: 'nightly/eu/' }))).Contents?.map((o) => o.Key) ?? [];
    assert.deepEqual(after.sort(), newest.sort());
  });

  it('stockist backup (a real process, the real archive) with BACKUP_S3_URL: verified, uploaded, recorded as in the bucket', {
    timeout: 120_000,
  }, async (ctx) => {
    const { endpoint, client } = await s3Server(ctx);
    const db = await freshStore('sqlite');
    ctx.after(() => db.drop());
    const dataDir = tempDir();
    ctx.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const backupDir = path.join(dataDir, 'backups');
    // A claim's evidence file kept in the bucket (BACKUP_S3_URL's prefix, `files/<merchantId>/<name>`)
    // with its row, and an object no row names (restore leaves that one out).
    await client.send(new PutObjectCommand({ Bucket: 'stockist-backups', Key: `cli/files/${EVIDENCE_KEY}`, Body: EVIDENCE }));
    await client.send(new PutObjectCommand({ Bucket: 'stockist-backups', Key: `cli/files/${STRAY_KEY}`, Body: EVIDENCE }));
    await db.store.db
      .insertInto('claim_files')
      .values({
        merchant_id: 1,
        claim_id: null,
        content_type: 'application/pdf',
        size_bytes: EVIDENCE.length,
        sha256: sha256(EVIDENCE),
        storage_key: EVIDENCE_KEY,
        created_at: Date.now(),
      })
      .execute();
    // Spawned, not run synchronously: s3rver answers from this test's event loop.
    const r = await runCliAsync(['backup'], {
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      BACKUP_DIR: backupDir,
      BACKUP_S3_URL: 's3://stockist-backups/cli',
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_REGION: 'us-east-1',
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    const name = /^backup s3:\/\/stockist-backups\/cli\/(stockist-sqlite-\d{8}T\d{6}Z\.tar) {2}/m.exec(r.stdout)?.[1];
    assert.ok(name, r.stdout);
    assert.match(r.stdout, /^verified: /m);
    const keys = (await client.send(new ListObjectsV2Command({ Bucket: 'stockist-backups', Prefix: 'cli/' }))).Contents?.map((o) => o.Key);
    assert.deepEqual(keys?.sort(), [`cli/files/${EVIDENCE_KEY}`, `cli/files/${STRAY_KEY}`, `cli/${name}`].sort());
    assert.deepEqual(
      fs.readdirSync(backupDir).filter((n) => !n.startsWith('.')),
      [],
      'the local copy is removed once uploaded',
    );
    const [run] = await recentRuns(db.store.db, 1);
    assert.deepEqual([run.trigger, run.status, run.location, run.verified, run.file], ['cli', 'succeeded', 's3', 1, name]);

    // The claims' evidence the bucket held (under `cli/files/`) is in the archive; `stockist restore`
    // of the archive, taken back from the bucket, writes it into a disk-only DATA_DIR/files.
    const archive = path.join(dataDir, 'restore-me.tar');
    const got = await client.send(new GetObjectCommand({ Bucket: 'stockist-backups', Key: `cli/${name}` }));
    fs.writeFileSync(archive, Buffer.from(await got.Body!.transformToByteArray()));
    const target = tempDir();
    ctx.after(() => fs.rmSync(target, { recursive: true, force: true }));
    const restored = await runCliAsync(['restore', archive], { DATA_DIR: target });
    assert.equal(restored.status, 0, restored.stdout + restored.stderr);
    assert.ok(
      restored.stdout.includes(`claim evidence files written: 1 into ${path.join(target, 'files')} (1 named by no claim file of the database, left out)\n`),
      restored.stdout,
    );
    assert.equal(fs.existsSync(path.join(target, 'files', ...STRAY_KEY.split('/'))), false);
    assert.deepEqual(fs.readFileSync(path.join(target, 'files', ...EVIDENCE_KEY.split('/'))), EVIDENCE);
  });

  it('an unreachable bucket fails the run with the reason, and the verified archive stays in BACKUP_DIR', async (ctx) => {
    const db = await freshStore('sqlite');
    ctx.after(() => db.drop());
    const backupDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-backups-'));
    ctx.after(() => fs.rmSync(backupDir, { recursive: true, force: true }));
    const { endpoint } = await s3Server(ctx);
    const config = loadConfig({
      BACKUP_DIR: backupDir,
      BACKUP_S3_URL: 's3://no-such-bucket/x',
      AWS_ENDPOINT_URL: endpoint,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    });
    const errors: string[] = [];
    const backups = new BackupService({ config, store: db.store, engine: testEngine(), log: { ...quiet, error: (_o, msg) => errors.push(msg) } });
    ctx.after(() => backups.stop());
    assert.equal(await backups.run('console'), 'failed');
    const [run] = await recentRuns(db.store.db, 1);
    assert.equal(run.status, 'failed');
    assert.equal(run.verified, 1);
    assert.equal(run.location, 'local');
    assert.match(run.error ?? '', /^could not upload it to s3:\/\/no-such-bucket\/x: /);
    assert.equal(errors.length, 1);
    assert.deepEqual(fs.readdirSync(backupDir), [run.file]);
  });

  it('BACKUP_SCHEDULE: a cron of every second takes backups one after another', async (ctx) => {
    const db = await freshStore('sqlite');
    ctx.after(() => db.drop());
    const backupDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-backups-'));
    ctx.after(() => fs.rmSync(backupDir, { recursive: true, force: true }));
    const config = loadConfig({ BACKUP_DIR: backupDir, BACKUP_SCHEDULE: '* * * * * *' });
    const backups = new BackupService({ config, store: db.store, engine: testEngine(), log: quiet });
    const outcomes: string[] = [];
    let reached: () => void = () => {};
    const twoRuns = new Promise<void>((resolve) => (reached = resolve));
    const schedule = new BackupSchedule(backups, config.backupSchedule!, quiet, (outcome) => {
      outcomes.push(outcome);
      if (outcomes.length === 2) reached();
    });
    schedule.start();
    await twoRuns;
    await schedule.stop();
    await backups.stop();
    assert.deepEqual(outcomes.slice(0, 2), ['succeeded', 'succeeded']);
    const runs = await recentRuns(db.store.db, 10);
    assert.ok(runs.length >= 2);
    assert.ok(runs.every((r) => r.trigger === 'schedule' && r.status === 'succeeded'));
  });
});
