import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import type { ArchiveManifest, BackupEngine } from '../src/services/backup-runs.service.ts';

/**
 * An archive maker for the tests of what surrounds the archive (schedule, lease, targets, pruning,
 * the console page): real tar files named and written as services/backup.service.ts writes its
 * archives (`stockist-<dialect>-<UTC stamp>.tar`, `.<name>.partial` then renamed, mode 0600), with
 * a `manifest.json` member and a payload of random bytes. The archive's contents are that
 * service's business and its tests'; here only their shape matters.
 */
export interface TestEngine extends BackupEngine {
  /** Whether the next trial restores pass. */
  verifyOk: boolean;
  /** How many archives were begun. */
  begun: number;
  /** Holds every createBackup after it began until the returned function is called. */
  hold(): () => void;
  /** Resolves when `n` archives have been begun. */
  begunCount(n: number): Promise<void>;
}

export const TEST_COUNTS = { merchants: 2, orders: 17, refunds: 3, journalEntries: 40, stockRows: 12 };

/** `stamp` seconds after a fixed instant: each archive gets the next second, so names never collide. */
const nameAt = (seq: number) => {
  const iso = new Date(Date.UTC(2026, 0, 1) + seq * 1000).toISOString();
  return `stockist-sqlite-${iso.slice(0, 19).replace(/[-:]/g, '')}Z.tar`;
};

export function testEngine(options: { payloadBytes?: number; firstSeq?: number } = {}): TestEngine {
  let seq = options.firstSeq ?? 0;
  let gate: Promise<void> | null = null;
  const waiters: { n: number; resolve: () => void }[] = [];
  const engine: TestEngine = {
    verifyOk: true,
    begun: 0,
    hold() {
      let release = () => {};
      gate = new Promise<void>((resolve) => {
        release = () => {
          gate = null;
          resolve();
        };
      });
      return release;
    },
    begunCount(n) {
      return engine.begun >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }));
    },
    async createBackup({ toDir, signal }) {
      engine.begun += 1;
      for (const w of waiters.filter((w) => engine.begun >= w.n)) w.resolve();
      if (gate) {
        const aborted = new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
        await Promise.race([gate, aborted]);
      }
      const name = nameAt(seq++);
      const manifest: ArchiveManifest & Record<string, unknown> = {
        format: 'stockist-backup/1',
        createdAt: new Date().toISOString(),
        schemaVersion: '0042_backups',
        withSecrets: false,
        dialect: 'sqlite',
        counts: TEST_COUNTS,
      };
      const work = await fsp.mkdtemp(path.join(os.tmpdir(), 'stockist-test-archive-'));
      try {
        await fsp.writeFile(path.join(work, 'manifest.json'), JSON.stringify(manifest));
        await fsp.writeFile(path.join(work, 'database.sqlite'), randomBytes(options.payloadBytes ?? 4096));
        const partial = path.join(toDir, `.${name}.partial`);
        await tar.create({ file: partial, cwd: work, mode: 0o600 }, ['manifest.json', 'database.sqlite']);
        await fsp.chmod(partial, 0o600);
        await fsp.rename(partial, path.join(toDir, name));
      } finally {
        await fsp.rm(work, { recursive: true, force: true });
      }
      const bytes = fs.statSync(path.join(toDir, name)).size;
      return { file: name, bytes, manifest };
    },
    async verifyBackup(archive) {
      await readTestManifest(archive);
      return engine.verifyOk ? { ok: true, problems: [] } : { ok: false, problems: ['the restored ledger does not balance'] };
    },
    readManifest: readTestManifest,
  };
  return engine;
}

async function readTestManifest(archive: string): Promise<ArchiveManifest> {
  let text = '';
  await tar.list({
    file: archive,
    onReadEntry: (entry) => {
      if (entry.path === 'manifest.json') entry.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      else entry.resume();
    },
  });
  if (!text) throw new Error(`${path.basename(archive)} is not a Stockist archive (no manifest.json)`);
  return JSON.parse(text) as ArchiveManifest;
}
