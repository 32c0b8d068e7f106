/**
 * Backup archives (SPEC §17): their manifest, their names, and the rules a restore checks before it
 * touches anything. Pure: the service reads and writes the files.
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

/** `stockist-<dialect>-<yyyymmddThhmmssZ>.tar`: names sort by time, and say what they hold. */
export function archiveName(dialect: BackupManifest['dialect'], at: Date): string {
  const stamp = at
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `stockist-${dialect}-${stamp}.tar`;
}

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
