#!/usr/bin/env node
// Runs every test file under test/ with node:test through tsx. SQLite suites always run; the
// PostgreSQL suites run when TEST_DATABASE_URL is set and are reported as skipped otherwise.
// The end-to-end tests run the built program (bin/stockist.js → dist/), as users do: when dist/
// is older than src/, it is rebuilt first.
//   node scripts/test.mjs [filter...]   files whose path contains a filter (all without one)
//   node scripts/test.mjs --fast        the edit-test loop: unit tests and a few HTTP suites, SQLite only
//
// Nothing may hang: every test and hook that sets no timeout of its own fails after
// TEST_TIMEOUT_SECONDS (default 120, scripts/test-timeouts.mjs), and each file after
// TEST_FILE_TIMEOUT_SECONDS (default 1200: `--test-timeout` on Node 20 and 22, and on every Node a
// watchdog in the file's own process, scripts/test-timeouts.mjs). The
// closing lines list every skipped test with its reason, and every failed one — including those
// node:test announces without a `test:fail` event (scripts/test-summary-reporter.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { runOnSupportedNode } from '../bin/node-runtime.js';
import { buildIsStale } from './build-state.mjs';

// On a Node older than 22: the whole run on the fetched Node.js 24 (the tests' processes start
// process.execPath, and `node` on PATH is that one too), or one line naming the fix.
await runOnSupportedNode();

const root = path.resolve(import.meta.dirname, '..');
const fast = process.argv.includes('--fast');
// A representative slice: every pure rule, and the HTTP suites of the main flows, on SQLite.
const FAST = [
  'test/unit/',
  'test/docs/error-catalogue',
  'test/http/envelope',
  'test/http/orders.test',
  'test/http/refunds.test',
  'test/http/merchant-stock',
  'test/http/admin-catalog',
];
const filter = fast ? FAST : process.argv.slice(2);
if (fast) delete process.env.TEST_DATABASE_URL;
function find(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return find(p);
    return e.name.endsWith('.test.ts') ? [path.relative(root, p)] : [];
  });
}
const files = find(path.join(root, 'test'))
  .filter((f) => filter.length === 0 || filter.some((x) => f.includes(x)))
  .sort();
// Given no file, `node --test` runs every test it finds: a mistyped filter would start the whole suite.
if (files.length === 0) {
  console.error(`no test file under test/ has a path containing ${filter.map((x) => JSON.stringify(x)).join(' or ')}`);
  process.exit(1);
}

if (files.some((f) => f.startsWith(`test${path.sep}e2e${path.sep}`)) && buildIsStale(root)) {
  console.log('dist/ is older than src/: building it for the end-to-end tests');
  const build = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const pg = process.env.TEST_DATABASE_URL;
console.log(pg ? `PostgreSQL suites: on (${pg.replace(/\/\/[^@]*@/, '//')})` : 'PostgreSQL suites: SKIPPED (set TEST_DATABASE_URL to run them)');

const perTestSeconds = Number(process.env.TEST_TIMEOUT_SECONDS || 120);
const perFileSeconds = Number(process.env.TEST_FILE_TIMEOUT_SECONDS || 1200);
const summaryFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-test-run-')), 'summary.jsonl');

const result = spawnSync(
  process.execPath,
  [
    // Only for scripts/test-timeouts.mjs, which gives each test its own timeout (see there).
    '--expose-internals',
    // Test locations (file:line in the report) in the TypeScript sources, not tsx's output.
    '--enable-source-maps',
    '--import',
    'tsx',
    '--import',
    pathToFileURL(path.join(root, 'scripts/test-timeouts.mjs')).href,
    '--test',
    '--test-concurrency=2',
    `--test-timeout=${perFileSeconds * 1000}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${pathToFileURL(path.join(root, 'scripts/test-summary-reporter.mjs')).href}`,
    `--test-reporter-destination=${summaryFile}`,
    ...files,
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      // PostgreSQL sessions of the tests (and of the servers and tools they start) do not wait for
      // each commit to reach the disk: a third to a half off the PostgreSQL suites' time. Nothing
      // in the suite crashes PostgreSQL itself, so every commit is still there for every reader
      // (the crash tests kill Stockist's processes). A PGOPTIONS of your own is kept instead.
      ...(pg && process.env.PGOPTIONS === undefined ? { PGOPTIONS: '-c synchronous_commit=off' } : {}),
      NODE_NO_WARNINGS: '1',
      TEST_TIMEOUT_SECONDS: String(perTestSeconds),
      TEST_FILE_TIMEOUT_SECONDS: String(perFileSeconds),
    },
  },
);

const entries = fs.existsSync(summaryFile)
  ? fs
      .readFileSync(summaryFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
fs.rmSync(path.dirname(summaryFile), { recursive: true, force: true });
const where = (e) => (e.file ? `${path.relative(root, e.file)}${e.line ? `:${e.line}` : ''}` : '?');
const list = (kind, title) => {
  const xs = entries.filter((e) => e.kind === kind);
  if (xs.length === 0) return;
  console.log(`\n${title} (${xs.length}):`);
  for (const e of xs) console.log(`  ${where(e)}  ${e.suite ? 'suite ' : ''}"${e.name}"${e.reason ? ` — ${e.reason}` : ''}`);
};
list('skip', 'Skipped');
list('todo', 'To do');
list('fail', 'Failed');
list('unfinished', 'Unfinished (a file whose process ended before all its tests ran)');
if (!pg) console.log('\nNote: the PostgreSQL suites were skipped (TEST_DATABASE_URL is not set); only SQLite was tested.');
process.exit(entries.some((e) => e.kind === 'unfinished') ? 1 : (result.status ?? 1));
