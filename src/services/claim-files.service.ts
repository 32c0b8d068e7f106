import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config.ts';
import {
  EVIDENCE_EXTENSION,
  EVIDENCE_SNIFF_BYTES,
  EVIDENCE_TYPES,
  MAX_EVIDENCE_BYTES,
  ORPHAN_EVIDENCE_MS,
  evidenceTypeOf,
  type EvidenceType,
} from '../domain/claims.ts';
import { AppError, fieldError, notFound } from '../domain/errors.ts';
import { claimFileOf, deleteOrphanFiles, insertClaimFile, namedStorageKeys, orphanFiles } from '../store/claims.repository.ts';
import type { Db } from '../store/db.ts';
import { within, type MerchantScope, type TenantScope } from '../store/tenancy.ts';
import { runIdempotent, type KeyStore } from './idempotency.service.ts';
import { evidenceDir, evidenceStoreOf } from './evidence-store.ts';

/**
 * Evidence files of claims (SPEC §18; docs/claims.md, "Evidence"): streamed to `DATA_DIR/files`
 * (never held whole in memory), kept there or in the bucket of BACKUP_S3_URL (evidence-store.ts), typed by their bytes, at most 5 MB, served only to their merchant and
 * the operator. Steps outside the database carry their undo: a file written but refused, or whose
 * row could not be written, is removed.
 */

const tooLarge = () => new AppError('too_large', 41300, `an evidence file is at most ${MAX_EVIDENCE_BYTES} bytes (5 MB)`);

const notItsType = (declared: EvidenceType, detected: EvidenceType | null) => {
  const found = detected === null ? 'not a JPEG, PNG, WebP or PDF file' : `a ${detected} file`;
  return new AppError('unsupported_format', 41500, `the bytes are ${found}, not ${declared}: send the file with its own Content-Type`, [
    { field: 'body', message: `the bytes are ${found}`, declared, detected },
  ]);
};

/** The declared type without parameters (`image/jpeg; charset=binary` → `image/jpeg`), or null when it is none of ours. */
function declaredType(contentType: string | undefined): EvidenceType | null {
  const bare = (contentType ?? '').split(';')[0].trim().toLowerCase();
  return (EVIDENCE_TYPES as readonly string[]).includes(bare) ? (bare as EvidenceType) : null;
}

/**
 * Streams the body into `file`, counting, hashing and keeping its first bytes. Past the limit the
 * rest is read and dropped (the file removed, 413): the request is answered, not cut off mid-body.
 */
async function writeStream(body: Readable, file: string): Promise<{ size: number; sha256: string; head: Buffer }> {
  let size = 0;
  let overflow = false;
  const heads: Buffer[] = [];
  let headBytes = 0;
  const hash = createHash('sha256');
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (overflow || size > MAX_EVIDENCE_BYTES) {
        overflow = true;
        return callback();
      }
      if (headBytes < EVIDENCE_SNIFF_BYTES) {
        heads.push(chunk.subarray(0, EVIDENCE_SNIFF_BYTES - headBytes));
        headBytes += Math.min(chunk.length, EVIDENCE_SNIFF_BYTES - headBytes);
      }
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  try {
    await pipeline(body, meter, fs.createWriteStream(file, { flags: 'wx', mode: 0o600 }));
    if (overflow) throw tooLarge();
  } catch (error) {
    await fs.promises.rm(file, { force: true });
    throw error;
  }
  return { size, sha256: hash.digest('hex'), head: Buffer.concat(heads) };
}

export interface EvidenceDeps {
  store: KeyStore;
  config: Pick<Config, 'dataDir' | 'backupS3'>;
}

/**
 * POST /openapi/v1/claims/files: stores one evidence file of the merchant and returns
 * `{fileId, size, contentType}`. The type is read from the bytes and must be the declared one (else
 * 415/41500); past 5 MB the upload is cut off (413/41300). With an Idempotency-Key, a retry of the same
 * bytes answers the first file (the copy just written is removed); other bytes under the key are 409.
 */
export async function storeEvidence(
  deps: EvidenceDeps,
  merchant: MerchantScope,
  contentType: string | undefined,
  contentLength: string | undefined,
  body: Readable,
  idempotencyKey: string | null,
  requestId: string,
) {
  const type = declaredType(contentType);
  if (type === null) throw new AppError('unsupported_format', 41500, `send the file as one of ${EVIDENCE_TYPES.join(', ')}`);
  // A declared size past the limit is refused before a byte is read.
  if (contentLength !== undefined && Number(contentLength) > MAX_EVIDENCE_BYTES) throw tooLarge();
  const now = Date.now();
  const storageKey = `${merchant.merchantId}/${now}-${randomBytes(12).toString('hex')}`;
  const file = path.join(evidenceDir(deps.config), storageKey);
  const stored = await writeStream(body, `${file}.part`);
  const evidence = evidenceStoreOf(deps.config);
  let kept = false;
  let placed = false;
  try {
    if (stored.size === 0) throw fieldError('body', "is empty: send the file's bytes");
    const detected = evidenceTypeOf(stored.head);
    if (detected !== type) throw notItsType(type, detected);
    await evidence.keep(storageKey, `${file}.part`, type);
    placed = true;
    const response = await runIdempotent(
      deps.store,
      { merchantId: merchant.merchantId, key: idempotencyKey, request: { route: 'claims.files', type, sha256: stored.sha256, size: stored.size }, requestId },
      async (trx) => {
        kept = true;
        return insertClaimFile(within(merchant, trx), {
          content_type: type,
          size_bytes: stored.size,
          sha256: stored.sha256,
          storage_key: storageKey,
          created_at: now,
        });
      },
      (fileId) => ({ data: { fileId: String(fileId), size: stored.size, contentType: type } }),
    );
    // A replay answered the first upload: this copy is not referenced by any row.
    if (response.replayed) kept = false;
    return response;
  } catch (error) {
    kept = false;
    throw error;
  } finally {
    if (!kept) {
      await fs.promises.rm(`${file}.part`, { force: true });
      if (placed) await evidence.remove(storageKey);
    }
  }
}

/** An evidence file to download: the merchant's own (another's answers 404), or any for the operator. */
export async function evidenceDownload(reader: TenantScope, config: Pick<Config, 'dataDir' | 'backupS3'>, fileId: number) {
  const row = await claimFileOf(reader, fileId);
  if (!row) throw notFound('file');
  const type = row.content_type as EvidenceType;
  return {
    stream: await evidenceStoreOf(config).read(row.storage_key),
    contentType: type,
    size: row.size_bytes,
    fileName: `claim-evidence-${row.id}.${EVIDENCE_EXTENSION[type] ?? 'bin'}`,
  };
}

/** Removes evidence files no claim referenced within a day of their upload (rows first, then their bytes). */
export async function purgeOrphanEvidence(db: Db, config: Pick<Config, 'dataDir' | 'backupS3'>, now: number, batch = 500): Promise<number> {
  const rows = await orphanFiles(db, now - ORPHAN_EVIDENCE_MS, batch);
  if (rows.length === 0) return 0;
  const deleted = new Set(
    await db.transaction().execute((trx) =>
      deleteOrphanFiles(
        trx,
        rows.map((r) => r.id),
      ),
    ),
  );
  const evidence = evidenceStoreOf(config);
  for (const r of rows) if (deleted.has(Number(r.id))) await evidence.remove(r.storage_key);
  return deleted.size;
}

/** When an upload began, from its storage key (`<merchantId>/<ms>-<hex>`); null for a name the upload never makes. */
const uploadedAt = (storageKey: string): number | null => {
  const ms = /^[^/]+\/(\d{13})-/.exec(storageKey)?.[1];
  return ms === undefined ? null : Number(ms);
};

/**
 * Removes evidence bytes that no row names, a day after their upload began: what a process killed
 * between placing the bytes and committing the row leaves (the upload's own undo never ran), and a
 * `.part` of an upload cut off mid-body by a kill. Such bytes are in no claim, no download and no
 * backup (restore leaves them out), so nothing else would ever remove them. An upload in progress is
 * never a day old. Reads the store's listing as it goes, checking `batch` keys per query.
 */
export async function sweepStrayEvidence(db: Db, config: Pick<Config, 'dataDir' | 'backupS3'>, now: number, batch = 500): Promise<number> {
  const before = now - ORPHAN_EVIDENCE_MS;
  const evidence = evidenceStoreOf(config);
  let removed = 0;
  let pending: string[] = [];
  const sweep = async () => {
    const named = await namedStorageKeys(db, pending);
    for (const key of pending) {
      if (named.has(key)) continue;
      await evidence.remove(key);
      removed++;
    }
    pending = [];
  };
  for await (const key of evidence.list()) {
    const at = uploadedAt(key);
    if (at === null || at >= before) continue;
    pending.push(key);
    if (pending.length >= batch) await sweep();
  }
  await sweep();
  return removed + (await removeStaleParts(evidenceDir(config), before));
}

/** `.part` files of uploads under `dir` last written before `before`. */
async function removeStaleParts(dir: string, before: number): Promise<number> {
  let removed = 0;
  const merchants = await fs.promises.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const merchant of merchants) {
    if (!merchant.isDirectory()) continue;
    const folder = path.join(dir, merchant.name);
    for (const name of await fs.promises.readdir(folder).catch(() => [] as string[])) {
      if (!name.endsWith('.part')) continue;
      const file = path.join(folder, name);
      const stat = await fs.promises.stat(file).catch(() => null);
      if (stat === null || stat.mtimeMs >= before) continue;
      await fs.promises.rm(file, { force: true });
      removed++;
    }
  }
  return removed;
}
