/**
 * Backups (SPEC §17): the archive's manifest, its name, the rules a restore checks before it touches
 * anything, and what the schedule decides around archives (which of them pruning removes, how long
 * one process's claim on "the backup now running" holds). Pure: services/backup.service.ts writes
 * and reads the archives, services/backup-runs.service.ts runs and records them.
 */

export const BACKUP_FORMAT = 'stockist-backup/1';
export const MANIFEST_MEMBER = 'manifest.json';

export interface BackupCounts {
  merchants: number;
  orders: number;
  refunds: number;
  journalEntries: number;
  stockRows: number;
}

/** Per currency of the money ledger: what a restored ledger must add up to again. */
export interface CurrencyTotals {
  /** Merchant accounts in this currency, and the sum of their kept balances. */
  accounts: number;
  balanceCents: number;
  /** Journal entries, and the sums of their merchant sides: charges (≤ 0) and credits (≥ 0). */
  entries: number;
  debitsCents: number;
  creditsCents: number;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  createdAt: string;
  stockistVersion: string;
  nodeVersion: string;
  schemaVersion: string;
  dialect: 'sqlite' | 'postgres';
  counts: BackupCounts;
  ledgerTotals: Record<string, CurrencyTotals>;
  withSecrets: boolean;
  files: Record<string, string>;
}

/** A refusal an operator reads as one line (bad checksum, truncated, newer schema, target not empty, pg_dump missing/old...). */
export class BackupRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupRefused';
  }
}

/** Archive members: the database snapshot, then (with --with-secrets) the files of DATA_DIR. */
export const SNAPSHOT_MEMBER = { sqlite: 'database/stockist.db', postgres: 'database/stockist.pgdump' } as const;
export const SECRET_MEMBERS = { adminKey: 'secrets/admin-key', tlsKey: 'secrets/tls/key.pem', tlsCert: 'secrets/tls/cert.pem' } as const;

/**
 * The one name rule of archives: `stockist-<dialect>-<UTC yyyymmddThhmmssZ>.tar`. Names sort by
 * time and say what they hold. Targets list only such names and a download must name one the
 * listing holds, so no path reaches a file that is not an archive (no `/`, no `..`, no leading
 * dot: `.<name>.partial` is still being written).
 */
const ARCHIVE_NAME = /^stockist-(sqlite|postgres)-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.tar$/;

export function archiveName(dialect: BackupManifest['dialect'], at: Date): string {
  const stamp = at
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `stockist-${dialect}-${stamp}.tar`;
}

export const isArchiveName = (name: string): boolean => ARCHIVE_NAME.test(name);

/** The instant an archive's name records (UTC ms), or null for a name that is not an archive's. */
export function archiveTime(name: string): number | null {
  const m = ARCHIVE_NAME.exec(name);
  if (!m) return null;
  const [, , y, mo, d, h, mi, s] = m.map(Number);
  const t = Date.UTC(y, mo - 1, d, h, mi, s);
  // Date.UTC rolls 20261340 over into another day: such a name is no archive's.
  return Number.isNaN(t) || archiveName(m[1] as BackupManifest['dialect'], new Date(t)) !== name ? null : t;
}

/**
 * The name a backup starting at `nowMs` takes: this second's, unless an archive of that name exists
 * or is being written (`taken`), then the first free second after it — with how long to wait for
 * that second to begin. Names are one a second, so a backup that starts in the second the previous
 * one finished waits for the next second rather than fail.
 */
export function archiveSlot(dialect: BackupManifest['dialect'], nowMs: number, taken: (name: string) => boolean): { name: string; waitMs: number } {
  const second = Math.floor(nowMs / 1000) * 1000;
  for (let at = second; ; at += 1000) {
    const name = archiveName(dialect, new Date(at));
    if (!taken(name)) return { name, waitMs: Math.max(0, at - nowMs) };
  }
}

/** A run: started (holding the lease), then succeeded (taken, verified, stored) or failed (with the reason). */
export const BACKUP_RUN_STATUSES = ['running', 'succeeded', 'failed'] as const;
export type BackupRunStatus = (typeof BACKUP_RUN_STATUSES)[number];

/** Who asked for a run: the cron schedule, a staff member's "Back up now", or `stockist backup` into BACKUP_DIR. */
export const BACKUP_TRIGGERS = ['schedule', 'console', 'cli'] as const;
export type BackupTrigger = (typeof BACKUP_TRIGGERS)[number];

/** Who asked for a run, for a page or a refusal: `the schedule`, a staff member's email, `stockist backup (<OS user>)`. */
export function requesterOf(trigger: BackupTrigger, requestedBy: string | null): string {
  if (trigger === 'schedule') return 'the schedule';
  if (trigger === 'cli') return `stockist backup (${requestedBy ?? 'unknown'})`;
  return requestedBy ?? 'a staff member';
}

/** Where a run's archive ended: BACKUP_DIR, or the BACKUP_S3_URL bucket (the local copy removed once uploaded). */
export const BACKUP_LOCATIONS = ['local', 's3'] as const;
export type BackupLocation = (typeof BACKUP_LOCATIONS)[number];

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

const COUNT_KEYS: (keyof BackupCounts)[] = ['merchants', 'orders', 'refunds', 'journalEntries', 'stockRows'];
const TOTAL_KEYS: (keyof CurrencyTotals)[] = ['accounts', 'balanceCents', 'entries', 'debitsCents', 'creditsCents'];
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;
const SHA256_HEX = /^[0-9a-f]{64}$/;
/** Member names are relative paths of plain words: nothing an extraction could place outside its folder. */
const MEMBER_NAME = /^[a-z0-9_-]+(\/[a-z0-9_.-]+)*$/i;

/** The manifest read from an archive, or what is wrong with it (one phrase). */
export function parseManifest(text: string): BackupManifest | string {
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(text);
  } catch {
    return 'its manifest.json is not JSON';
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return 'its manifest.json is not an object';
  if (m.format !== BACKUP_FORMAT) return `its format is ${JSON.stringify(m.format)}, not ${BACKUP_FORMAT}`;
  for (const key of ['createdAt', 'stockistVersion', 'nodeVersion', 'schemaVersion'] as const) {
    if (!isString(m[key])) return `its manifest has no ${key}`;
  }
  if (m.dialect !== 'sqlite' && m.dialect !== 'postgres') return 'its manifest names no dialect (sqlite or postgres)';
  const counts = m.counts as Record<string, unknown> | null;
  if (typeof counts !== 'object' || counts === null || !COUNT_KEYS.every((k) => isInt(counts[k]) && (counts[k] as number) >= 0)) {
    return 'its manifest has no counts';
  }
  const totals = m.ledgerTotals as Record<string, Record<string, unknown>> | null;
  if (
    typeof totals !== 'object' ||
    totals === null ||
    !Object.values(totals).every((t) => typeof t === 'object' && t && TOTAL_KEYS.every((k) => isInt(t[k])))
  ) {
    return 'its manifest has no ledger totals';
  }
  if (typeof m.withSecrets !== 'boolean') return 'its manifest does not say whether it holds secrets';
  const files = m.files as Record<string, unknown> | null;
  if (typeof files !== 'object' || files === null) return 'its manifest lists no files';
  for (const [name, hash] of Object.entries(files)) {
    if (!MEMBER_NAME.test(name) || name === MANIFEST_MEMBER) return `its manifest lists a bad member name ${JSON.stringify(name)}`;
    if (typeof hash !== 'string' || !SHA256_HEX.test(hash)) return `its manifest has no SHA-256 for ${name}`;
  }
  if (!(SNAPSHOT_MEMBER[m.dialect] in files)) return `its manifest lists no ${SNAPSHOT_MEMBER[m.dialect]}`;
  return m as unknown as BackupManifest;
}

/**
 * Why this build cannot restore an archive made at `schemaVersion` (a later or unknown migration:
 * a newer Stockist made it), or null. Migration names sort in the order they apply.
 */
export function schemaProblem(schemaVersion: string, known: readonly string[], latest: string): string | null {
  if (schemaVersion > latest)
    return `it was made by a newer Stockist (schema ${schemaVersion}; this build knows up to ${latest}): restore it with that version or later`;
  if (!known.includes(schemaVersion)) return `its schema ${schemaVersion} is not a migration this build knows (latest ${latest})`;
  return null;
}

/** Where the counts or ledger totals found after a trial restore differ from the manifest's, one phrase each. */
export function factDifferences(manifest: Pick<BackupManifest, 'counts' | 'ledgerTotals'>, found: Pick<BackupManifest, 'counts' | 'ledgerTotals'>): string[] {
  const out: string[] = [];
  for (const k of COUNT_KEYS) {
    if (manifest.counts[k] !== found.counts[k]) out.push(`${k}: the manifest says ${manifest.counts[k]}, the restored database holds ${found.counts[k]}`);
  }
  for (const currency of new Set([...Object.keys(manifest.ledgerTotals), ...Object.keys(found.ledgerTotals)])) {
    const a = manifest.ledgerTotals[currency];
    const b = found.ledgerTotals[currency];
    for (const k of TOTAL_KEYS) {
      if (a?.[k] !== b?.[k]) out.push(`ledger ${currency} ${k}: the manifest says ${a?.[k] ?? 'nothing'}, the restored database holds ${b?.[k] ?? 'nothing'}`);
    }
  }
  return out;
}

/** `merchants 3, orders 120, refunds 4, journal entries 130, stock rows 720`. */
export function describeCounts(c: BackupCounts): string {
  return `merchants ${c.merchants}, orders ${c.orders}, refunds ${c.refunds}, journal entries ${c.journalEntries}, stock rows ${c.stockRows}`;
}
