/**
 * Scheduled backups (SPEC §17): which files are archives, which of them pruning removes, and how
 * long one process's claim on "the backup now running" holds. The archive itself (its members and
 * manifest) is services/backup.service.ts's; this is what the schedule, the targets and the
 * console's Backups page decide around it.
 */

/** A run: started (holding the lease), then succeeded (taken, verified, stored) or failed (with the reason). */
export const BACKUP_RUN_STATUSES = ['running', 'succeeded', 'failed'] as const;
export type BackupRunStatus = (typeof BACKUP_RUN_STATUSES)[number];

/** Who asked for a run: the cron schedule, or a staff member's "Back up now". */
export const BACKUP_TRIGGERS = ['schedule', 'console'] as const;
export type BackupTrigger = (typeof BACKUP_TRIGGERS)[number];

/** Where a run's archive ended: BACKUP_DIR, or the BACKUP_S3_URL bucket (the local copy removed once uploaded). */
export const BACKUP_LOCATIONS = ['local', 's3'] as const;
export type BackupLocation = (typeof BACKUP_LOCATIONS)[number];

/**
 * `stockist-<dialect>-<UTC yyyymmddThhmmssZ>.tar`, perhaps with a compression suffix. Targets list
 * only such names, and a download must name one the listing holds, so no path reaches a file that
 * is not an archive (no `/`, no `..`, no leading dot: `.<name>.partial` is still being written).
 */
const ARCHIVE_NAME = /^stockist-(sqlite|postgres)-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.tar(?:\.[a-z0-9]{1,4})?$/;

export const isArchiveName = (name: string): boolean => ARCHIVE_NAME.test(name);

/** The instant an archive's name records (UTC ms), or null for a name that is not an archive's. */
export function archiveTime(name: string): number | null {
  const m = ARCHIVE_NAME.exec(name);
  if (!m) return null;
  const [, , y, mo, d, h, mi, s] = m.map(Number);
  const t = Date.UTC(y, mo - 1, d, h, mi, s);
  return Number.isNaN(t) ? null : t;
}

/** An archive a run of the schedule (or "Back up now") made and recorded; `good`: verified and stored. */
export interface RecordedArchive {
  file: string;
  startedAt: number;
  good: boolean;
}

/**
 * The archives pruning removes: it keeps the newest `keep` good archives and removes what is older
 * than the newest good one and not kept — older good ones beyond `keep`, and failed or unverified
 * ones. With no good archive nothing is removed, so a run of failures never eats into the last good
 * backups, and an archive newer than every good one (a failure since) stays for a look. Only
 * recorded archives are candidates: one an operator put into BACKUP_DIR by hand is never removed.
 */
export function archivesToPrune(archives: readonly RecordedArchive[], keep: number): string[] {
  const newestFirst = [...archives].sort((a, b) => b.startedAt - a.startedAt || (a.file < b.file ? 1 : a.file > b.file ? -1 : 0));
  const newestGood = newestFirst.findIndex((a) => a.good);
  if (newestGood < 0) return [];
  const kept = new Set(
    newestFirst
      .filter((a) => a.good)
      .slice(0, Math.max(1, keep))
      .map((a) => a.file),
  );
  return newestFirst.slice(newestGood + 1).flatMap((a) => (kept.has(a.file) ? [] : [a.file]));
}

/**
 * How long the lease on "the backup now running" holds without renewal; the holder renews it every
 * third of that. A process that dies mid-backup blocks the next one for at most this long.
 */
export const BACKUP_LEASE_MS = 60_000;
