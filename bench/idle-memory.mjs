#!/usr/bin/env node
// A started server's memory at idle (Performance III, item 3): `serve --seed demo` on SQLite, TLS=off,
// with the flags of bin/stockist.js's first line, read `--wait` seconds after "Stockist
// listening" after a forced full collection (bench/memory-probe.mjs: VmRSS, RssAnon, RssFile,
// heap, external, V8's code and source sizes). Each run starts on a new database, whose seed
// creates the demo's accounts (and so checks their passwords), then starts once more on that same
// database, as a second `npm start` does. Writes the readings to bench/results/runs/.
//   node bench/idle-memory.mjs [--runs 3] [--wait 20] [--snapshot]   (--snapshot: a heap snapshot of each start)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, wait: { type: 'string', default: '20' }, snapshot: { type: 'boolean', default: false } },
});
const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin/stockist.js');
const nodeFlags = fs
  .readFileSync(bin, 'utf8')
  .split('\n')[0]
  .split(/\s+/)
  .filter((f) => f.startsWith('--'));
const probe = path.join(import.meta.dirname, 'memory-probe.mjs');
const results = path.join(root, 'bench/results/runs');

async function reading(dir, label) {
  const file = path.join(dir, `memory-${label}.json`);
  const env = {
    ...process.env,
    DATA_DIR: dir,
    DATABASE_URL: `sqlite:${path.join(dir, 'stockist.db')}`,
    LOG_LEVEL: 'warn',
    ADMIN_API_KEY: '',
    TLS: 'off',
    STOCKIST_SOURCES: '',
    BENCH_MEMORY_FILE: file,
    BENCH_HEAP_SNAPSHOT: args.snapshot ? path.join(results, `${stamp}-idle-${label}.heapsnapshot`) : '',
  };
  const child = spawn(process.execPath, [...nodeFlags, '--import', probe, bin, 'serve', '--seed', 'demo', '--port', '0'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr.on('data', (d) => (out += d));
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('Stockist listening')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}:\n${out}`)));
  });
  await sleep(Number(args.wait) * 1000);
  child.kill('SIGUSR2');
  while (!fs.existsSync(file)) await sleep(100);
  await sleep(args.snapshot ? 20_000 : 200);
  const r = JSON.parse(fs.readFileSync(file, 'utf8'));
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  return r;
}

const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const rows = [];
for (let i = 0; i < Number(args.runs); i++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-idle-'));
  for (const label of ['new-database', 'second-start']) {
    const r = await reading(dir, `${label}-${i + 1}`);
    rows.push({ start: label, run: i + 1, ...r });
    console.log(
      `${label.padEnd(13)} run ${i + 1}: VmRSS ${r.vmRss.toFixed(1)}  RssAnon ${r.rssAnon.toFixed(1)}  RssFile ${r.rssFile.toFixed(1)}  heapTotal ${r.heapTotal}  heapUsed ${r.heapUsed}  external ${r.external}  arrayBuffers ${r.arrayBuffers}  code ${r.code}  bytecode ${r.bytecode}  source ${r.source}  threads ${r.threads}${r.anon ? `  [heap] ${r.anon.heap}  arenas ${r.anon.arenas} (${r.anon.arenaCount})  other anon ${r.anon.other}` : ''}`,
    );
  }
  fs.rmSync(dir, { recursive: true, force: true });
}
fs.mkdirSync(results, { recursive: true });
const out = path.join(results, `${stamp}-idle-memory-sqlite.json`);
fs.writeFileSync(out, `${JSON.stringify({ node: process.version, flags: nodeFlags, waitSeconds: Number(args.wait), rows }, null, 2)}\n`);
console.log(`written: ${path.relative(root, out)}`);
