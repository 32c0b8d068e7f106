import type { ArchiveEntry, RunningBackup } from '../../services/backup-runs.service.ts';
import { requesterOf } from '../../domain/backup.ts';
import type { BackupRunRow } from '../../store/backups.repository.ts';
import { moment, statusWords } from '../shared/present.ts';
import type { Html, PageModel } from '../shared/views.ts';

/**
 * The console's Backups page (SPEC §17, owner only): the archives, newest first, with when each was
 * taken, its size, the manifest's counts and whether its trial restore passed; "Back up now"; the
 * recent runs with their errors. Unit tests: test/unit/web-presenters-backups.test.ts.
 */

const PREFIX = '/console/backups';

/** A run's state in words: a backup succeeds (statusWords' "Delivered" is a webhook delivery's word). */
const RUN_WORDS: Readonly<Record<string, string>> = { running: 'Running', succeeded: 'Succeeded', failed: 'Failed' };
const runWords = (status: string) => RUN_WORDS[status] ?? statusWords(status);

/** A row of the archive table. */
export interface ArchiveRowView {
  name: string;
  taken: Html;
  size: string;
  counts: string;
  /** `verified`, `failed verification`, `not checked` (an archive no run of this server made). */
  verified: string;
  verifiedKind: 'ok' | 'bad' | 'unknown';
  download: string;
}

export interface RunRowView {
  started: Html;
  /** `schedule`, `console (owner@example.com)`, or `cli (the OS user)`. */
  trigger: string;
  /** The run's status code (the row's data-run-status). */
  status: string;
  /** The same in words: `Succeeded (pruned since)`. */
  statusText: string;
  file: string;
  error: string;
}

export interface BackupsView extends PageModel {
  /** Where archives are kept: the directory, or `s3://bucket/prefix`. */
  where: string;
  schedule: string;
  keep: string;
  /** The backup running now (any process), if one is. */
  running: { since: Html; by: string } | null;
  /** The "Back up now" form's action; its button is disabled while a backup runs. */
  start: string;
  archives: ArchiveRowView[];
  runs: RunRowView[];
}

/** `532 B`, `14.2 KiB`, `3.1 GiB`: binary units, one decimal past bytes. */
export function byteSize(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes;
  let unit = 'B';
  for (const u of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = u;
  }
  return `${value.toFixed(1)} ${unit}`;
}

const counted = (n: number, one: string, many: string) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

function countsText(c: ArchiveEntry['counts']): string {
  if (!c) return 'unknown';
  return [
    counted(c.merchants, 'merchant', 'merchants'),
    counted(c.orders, 'order', 'orders'),
    counted(c.refunds, 'refund', 'refunds'),
    counted(c.journalEntries, 'journal entry', 'journal entries'),
    counted(c.stockRows, 'stock row', 'stock rows'),
  ].join(', ');
}

const VERIFIED = {
  ok: 'verified',
  bad: 'failed verification',
  unknown: 'not checked',
} as const;

/** Who started the backup running now. */
export const runningBy = (running: RunningBackup): string => requesterOf(running.trigger, running.requestedBy);

export function presentBackups(input: {
  where: string;
  schedule: string | null;
  keep: number;
  running: RunningBackup | null;
  archives: readonly ArchiveEntry[];
  runs: readonly BackupRunRow[];
}): BackupsView {
  return {
    title: 'Backups',
    where: input.where,
    schedule: input.schedule ? `${input.schedule} (cron, UTC)` : 'off (BACKUP_SCHEDULE is not set)',
    keep: `the newest ${counted(input.keep, 'verified archive', 'verified archives')}`,
    running: input.running ? { since: moment(input.running.startedAt), by: runningBy(input.running) } : null,
    start: PREFIX,
    archives: input.archives.map((a) => {
      const kind = a.verified === null ? 'unknown' : a.verified ? 'ok' : 'bad';
      return {
        name: a.name,
        taken: moment(a.takenAt),
        size: byteSize(a.bytes),
        counts: countsText(a.counts),
        verified: VERIFIED[kind],
        verifiedKind: kind,
        download: `${PREFIX}/${encodeURIComponent(a.name)}`,
      };
    }),
    runs: input.runs.map((r) => ({
      started: moment(Number(r.started_at)),
      trigger: r.trigger === 'schedule' ? 'schedule' : `${r.trigger} (${r.requested_by ?? 'unknown'})`,
      status: r.status === 'succeeded' && r.pruned_at !== null ? 'succeeded (pruned since)' : r.status,
      statusText: r.status === 'succeeded' && r.pruned_at !== null ? `${runWords(r.status)} (pruned since)` : runWords(r.status),
      file: r.file ?? '—',
      error: r.error ?? '',
    })),
  };
}
