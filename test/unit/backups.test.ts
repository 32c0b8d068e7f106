import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { archiveName, archiveSlot, archiveTime, archivesToPrune, isArchiveName } from '../../src/domain/backup.ts';
import { byteSize, presentBackups } from '../../src/web/console/present-backups.ts';

/** Issue 39, items 1–5: the pure parts of scheduled backups, and their configuration. */

const at = (file: string, startedAt: number, good: boolean) => ({ file, startedAt, good });

describe('archive names', () => {
  it('takes stockist-<dialect>-<UTC stamp>.tar, as archiveName makes them, and nothing else', () => {
    assert.equal(isArchiveName('stockist-sqlite-20260101T000000Z.tar'), true);
    assert.equal(isArchiveName(archiveName('postgres', new Date('2026-12-31T23:59:59.999Z'))), true);
    for (const bad of [
      'stockist-postgres-20261231T235959Z.tar.zst',
      '../stockist-sqlite-20260101T000000Z.tar',
      'dir/stockist-sqlite-20260101T000000Z.tar',
      '.stockist-sqlite-20260101T000000Z.tar.partial',
      'stockist-mysql-20260101T000000Z.tar',
      'stockist-sqlite-20260101T000000Z.tar/../../etc/passwd',
      'stockist-sqlite-2026010T000000Z.tar',
      '',
    ])
      assert.equal(isArchiveName(bad), false, bad);
  });

  it('reads the instant a name records', () => {
    assert.equal(archiveTime('stockist-sqlite-20260102T030405Z.tar'), Date.UTC(2026, 0, 2, 3, 4, 5));
    assert.equal(archiveTime('notes.txt'), null);
    assert.equal(archiveTime('stockist-sqlite-20261340T000000Z.tar'), null, 'no 13th month');
  });
});

describe('the name of the next archive (archiveSlot)', () => {
  const t0 = Date.UTC(2026, 5, 1, 12, 0, 0);
  const nameAt = (ms: number) => archiveName('sqlite', new Date(ms));

  it('this second’s name, at once, when it is free', () => {
    assert.deepEqual(
      archiveSlot('sqlite', t0 + 250, () => false),
      { name: nameAt(t0), waitMs: 0 },
    );
  });

  it('the previous backup finished in this second: the next second’s name, after waiting for it', () => {
    const taken = new Set([nameAt(t0)]);
    assert.deepEqual(
      archiveSlot('sqlite', t0 + 250, (n) => taken.has(n)),
      { name: nameAt(t0 + 1000), waitMs: 750 },
    );
  });

  it('skips every taken second (one being written, one written)', () => {
    const taken = new Set([nameAt(t0), nameAt(t0 + 1000), nameAt(t0 + 2000)]);
    assert.deepEqual(
      archiveSlot('sqlite', t0 + 999, (n) => taken.has(n)),
      { name: nameAt(t0 + 3000), waitMs: 2001 },
    );
  });

  it('names are per dialect', () => {
    const taken = new Set([nameAt(t0)]);
    assert.equal(archiveSlot('postgres', t0, (n) => taken.has(n)).waitMs, 0);
  });
});

describe('pruning (archivesToPrune)', () => {
  it('keeps the newest KEEP good archives and removes older ones', () => {
    assert.deepEqual(archivesToPrune([at('a', 1, true), at('b', 2, true), at('c', 3, true)], 2), ['a']);
  });

  it('removes nothing while no archive is good (a run of failures)', () => {
    assert.deepEqual(archivesToPrune([at('a', 1, false), at('b', 2, false)], 1), []);
  });

  it('keeps failures newer than the newest good archive, removes older ones and those between the kept', () => {
    const archives = [at('g1', 1, true), at('f1', 2, false), at('g2', 3, true), at('f2', 4, false), at('g3', 5, true), at('f3', 6, false)];
    assert.deepEqual(archivesToPrune(archives, 2).sort(), ['f1', 'f2', 'g1']);
  });

  it('fewer good archives than KEEP: keeps them all', () => {
    assert.deepEqual(archivesToPrune([at('g1', 1, true), at('g2', 2, true)], 14), []);
  });

  it('does not depend on the order given', () => {
    assert.deepEqual(archivesToPrune([at('c', 3, true), at('a', 1, true), at('b', 2, true)], 1).sort(), ['a', 'b']);
  });
});

describe('backup configuration', () => {
  it('defaults: off, DATA_DIR/backups, keep 14, no bucket', () => {
    const c = loadConfig({ DATA_DIR: '/srv/stockist' });
    assert.equal(c.backupSchedule, null);
    assert.equal(c.backupDir, path.join('/srv/stockist', 'backups'));
    assert.equal(c.backupKeep, 14);
    assert.equal(c.backupS3, null);
  });

  it('reads a cron schedule (five fields, or six with seconds) and refuses a bad one with one line', () => {
    assert.equal(loadConfig({ BACKUP_SCHEDULE: '0 */6 * * *' }).backupSchedule, '0 */6 * * *');
    assert.equal(loadConfig({ BACKUP_SCHEDULE: '*/10 * * * * *' }).backupSchedule, '*/10 * * * * *');
    for (const bad of ['every day', '61 * * * *', '* * *']) {
      assert.throws(
        () => loadConfig({ BACKUP_SCHEDULE: bad }),
        (e: unknown) => e instanceof ConfigError && e.variable === 'BACKUP_SCHEDULE' && !e.message.includes('\n'),
        bad,
      );
    }
  });

  it('BACKUP_KEEP must be a whole number from 1', () => {
    assert.equal(loadConfig({ BACKUP_KEEP: '3' }).backupKeep, 3);
    assert.throws(() => loadConfig({ BACKUP_KEEP: '0' }), /BACKUP_KEEP/);
    assert.throws(() => loadConfig({ BACKUP_KEEP: 'ten' }), /BACKUP_KEEP/);
  });

  it('BACKUP_S3_URL with the AWS variables; a custom endpoint; a half-given key pair refused', () => {
    const c = loadConfig({
      BACKUP_S3_URL: 's3://my-bucket/stockist/prod/',
      AWS_REGION: 'eu-west-1',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9000',
      AWS_ENDPOINT_URL_S3: 'https://s3.example.com',
      AWS_ACCESS_KEY_ID: 'AKIA',
      AWS_SECRET_ACCESS_KEY: 'secret',
    });
    assert.deepEqual(c.backupS3, {
      bucket: 'my-bucket',
      prefix: 'stockist/prod',
      region: 'eu-west-1',
      endpoint: 'https://s3.example.com',
      credentials: { accessKeyId: 'AKIA', secretAccessKey: 'secret' },
    });
    assert.deepEqual(loadConfig({ BACKUP_S3_URL: 's3://my-bucket' }).backupS3, {
      bucket: 'my-bucket',
      prefix: '',
      region: 'us-east-1',
      endpoint: null,
      credentials: null,
    });
    assert.throws(() => loadConfig({ BACKUP_S3_URL: 'https://my-bucket/x' }), /^ConfigError: BACKUP_S3_URL: must be s3:\/\/bucket\/prefix/);
    assert.throws(() => loadConfig({ BACKUP_S3_URL: 's3://My_Bucket/x' }), /BACKUP_S3_URL/);
    assert.throws(() => loadConfig({ BACKUP_S3_URL: 's3://my-bucket', AWS_ACCESS_KEY_ID: 'AKIA' }), /AWS_SECRET_ACCESS_KEY/);
    assert.throws(() => loadConfig({ BACKUP_S3_URL: 's3://my-bucket', AWS_ENDPOINT_URL: 'minio:9000' }), /AWS_ENDPOINT_URL/);
  });
});

describe('the Backups page model (presentBackups)', () => {
  it('sizes in binary units', () => {
    assert.equal(byteSize(532), '532 B');
    assert.equal(byteSize(14_540), '14.2 KiB');
    assert.equal(byteSize(3 * 1024 ** 3), '3.0 GiB');
  });

  it('rows: time, size, counts, verified state and the download link; the running backup; the button', () => {
    const view = presentBackups({
      where: '/srv/backups',
      schedule: '0 */6 * * *',
      keep: 14,
      running: { startedAt: Date.UTC(2026, 0, 1), trigger: 'console', requestedBy: 'owner@example.com' },
      archives: [
        {
          name: 'stockist-sqlite-20260101T000000Z.tar',
          bytes: 2048,
          takenAt: Date.UTC(2026, 0, 1),
          counts: { merchants: 1, orders: 1200, refunds: 0, journalEntries: 2, stockRows: 1 },
          verified: true,
          location: 'local',
        },
        { name: 'stockist-sqlite-20251231T000000Z.tar', bytes: 10, takenAt: Date.UTC(2025, 11, 31), counts: null, verified: null, location: 'local' },
      ],
      runs: [],
    });
    assert.equal(view.schedule, '0 */6 * * * (cron, UTC)');
    assert.equal(view.keep, 'the newest 14 verified archives');
    assert.equal(view.running?.by, 'owner@example.com');
    assert.equal(view.start, '/console/backups');
    assert.deepEqual(
      view.archives.map((a) => [a.size, a.counts, a.verified, a.download]),
      [
        ['2.0 KiB', '1 merchant, 1,200 orders, 0 refunds, 2 journal entries, 1 stock row', 'verified', '/console/backups/stockist-sqlite-20260101T000000Z.tar'],
        ['10 B', 'unknown', 'not checked', '/console/backups/stockist-sqlite-20251231T000000Z.tar'],
      ],
    );
    assert.match(view.archives[0].taken, /<time datetime="2026-01-01T00:00:00/);
  });

  it('no schedule; who started a running backup and who asked for each run', () => {
    const run = (trigger: 'schedule' | 'console' | 'cli', requested_by: string | null) =>
      ({
        id: 1,
        status: 'succeeded',
        trigger,
        requested_by,
        holder: 'h',
        started_at: Date.UTC(2026, 0, 1),
        finished_at: null,
        file: null,
        location: null,
        bytes: null,
        duration_ms: null,
        merchants: null,
        orders: null,
        refunds: null,
        journal_entries: null,
        stock_rows: null,
        verified: 1,
        error: null,
        pruned_at: null,
      }) as const;
    const view = presentBackups({
      where: '/srv/backups',
      schedule: null,
      keep: 1,
      running: { startedAt: Date.UTC(2026, 0, 1), trigger: 'cli', requestedBy: 'stockist' },
      archives: [],
      runs: [run('schedule', null), run('console', 'owner@example.com'), run('cli', 'stockist')],
    });
    assert.equal(view.schedule, 'off (BACKUP_SCHEDULE is not set)');
    assert.equal(view.keep, 'the newest 1 verified archive');
    assert.equal(view.running?.by, 'stockist backup (stockist)');
    assert.deepEqual(
      view.runs.map((r) => r.trigger),
      ['schedule', 'console (owner@example.com)', 'cli (stockist)'],
    );
    // A run's result in a backup's words (not a webhook delivery's "Delivered"); the code stays in data-run-status.
    const results = presentBackups({
      where: '/srv/backups',
      schedule: null,
      keep: 1,
      running: null,
      archives: [],
      runs: [
        run('schedule', null),
        { ...run('schedule', null), pruned_at: Date.UTC(2026, 0, 2) },
        { ...run('schedule', null), status: 'failed' },
        { ...run('schedule', null), status: 'running' },
      ],
    }).runs;
    assert.deepEqual(
      results.map((r) => [r.status, r.statusText]),
      [
        ['succeeded', 'Succeeded'],
        ['succeeded (pruned since)', 'Succeeded (pruned since)'],
        ['failed', 'Failed'],
        ['running', 'Running'],
      ],
    );
  });
});
