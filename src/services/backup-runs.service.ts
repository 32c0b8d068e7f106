import { randomUUID } from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import type { Actor } from '../domain/audit.ts';
import { BACKUP_LEASE_MS, type BackupLocation, type BackupTrigger, archiveTime, archivesToPrune } from '../domain/backup.ts';
import { notFound } from '../domain/errors.ts';
import type { Clock } from '../domain/time.ts';
import { insertAudit } from '../store/audit.repository.ts';
import { appliedMigration } from '../store/backup.repository.ts';
import {
  BACKUP_RUNS_MIGRATION,
  abandonStaleRuns,
  currentLease,
  insertRun,
  markPruned,
  recentRuns,
  releaseLease,
  renewLease,
  storedArchiveRuns,
  takeLease,
  updateRun,
  type BackupRunRow,
} from '../store/backups.repository.ts';
import type { Store } from '../store/db.ts';
import { type BackupTarget, DirectoryTarget, S3Target } from './backup-targets.ts';
import type { BackupProgress } from './backup.service.ts';

/**
 * What this module needs of an archive's manifest: the subset of backup.service.ts's
 * `BackupManifest` it reads (that type is assignable to this one).
 */
export interface ArchiveManifest {
  createdAt: string;
  schemaVersion: string;
  withSecrets: boolean;
  counts: { merchants: number; orders: number; refunds: number; journalEntries: number; stockRows: number };
}

/** What a run asks of the archive maker besides the folder: `stockist backup`'s options. */
export interface ArchiveOptions {
  withSecrets?: boolean;
  /** How far the archive has got, for `stockist backup`'s progress bar. */
  onProgress?: (p: BackupProgress) => void;
}

/**
 * The archive itself, bound to this server's config and store: `archiveEngine` is
 * services/backup.service.ts's; the orchestration tests pass a stand-in (test/backup-engine.ts), so
 * the schedule, the lease, the targets and the console page are tested apart from how an archive is made.
 */
export interface BackupEngine {
  /** Writes one archive into `toDir`; `file` is its path (or its name in `toDir`). */
  createBackup(options: { toDir: string; signal?: AbortSignal } & ArchiveOptions): Promise<{ file: string; bytes: number; manifest: ArchiveManifest }>;
  /** The trial restore and every check, in a temporary place. */
  verifyBackup(archive: string): Promise<{ ok: boolean; problems: string[] }>;
  /** Only the manifest (cheap): for archives no run recorded. */
  readManifest(archive: string): Promise<ArchiveManifest>;
}

/**
 * The real archive maker (services/backup.service.ts) for this config and store. It and `tar` are
 * loaded at the first backup, not with the server (docs/performance.md, "Memory on Node 24").
 */
export const archiveEngine = (config: Config, store: Store): BackupEngine => {
  const archives = () => import('./backup.service.ts');
  return {
    createBackup: async (options) => (await archives()).createBackup({ config, store }, options),
    verifyBackup: async (archive) => (await archives()).verifyBackup({ config }, archive),
    readManifest: async (archive) => (await archives()).readManifest(archive),
  };
};

export interface BackupLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface BackupDeps {
  config: Pick<Config, 'backupDir' | 'backupKeep' | 'backupS3'>;
  store: Store;
  engine: BackupEngine;
  log: BackupLog;
  now?: Clock;
  /** Tests shorten it; BACKUP_LEASE_MS otherwise. */
  leaseMs?: number;
}

/** What a request for a backup came to. */
export type BackupStart = { started: true; runId: number } | { started: false; running: RunningBackup | null };

/** Who asked for a run besides the schedule: a staff member (their email) or the OS user of `stockist backup`; audited. */
export interface BackupRequester {
  who: string;
  actor: Actor;
}

/** How one awaited run ended: `stockist backup`'s report. */
export type RunReport =
  | { status: 'busy'; running: RunningBackup | null }
  | { status: 'failed'; runId: number; error: string }
  | {
      status: 'succeeded';
      runId: number;
      name: string;
      bytes: number;
      /** Where it is kept: BACKUP_DIR, or `s3://bucket/prefix`. */
      where: string;
      manifest: ArchiveManifest;
      /** Lease taken to archive stored. */
      durationMs: number;
      /** Archives pruning removed after it. */
      pruned: string[];
    };

/** The backup running now (any process), as the page and a refusal describe it. */
export interface RunningBackup {
  startedAt: number;
  trigger: BackupTrigger;
  requestedBy: string | null;
}

/** An archive of the listing: what the target holds, with what the run that made it recorded. */
export interface ArchiveEntry {
  name: string;
  bytes: number;
  /** When the backup was taken (the run's start, else the manifest's or the name's time). */
  takenAt: number;
  counts: ArchiveManifest['counts'] | null;
  /** true: the trial restore passed; false: it failed; null: no run of this server checked it. */
  verified: boolean | null;
  location: BackupLocation;
}

/** Runs kept on the page (the table keeps every run: the failure count reads it). */
const RECENT_RUNS = 10;

/**
 * Scheduled and requested backups (SPEC §17): one at a time across processes (a lease row the
 * database grants), each run recorded; take → verify → upload (with S3) → prune. Pruning follows
 * `archivesToPrune` and runs only after a run verified, so a failing backup never removes one.
 *
 * With BACKUP_S3_URL the archive is written to BACKUP_DIR, verified there, uploaded, and the local
 * copy removed: the bucket is where archives are kept, BACKUP_DIR only stages them (a copy kept
 * on the server's own disk would not survive the loss the bucket is for, and would double the
 * space). Should the upload fail, the verified local copy stays (recorded as local; pruning removes
 * it once a newer archive is stored).
 */
export class BackupService {
  readonly local: DirectoryTarget;
  readonly remote: S3Target | null;
  private readonly now: Clock;
  private readonly leaseMs: number;
  private readonly inFlight = new Set<{ abort: AbortController; done: Promise<unknown> }>();

  constructor(private readonly deps: BackupDeps) {
    this.local = new DirectoryTarget(deps.config.backupDir);
    this.remote = deps.config.backupS3 ? new S3Target(deps.config.backupS3) : null;
    this.now = deps.now ?? Date.now;
    this.leaseMs = deps.leaseMs ?? BACKUP_LEASE_MS;
  }

  /** Where archives are kept and listed: the bucket when set, else BACKUP_DIR. */
  get target(): BackupTarget {
    return this.remote ?? this.local;
  }

  /**
   * Why this database cannot record a run (it predates the backup tables: `stockist backup` reads a
   * database as it is, unmigrated), or null.
   */
  async unrecordable(): Promise<string | null> {
    const applied = await appliedMigration(this.deps.store.db);
    if (applied !== null && applied >= BACKUP_RUNS_MIGRATION) return null;
    return `the database is at schema ${applied ?? 'none'}, before ${BACKUP_RUNS_MIGRATION} (where backup runs are recorded)`;
  }

  /** The backup running now, in this process or another, if any. */
  async running(): Promise<RunningBackup | null> {
    const db = this.deps.store.db;
    const lease = await currentLease(db, this.now());
    if (!lease) return null;
    const run = (await recentRuns(db, RECENT_RUNS)).find((r) => r.holder === lease.holder && r.status === 'running');
    return run ? { startedAt: Number(run.started_at), trigger: run.trigger, requestedBy: run.requested_by } : null;
  }

  /**
   * Takes the lease and records the run (with the audit row of a staff member's request), then
   * runs it in the background; refused while another backup runs anywhere.
   */
  async start(trigger: BackupTrigger, requester: BackupRequester | null = null): Promise<BackupStart> {
    const claim = await this.claim(trigger, requester);
    if (!claim) return { started: false, running: await this.running() };
    void this.track(claim.holder, claim.runId, {});
    return { started: true, runId: claim.runId };
  }

  /** One whole run, awaited (the schedule's tick): 'busy' when another backup holds the lease. */
  async run(trigger: BackupTrigger): Promise<'succeeded' | 'failed' | 'busy'> {
    return (await this.runReport(trigger)).status;
  }

  /** One whole run, awaited, with what it made (`stockist backup`): 'busy' names the backup running elsewhere. */
  async runReport(trigger: BackupTrigger, requester: BackupRequester | null = null, options: ArchiveOptions = {}): Promise<RunReport> {
    const claim = await this.claim(trigger, requester);
    if (!claim) return { status: 'busy', running: await this.running() };
    return this.track(claim.holder, claim.runId, options);
  }

  /** Resolves when no run of this process is in progress (each recorded its end and released the lease). */
  async idle(): Promise<void> {
    await Promise.all([...this.inFlight].map((f) => f.done));
  }

  /** Aborts runs of this process and waits for them to record their end (with `reason`) and release the lease. */
  async stop(reason = 'the server is shutting down'): Promise<void> {
    for (const f of this.inFlight) f.abort.abort(new Error(reason));
    await Promise.all([...this.inFlight].map((f) => f.done));
    this.remote?.close();
  }

  /** The newest runs, for the page. */
  recentRuns(): Promise<BackupRunRow[]> {
    return recentRuns(this.deps.store.db, RECENT_RUNS);
  }

  /** Every archive the target holds, newest first, with its run's counts and verification. */
  async archives(): Promise<ArchiveEntry[]> {
    const [stored, runs] = await Promise.all([this.target.list(), storedArchiveRuns(this.deps.store.db)]);
    const runOf = new Map(runs.filter((r) => r.location === this.target.location).map((r) => [r.file, r]));
    const entries = await Promise.all(
      stored.map(async (a): Promise<ArchiveEntry> => {
        const run = runOf.get(a.name);
        if (run) {
          return {
            name: a.name,
            bytes: a.bytes,
            takenAt: Number(run.started_at),
            counts: countsOf(run),
            verified: verifiedOf(run),
            location: this.target.location,
          };
        }
        // An archive no run recorded (`stockist backup --to BACKUP_DIR` by hand): its manifest, when
        // it is local and readable; a bucket's would have to be downloaded whole, so not read.
        const manifest = this.target === this.local ? await this.deps.engine.readManifest(this.local.pathOf(a.name)).catch(() => null) : null;
        const takenAt = (manifest && Date.parse(manifest.createdAt)) || archiveTime(a.name) || a.modifiedAt;
        return { name: a.name, bytes: a.bytes, takenAt, counts: manifest?.counts ?? null, verified: null, location: this.target.location };
      }),
    );
    return entries.sort((a, b) => b.takenAt - a.takenAt || (a.name < b.name ? 1 : -1));
  }

  /**
   * A download: only a name the listing holds (never a path from the request), audited with who
   * and which file before the first byte goes out.
   */
  async download(actor: Actor, name: string): Promise<{ name: string; bytes: number; stream: Readable }> {
    const archive = (await this.target.list()).find((a) => a.name === name);
    if (!archive) throw notFound('backup archive');
    const now = this.now();
    await this.deps.store.db
      .transaction()
      .execute((trx) =>
        insertAudit(
          trx,
          actor,
          { action: 'backup.download', target: `backup:${archive.name}`, before: null, after: { bytes: archive.bytes, location: this.target.where } },
          now,
        ),
      );
    return { name: archive.name, bytes: archive.bytes, stream: await this.target.get(archive.name) };
  }

  private async claim(trigger: BackupTrigger, requester: BackupRequester | null): Promise<{ holder: string; runId: number } | null> {
    const holder = `${os.hostname()}:${process.pid}:${randomUUID()}`;
    const now = this.now();
    return this.deps.store.db.transaction().execute(async (trx) => {
      if (!(await takeLease(trx, holder, now, this.leaseMs))) return null;
      const abandoned = await abandonStaleRuns(trx, holder, now, 'abandoned: the process running it stopped renewing its lease');
      if (abandoned > 0) this.deps.log.warn({ abandoned }, 'backup: marked runs of a stopped process as failed');
      const runId = await insertRun(trx, { status: 'running', trigger, requested_by: requester?.who ?? null, holder, started_at: now });
      if (requester) await insertAudit(trx, requester.actor, { action: 'backup.start', target: `backup_run:${runId}`, before: null, after: { trigger } }, now);
      return { holder, runId };
    });
  }

  private track(holder: string, runId: number, options: ArchiveOptions): Promise<Exclude<RunReport, { status: 'busy' }>> {
    const abort = new AbortController();
    const entry = { abort, done: Promise.resolve() as Promise<unknown> };
    const done = this.execute(holder, runId, abort, options).finally(() => this.inFlight.delete(entry));
    entry.done = done;
    this.inFlight.add(entry);
    return done;
  }

  private async execute(holder: string, runId: number, abort: AbortController, options: ArchiveOptions): Promise<Exclude<RunReport, { status: 'busy' }>> {
    const { store, engine, log, config } = this.deps;
    const db = store.db;
    const startedAt = this.now();
    // Renewed every third of its life; a lease lost meanwhile (this process stalled past it and
    // another took over) stops this run rather than let two run at once.
    const renewal = setInterval(
      () => {
        db.transaction()
          .execute((trx) => renewLease(trx, holder, this.now(), this.leaseMs))
          .then((held) => {
            if (!held) abort.abort(new Error('lost the backup lease to another process'));
          })
          .catch((error) => log.warn({ err: error }, 'backup: could not renew the lease'));
      },
      Math.max(1, Math.floor(this.leaseMs / 3)),
    );
    const update = (changes: Parameters<typeof updateRun>[2]) => db.transaction().execute((trx) => updateRun(trx, runId, changes));
    let step = 'take the backup';
    try {
      await fsp.mkdir(config.backupDir, { recursive: true, mode: 0o700 });
      const result = await engine.createBackup({ toDir: config.backupDir, signal: abort.signal, ...options });
      const file = path.resolve(config.backupDir, result.file);
      const name = path.basename(file);
      const counts = result.manifest.counts;
      await update({
        file: name,
        location: 'local',
        bytes: result.bytes,
        merchants: counts.merchants,
        orders: counts.orders,
        refunds: counts.refunds,
        journal_entries: counts.journalEntries,
        stock_rows: counts.stockRows,
      });
      abort.signal.throwIfAborted();
      step = 'verify it';
      const report = await engine.verifyBackup(file);
      if (!report.ok) {
        await update({ verified: 0 });
        throw new Error(`the archive ${name} failed verification: ${report.problems.join('; ') || 'no reason given'}`);
      }
      await update({ verified: 1 });
      abort.signal.throwIfAborted();
      if (this.remote) {
        step = `upload it to ${this.remote.where}`;
        await this.remote.put(name, file);
        await update({ location: 's3' });
        await this.local.delete(name);
      }
      const finishedAt = this.now();
      await update({ status: 'succeeded', finished_at: finishedAt, duration_ms: finishedAt - startedAt });
      log.info({ file: name, bytes: result.bytes, where: this.target.where, durationMs: finishedAt - startedAt }, 'backup taken, verified and stored');
      const pruned = await this.prune();
      return {
        status: 'succeeded',
        runId,
        name,
        bytes: result.bytes,
        where: this.target.where,
        manifest: result.manifest,
        durationMs: finishedAt - startedAt,
        pruned,
      };
    } catch (error) {
      const reason = abort.signal.aborted ? String((abort.signal.reason as Error)?.message ?? abort.signal.reason) : (error as Error)?.message || String(error);
      const finishedAt = this.now();
      const message = `could not ${step}: ${reason}`;
      await update({ status: 'failed', finished_at: finishedAt, duration_ms: finishedAt - startedAt, error: message }).catch(() => {});
      log.error({ err: error, runId }, `backup failed: ${message}`);
      return { status: 'failed', runId, error: message };
    } finally {
      clearInterval(renewal);
      await db
        .transaction()
        .execute((trx) => releaseLease(trx, holder))
        .catch((error) => log.warn({ err: error }, 'backup: could not release the lease (it lapses by itself)'));
    }
  }

  /**
   * Removes what `archivesToPrune` names from wherever its run left it; one that cannot be removed
   * now stays recorded and is tried again after the next good run.
   */
  private async prune(): Promise<string[]> {
    const { store, config, log } = this.deps;
    const runs = await storedArchiveRuns(store.db);
    const doomed = new Set(
      archivesToPrune(
        runs.map((r) => ({ file: r.file!, startedAt: Number(r.started_at), good: r.status === 'succeeded' && r.verified === 1 })),
        config.backupKeep,
      ),
    );
    const removed: number[] = [];
    const names: string[] = [];
    for (const run of runs.filter((r) => doomed.has(r.file!))) {
      const target = run.location === 's3' ? this.remote : this.local;
      // An archive in a bucket this server no longer names (BACKUP_S3_URL unset since) stays recorded.
      if (!target) continue;
      try {
        await target.delete(run.file!);
        removed.push(run.id);
        names.push(run.file!);
      } catch (error) {
        log.warn({ err: error, file: run.file }, 'backup: could not remove a pruned archive; trying again after the next backup');
      }
    }
    await store.db.transaction().execute((trx) => markPruned(trx, removed, this.now()));
    if (removed.length) log.info({ removed: removed.length, keep: config.backupKeep }, 'backup: pruned older archives');
    return names;
  }
}

const countsOf = (r: BackupRunRow): ArchiveManifest['counts'] | null =>
  r.merchants === null
    ? null
    : {
        merchants: Number(r.merchants),
        orders: Number(r.orders),
        refunds: Number(r.refunds),
        journalEntries: Number(r.journal_entries),
        stockRows: Number(r.stock_rows),
      };

const verifiedOf = (r: BackupRunRow): boolean | null => (r.verified === null ? null : r.verified === 1);
