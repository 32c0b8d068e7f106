import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { BackupS3Config, Config } from '../config.ts';
import { notFound } from '../domain/errors.ts';

/**
 * Where claims' evidence bytes are kept (SPEC §18: "DATA_DIR/files (or the S3 bucket of §17)"):
 * `DATA_DIR/files/<storageKey>`, or, when BACKUP_S3_URL names a bucket, the object
 * `<prefix>/files/<storageKey>` in it. An upload is always streamed to a local file first (counted,
 * hashed and typed as it comes); `keep` moves that finished file to its place.
 */
export interface EvidenceStore {
  /** Moves the finished local file to where the evidence of `storageKey` lives. */
  keep(storageKey: string, file: string, contentType: string): Promise<void>;
  /** The bytes as a stream; gone → AppError not_found. */
  read(storageKey: string): Promise<Readable>;
  /** Removes the bytes; already gone is not an error. */
  remove(storageKey: string): Promise<void>;
}

/** Where evidence lives locally: `DATA_DIR/files`, also the folder uploads are streamed into. */
export const evidenceDir = (config: Pick<Config, 'dataDir'>) => path.join(config.dataDir, 'files');

/** The store the configuration names: the bucket of BACKUP_S3_URL when set, else DATA_DIR/files. */
export function evidenceStoreOf(config: Pick<Config, 'dataDir' | 'backupS3'>): EvidenceStore {
  return config.backupS3 ? bucketStore(config.backupS3) : directoryStore(evidenceDir(config));
}

function directoryStore(dir: string): EvidenceStore {
  return {
    keep: (storageKey, file) => fs.promises.rename(file, path.join(dir, storageKey)),
    read: async (storageKey) => {
      const full = path.join(dir, storageKey);
      if (!fs.existsSync(full)) throw notFound('file');
      return fs.createReadStream(full);
    },
    remove: (storageKey) => fs.promises.rm(path.join(dir, storageKey), { force: true }),
  };
}

/**
 * The bucket: a client per operation, destroyed when it is done (a read: when its stream closes),
 * so no connection outlives the request that needed it. The put is lib-storage's Upload, as the
 * backups' (backup-targets.ts): a file of at most 5 MB goes as one PutObject of its bytes (a raw
 * stream would be sent aws-chunked, which S3-compatible servers do not all read).
 */
function bucketStore(s3: BackupS3Config): EvidenceStore {
  // The AWS SDK is imported at the first operation, not with the server (docs/performance.md, "Memory on Node 24").
  const sdk = async () => (await import('./backup-s3-sdk.ts')).s3Sdk;
  const client = async () =>
    new (await sdk()).S3Client({
      region: s3.region,
      ...(s3.endpoint ? { endpoint: s3.endpoint, forcePathStyle: true } : {}),
      ...(s3.credentials ? { credentials: s3.credentials } : {}),
    });
  const key = (storageKey: string) => `${s3.prefix ? `${s3.prefix}/` : ''}files/${storageKey}`;
  return {
    keep: async (storageKey, file, contentType) => {
      const { Upload } = await sdk();
      const c = await client();
      try {
        await new Upload({
          client: c,
          params: { Bucket: s3.bucket, Key: key(storageKey), Body: fs.createReadStream(file), ContentType: contentType },
          leavePartsOnError: false,
        }).done();
      } finally {
        c.destroy();
      }
      await fs.promises.rm(file, { force: true });
    },
    read: async (storageKey) => {
      const { GetObjectCommand, NoSuchKey } = await sdk();
      const c = await client();
      try {
        const r = await c.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key(storageKey) }));
        const body = r.Body as Readable;
        body.once('close', () => c.destroy());
        return body;
      } catch (error) {
        c.destroy();
        if (error instanceof NoSuchKey) throw notFound('file');
        throw error;
      }
    },
    remove: async (storageKey) => {
      const { DeleteObjectCommand } = await sdk();
      const c = await client();
      try {
        await c.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key(storageKey) }));
      } finally {
        c.destroy();
      }
    },
  };
}
