#!/usr/bin/env node
// Runs each test of the given files alone, one process at a time, to find a test that passes only
// because an earlier test in its file ran first (docs/architecture.md, "A test builds what it
// needs"). Each test runs as scripts/test.mjs runs a file (tsx, per-test timeouts), selected with
// `--test-name-pattern="^<its name>$"`; PostgreSQL suites run too when TEST_DATABASE_URL is set.
//   node scripts/test-alone.mjs test/http/orders.test.ts [...]
// Test names are read from the source: `it('…'` / `test('…'` with a quoted name (a name built
// with a template literal or held in a variable is listed as not run: run that one by its name
// with `--test-name-pattern`). Slow: one app or more per test; run it on the files you changed,
// not on the whole suite. Exits 1 when a test failed alone.
//   node scripts/test-alone.mjs --reversed test/http/orders.test.ts [...]
// runs each file once with every suite's tests in reverse order (scripts/test-reversed.mjs): one
// process per file, so cheap enough for every file of a suite. It finds a test that read what an
// earlier one wrote (as a run alone does), and also one that counted on a later test not having
// written yet (a count, "the only endpoint"), which a run alone does not.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..');
const reversed = process.argv.includes('--reversed');
const files = process.argv.slice(2).filter((a) => a !== '--reversed');
if (files.length === 0) {
  console.error('usage: node scripts/test-alone.mjs [--reversed] <test file>...');
  process.exit(2);
}
const testProcess = (file, extra) =>
  spawnSync(
    process.execPath,
    [
      '--expose-internals',
      '--enable-source-maps',
      '--import',
      'tsx',
      '--import',
      pathToFileURL(path.join(root, 'scripts/test-timeouts.mjs')).href,
      ...extra,
      '--test',
      '--test-reporter=tap',
      file,
    ],
    { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, NODE_NO_WARNINGS: '1' } },
  );
if (reversed) {
  const failedFiles = [];
  for (const file of files) {
    const started = Date.now();
    const run = testProcess(file, ['--import', pathToFileURL(path.join(root, 'scripts/test-reversed.mjs')).href]);
    const output = `${run.stdout}${run.stderr}`;
    // Failed tests, not the suites around them: a `not ok` line whose next lines are its YAML block without subtests.
    const failedTests = [...output.matchAll(/^(\s*)not ok \d+ - (.*)\n\1 {2}---\n\1 {2}duration_ms: [\d.]+\n(?!\1 {2}type: 'suite')/gm)].map((m) => m[2]);
    const ok = run.status === 0;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${file} reversed (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    if (!ok) {
      failedFiles.push(file);
      for (const name of failedTests) console.log(`    failed: ${name}`);
      if (failedTests.length === 0) console.log(output.replace(/^/gm, '    | '));
    }
  }
  if (failedFiles.length) console.log(`\nFailed reversed (${failedFiles.length}):\n${failedFiles.map((f) => `  ${f}`).join('\n')}`);
  process.exit(failedFiles.length ? 1 : 0);
}
const regexpOf = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const failed = [];
for (const file of files) {
  const source = fs.readFileSync(path.resolve(root, file), 'utf8');
  const names = new Set();
  for (const m of source.matchAll(/\b(?:it|test)\(\s*(['"])((?:\\.|(?!\1)[^\\])*)\1/g)) names.add(m[2].replace(/\\(.)/g, '$1'));
  for (const m of source.matchAll(/\b(?:it|test)\(\s*`([^`]*)`/g)) console.log(`skip ${file} \`${m[1]}\` (a template-literal name)`);
  for (const m of source.matchAll(/(?<![.\w])(?:it|test)\(\s*([A-Za-z_$][\w$.]*)\s*,/g)) console.log(`skip ${file} ${m[1]} (a name held in a variable)`);
  for (const name of names) {
    const started = Date.now();
    const run = testProcess(file, [`--test-name-pattern=^${regexpOf(name)}$`]);
    const output = `${run.stdout}${run.stderr}`;
    const count = (what) => Number(new RegExp(`^# ${what} (\\d+)$`, 'm').exec(output)?.[1] ?? -1);
    // A pattern that matched nothing passes with no test run: that is a failure here too.
    const ok = run.status === 0 && count('fail') === 0 && count('pass') >= 1;
    // Matched but skipped (a PostgreSQL-only test without TEST_DATABASE_URL): not run, not failed.
    const skipped = run.status === 0 && count('fail') === 0 && count('pass') === 0 && count('skipped') >= 1;
    if (skipped) {
      console.log(`skip ${file} "${name}" (skipped when run: ${/# SKIP (.*)$/m.exec(output)?.[1] ?? 'no reason given'})`);
      continue;
    }
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${file} "${name}" (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    if (!ok) {
      failed.push(`${file} "${name}"`);
      console.log(output.replace(/^/gm, '    | '));
    }
  }
}
if (failed.length) console.log(`\nFailed alone (${failed.length}):\n${failed.map((f) => `  ${f}`).join('\n')}`);
process.exit(failed.length ? 1 : 0);
