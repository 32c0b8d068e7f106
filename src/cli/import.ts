import path from 'node:path';
import cliProgress from 'cli-progress';
import { importFiles, type ImportResult } from '../services/import.service.ts';
import type { Actor } from '../domain/audit.ts';
import { ALL_IMPORT_RIGHTS } from '../domain/import-format.ts';
import type { Store } from '../store/db.ts';

function summaryLine(r: ImportResult, seconds: number): string {
  const counts = (['warehouses', 'categories', 'products', 'stocks', 'channels'] as const).filter((k) => r[k] > 0).map((k) => `${r[k]} ${k}`);
  const rate = seconds > 0 ? Math.round(r.rows / seconds) : r.rows;
  return `imported ${r.files} file${r.files === 1 ? '' : 's'}: ${counts.join(', ') || 'nothing'}; ${r.ledgerRows} stock changes; ${r.rows} rows in ${seconds.toFixed(1)} s (${rate} rows/s)`;
}

/**
 * `stockist import`: a progress bar on a terminal, and always one summary line at the end. Every
 * kind of row may be written: whoever runs the command on the server holds the database already.
 */
export async function runImport(store: Store, actor: Actor, files: string[], out: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream }): Promise<void> {
  const started = performance.now();
  const bar = out.stderr.isTTY
    ? new cliProgress.SingleBar(
        { format: '{file} [{bar}] {percentage}% | {rows} rows | {rate} rows/s', hideCursor: true, stream: out.stderr, clearOnComplete: true },
        cliProgress.Presets.shades_classic,
      )
    : null;
  let current = '';
  try {
    const result = await importFiles(store, actor, ALL_IMPORT_RIGHTS, files, Date.now(), (p) => {
      if (!bar) return;
      const payload = { file: path.basename(p.file), rows: p.rows, rate: Math.round(p.rows / ((performance.now() - started) / 1000 || 1)) };
      if (p.file !== current) {
        if (current) bar.stop();
        current = p.file;
        bar.start(p.totalBytes, p.bytesRead, payload);
      } else bar.update(p.bytesRead, payload);
    });
    bar?.stop();
    out.stdout.write(`${summaryLine(result, (performance.now() - started) / 1000)}\n`);
  } catch (error) {
    bar?.stop();
    throw error;
  }
}
