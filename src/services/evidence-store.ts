import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BackupS3Config, Config } from '../config.ts';
import { notFound } from '../domain/errors.ts';

/**
 * Where claims' evidence bytes are kept (SPEC §18: "DATA_DIR/files (or the S3 bucket of §17)"):
 * `DATA_DIR/files/<storageKey>`, or, when BACKUP_S3_URL names a bucket, the object
 * `<prefix>/files/<storageKey>` in it. An upload is always streamed to a local file first (counted,
 * hashed and typed as it comes); `keep` moves that finished file to its place.
 */
export interface EvidenceStore {
  /** Where it is, for messages: the folder, or `s3://bucket/prefix/files/`. */
  readonly where: string;
  /** Moves the finished local file to where the evidence of `storageKey` lives. */
  keep(storageKey: string, file: string, contentType: string): Promise<void>;
  /** The bytes as a stream; gone → AppError not_found. */
  read(storageKey: string): Promise<Readable>;
  /** Removes the bytes; already gone is not an error. */
  remove(storageKey: string): Promise<void>;
  /**
   * The storage keys of every finished file (uploads still being received are not listed: a local
   * `.part`, and nothing in the bucket until its PutObject completed). Read as it goes, not whole.
   */
  list(): AsyncIterable<string>;
  /** Streams the bytes of `storageKey` into the local `file`; false when they are gone (purged meanwhile). */
  copyOut(storageKey: string, file: string): Promise<boolean>;
  /** Whether `storageKey` has bytes here. */
  has(storageKey: string): Promise<boolean>;
  /**
   * Restore: moves the local `file` to `storageKey` unless bytes are already there (those are kept
   * and `file` removed). True when it wrote them.
   */
  place(storageKey: string, file: string, contentType: string): Promise<boolean>;
  /** Throws when the store cannot be reached (a missing bucket, refused credentials): before a restore writes anything. */
  probe(): Promise<void>;
}

/**
 * A storage key as the upload makes them, `<merchantId>/<ms>-<hex>` (claim-files.service.ts): two
 * plain segments, never `.`, `..` or a dot-name. Anything else met in a listing or an archive is not
 * evidence (and never becomes a path).
 */
export function isStorageKey(key: string): boolean {
  return /^[A-Za-z0-9_-]+\/[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(key) && !key.endsWith('.part');
}

/** Where evidence lives locally: `DATA_DIR/files`, also the folder uploads are streamed into. */
export const evidenceDir = (config: Pick<Config, 'dataDir'>) => path.join(config.dataDir, 'files');

/** The store the configuration names: the bucket of BACKUP_S3_URL when set, else DATA_DIR/files. */
export function evidenceStoreOf(config: Pick<Config, 'dataDir' | 'backupS3'>): EvidenceStore {
  return config.backupS3 ? bucketStore(config.backupS3) : directoryStore(evidenceDir(config));
}

const gone = (error: unknown) => (error as NodeJS.ErrnoException).code === 'ENOENT';

function directoryStore(dir: string): EvidenceStore {
  const at = (storageKey: string) => path.join(dir, ...storageKey.split('/'));
  return {
    where: dir,
    keep: (storageKey, file) => fs.promises.rename(file, at(storageKey)),
    read: async (storageKey) => {
      const full = at(storageKey);
      if (!fs.existsSync(full)) throw notFound('file');
      return fs.createReadStream(full);
    },
    remove: (storageKey) => fs.promises.rm(at(storageKey), { force: true }),
    list: async function* () {
      if (!fs.existsSync(dir)) return;
      for (const merchant of (await fs.promises.readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
        if (!merchant.isDirectory()) continue;
        const names = await fs.promises.readdir(path.join(dir, merchant.name), { withFileTypes: true }).catch((error) => {
          if (gone(error)) return [];
          throw error;
        });
        for (const f of names.sort((a, b) => a.name.localeCompare(b.name))) {
          const key = `${merchant.name}/${f.name}`;
          if (f.isFile() && isStorageKey(key)) yield key;
        }
      }
    },
    copyOut: async (storageKey, file) => {
      try {
        await pipeline(fs.createReadStream(at(storageKey)), fs.createWriteStream(file, { mode: 0o600 }));
        return true;
      } catch (error) {
        if (!gone(error)) throw error;
        await fs.promises.rm(file, { force: true });
        return false;
      }
    },
    has: async (storageKey) => fs.existsSync(at(storageKey)),
    place: async (storageKey, file) => {
      const dest = at(storageKey);
      await fs.promises.mkdir(path.dirname(dest), { recursive: true, mode: 0o700 });
      try {
        // A link (or, from another file system, an exclusive copy) is refused when the name exists:
        // nothing already there is ever replaced.
        await fs.promises.link(file, dest).catch((error) => {
          if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
          return fs.promises.copyFile(file, dest, fs.constants.COPYFILE_EXCL);
        });
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw error;
      } finally {
        await fs.promises.rm(file, { force: true });
      }
    },
    probe: async () => {
      await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
      await fs.promises.access(dir, fs.constants.W_OK);
    },
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
  const root = `${s3.prefix ? `${s3.prefix}/` : ''}files/`;
  const key = (storageKey: string) => root + storageKey;
  /** Runs `f` with a client of its own, destroyed after. */
  const using = async <T>(f: (c: Awaited<ReturnType<typeof client>>) => Promise<T>): Promise<T> => {
    const c = await client();
    try {
      return await f(c);
    } finally {
      c.destroy();
    }
  };
  const put = async (storageKey: string, file: string, contentType: string) => {
    const { Upload } = await sdk();
    await using((c) =>
      new Upload({
        client: c,
        params: { Bucket: s3.bucket, Key: key(storageKey), Body: fs.createReadStream(file), ContentType: contentType },
        leavePartsOnError: false,
      }).done(),
    );
    await fs.promises.rm(file, { force: true });
  };
  const has = async (storageKey: string) => {
    const { HeadObjectCommand, NotFound } = await sdk();
    try {
      await using((c) => c.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: key(storageKey) })));
      return true;
    } catch (error) {
      if (error instanceof NotFound || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
      throw error;
    }
  };
  return {
    where: `s3://${s3.bucket}/${root}`,
    keep: put,
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
      await using((c) => c.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key(storageKey) })));
    },
    // One client for the whole listing, a page (at most 1,000 keys) at a time.
    list: async function* () {
      const { ListObjectsV2Command } = await sdk();
      const c = await client();
      try {
        let token: string | undefined;
        do {
          const page = await c.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: root, ContinuationToken: token }));
          for (const o of page.Contents ?? []) {
            const storageKey = o.Key?.slice(root.length) ?? '';
            if (isStorageKey(storageKey)) yield storageKey;
          }
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
      } finally {
        c.destroy();
      }
    },
    copyOut: async (storageKey, file) => {
      const { GetObjectCommand, NoSuchKey } = await sdk();
      try {
        await using(async (c) => {
          const r = await c.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key(storageKey) }));
          await pipeline(r.Body as Readable, fs.createWriteStream(file, { mode: 0o600 }));
        });
        return true;
      } catch (error) {
        if (!(error instanceof NoSuchKey)) throw error;
        await fs.promises.rm(file, { force: true });
        return false;
      }
    },
    has,
    place: async (storageKey, file, contentType) => {
      // Looked for first: an object already there is never replaced (a conditional put, If-None-Match,
      // is not read by every S3-compatible server). The restore's target is a new place, written by
      // nothing else while it runs.
      if (await has(storageKey)) {
        await fs.promises.rm(file, { force: true });
        return false;
      }
      await put(storageKey, file, contentType);
      return true;
    },
    probe: async () => {
      const { ListObjectsV2Command } = await sdk();
      await using((c) => c.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: root, MaxKeys: 1 })));
    },
  };
}
