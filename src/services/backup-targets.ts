import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import type { BackupS3Config } from '../config.ts';
import { type BackupLocation, isArchiveName } from '../domain/backup.ts';
import { notFound } from '../domain/errors.ts';

/** An archive as a target lists it. */
export interface StoredArchive {
  name: string;
  bytes: number;
  /** When the target last wrote it (UTC ms). */
  modifiedAt: number;
}

/**
 * Where archives are kept, behind one interface (PocketBase's filesystem idea): BACKUP_DIR, or an
 * S3-compatible bucket. Every name passed in must be an archive's (`isArchiveName`), so no name
 * reaches outside the directory or the prefix; the listing shows archives only.
 */
export interface BackupTarget {
  readonly location: BackupLocation;
  /** For messages and the page: the directory, or `s3://bucket/prefix`. */
  readonly where: string;
  /** Stores the archive at `file` under `name` (streamed from the file, never read whole). */
  put(name: string, file: string): Promise<void>;
  list(): Promise<StoredArchive[]>;
  /** The archive's bytes as a stream (a download); not found → AppError not_found. */
  get(name: string): Promise<Readable>;
  /** Removes the archive; one already gone is not an error. */
  delete(name: string): Promise<void>;
}

function archiveName(name: string): string {
  if (!isArchiveName(name)) throw notFound('backup archive');
  return name;
}

/** BACKUP_DIR: archives as files of mode 0600 in a directory of mode 0700. */
export class DirectoryTarget implements BackupTarget {
  readonly location = 'local' as const;

  constructor(readonly where: string) {}

  async put(name: string, file: string): Promise<void> {
    const target = path.join(this.where, archiveName(name));
    if (path.resolve(file) === target) return;
    await fsp.mkdir(this.where, { recursive: true, mode: 0o700 });
    // Under a name the listing skips until complete, as the archive itself is written.
    const partial = path.join(this.where, `.${name}.partial`);
    await pipeline(fs.createReadStream(file), fs.createWriteStream(partial, { mode: 0o600 }));
    await fsp.rename(partial, target);
  }

  async list(): Promise<StoredArchive[]> {
    let names: string[];
    try {
      names = await fsp.readdir(this.where);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const out: StoredArchive[] = [];
    for (const name of names.filter(isArchiveName)) {
      const stat = await fsp.stat(path.join(this.where, name)).catch(() => null);
      if (stat?.isFile()) out.push({ name, bytes: stat.size, modifiedAt: stat.mtimeMs });
    }
    return out;
  }

  /** The file's path, for the trial restore and the manifest (local archives only). */
  pathOf(name: string): string {
    return path.join(this.where, archiveName(name));
  }

  async get(name: string): Promise<Readable> {
    const file = this.pathOf(name);
    const handle = await fsp.open(file, 'r').catch((error: NodeJS.ErrnoException) => {
      throw error.code === 'ENOENT' ? notFound('backup archive') : error;
    });
    return handle.createReadStream();
  }

  async delete(name: string): Promise<void> {
    await fsp.rm(this.pathOf(name), { force: true });
  }
}

/**
 * BACKUP_S3_URL: objects `<prefix>/<name>` in the bucket. Uploads go through lib-storage's
 * multipart Upload (parts of PART_BYTES, two at a time), so a large archive streams from its file
 * in bounded memory. A custom endpoint (an S3-compatible server) is addressed path-style.
 */
export class S3Target implements BackupTarget {
  readonly location = 's3' as const;
  readonly where: string;
  /**
   * The AWS SDK (~1.5 MB of code, with lib-storage) is loaded at the first call, not with the
   * server: a server with BACKUP_S3_URL set may not back up for hours, and the SDK held from start
   * was a tenth of its idle RSS (docs/performance.md, "Memory on Node 24").
   */
  private sdk: Promise<S3Sdk> | null = null;

  constructor(private readonly s3: BackupS3Config) {
    this.where = `s3://${s3.bucket}/${s3.prefix}`;
  }

  private loaded(): Promise<S3Sdk> {
    this.sdk ??= import('./backup-s3-sdk.ts').then(({ s3Sdk: api }) => ({
      api,
      client: new api.S3Client({
        region: this.s3.region,
        ...(this.s3.endpoint ? { endpoint: this.s3.endpoint, forcePathStyle: true } : {}),
        ...(this.s3.credentials ? { credentials: this.s3.credentials } : {}),
      }),
    }));
    return this.sdk;
  }

  private key(name: string): string {
    return this.s3.prefix ? `${this.s3.prefix}/${archiveName(name)}` : archiveName(name);
  }

  async put(name: string, file: string): Promise<void> {
    const { client, api } = await this.loaded();
    const upload = new api.Upload({
      client,
      params: { Bucket: this.s3.bucket, Key: this.key(name), Body: fs.createReadStream(file), ContentType: 'application/x-tar' },
      partSize: PART_BYTES,
      queueSize: 2,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  async list(): Promise<StoredArchive[]> {
    const { client, api } = await this.loaded();
    const prefix = this.s3.prefix ? `${this.s3.prefix}/` : '';
    const out: StoredArchive[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new api.ListObjectsV2Command({ Bucket: this.s3.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const name = o.Key?.slice(prefix.length) ?? '';
        if (isArchiveName(name)) out.push({ name, bytes: o.Size ?? 0, modifiedAt: o.LastModified?.getTime() ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }

  async get(name: string): Promise<Readable> {
    const { client, api } = await this.loaded();
    try {
      const r = await client.send(new api.GetObjectCommand({ Bucket: this.s3.bucket, Key: this.key(name) }));
      return r.Body as Readable;
    } catch (error) {
      if (error instanceof api.NoSuchKey) throw notFound('backup archive');
      throw error;
    }
  }

  async delete(name: string): Promise<void> {
    const { client, api } = await this.loaded();
    await client.send(new api.DeleteObjectCommand({ Bucket: this.s3.bucket, Key: this.key(name) }));
  }

  close(): void {
    // Nothing to close until the SDK was loaded; a client still being made is closed once it is.
    void this.sdk?.then(({ client }) => client.destroy());
  }
}

interface S3Sdk {
  api: typeof import('./backup-s3-sdk.ts')['s3Sdk'];
  client: S3Client;
}

/** The smallest part S3 accepts is 5 MiB; 8 MiB keeps a 10 GiB archive well under the 10,000-part limit. */
const PART_BYTES = 8 * 1024 * 1024;
