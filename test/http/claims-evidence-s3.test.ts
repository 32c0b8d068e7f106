import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { buildApp } from '../../src/app.ts';
import { createBackup, restoreBackup } from '../../src/services/backup.service.ts';
import { purgeOrphanEvidence, sweepStrayEvidence } from '../../src/services/claim-files.service.ts';
import { openStore } from '../../src/store/db.ts';
import { startS3Server } from '../s3-server.ts';
import { ADMIN_KEY, DIALECTS, filesUnder, PG_SKIP, buildTestApp, emptyPgSchema, newMerchant, testConfig } from '../helpers.ts';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(3000, 7)]);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
// Distinct bytes in each (the tampering below finds a file's bytes in the archive).
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 31) % 251))]);
const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from(Array.from({ length: 2500 }, (_, i) => (i * 17) % 253))]);
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const S3_ENV = (endpoint: string, prefix: string) => ({
  BACKUP_S3_URL: `s3://stockist-evidence/${prefix}`,
  AWS_ENDPOINT_URL_S3: endpoint,
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
});

/** A real S3-compatible server (s3rver, as test/e2e/backups-s3.test.ts) and a client to look into its bucket. */
async function s3Server(ctx: TestContext) {
  const { endpoint, client } = await startS3Server(ctx, 'stockist-evidence');
  const objects = async (prefix = 'site-a') =>
    ((await client.send(new ListObjectsV2Command({ Bucket: 'stockist-evidence', Prefix: `${prefix}/files/` }))).Contents ?? []).map((o) => ({
      key: o.Key!,
      size: o.Size,
    }));
  const object = async (key: string) => {
    const r = await client.send(new GetObjectCommand({ Bucket: 'stockist-evidence', Key: key }));
    return Buffer.from(await r.Body!.transformToByteArray());
  };
  const put = (key: string, body: Buffer) => client.send(new PutObjectCommand({ Bucket: 'stockist-evidence', Key: key, Body: body }));
  return { endpoint, objects, object, put };
}

/**
 * SPEC §18 with §17's bucket: when BACKUP_S3_URL is set, evidence bytes live in that bucket under
 * `<prefix>/files/<merchantId>/…`, not in DATA_DIR/files; they are served from it to their merchant
 * and the operator only, a refused upload or a replayed one leaves no object, and the purger removes
 * an orphan's object with its row.
 */
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`claim evidence in the S3 bucket (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('stores, serves and purges evidence in the bucket; nothing in DATA_DIR/files', async (ctx) => {
      const { endpoint, objects } = await s3Server(ctx);
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-claims-s3-'));
      ctx.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const t = await buildTestApp(ctx, dialect, {
        DATA_DIR: dataDir,
        BACKUP_S3_URL: 's3://stockist-evidence/site-a',
        AWS_ENDPOINT_URL_S3: endpoint,
        AWS_ACCESS_KEY_ID: 'S3RVER',
        AWS_SECRET_ACCESS_KEY: 'S3RVER',
      });
      const shop = (await newMerchant(t, 'Shop')).token;
      const other = (await newMerchant(t, 'Other')).token;
      const upload = (bytes: Buffer, contentType: string, headers: Record<string, string> = {}) =>
        t.app
          .inject({
            method: 'POST',
            url: '/openapi/v1/claims/files',
            payload: bytes,
            headers: { authorization: `Bearer ${shop}`, 'content-type': contentType, ...headers },
          })
          .then((r) => ({ status: r.statusCode, body: r.json() }));
      const localFiles = () =>
        fs.existsSync(path.join(dataDir, 'files'))
          ? fs.readdirSync(path.join(dataDir, 'files'), { recursive: true }).filter((f) => fs.statSync(path.join(dataDir, 'files', String(f))).isFile())
          : [];

      const first = await upload(PNG, 'image/png', { 'idempotency-key': 'evidence-1' });
      assert.equal(first.status, 200, JSON.stringify(first.body));
      const fileId = first.body.data.fileId;
      const stored = await objects();
      assert.equal(stored.length, 1);
      assert.match(stored[0].key, /^site-a\/files\/\d+\/\d+-[0-9a-f]{24}$/);
      assert.equal(stored[0].size, PNG.length);
      assert.deepEqual(localFiles(), [], 'no bytes left in DATA_DIR/files');

      // Served from the bucket: to its merchant and the operator; another merchant gets 404.
      const mine = await t.app.inject({ method: 'GET', url: `/openapi/v1/claims/files/${fileId}`, headers: { authorization: `Bearer ${shop}` } });
      assert.equal(mine.statusCode, 200);
      assert.deepEqual(mine.rawPayload, PNG);
      assert.equal(mine.headers['x-content-type-options'], 'nosniff');
      assert.equal(
        (await t.app.inject({ method: 'GET', url: `/openapi/v1/claims/files/${fileId}`, headers: { authorization: `Bearer ${other}` } })).statusCode,
        404,
      );
      const operator = await t.app.inject({ method: 'GET', url: `/admin/v1/claims/files/${fileId}`, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      assert.equal(operator.statusCode, 200);
      assert.deepEqual(operator.rawPayload, PNG);

      // A retry under the key answers the first file, and its copy is not kept; refused bytes are not kept.
      const again = await upload(PNG, 'image/png', { 'idempotency-key': 'evidence-1' });
      assert.equal(again.body.data.fileId, fileId);
      assert.equal((await upload(SVG, 'image/png')).status, 415);
      assert.equal((await objects()).length, 1);
      assert.deepEqual(localFiles(), []);

      // An orphan after a day: its row, then its object, go.
      assert.equal(await purgeOrphanEvidence(t.store.db, t.config, Date.now() + 25 * 3600 * 1000), 1);
      assert.deepEqual(await objects(), []);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: `/openapi/v1/claims/files/${fileId}`, headers: { authorization: `Bearer ${shop}` } })).statusCode,
        404,
      );
    });

    it('objects no row names are swept from the bucket a day after their upload; a named one and a young one stay', async (ctx) => {
      const { endpoint, objects, put } = await s3Server(ctx);
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-claims-s3-'));
      ctx.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const t = await buildTestApp(ctx, dialect, { DATA_DIR: dataDir, ...S3_ENV(endpoint, 'site-a') });
      const shop = (await newMerchant(t, 'Shop')).token;
      const uploaded = await t.app.inject({
        method: 'POST',
        url: '/openapi/v1/claims/files',
        payload: PNG,
        headers: { authorization: `Bearer ${shop}`, 'content-type': 'image/png' },
      });
      assert.equal(uploaded.statusCode, 200, uploaded.body);
      const namedKey = (await objects())[0].key;
      const now = Date.now();
      const strayKey = (ms: number) => `site-a/files/999/${ms}-${'cd'.repeat(12)}`;
      await put(strayKey(now - 25 * 3600 * 1000), PDF); // placed, its row never committed
      await put(strayKey(now), PDF); // an upload of now whose row is about to be written
      assert.equal(await sweepStrayEvidence(t.store.db, t.config, now), 1);
      assert.deepEqual((await objects()).map((o) => o.key).sort(), [namedKey, strayKey(now)].sort());
      const served = await t.app.inject({
        method: 'GET',
        url: `/openapi/v1/claims/files/${uploaded.json().data.fileId}`,
        headers: { authorization: `Bearer ${shop}` },
      });
      assert.deepEqual(served.rawPayload, PNG, 'the named file is still served');
    });

    /** A new place to restore into: a DATA_DIR of its own and (PostgreSQL) an empty schema; its config with `env`. */
    async function freshTarget(ctx: TestContext, env: Record<string, string> = {}) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-evidence-restore-'));
      ctx.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const database = dialect === 'postgres' ? await emptyPgSchema(ctx, 'evidence_restore') : null;
      const config = testConfig({ DATA_DIR: dataDir, ...(database ? { DATABASE_URL: database.url } : {}), ...env });
      return { dataDir, config };
    }
    /** A server on a restored database: what the merchant downloads there, with its token of before. */
    async function serveRestored(ctx: TestContext, config: ReturnType<typeof testConfig>) {
      const store = await openStore(config.databaseUrl);
      const app = await buildApp({ config, store, adminApiKey: ADMIN_KEY }, { logger: false });
      ctx.after(async () => {
        await app.close();
        await store.close();
      });
      return async (token: string, fileId: string) => {
        const r = await app.inject({ method: 'GET', url: `/openapi/v1/claims/files/${fileId}`, headers: { authorization: `Bearer ${token}` } });
        assert.equal(r.statusCode, 200, r.body);
        return r.rawPayload;
      };
    }
    async function uploadAll(t: Awaited<ReturnType<typeof buildTestApp>>, token: string) {
      const ids: Record<string, string> = {};
      for (const [name, bytes, type] of [
        ['png', PNG, 'image/png'],
        ['pdf', PDF, 'application/pdf'],
        ['jpeg', JPEG, 'image/jpeg'],
      ] as const) {
        const r = await t.app.inject({
          method: 'POST',
          url: '/openapi/v1/claims/files',
          payload: bytes,
          headers: { authorization: `Bearer ${token}`, 'content-type': type },
        });
        assert.equal(r.statusCode, 200, r.body);
        ids[name] = r.json().data.fileId;
      }
      return ids;
    }

    it('backup carries the bucket-held evidence; restore puts it into a new bucket prefix, or DATA_DIR/files, never over a file there; a tampered file is refused', {
      timeout: 300_000,
    }, async (ctx) => {
      const { endpoint, objects, object, put } = await s3Server(ctx);
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-claims-s3-'));
      ctx.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const t = await buildTestApp(ctx, dialect, { DATA_DIR: dataDir, ...S3_ENV(endpoint, 'site-a') });
      const shop = await newMerchant(t, 'Shop');
      const ids = await uploadAll(t, shop.token);
      const stored = await objects();
      assert.equal(stored.length, 3);
      const keyOf = new Map<string, string>();
      for (const [name, bytes] of [
        ['png', PNG],
        ['pdf', PDF],
        ['jpeg', JPEG],
      ] as const) {
        const o = stored.find((x) => x.size === bytes.length)!;
        keyOf.set(name, o.key.slice('site-a/files/'.length));
      }
      // An upload being received (a local `.part`) and an object of another shape are not evidence yet.
      fs.mkdirSync(path.join(dataDir, 'files', shop.merchantId), { recursive: true });
      fs.writeFileSync(path.join(dataDir, 'files', shop.merchantId, '1-receiving.part'), PNG);
      await put(`site-a/files/${shop.merchantId}/2-uploading.part`, PNG);
      // An object no evidence row names (uploaded after the snapshot, or left by a crash between the
      // put and the row): archived like every object, left out by restore.
      const stray = `${shop.merchantId}/1700000000000-0123456789abcdef01234567`;
      const strayBytes = Buffer.from('%PDF-1.7\nnamed by no row');
      await put(`site-a/files/${stray}`, strayBytes);

      const archives = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-evidence-backup-'));
      ctx.after(() => fs.rmSync(archives, { recursive: true, force: true }));
      const backup = await createBackup({ config: t.config, store: t.store }, { toDir: archives });
      const evidence = Object.fromEntries(Object.entries(backup.manifest.files).filter(([m]) => m.startsWith('files/')));
      assert.deepEqual(evidence, {
        [`files/${keyOf.get('png')}`]: sha256(PNG),
        [`files/${keyOf.get('pdf')}`]: sha256(PDF),
        [`files/${keyOf.get('jpeg')}`]: sha256(JPEG),
        [`files/${stray}`]: sha256(strayBytes),
      });

      // Into a new bucket prefix (and a new DATA_DIR and database); an object already there is kept.
      const intoBucket = await freshTarget(ctx, S3_ENV(endpoint, 'site-b'));
      await put(`site-b/files/${keyOf.get('jpeg')}`, Buffer.from('already here'));
      const r1 = await restoreBackup({ config: intoBucket.config }, backup.file);
      assert.deepEqual([r1.evidenceWritten, r1.evidenceKept, r1.evidenceUnnamed, r1.evidenceWhere], [2, 1, 1, 's3://stockist-evidence/site-b/files/']);
      assert.deepEqual((await objects('site-b')).map((o) => o.key).sort(), [...keyOf.values()].map((k) => `site-b/files/${k}`).sort());
      assert.deepEqual(await object(`site-b/files/${keyOf.get('jpeg')}`), Buffer.from('already here'), 'not overwritten');
      assert.deepEqual(filesUnder(path.join(intoBucket.dataDir, 'files')), [], 'nothing in DATA_DIR/files');
      assert.deepEqual(
        fs.readdirSync(intoBucket.dataDir).filter((f) => f.startsWith('.evidence-restoring')),
        [],
      );
      const fromBucket = await serveRestored(ctx, intoBucket.config);
      assert.deepEqual(await fromBucket(shop.token, ids.png), PNG);
      assert.deepEqual(await fromBucket(shop.token, ids.pdf), PDF);

      // Into a disk-only configuration: DATA_DIR/files; a file already there is kept.
      const intoDisk = await freshTarget(ctx);
      const pdfFile = path.join(intoDisk.dataDir, 'files', ...keyOf.get('pdf')!.split('/'));
      fs.mkdirSync(path.dirname(pdfFile), { recursive: true });
      fs.writeFileSync(pdfFile, 'already here');
      const r2 = await restoreBackup({ config: intoDisk.config }, backup.file);
      assert.deepEqual([r2.evidenceWritten, r2.evidenceKept, r2.evidenceUnnamed, r2.evidenceWhere], [2, 1, 1, path.join(intoDisk.dataDir, 'files')]);
      assert.deepEqual(filesUnder(path.join(intoDisk.dataDir, 'files')), [...keyOf.values()].sort());
      assert.equal(fs.readFileSync(pdfFile, 'utf8'), 'already here', 'not overwritten');
      const fromDisk = await serveRestored(ctx, intoDisk.config);
      assert.deepEqual(await fromDisk(shop.token, ids.png), PNG);
      assert.deepEqual(await fromDisk(shop.token, ids.jpeg), JPEG);

      // A byte of one evidence file changed in the archive: refused before anything is written.
      const bytes = fs.readFileSync(backup.file);
      const at = bytes.indexOf(PDF);
      assert.ok(at > 0);
      bytes[at + 100] ^= 0xff;
      const tampered = path.join(archives, 'tampered.tar');
      fs.writeFileSync(tampered, bytes);
      const intoTampered = await freshTarget(ctx, S3_ENV(endpoint, 'site-c'));
      await assert.rejects(restoreBackup({ config: intoTampered.config }, tampered), new RegExp(`files/${keyOf.get('pdf')} does not match its SHA-256`));
      assert.deepEqual(await objects('site-c'), []);
      assert.deepEqual(fs.readdirSync(intoTampered.dataDir), [], 'no database, no evidence written');

      // A bucket that cannot be written: refused before the database is restored.
      const intoMissing = await freshTarget(ctx, { ...S3_ENV(endpoint, 'site-e'), BACKUP_S3_URL: 's3://no-such-bucket/site-e' });
      await assert.rejects(
        restoreBackup({ config: intoMissing.config }, backup.file),
        /the archive holds claims' evidence and s3:\/\/no-such-bucket\/site-e\/files\/ cannot be written: /,
      );
      assert.deepEqual(fs.readdirSync(intoMissing.dataDir), [], 'no database, no evidence written');
    });

    it('an archive made with evidence in DATA_DIR/files restores into the bucket', { timeout: 300_000 }, async (ctx) => {
      const { endpoint, objects } = await s3Server(ctx);
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-claims-disk-'));
      ctx.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
      const t = await buildTestApp(ctx, dialect, { DATA_DIR: dataDir });
      const shop = await newMerchant(t, 'Shop');
      const ids = await uploadAll(t, shop.token);
      const onDisk = filesUnder(path.join(dataDir, 'files'));
      assert.equal(onDisk.length, 3);
      const archives = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-evidence-backup-'));
      ctx.after(() => fs.rmSync(archives, { recursive: true, force: true }));
      const backup = await createBackup({ config: t.config, store: t.store }, { toDir: archives });
      assert.deepEqual(
        Object.keys(backup.manifest.files)
          .filter((m) => m.startsWith('files/'))
          .sort(),
        onDisk.map((f) => `files/${f}`),
      );
      const target = await freshTarget(ctx, S3_ENV(endpoint, 'site-d'));
      const r = await restoreBackup({ config: target.config }, backup.file);
      assert.deepEqual([r.evidenceWritten, r.evidenceKept, r.evidenceUnnamed], [3, 0, 0]);
      assert.deepEqual(
        (await objects('site-d')).map((o) => o.key).sort(),
        onDisk.map((f) => `site-d/files/${f}`),
      );
      const download = await serveRestored(ctx, target.config);
      assert.deepEqual(await download(shop.token, ids.png), PNG);
      assert.deepEqual(await download(shop.token, ids.pdf), PDF);
      assert.deepEqual(await download(shop.token, ids.jpeg), JPEG);
    });
  });
}
