import cliProgress from 'cli-progress';
import type { Config } from '../config.ts';
import { BackupRefused, describeCounts } from '../domain/backup.ts';
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

/** `stockist backup`: a progress bar on a terminal, and always one summary line at the end. */
export async function runBackup(deps: { config: Config; store: Store }, options: { toDir: string; withSecrets: boolean }, io: Io): Promise<void> {
  const bar = io.stderr.isTTY
    ? new cliProgress.SingleBar(
        { format: '{phase} [{bar}] {percentage}% | {value}/{total} {unit}', hideCursor: true, stream: io.stderr, clearOnComplete: true },
        cliProgress.Presets.shades_classic,
      )
    : null;
  let phase: BackupProgress['phase'] | null = null;
  const onProgress = (p: BackupProgress) => {
    if (!bar) return;
    const payload = { phase: p.phase, unit: p.phase === 'snapshot' ? (deps.store.dialect === 'sqlite' ? 'pages' : 'tables') : 'bytes' };
    if (p.phase !== phase) {
      if (phase) bar.stop();
      phase = p.phase;
      bar.start(p.total, p.done, payload);
    } else bar.update(p.done, payload);
  };
  // Ctrl-C (or SIGTERM) stops between two steps and removes the unfinished archive.
  const controller = new AbortController();
  const abort = () => controller.abort();
  process.once('SIGINT', abort);
  process.once('SIGTERM', abort);
  try {
    const r = await createBackup(deps, { ...options, onProgress, signal: controller.signal });
    bar?.stop();
    io.stdout.write(
      `backup ${r.file}  ${megabytes(r.bytes)}  schema ${r.manifest.schemaVersion}  ${describeCounts(r.manifest.counts)}  ${(r.durationMs / 1000).toFixed(1)} s\n`,
    );
    if (!r.manifest.withSecrets) io.stdout.write(`note: ${NO_SECRETS_NOTE}\n`);
  } catch (error) {
    bar?.stop();
    throw error;
  } finally {
    process.off('SIGINT', abort);
    process.off('SIGTERM', abort);
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
  if (!m.withSecrets) io.stdout.write(`note: the archive has ${NO_SECRETS_NOTE}\n`);
}
