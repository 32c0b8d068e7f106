/**
 * Storage faults: the database answers but cannot take writes — read-only (file permissions, a
 * disk remounted read-only, a PostgreSQL standby), full (disk, quota, `max_page_count`), I/O
 * errors, corruption. Requests meeting one answer 503/50300 (SPEC §1) and `/readyz` says not ready
 * while they last (issue 13 item 15).
 */
export type FaultKind = 'read-only' | 'full' | 'io' | 'corrupt';

/** PostgreSQL SQLSTATEs of the same kinds. */
const PG_FAULTS: Record<string, FaultKind> = {
  '25006': 'read-only', // read_only_sql_transaction (a standby, or default_transaction_read_only)
  '53100': 'full', // disk_full
  '58030': 'io', // io_error
  XX001: 'corrupt', // data_corrupted
  XX002: 'corrupt', // index_corrupted
};

/** The fault a database error reports, or null for anything else (constraint violations, busy, lost connections …). */
export function storageFaultKind(error: unknown): FaultKind | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  // better-sqlite3 reports extended result codes: SQLITE_READONLY_DIRECTORY, SQLITE_IOERR_WRITE, …
  if (code.startsWith('SQLITE_READONLY')) return 'read-only';
  if (code === 'SQLITE_FULL') return 'full';
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN')) return 'io';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return 'corrupt';
  return PG_FAULTS[code] ?? null;
}

const PLAIN: Record<FaultKind, string> = {
  'read-only': 'is read-only',
  full: 'is full (no space left on the disk, or the database reached its size limit)',
  io: 'cannot be read or written (an I/O error)',
  corrupt: 'is damaged (the file is corrupt or not a database)',
};

/** One sentence an operator can act on, for a storage fault met while starting up; null for other errors. */
export function describeStorageFault(error: unknown, where: string): string | null {
  const kind = storageFaultKind(error);
  if (kind === null) return null;
  const code = (error as { code: string }).code;
  const lines = [`the database ${where} ${PLAIN[kind]} (${code}).`];
  if (kind === 'read-only' && where.startsWith('file ')) {
    lines.push(
      'Stockist writes to the file and creates its -wal and -shm files beside it: check that the user running Stockist owns (or may write) the file and its directory, and that the disk is not mounted read-only.',
    );
  } else if (kind === 'read-only') {
    lines.push('Connect to the primary server, not a read-only standby.');
  } else if (kind === 'full') {
    lines.push('Free some disk space (or raise the quota) and start again.');
  } else if (kind === 'corrupt') {
    lines.push('Restore it from a backup.');
  }
  return lines.join(' ');
}

/** How long after a write failed with a storage fault `/readyz` keeps saying not ready. */
const FAULT_HOLD_MS = 10_000;

/**
 * The last storage fault a query met in this process. `/readyz` reports not ready while one is
 * recent, because some faults (a database at its size limit) spare the small write its own probe does.
 */
export class StorageHealth {
  private last: { at: number; kind: FaultKind; code: string } | null = null;

  constructor(readonly holdMs = FAULT_HOLD_MS) {}

  note(error: unknown, now = Date.now()): void {
    const kind = storageFaultKind(error);
    if (kind !== null) this.last = { at: now, kind, code: (error as { code: string }).code };
  }

  /** The fault seen within the hold time, if any. */
  recentFault(now = Date.now()): { ageMs: number; kind: FaultKind; code: string } | null {
    if (this.last === null || now - this.last.at > this.holdMs) return null;
    return { ageMs: now - this.last.at, kind: this.last.kind, code: this.last.code };
  }
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // PostgreSQL: admin/crash shutdown, cannot connect now, too many connections, connection exceptions.
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
]);
/** node-postgres reports a lost connection or a pool wait that timed out without a code. */
const UNAVAILABLE_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|not queryable|Client was closed/i;

/**
 * Storage outages (connection refused or lost, pool exhausted, database locked) and storage faults
 * (read-only, full, I/O errors) are 503/50300, not 500: the request may succeed later or elsewhere,
 * and nothing is wrong with it or with the data it names.
 */
export function isStorageUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('SQLITE_BUSY'))) return true;
  if (storageFaultKind(error) !== null) return true;
  return typeof e?.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message);
}

/** A unique constraint refused the write (PostgreSQL 23505, SQLite's CONSTRAINT_UNIQUE / PRIMARYKEY): someone else got there first. */
export function isUniqueViolation(error: unknown): boolean {
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  return code === '23505' || code.startsWith('SQLITE_CONSTRAINT_UNIQUE') || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
