import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Header as TarHeader, Parser as TarParser, type ReadEntry } from 'tar';
import pkg from '../../package.json' with { type: 'json' };
import type { Config } from '../config.ts';
import {
  archiveSlot,
  BACKUP_FORMAT,
  BackupRefused,
  factDifferences,
  MANIFEST_MEMBER,
  parseManifest,
  schemaProblem,
  SECRET_MEMBERS,
  SNAPSHOT_MEMBER,
  type BackupManifest,
} from '../domain/backup.ts';
import {
  appliedMigration,
  pgDumpSchema,
  pgDumpSnapshot,
  pgRelationCount,
  pgRenameSchema,
  pgRestore,
  pgRestoredSchema,
  pgScratchDatabase,
  pgTargetSchema,
  snapshotFacts,
  sqliteContents,
  sqliteSnapshot,
  type SnapshotFacts,
} from '../store/backup.repository.ts';
import { describeDatabase, sqliteFile } from '../store/database-url.ts';
import { openStore, type Store } from '../store/db.ts';
import { KNOWN_MIGRATIONS, LATEST_MIGRATION, migrateToLatest } from '../store/migrate.ts';
import { claimFileStorageKeys } from '../store/claims.repository.ts';
import { ledgerMismatches } from '../store/stocks.repository.ts';
import { EVIDENCE_SNIFF_BYTES, evidenceTypeOf } from '../domain/claims.ts';
import { evidenceStoreOf, isStorageKey, type EvidenceStore } from './evidence-store.ts';
import { verifyLedger } from './ledger-verify.service.ts';

export { BackupRefused, type BackupManifest };

export interface BackupResult {
  file: string;
  bytes: number;
  manifest: BackupManifest;
  durationMs: number;
}
export interface BackupProgress {
  phase: 'snapshot' | 'archive';
  done: number;
  total: number;
}
export interface VerifyReport {
  ok: boolean;
  manifest: BackupManifest;
  problems: string[];
  /** As found after the trial restore. */
  counts: BackupManifest['counts'];
}
export interface RestoreReport {
  manifest: BackupManifest;
  /** `sqlite:/abs/file` or the PostgreSQL URL without password, and the schema. */
  target: string;
  /** Migrations applied to bring an older archive forward. */
  migrated: string[];
  found: Pick<BackupManifest, 'counts' | 'ledgerTotals'>;
  ledgerEntries: number;
  /** Files of DATA_DIR written from the archive, and those left as they were (already there). */
  secretsWritten: string[];
  secretsKept: string[];
  /** Claims' evidence files written into the restoring configuration's store (one already there is kept), and kept. */
  evidenceWritten: number;
  evidenceKept: number;
  /**
   * Files of the archive no evidence row of the restored database names (uploaded while the backup
   * ran, after its snapshot): left out, as nothing could ever read or purge them.
   */
  evidenceUnnamed: number;
  /** That store: DATA_DIR/files, or `s3://bucket/prefix/files/` when BACKUP_S3_URL is set. */
  evidenceWhere: string;
}

/** The secrets of DATA_DIR an archive may carry, and where they live. */
function secretFiles(config: Config): { member: string; file: string }[] {
  const tlsDir = path.join(config.dataDir, 'tls');
  return [
    { member: SECRET_MEMBERS.adminKey, file: path.join(config.dataDir, 'admin-key') },
    { member: SECRET_MEMBERS.tlsKey, file: config.tlsKeyFile ?? path.join(tlsDir, 'key.pem') },
    { member: SECRET_MEMBERS.tlsCert, file: config.tlsCertFile ?? path.join(tlsDir, 'cert.pem') },
  ];
}

/**
 * Archive members of claims' evidence files (SPEC §18): `files/<storageKey>`, i.e.
 * `files/<merchantId>/<name>`, whichever store held them (DATA_DIR/files or the bucket of
 * BACKUP_S3_URL, evidence-store.ts): an archive restores into either.
 */
const EVIDENCE_MEMBER_PREFIX = 'files/';

/** The evidence members a manifest lists, with their storage keys (a member of any other shape is not evidence). */
function evidenceMembers(manifest: BackupManifest): { member: string; storageKey: string }[] {
  return Object.keys(manifest.files)
    .filter((m) => m.startsWith(EVIDENCE_MEMBER_PREFIX) && isStorageKey(m.slice(EVIDENCE_MEMBER_PREFIX.length)))
    .map((member) => ({ member, storageKey: member.slice(EVIDENCE_MEMBER_PREFIX.length) }));
}

// --- Taking a backup ----------------------------------------------------------------------------

/** Takes an online consistent snapshot of the live database and writes one archive into `toDir`. */
export async function createBackup(
  deps: { config: Config; store: Store },
  options: { toDir: string; withSecrets?: boolean; onProgress?: (p: BackupProgress) => void; signal?: AbortSignal },
): Promise<BackupResult> {
  const started = performance.now();
  const { config, store } = deps;
  const toDir = path.resolve(options.toDir);
  fs.mkdirSync(toDir, { recursive: true, mode: 0o700 });
  const { name, work } = await claimName(toDir, store.dialect, options.signal);
  const final = path.join(toDir, name);
  const partial = path.join(toDir, `.${name}.partial`);
  let opened = false;
  try {
    const snapshotMember = SNAPSHOT_MEMBER[store.dialect];
    const snapshot = path.join(work, snapshotMember);
    fs.mkdirSync(path.dirname(snapshot), { recursive: true });
    const onProgress = (done: number, total: number) => options.onProgress?.({ phase: 'snapshot', done, total });
    let facts: SnapshotFacts;
    if (store.dialect === 'sqlite') {
      const file = sqliteFile(config.databaseUrl);
      if (file === null) throw new BackupRefused('an in-memory database cannot be backed up');
      facts = await sqliteSnapshot(file, snapshot, { onProgress, signal: options.signal });
    } else {
      facts = await pgDumpSnapshot(store.db, config.databaseUrl, store.schema ?? 'public', snapshot, { onProgress, signal: options.signal });
    }
    const members: string[] = [snapshotMember];
    if (options.withSecrets) {
      for (const s of secretFiles(config)) {
        if (!fs.existsSync(s.file)) continue;
        fs.mkdirSync(path.join(work, path.dirname(s.member)), { recursive: true });
        fs.copyFileSync(s.file, path.join(work, s.member));
        members.push(s.member);
      }
    }
    // Claims' evidence, read after the snapshot: a file a claim of the snapshot names is never purged,
    // so every such file is here; one uploaded meanwhile comes along with no row in the snapshot
    // (restore leaves it out). Each is streamed from its store (the folder or the bucket) into the
    // working folder.
    const evidence = evidenceStoreOf(config);
    for await (const storageKey of evidence.list()) {
      const member = EVIDENCE_MEMBER_PREFIX + storageKey;
      fs.mkdirSync(path.join(work, path.dirname(member)), { recursive: true });
      // Purged between the listing and the copy: an orphan, not needed.
      if (!(await evidence.copyOut(storageKey, path.join(work, member)))) continue;
      members.push(member);
    }
    const files: Record<string, string> = {};
    for (const m of members) files[m] = await sha256File(path.join(work, m));
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      createdAt: new Date().toISOString(),
      stockistVersion: pkg.version,
      nodeVersion: process.version,
      schemaVersion: facts.schemaVersion,
      dialect: store.dialect,
      counts: facts.counts,
      ledgerTotals: facts.ledgerTotals,
      withSecrets: Boolean(options.withSecrets),
      files,
    };
    fs.writeFileSync(path.join(work, MANIFEST_MEMBER), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    if (options.signal?.aborted) throw new BackupRefused('the backup was cancelled');
    const fd = openPartial(partial);
    opened = true;
    const bytes = await writeArchive(work, [MANIFEST_MEMBER, ...members], fd, (done, total) => options.onProgress?.({ phase: 'archive', done, total }));
    // The archive gets its real name only once every byte is on disk: a crash before this leaves
    // only a dot-file `.partial`, which restore refuses.
    if (fs.existsSync(final)) throw new BackupRefused(`${final} appeared while this backup ran: another backup wrote it`);
    fs.renameSync(partial, final);
    fsyncDirectory(toDir);
    return { file: final, bytes, manifest, durationMs: performance.now() - started };
  } catch (error) {
    if (opened) fs.rmSync(partial, { force: true });
    throw error;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The archive's name and the working folder of one backup, `.<name>.work-<pid>` beside the archive:
 * the pid is in the name, so a folder is never without its owner, however early the process was
 * killed. Folders (and their `.partial` archives) whose owner is gone — a backup killed mid-way —
 * are removed first, so leftovers never pile up; a live owner's are left alone. Names are one a
 * second: when this second's is taken (the previous backup finished in it, or another is writing
 * it), the backup waits for the next free second (`archiveSlot`) instead of failing.
 */
async function claimName(toDir: string, dialect: BackupManifest['dialect'], signal?: AbortSignal): Promise<{ name: string; work: string }> {
  for (;;) {
    const writing = removeLeftovers(toDir);
    const taken = (n: string) => writing.has(n) || fs.existsSync(path.join(toDir, n)) || fs.existsSync(path.join(toDir, `.${n}.partial`));
    const slot = archiveSlot(dialect, Date.now(), taken);
    if (slot.waitMs > 0) {
      await sleep(slot.waitMs, undefined, { signal });
      continue;
    }
    const work = path.join(toDir, `.${slot.name}.work-${process.pid}`);
    try {
      fs.mkdirSync(work, { mode: 0o700 });
    } catch (error) {
      // Another backup of this process took the name between the look and the claim.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    return { name: slot.name, work };
  }
}

/** Removes what killed backups left in `toDir`; returns the names live backups are writing. */
function removeLeftovers(toDir: string): Set<string> {
  const live = new Set<string>();
  const dead: { entry: string; archive: string }[] = [];
  for (const entry of fs.readdirSync(toDir)) {
    const m = /^\.(stockist-.+\.tar)\.work-(\d+)$/.exec(entry);
    if (!m) continue;
    const pid = Number(m[2]);
    if (pid === process.pid || processAlive(pid)) live.add(m[1]);
    else dead.push({ entry, archive: m[1] });
  }
  for (const d of dead) {
    fs.rmSync(path.join(toDir, d.entry), { recursive: true, force: true });
    if (!live.has(d.archive)) fs.rmSync(path.join(toDir, `.${d.archive}.partial`), { force: true });
  }
  return live;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return hash.digest('hex');
}

/** The unfinished archive: created exclusively (never another backup's), mode 0600. */
function openPartial(partial: string): number {
  try {
    return fs.openSync(partial, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new BackupRefused(`another backup is writing ${partial} now`);
    throw error;
  }
}

/** Writes the tar (manifest first) into `fd`, fsyncs and closes it. Returns its size. */
async function writeArchive(cwd: string, members: string[], fd: number, onProgress: (done: number, total: number) => void): Promise<number> {
  const total = members.reduce((sum, m) => sum + fs.statSync(path.join(cwd, m)).size, 0);
  try {
    let done = 0;
    const counting = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        done += chunk.length;
        onProgress(Math.min(done, total), total);
        callback(null, chunk);
      },
    });
    await pipeline(tarBlocks(cwd, members), counting, fs.createWriteStream('', { fd, autoClose: false }));
    fs.fsyncSync(fd);
    return done;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The tar stream of `members`, read 1 MiB at a time as the file takes it. Framed here with the
 * `tar` package's Header: its Pack read a 258 MiB snapshot far ahead of the disk (the backup's RSS
 * grew by the file's size), while this stays within a few MiB whatever the database's size.
 */
async function* tarBlocks(cwd: string, members: string[]): AsyncGenerator<Buffer> {
  for (const member of members) {
    const file = path.join(cwd, member);
    const stat = fs.statSync(file);
    const header = new TarHeader({ path: member, mode: 0o600, uid: 0, gid: 0, size: stat.size, mtime: stat.mtime, type: 'File' });
    const block = Buffer.alloc(512);
    if (header.encode(block, 0)) throw new Error(`${member}: a name too long for a plain tar header`);
    yield block;
    yield* fs.createReadStream(file, { highWaterMark: 1024 * 1024 });
    const padding = (512 - (stat.size % 512)) % 512;
    if (padding) yield Buffer.alloc(padding);
  }
  // The end of the archive: two empty blocks.
  yield Buffer.alloc(1024);
}

function fsyncDirectory(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

// --- Reading an archive -------------------------------------------------------------------------

/** Reads only the manifest of an archive (cheap; used to list archives). Throws BackupRefused on a non-archive. */
export async function readManifest(archive: string): Promise<BackupManifest> {
  return scanArchive(archive, { manifestOnly: true });
}

/**
 * Streams the archive once: the manifest must come first and be whole; every other member must be
 * listed in it and match its SHA-256; every listed member must be there. Members named in
 * `extract` are written to the given files on the way (mode 0600).
 */
function scanArchive(archive: string, options: { extract?: Map<string, string>; manifestOnly?: boolean } = {}): Promise<BackupManifest> {
  const refuse = (why: string) => new BackupRefused(`${archive}: ${why}`);
  if (archive.endsWith('.partial')) return Promise.reject(refuse('a .partial file is an unfinished backup'));
  let stat: fs.Stats;
  try {
    stat = fs.statSync(archive);
  } catch {
    return Promise.reject(refuse('no such file'));
  }
  if (!stat.isFile()) return Promise.reject(refuse('not a file'));
  if (stat.size === 0) return Promise.reject(refuse('an empty file, not a Stockist backup'));
  return new Promise((resolve, reject) => {
    const input = fs.createReadStream(archive);
    let manifest: BackupManifest | null = null;
    let settled = false;
    const seen = new Set<string>();
    const pending: Promise<void>[] = [];
    const outputs: fs.WriteStream[] = [];
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      input.destroy();
      for (const o of outputs) o.destroy();
      reject(refuse(why));
    };
    const parser = new TarParser({
      strict: true,
      onReadEntry(entry: ReadEntry) {
        if (settled) return entry.resume();
        if (manifest === null) {
          if (entry.path !== MANIFEST_MEMBER || entry.type !== 'File') return fail('not a Stockist backup: its first member is not manifest.json');
          if (entry.size > 1024 * 1024) return fail('not a Stockist backup: its manifest.json is over 1 MiB');
          const chunks: Buffer[] = [];
          entry.on('data', (c: Buffer) => chunks.push(c));
          entry.on('end', () => {
            const parsed = parseManifest(Buffer.concat(chunks).toString('utf8'));
            if (typeof parsed === 'string') return fail(`not a Stockist backup: ${parsed}`);
            manifest = parsed;
            if (options.manifestOnly) {
              settled = true;
              input.destroy();
              resolve(parsed);
            }
          });
          return;
        }
        const name = entry.path;
        const expected = manifest.files[name];
        if (entry.type !== 'File' || expected === undefined || seen.has(name)) return fail(`it holds ${name}, which its manifest does not list`);
        seen.add(name);
        const hash = createHash('sha256');
        const hashing = new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            hash.update(chunk);
            callback(null, chunk);
          },
        });
        const dest = options.extract?.get(name);
        const out = dest ? fs.createWriteStream(dest, { mode: 0o600 }) : null;
        if (out) outputs.push(out);
        entry.pipe(hashing);
        const done = out
          ? pipeline(hashing, out)
          : new Promise<void>((ok) => {
              hashing.on('end', ok);
              hashing.resume();
            });
        pending.push(
          done.then(
            () => {
              if (hash.digest('hex') !== expected) fail(`${name} does not match its SHA-256 in the manifest: the archive is damaged`);
            },
            (error) => fail(`could not write ${name}: ${(error as Error).message}`),
          ),
        );
      },
    });
    parser.on('error', (error: Error) => fail(`damaged or truncated (${error.message.replace(/\s+/g, ' ')})`));
    parser.on('end', () => {
      void Promise.all(pending).then(() => {
        if (settled) return;
        if (manifest === null) return fail('not a Stockist backup: no manifest.json (empty, or not a tar archive)');
        const missing = Object.keys(manifest.files).filter((f) => !seen.has(f));
        if (missing.length) return fail(`truncated: ${missing.join(', ')} missing`);
        settled = true;
        resolve(manifest);
      });
    });
    input.on('error', (error) => fail(`could not read it: ${error.message}`));
    input.pipe(parser as unknown as NodeJS.WritableStream);
  });
}

/** Everything a restore checks before it writes: the whole archive's checksums, the manifest, the schema. */
async function inspect(archive: string, dialect: 'sqlite' | 'postgres'): Promise<BackupManifest> {
  const manifest = await scanArchive(archive);
  const problem = schemaProblem(manifest.schemaVersion, KNOWN_MIGRATIONS, LATEST_MIGRATION);
  if (problem) throw new BackupRefused(`${archive}: ${problem}`);
  if (manifest.dialect !== dialect) {
    throw new BackupRefused(
      `${archive} is a ${manifest.dialect} backup and DATABASE_URL names a ${dialect} database: restore it into ${manifest.dialect === 'sqlite' ? 'a sqlite: file' : 'a postgres:// database'}`,
    );
  }
  return manifest;
}

// --- Trial restore, checks ----------------------------------------------------------------------

interface Trial {
  found: SnapshotFacts;
  migrated: string[];
  ledgerEntries: number;
  problems: string[];
}

/**
 * Migrates a restored copy forward and runs every check on it: the ledger's invariants (`stockist
 * ledger verify`), stock = stock ledger, and the counts and ledger totals against the manifest.
 */
async function checkRestored(url: string, schema: string | undefined, manifest: BackupManifest): Promise<Trial> {
  const store = await openStore(url, { schema, checkpointEveryMs: 0 });
  try {
    const problems: string[] = [];
    const applied = await appliedMigration(store.db);
    if (applied !== manifest.schemaVersion) problems.push(`the snapshot's schema is ${applied}, its manifest says ${manifest.schemaVersion}`);
    const migrated = await migrateToLatest(store);
    const ledger = await verifyLedger(store.db);
    for (const b of ledger.breaches) problems.push(`ledger ${b.rule}: ${b.message}`);
    for (const m of await ledgerMismatches(store.db)) {
      problems.push(`stock of product ${m.productId} in warehouse ${m.warehouseId} is ${m.qty}, its stock ledger sums to ${m.ledger}`);
    }
    const found = await snapshotFacts(store.db);
    problems.push(...factDifferences(manifest, found));
    return { found, migrated, ledgerEntries: ledger.entries, problems };
  } finally {
    await store.close();
  }
}

function refusedBy(trial: Trial): BackupRefused {
  const n = trial.problems.length;
  return new BackupRefused(
    `the restored copy fails ${n} check${n === 1 ? '' : 's'}: ${trial.problems.slice(0, 5).join('; ')}${n > 5 ? `; … ${n - 5} more` : ''}`,
  );
}

/** A restored SQLite file leaves WAL mode (its WAL checkpointed into it and gone) before it moves: nothing beside it may be needed. */
async function settleSqlite(file: string): Promise<void> {
  const { default: SQLite } = await import('better-sqlite3');
  const connection = new SQLite(file);
  try {
    connection.pragma('journal_mode = DELETE');
  } finally {
    connection.close();
  }
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

const dialectOf = (url: string) => (url.startsWith('sqlite:') ? 'sqlite' : 'postgres');

/**
 * Restores the archive into a temporary place (temp SQLite file / temp PostgreSQL database),
 * runs every check, drops the temporary place. An archive that cannot be read at all (damaged,
 * truncated, not a backup, made by a newer schema) throws BackupRefused; failed checks come back
 * as `ok: false` with one problem each.
 */
export async function verifyBackup(deps: { config: Config }, archive: string): Promise<VerifyReport> {
  const dialect = dialectOf(deps.config.databaseUrl);
  const manifest = await scanArchive(archive);
  const problem = schemaProblem(manifest.schemaVersion, KNOWN_MIGRATIONS, LATEST_MIGRATION);
  if (problem) throw new BackupRefused(`${archive}: ${problem}`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-verify-'));
  try {
    let trial: Trial;
    if (manifest.dialect === 'sqlite') {
      const file = path.join(tmp, 'stockist.db');
      await scanArchive(archive, { extract: new Map([[SNAPSHOT_MEMBER.sqlite, file]]) });
      trial = await checkRestored(`sqlite:${file}`, undefined, manifest);
    } else {
      if (dialect !== 'postgres')
        throw new BackupRefused(`${archive} is a PostgreSQL backup: verify it with DATABASE_URL naming the PostgreSQL server to try it on`);
      const dump = path.join(tmp, 'stockist.pgdump');
      await scanArchive(archive, { extract: new Map([[SNAPSHOT_MEMBER.postgres, dump]]) });
      const scratch = await pgScratchDatabase(deps.config.databaseUrl);
      try {
        await pgRestore(dump, scratch.url, 'public', tmp);
        const schema = await pgRestoredSchema(scratch.url);
        trial = await checkRestored(scratch.url, schema, manifest);
      } finally {
        await scratch.drop();
      }
    }
    return { ok: trial.problems.length === 0, manifest, problems: trial.problems, counts: trial.found.counts };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * `stockist restore`: into DATA_DIR / DATABASE_URL, which must hold no data. The archive is read
 * whole and checked first; the copy is then restored beside the target (SQLite: a temporary file in
 * its folder; PostgreSQL: a scratch database on the same server), migrated forward and checked, and
 * only a copy that passes is moved into place. A refusal leaves the target as it was.
 */
export async function restoreBackup(deps: { config: Config }, archive: string): Promise<RestoreReport> {
  const { config } = deps;
  const dialect = dialectOf(config.databaseUrl);
  const manifest = await inspect(archive, dialect);
  const target = describeDatabase(config.databaseUrl);
  const evidence = evidenceStoreOf(config);
  // A bucket that cannot be reached refuses the restore before the database is written.
  if (evidenceMembers(manifest).length > 0) {
    try {
      await evidence.probe();
    } catch (error) {
      throw new BackupRefused(`the archive holds claims' evidence and ${evidence.where} cannot be written: ${(error as Error).message}`);
    }
  }
  let trial: Trial;
  if (dialect === 'sqlite') trial = await restoreSqlite(config, archive, manifest);
  else trial = await restorePostgres(config, archive, manifest);
  const secrets = await restoreSecrets(config, archive, manifest);
  const restoredEvidence = await restoreEvidence(config, evidence, archive, manifest);
  return {
    manifest,
    target: dialect === 'sqlite' ? target : `${target} schema ${pgTargetSchema(config.databaseUrl)}`,
    migrated: trial.migrated,
    found: trial.found,
    ledgerEntries: trial.ledgerEntries,
    secretsWritten: secrets.written,
    secretsKept: secrets.kept,
    evidenceWritten: restoredEvidence.written,
    evidenceKept: restoredEvidence.kept,
    evidenceUnnamed: restoredEvidence.unnamed,
    evidenceWhere: evidence.where,
  };
}

async function restoreSqlite(config: Config, archive: string, manifest: BackupManifest): Promise<Trial> {
  const target = sqliteFile(config.databaseUrl);
  if (target === null) throw new BackupRefused('DATABASE_URL is an in-memory database: restore into a file');
  const holds = (contents: ReturnType<typeof sqliteContents>) =>
    contents === 'data'
      ? new BackupRefused(`sqlite:${target} already holds data: restore into an empty place (a new DATA_DIR or DATABASE_URL), or move that file away first`)
      : contents === 'unreadable'
        ? new BackupRefused(`sqlite:${target} exists and is not a database: move it away first`)
        : null;
  const before = holds(sqliteContents(target));
  if (before) throw before;
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const stage = path.join(path.dirname(target), `.${path.basename(target)}.restoring-${randomBytes(4).toString('hex')}`);
  try {
    await scanArchive(archive, { extract: new Map([[SNAPSHOT_MEMBER.sqlite, stage]]) });
    const trial = await checkRestored(`sqlite:${stage}`, undefined, manifest);
    if (trial.problems.length) throw refusedBy(trial);
    await settleSqlite(stage);
    const now = holds(sqliteContents(target));
    if (now) throw now;
    // A -wal or -shm beside an absent or empty target belongs to some earlier file: SQLite would
    // replay that WAL into the restored database.
    for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(`${target}${suffix}`, { force: true });
    fs.renameSync(stage, target);
    fsyncDirectory(path.dirname(target));
    return trial;
  } finally {
    for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(`${stage}${suffix}`, { force: true });
  }
}

async function restorePostgres(config: Config, archive: string, manifest: BackupManifest): Promise<Trial> {
  const url = config.databaseUrl;
  const schema = pgTargetSchema(url);
  const holds = async () =>
    (await pgRelationCount(url, schema)) > 0
      ? new BackupRefused(`schema ${schema} of ${describeDatabase(url)} already holds tables: restore into an empty schema or database`)
      : null;
  const before = await holds();
  if (before) throw before;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-restore-'));
  try {
    const dump = path.join(tmp, 'stockist.pgdump');
    await scanArchive(archive, { extract: new Map([[SNAPSHOT_MEMBER.postgres, dump]]) });
    const scratch = await pgScratchDatabase(url);
    try {
      // Restored, renamed, migrated and checked in the scratch database first; then copied into
      // the target in one transaction (docs/decisions.md, "Restoring a PostgreSQL backup").
      await pgRestore(dump, scratch.url, 'public', tmp);
      await pgRenameSchema(scratch.url, await pgRestoredSchema(scratch.url), schema);
      const trial = await checkRestored(scratch.url, schema, manifest);
      if (trial.problems.length) throw refusedBy(trial);
      const checked = path.join(tmp, 'checked.pgdump');
      await pgDumpSchema(scratch.url, schema, checked);
      const now = await holds();
      if (now) throw now;
      await pgRestore(checked, url, schema, tmp);
      return trial;
    } finally {
      await scratch.drop();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Claims' evidence files of the archive go into the restoring configuration's store (DATA_DIR/files,
 * or the bucket when BACKUP_S3_URL is set) where none is yet; one already there is kept, and one no
 * evidence row of the restored database names is left out (an orphan nothing could purge). They are
 * extracted, their SHA-256 checked again, into a folder of DATA_DIR first, then placed one by one.
 */
async function restoreEvidence(
  config: Config,
  evidence: EvidenceStore,
  archive: string,
  manifest: BackupManifest,
): Promise<{ written: number; kept: number; unnamed: number }> {
  const members = evidenceMembers(manifest);
  if (members.length === 0) return { written: 0, kept: 0, unnamed: 0 };
  const store = await openStore(config.databaseUrl, { checkpointEveryMs: 0 });
  let named: Set<string>;
  try {
    named = await claimFileStorageKeys(store.db);
  } finally {
    await store.close();
  }
  const wanted: { member: string; storageKey: string }[] = [];
  let kept = 0;
  let unnamed = 0;
  for (const e of members) {
    if (!named.has(e.storageKey)) unnamed++;
    else if (await evidence.has(e.storageKey)) kept++;
    else wanted.push(e);
  }
  if (wanted.length === 0) return { written: 0, kept, unnamed };
  fs.mkdirSync(config.dataDir, { recursive: true });
  const stage = fs.mkdtempSync(path.join(config.dataDir, '.evidence-restoring-'));
  let written = 0;
  try {
    const staged = (i: number) => path.join(stage, String(i));
    await scanArchive(archive, { extract: new Map(wanted.map((e, i) => [e.member, staged(i)])) });
    for (const [i, e] of wanted.entries()) {
      if (await evidence.place(e.storageKey, staged(i), await evidenceContentType(staged(i)))) written++;
      else kept++;
    }
    return { written, kept, unnamed };
  } catch (error) {
    // The database is in place by now: say so, and how far the evidence got.
    throw new Error(
      `the database was restored, but claims' evidence was not all written to ${evidence.where} (${written} of ${wanted.length}): ${(error as Error).message}`,
    );
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

/** The content type an evidence file's bytes are (the bucket keeps it with the object), read from its first bytes. */
async function evidenceContentType(file: string): Promise<string> {
  const handle = await fs.promises.open(file, 'r');
  try {
    const head = Buffer.alloc(EVIDENCE_SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return evidenceTypeOf(head.subarray(0, bytesRead)) ?? 'application/octet-stream';
  } finally {
    await handle.close();
  }
}

/** Secrets of the archive go into DATA_DIR where nothing is yet (an existing key or certificate is kept). */
async function restoreSecrets(config: Config, archive: string, manifest: BackupManifest): Promise<{ written: string[]; kept: string[] }> {
  const wanted = secretFiles(config).filter((s) => s.member in manifest.files);
  if (wanted.length === 0) return { written: [], kept: [] };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-secrets-'));
  try {
    const extract = new Map(wanted.map((s) => [s.member, path.join(tmp, path.basename(s.member))]));
    await scanArchive(archive, { extract });
    const written: string[] = [];
    const kept: string[] = [];
    for (const s of wanted) {
      if (fs.existsSync(s.file)) {
        kept.push(s.file);
        continue;
      }
      fs.mkdirSync(path.dirname(s.file), { recursive: true, mode: 0o700 });
      fs.copyFileSync(extract.get(s.member)!, s.file, fs.constants.COPYFILE_EXCL);
      fs.chmodSync(s.file, 0o600);
      written.push(s.file);
    }
    return { written, kept };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
