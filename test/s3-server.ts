import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/**
 * A real S3-compatible server (s3rver, from the npm registry) in this process, on a free port of
 * 127.0.0.1, with `bucket` created and a client to look into it; both end with the test. The AWS
 * SDK talks HTTP to it, nothing is mocked. A command that uses it must be awaited, not run
 * synchronously: s3rver answers from this process's event loop.
 */
export async function startS3Server(ctx: TestContext, bucket: string) {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-s3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory });
  const { port } = await server.run();
  ctx.after(async () => {
    await server.close();
    fs.rmSync(directory, { recursive: true, force: true });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  ctx.after(() => client.destroy());
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return { endpoint, client };
}
