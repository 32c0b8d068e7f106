import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BackupService } from '../../src/services/backup-runs.service.ts';
import { buildTestApp, DIALECTS, newMerchant, type TestApp } from '../helpers.ts';
import { testEngine } from '../backup-engine.ts';
import { follow, signedIn, staff, type Browser } from './console-client.ts';

/**
 * Issue 39, item 5: the console's Backups page through HTTP — owner only (others 403, no link),
 * "Back up now" (303, one at a time: refused with a notice while one runs), the download streamed
 * as an attachment and audited with who and which file, only names the listing holds; and the
 * backup metrics of item 4.
 */

const quiet = { info() {}, warn() {}, error() {} };

for (const dialect of DIALECTS) {
  describe(`console Backups page (${dialect})`, () => {
    const build = async (ctx: TestContext) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-backups-'));
      ctx.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const engine = testEngine();
      let backups: BackupService | null = null;
      const t = await buildTestApp(
        ctx,
        dialect,
        { BACKUP_DIR: dir, BACKUP_KEEP: '3' },
        {},
        {
          backups: (store, config) => (backups = new BackupService({ config, store, engine, log: quiet })),
        },
      );
      await staff(t, 'owner@example.com', 'owner');
      await staff(t, 'support@example.com', 'support');
      await staff(t, 'warehouse@example.com', 'warehouse');
      const owner = await signedIn(t, 'owner@example.com');
      const backUpNow = async (b: Browser) => b.post('/console/backups', { _csrf: await b.csrf('/console/backups') });
      return { t, dir, engine, backups: backups!, owner, backUpNow };
    };

    const audit = async (t: TestApp) =>
      (await t.admin('GET', '/admin/v1/audit?limit=50')).body.data.list as { action: string; actorKind: string; actorId: string; target: string; after: any }[];

    it('owner only: other roles get 403 on every backup route and no Backups link', async (ctx) => {
      const { t, owner } = await build(ctx);
      const home = await owner.get('/console');
      assert.match(home.body, /href="\/console\/backups"/);
      for (const email of ['support@example.com', 'warehouse@example.com']) {
        const b = await signedIn(t, email);
        assert.doesNotMatch((await b.get('/console')).body, /href="\/console\/backups"/, `${email}: no link`);
        assert.equal((await b.get('/console/backups')).statusCode, 403);
        assert.equal((await b.get('/console/backups/stockist-sqlite-20260101T000000Z.tar')).statusCode, 403);
        const post = await b.post('/console/backups', { _csrf: await b.csrf() });
        assert.equal(post.statusCode, 403);
      }
      const anonymous = await t.app.inject({ method: 'GET', url: '/console/backups' });
      assert.equal(anonymous.statusCode, 303, 'no session: to sign-in');
    });

    it('back up now: 303 to the page, which lists the verified archive with its counts; audited', async (ctx) => {
      const { t, backups, owner, backUpNow } = await build(ctx);
      const empty = await owner.get('/console/backups');
      assert.equal(empty.statusCode, 200);
      assert.match(empty.body, /No archives yet\./);
      assert.match(empty.body, /<details class="confirm">\s*<summary data-confirm-open="backup">Back up now…<\/summary>/, 'it asks first');
      const posted = await backUpNow(owner);
      const page = await follow(owner, posted);
      assert.match(page.body, /Backup started\./);
      await backups.idle();
      const listed = await owner.get('/console/backups');
      const row = /<tr data-archive="(stockist-sqlite-\d{8}T\d{6}Z\.tar)" data-verified="ok" role="row">([\s\S]*?)<\/tr>/.exec(listed.body);
      assert.ok(row, listed.body);
      assert.match(row[2], /2 merchants, 17 orders, 3 refunds, 40 journal entries, 12 stock rows/);
      assert.match(listed.body, /data-run-status="succeeded"/);
      const started = (await audit(t)).find((a) => a.action === 'backup.start');
      assert.equal(started?.actorKind, 'staff');
    });

    it('one at a time: while one runs the page says so, the button is disabled, and a request is refused with a notice', async (ctx) => {
      const { t, engine, backups, owner, backUpNow } = await build(ctx);
      const release = engine.hold();
      await follow(owner, await backUpNow(owner));
      await engine.begunCount(1);
      const page = await owner.get('/console/backups');
      assert.match(page.body, /id="backup-running"/);
      assert.match(page.body, /data-action="backup-now" disabled/);
      const refused = await follow(owner, await backUpNow(owner));
      assert.match(refused.body, /Not started: a backup is running already \(asked by owner@example\.com\)/);
      release();
      await backups.idle();
      assert.equal(engine.begun, 1, 'the refused request began nothing');
      assert.equal((await audit(t)).filter((a) => a.action === 'backup.start').length, 1);
    });

    it('download: streamed as an attachment, audited with who and which file; only names the listing holds', async (ctx) => {
      const { t, dir, backups, owner } = await build(ctx);
      assert.equal(await backups.run('console'), 'succeeded');
      const [name] = fs.readdirSync(dir);
      const r = await owner.get(`/console/backups/${name}`);
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['content-disposition'], `attachment; filename="${name}"`);
      assert.equal(r.headers['content-type'], 'application/x-tar');
      assert.deepEqual(r.rawPayload, fs.readFileSync(path.join(dir, name)));
      const ownerId = (await audit(t)).find((a) => a.action === 'backup.download');
      assert.equal(ownerId?.target, `backup:${name}`);
      assert.equal(ownerId?.actorKind, 'staff');
      assert.equal(ownerId?.after.bytes, fs.statSync(path.join(dir, name)).size);

      // A file beside the archives that is not one, a traversal, an unknown archive: 404, nothing audited.
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'secret');
      for (const url of [
        '/console/backups/notes.txt',
        '/console/backups/..%2F..%2Fetc%2Fpasswd',
        '/console/backups/%2E%2E%2Fstockist.db',
        '/console/backups/stockist-sqlite-20990101T000000Z.tar',
      ]) {
        const refused = await owner.get(url);
        assert.equal(refused.statusCode, 404, url);
      }
      assert.equal((await audit(t)).filter((a) => a.action === 'backup.download').length, 1);
    });

    it('with the real archive maker (buildApp’s default): back up now lists a verified archive of this database, which downloads whole', async (ctx) => {
      const t = await buildTestApp(ctx, dialect, { BACKUP_KEEP: '1' });
      await newMerchant(t, 'Real Backup Shop');
      await staff(t, 'owner@example.com', 'owner');
      const owner = await signedIn(t, 'owner@example.com');
      const page = await follow(owner, await owner.post('/console/backups', { _csrf: await owner.csrf('/console/backups') }));
      assert.match(page.body, /Backup started\./);
      await t.backups!.idle();
      const listed = await owner.get('/console/backups');
      const row = new RegExp(`<tr data-archive="(stockist-${dialect}-\\d{8}T\\d{6}Z\\.tar)" data-verified="ok" role="row">([\\s\\S]*?)</tr>`).exec(listed.body);
      assert.ok(row, listed.body);
      assert.match(row[2], /1 merchant, 0 orders, 0 refunds, 0 journal entries, 0 stock rows/);
      assert.match(listed.body, /data-run-status="succeeded"/);
      const download = await owner.get(`/console/backups/${row[1]}`);
      assert.equal(download.statusCode, 200);
      assert.deepEqual(download.rawPayload, fs.readFileSync(path.join(t.config.backupDir, row[1])));
      // A second one: KEEP=1 prunes the first once the second is verified. Pruning is the same code
      // on both databases (and tested on both in test/store/backups.test.ts): SQLite's backup is the quick one.
      if (dialect === 'sqlite') {
        assert.equal(await t.backups!.run('console'), 'succeeded');
        assert.equal(fs.readdirSync(t.config.backupDir).filter((n) => !n.startsWith('.')).length, 1);
      }
    });

    it('metrics: last success, duration and failures of the runs table', async (ctx) => {
      const { t, engine, backups } = await build(ctx);
      const metric = async (name: string) => {
        const text = (await t.admin('GET', '/metrics')).raw;
        const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
        assert.ok(m, `${name} in /metrics`);
        return Number(m[1]);
      };
      assert.equal(await metric('stockist_backup_last_success_timestamp_seconds'), 0);
      assert.equal(await metric('stockist_backup_failures_total'), 0);
      assert.equal(await backups.run('schedule'), 'succeeded');
      const success = await metric('stockist_backup_last_success_timestamp_seconds');
      assert.ok(success > 1_700_000_000, String(success));
      assert.ok((await metric('stockist_backup_last_duration_seconds')) >= 0);
      engine.verifyOk = false;
      assert.equal(await backups.run('schedule'), 'failed');
      assert.equal(await metric('stockist_backup_failures_total'), 1);
      assert.equal(await metric('stockist_backup_last_success_timestamp_seconds'), success, 'a failure leaves the last success as it was');
      assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, '/readyz is unaffected');
    });
  });
}
