import fs from 'node:fs';
import path from 'node:path';

export type PidRole = 'api' | 'worker' | 'all';

/**
 * `DATA_DIR/stockist.pid` for the embedded server (`npm start`); an API process and a worker
 * sharing one data directory each get their own (`stockist-api.pid`, `stockist-worker.pid`).
 */
function pidFileFor(dataDir: string, role: PidRole): string {
  return path.join(dataDir, role === 'all' ? 'stockist.pid' : `stockist-${role}.pid`);
}

export const PID_FILE_NAMES = ['stockist.pid', 'stockist-api.pid', 'stockist-worker.pid'] as const;

export function readPid(file: string): number | null {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
  return /^\d{1,10}$/.test(text) && Number(text) > 0 ? Number(text) : null;
}

/** Alive and not a zombie; a process of another user counts as alive. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // Linux: a zombie (exited, not yet reaped) still answers kill(pid, 0).
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/**
 * Whether the process looks like a Stockist server (its command line names stockist), so a stale
 * pid file reused by an unrelated process is never signalled. Null where this cannot be told (no /proc).
 */
export function looksLikeStockist(pid: number): boolean | null {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.some((a) => /stockist/i.test(a)) && argv.includes('serve');
  } catch {
    return fs.existsSync('/proc/self') ? false : null;
  }
}

export interface PidClaim {
  file: string;
  /** Another live server holds the file: this one did not overwrite it. */
  heldBy: number | null;
  release(): void;
}

/** Writes this process's pid unless another live Stockist holds the file; release() removes it if still ours. */
export function claimPidFile(dataDir: string, role: PidRole, pid = process.pid): PidClaim {
  const file = pidFileFor(dataDir, role);
  const holder = readPid(file);
  if (holder !== null && holder !== pid && isRunning(holder) && looksLikeStockist(holder) !== false) {
    return { file, heldBy: holder, release: () => undefined };
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const temp = `${file}.${pid}.tmp`;
  fs.writeFileSync(temp, `${pid}\n`);
  fs.renameSync(temp, file);
  return {
    file,
    heldBy: null,
    release: () => {
      if (readPid(file) === pid) fs.rmSync(file, { force: true });
    },
  };
}
