#!/usr/bin/env node
// Runs every test file under test/ with node:test through tsx. SQLite suites always run; the
// PostgreSQL suites run when TEST_DATABASE_URL is set and are reported as skipped otherwise.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const filter = process.argv.slice(2);
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

const pg = process.env.TEST_DATABASE_URL;
console.log(pg ? `PostgreSQL suites: on (${pg.replace(/\/\/[^@]*@/, '//')})` : 'PostgreSQL suites: SKIPPED (set TEST_DATABASE_URL to run them)');

const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...files],
  { cwd: root, stdio: 'inherit', env: { ...process.env, NODE_NO_WARNINGS: '1' } },
);
if (!pg) console.log('\nNote: the PostgreSQL suites were skipped (TEST_DATABASE_URL is not set); only SQLite was tested.');
process.exit(result.status ?? 1);
