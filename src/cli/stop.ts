import fs from 'node:fs';
import path from 'node:path';
import { PID_FILE_NAMES, isRunning, looksLikeStockist, readPid } from '../runtime/pid-file.ts';

export class StopFailed extends Error {}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `stockist stop`: SIGTERM to every server whose pid file is in the data directory, then wait
 * (bounded) for each to finish its in-flight work and exit. `npm start` does not pass a `kill`
 * of npm's own pid on to the server, so this (or Ctrl-C) is how a server started that way stops.
 */
export async function stopServers(dataDir: string, timeoutSeconds: number, out: (line: string) => void): Promise<void> {
  const files = PID_FILE_NAMES.map((name) => path.join(dataDir, name)).filter((f) => fs.existsSync(f));
  if (files.length === 0)
    throw new StopFailed(`no server to stop: no pid file (${PID_FILE_NAMES.join(', ')}) in ${dataDir}; set DATA_DIR to the server's data folder`);
  const waiting: { pid: number; file: string }[] = [];
  for (const file of files) {
    const pid = readPid(file);
    if (pid === null || !isRunning(pid)) {
      fs.rmSync(file, { force: true });
      out(`${path.basename(file)}: ${pid === null ? 'unreadable' : `pid ${pid} is not running`}; removed the stale pid file`);
      continue;
    }
    if (looksLikeStockist(pid) === false) {
      throw new StopFailed(
        `${file} names pid ${pid}, which is not a Stockist server (a stale file?); nothing was signalled — remove the file if the server is gone`,
      );
    }
    process.kill(pid, 'SIGTERM');
    waiting.push({ pid, file });
  }
  const started = Date.now();
  const deadline = started + timeoutSeconds * 1000;
  for (const { pid, file } of waiting) {
    while (isRunning(pid) && Date.now() < deadline) await sleep(100);
    if (isRunning(pid))
      throw new StopFailed(
        `pid ${pid} (${path.basename(file)}) is still running ${timeoutSeconds} s after SIGTERM; it may be finishing long requests — wait, or \`kill -9 ${pid}\``,
      );
    if (readPid(file) === pid) fs.rmSync(file, { force: true });
    out(`stopped Stockist pid ${pid} (${path.basename(file)}) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}
