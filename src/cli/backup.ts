import path from 'node:path';
import cliProgress from 'cli-progress';
import type { Config } from '../config.ts';
import type { Actor } from '../domain/audit.ts';
import { BackupRefused, describeCounts, requesterOf } from '../domain/backup.ts';
import { type ArchiveManifest, archiveEngine, BackupService } from '../services/backup-runs.service.ts';
import { createBackup, restoreBackup, verifyBackup, type BackupProgress } from '../services/backup.service.ts';
import type { Store } from '../store/db.ts';

interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

const NO_SECRETS_NOTE =
  "no secrets of DATA_DIR in it (--with-secrets adds them): merchants' tokens, OAuth clients and webhook secrets are in the database and work after a restore; keep ADMIN_API_KEY (or DATA_DIR/admin-key) and the TLS key yourself, or a restored server makes new ones";

function megabytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** A progress bar on a terminal (pages or tables, then bytes); nothing otherwise. */
function progressBar(dialect: Store['dialect'], stderr: NodeJS.WriteStream): { onProgress: (p: BackupProgress) => void; stop(): void } {
  const bar = stderr.isTTY
    ? new cliProgress.SingleBar(
        { format: '{phase} [{bar}] {percentage}% | {value}/{total} {unit}', hideCursor: true, stream: stderr, clearOnComplete: true },
        cliProgress.Presets.shades_classic,
      )
    : null;
  let phase: BackupProgress['phase'] | null = null;
  return {
    onProgress: (p) => {
      if (!bar) return;
      const payload = { phase: p.phase, unit: p.phase === 'snapshot' ? (dialect === 'sqlite' ? 'pages' : 'tables') : 'bytes' };
      if (p.phase !== phase) {
        if (phase) bar.stop();
        phase = p.phase;
        bar.start(p.total, p.done, payload);
      } else bar.update(p.done, payload);
    },
    stop: () => {
      if (phase) bar?.stop();
      phase = null;
    },
  };
}

/** Ctrl-C (or SIGTERM) while `fn` runs calls `onSignal`: the backup stops between two steps and removes its unfinished archive. */
async function interruptible<T>(onSignal: () => void, fn: () => Promise<T>): Promise<T> {
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await fn();
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

const summary = (where: string, r: { bytes: number; manifest: ArchiveManifest }, durationMs: number) =>
  `backup ${where}  ${megabytes(r.bytes)}  schema ${r.manifest.schemaVersion}  ${describeCounts(r.manifest.counts)}  ${(durationMs / 1000).toFixed(1)} s\n`;

/**
 * `stockist backup`. Into BACKUP_DIR (no `--to`): the run the schedule and the console's "Back up
 * now" make — the database's lease (refused in one line while another backup runs anywhere), recorded
 * in backup_runs as `cli` by the OS user, verified, uploaded with BACKUP_S3_URL, older archives
 * pruned — so the console lists it as verified. `--to DIR`: one archive, nothing else.
 */
export async function runBackup(
  deps: { config: Config; store: Store },
  options: { toDir: string | null; withSecrets: boolean; actor: Actor },
  io: Io,
): Promise<void> {
  const bar = progressBar(deps.store.dialect, io.stderr);
  try {
    if (options.toDir === null) await recordedBackup(deps, options, bar.onProgress, io);
    else {
      const controller = new AbortController();
      const r = await interruptible(
        () => controller.abort(),
        () => createBackup(deps, { toDir: options.toDir!, withSecrets: options.withSecrets, onProgress: bar.onProgress, signal: controller.signal }),
      );
      bar.stop();
      io.stdout.write(summary(r.file, r, r.durationMs));
      if (!r.manifest.withSecrets) io.stdout.write(`note: ${NO_SECRETS_NOTE}\n`);
    }
  } finally {
    bar.stop();
  }
}

async function recordedBackup(
  deps: { config: Config; store: Store },
  options: { withSecrets: boolean; actor: Actor },
  onProgress: (p: BackupProgress) => void,
  io: Io,
): Promise<void> {
  const { config, store } = deps;
  const warn = (_obj: object, msg: string) => io.stderr.write(`stockist: ${msg}\n`);
  // The outcome is this command's output; the service's own info and error lines would repeat it.
  const service = new BackupService({ config, store, engine: archiveEngine(config, store), log: { info() {}, warn, error() {} } });
  try {
    const unrecordable = await service.unrecordable();
    if (unrecordable) {
      throw new BackupRefused(
        `${unrecordable}: \`stockist backup --to DIR\` writes a one-off archive of it as it is; \`stockist migrate\` (or starting the server) brings it forward for recorded backups into BACKUP_DIR`,
      );
    }
    const report = await interruptible(
      () => void service.stop('stockist backup was interrupted'),
      () => service.runReport('cli', { who: options.actor.id, actor: options.actor }, { withSecrets: options.withSecrets, onProgress }),
    );
    if (report.status === 'busy') {
      const r = report.running;
      throw new BackupRefused(
        `not started: a backup is running already${r ? ` (started ${new Date(r.startedAt).toISOString()} by ${requesterOf(r.trigger, r.requestedBy)})` : ''}; one backup runs at a time, try again when it has finished`,
      );
    }
    if (report.status === 'failed') throw new BackupRefused(`backup failed: ${report.error}`);
    const where = service.remote ? `${report.where}/${report.name}` : path.join(config.backupDir, report.name);
    io.stdout.write(summary(where, report, report.durationMs));
    io.stdout.write(
      `verified: every checksum, the ledger, stock = stock ledger and the counts hold (run ${report.runId}, listed in the console's Backups page)\n`,
    );
    if (report.pruned.length) io.stdout.write(`pruned (BACKUP_KEEP=${config.backupKeep}): ${report.pruned.join(', ')}\n`);
    if (!report.manifest.withSecrets) io.stdout.write(`note: ${NO_SECRETS_NOTE}\n`);
  } finally {
    await service.stop('stockist backup was interrupted');
  }
}

/** `stockist backup verify`: the trial restore's findings; exit 1 on any problem. */
export async function runVerify(config: Config, archive: string, io: Io): Promise<void> {
  let report: Awaited<ReturnType<typeof verifyBackup>>;
  try {
    report = await verifyBackup({ config }, archive);
  } catch (error) {
    if (error instanceof BackupRefused) throw new BackupRefused(`backup verify failed: ${error.message}`);
    throw error;
  }
  const m = report.manifest;
  io.stdout.write(`archive  ${archive}: ${m.dialect}, schema ${m.schemaVersion}, made ${m.createdAt} by Stockist ${m.stockistVersion}\n`);
  io.stdout.write(`manifest ${describeCounts(m.counts)}\n`);
  io.stdout.write(`restored ${describeCounts(report.counts)}\n`);
  for (const p of report.problems) io.stdout.write(`PROBLEM ${p}\n`);
  if (report.ok) io.stdout.write('backup verify: every checksum, the ledger, stock = stock ledger and the counts hold\n');
  else {
    const n = report.problems.length;
    io.stderr.write(`stockist: backup verify failed: ${n} problem${n === 1 ? '' : 's'} (listed above)\n`);
    process.exitCode = 1;
  }
}

/** `stockist restore`: one refusal line on stderr, or what was restored beside what the manifest says. */
export async function runRestore(config: Config, archive: string, io: Io): Promise<void> {
  let r: Awaited<ReturnType<typeof restoreBackup>>;
  try {
    r = await restoreBackup({ config }, archive);
  } catch (error) {
    if (error instanceof BackupRefused) {
      throw new BackupRefused(`restore refused, nothing was changed: ${error.message}`);
    }
    throw error;
  }
  const m = r.manifest;
  io.stdout.write(`restored ${archive} into ${r.target}\n`);
  io.stdout.write(
    `schema   ${m.schemaVersion}${r.migrated.length ? `, migrated forward: ${r.migrated.join(', ')}` : ' (current)'}; made ${m.createdAt} by Stockist ${m.stockistVersion}\n`,
  );
  io.stdout.write(`manifest ${describeCounts(m.counts)}\n`);
  io.stdout.write(`restored ${describeCounts(r.found.counts)}\n`);
  io.stdout.write(`ledger: ${r.ledgerEntries} entries, every invariant holds; stock equals its ledger in all ${r.found.counts.stockRows} rows\n`);
  for (const f of r.secretsWritten) io.stdout.write(`secret written: ${f}\n`);
  for (const f of r.secretsKept) io.stdout.write(`secret kept (already there, the archive's copy not used): ${f}\n`);
  if (r.evidenceWritten + r.evidenceKept + r.evidenceUnnamed > 0) {
    const notes = [
      ...(r.evidenceKept > 0 ? [`${r.evidenceKept} already there, kept`] : []),
      ...(r.evidenceUnnamed > 0 ? [`${r.evidenceUnnamed} named by no claim file of the database, left out`] : []),
    ];
    io.stdout.write(`claim evidence files written: ${r.evidenceWritten} into ${r.evidenceWhere}${notes.length ? ` (${notes.join('; ')})` : ''}\n`);
  }
  if (!m.withSecrets) io.stdout.write(`note: the archive has ${NO_SECRETS_NOTE}\n`);
}
