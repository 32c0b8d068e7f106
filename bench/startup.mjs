#!/usr/bin/env node
// Start-up time, as an operator meets it (issue 14): `stockist --help`, and a server on an
// existing database from spawn until it prints "Stockist listening" (migrations checked, demo data
// present, certificate reused — what a second `npm start` does). Median and range of N runs,
// beside `node -e 0` for the machine's own floor.
//   node bench/startup.mjs [--runs 10] [--bin path/to/bin/stockist.js]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '10' }, bin: { type: 'string' } } });
const runs = Number(args.runs);
const bin = path.resolve(args.bin ?? path.join(import.meta.dirname, '../bin/stockist.js'));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-startup-'));
const env = {
  ...process.env,
  DATA_DIR: dir,
  DATABASE_URL: `sqlite:${path.join(dir, 'stockist.db')}`,
  LOG_LEVEL: 'warn',
  ADMIN_API_KEY: '',
  TLS: '',
  STOCKIST_SOURCES: '',
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const report = (label, xs) =>
  console.log(
    `${label.padEnd(44)} median ${median(xs).toFixed(0).padStart(5)} ms   (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)} ms, ${xs.length} runs)`,
  );

function timed(argv) {
  const started = performance.now();
  const r = spawnSync(argv[0], argv.slice(1), { env, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}`);
  return performance.now() - started;
}

function serverReady() {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [bin, 'serve', '--seed', 'demo', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ready in 60 s:\n${out}`));
    }, 60_000);
    child.stdout.on('data', (d) => {
      out += d;
      if (!out.includes('Stockist listening')) return;
      const ms = performance.now() - started;
      clearTimeout(timer);
      child.once('exit', () => resolve(ms));
      child.kill('SIGTERM');
    });
    child.stderr.on('data', (d) => (out += d));
  });
}

console.log(
  `bin ${bin}; node ${process.version}; ${os.cpus().length} cores; load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
await serverReady(); // creates the database, the key, the certificate and the demo data
const floor = [],
  help = [],
  ready = [];
for (let i = 0; i < runs; i++) {
  floor.push(timed([process.execPath, '-e', '0']));
  help.push(timed([process.execPath, bin, '--help']));
  ready.push(await serverReady());
}
report('node -e 0 (the floor)', floor);
report('stockist --help', help);
report('server ready on an existing database', ready);
console.log(
  `load average after: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
fs.rmSync(dir, { recursive: true, force: true });
