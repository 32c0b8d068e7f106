import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { purgeOrphanEvidence } from '../../src/services/claim-files.service.ts';
import { ADMIN_KEY, DIALECTS, PG_SKIP, buildTestApp, newMerchant } from '../helpers.ts';

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(3000, 7)]);
const SVG = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');

/** A real S3-compatible server (s3rver, as test/e2e/backups-s3.test.ts) and a client to look into its bucket. */
async function s3Server(ctx: TestContext) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-s3rver-evidence-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const { port } = await server.run();
  ctx.after(async () => {
    await server.close();
    fs.rmSync(directory, { recursive: true, force: true });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  ctx.after(() => client.destroy());
  await client.send(new CreateBucketCommand({ Bucket: 'stockist-evidence' }));
  const objects = async () =>
    ((await client.send(new ListObjectsV2Command({ Bucket: 'stockist-evidence', Prefix: 'site-a/files/' }))).Contents ?? []).map((o) => ({
      key: o.Key!,
      size: o.Size,
    }));
  return { endpoint, objects };
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
  });
}
