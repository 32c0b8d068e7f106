/**
 * `npm run bench:startup [-- --runs 7]`: how long the command line takes to answer, as a user
 * meets it (issue 14's last row): `stockist --help`, and `stockist serve` from the spawn until
 * `/readyz` answers 200 on an existing SQLite database holding the demo data (migrations already
 * applied, so this is the restart of a running installation). Prints the median and the worst of
 * the runs; the first run of each is a warm-up (file cache) and is not counted.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const RUNS = Number(args.runs);
const BIN = path.join(ROOT, 'bin/stockist.js');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (n: number) => `${Math.round(n)} ms`;

function helpOnce(): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, [BIN, '--help'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`stockist --help exited ${r.status}: ${r.stderr}`);
  return performance.now() - started;
}

/** From the spawn to the first 200 of /readyz (polled every 5 ms), then a clean stop. */
async function readyOnce(env: NodeJS.ProcessEnv, port: number): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], { cwd: ROOT, env, stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode} before it was ready`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) return performance.now() - started;
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-startup-'));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const env = { ...process.env, DATA_DIR: dataDir, TLS: 'off', LOG_LEVEL: 'warn', SEED: 'demo', ADMIN_API_KEY: 'startup-bench-admin-key-0123' };
  try {
    // The installation: created, migrated and seeded once.
    await readyOnce(env, port);
    const help = Array.from({ length: RUNS + 1 }, helpOnce).slice(1);
    const ready: number[] = [];
    for (let i = 0; i <= RUNS; i++) ready.push(await readyOnce(env, port));
    ready.shift();
    console.log(`# Start-up (${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}, ${RUNS} runs after a warm-up)\n`);
    console.log('| what | median | worst | target |');
    console.log('|---|---:|---:|---:|');
    console.log(`| \`stockist --help\` | ${ms(median(help))} | ${ms(Math.max(...help))} | ≤ 500 ms |`);
    console.log(
      `| \`stockist serve\` until /readyz answers 200 (existing SQLite database, demo data) | ${ms(median(ready))} | ${ms(Math.max(...ready))} | ≤ 1,000 ms |`,
    );
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
