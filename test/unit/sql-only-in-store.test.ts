import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** Every TypeScript file under `dir`, as a path relative to src/. */
function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [path.relative(SRC, full)] : [];
  });
}

/** Kysely's query-builder entry points: a call of one is a query. */
const QUERY_BUILDER = /\.(selectFrom|updateTable|insertInto|deleteFrom|replaceInto|mergeInto)\s*\(/;

/**
 * Issue 30, rule 2: SQL lives in src/store/ only. dependency-cruiser (`sql-only-in-store`) keeps
 * run-time imports of kysely there; this keeps query-builder calls on a handle there too, which an
 * import rule cannot see (a handle is passed in, not imported).
 */
describe('SQL only in the store', () => {
  it('no file outside src/store/ calls a query-builder method', () => {
    const files = sourceFiles(SRC).filter((f) => !f.startsWith(`store${path.sep}`));
    assert.ok(files.length > 100, 'the source tree was read');
    const offending = files.flatMap((file) =>
      fs
        .readFileSync(path.join(SRC, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (QUERY_BUILDER.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    assert.deepEqual(offending, []);
  });

  it('the pattern catches a query written on a handle or a scope', () => {
    for (const call of ["store.db.selectFrom('merchants')", "trx.updateTable('orders')", "scope.insertInto('webhook_endpoints', row)", "db\n.deleteFrom('x')"])
      assert.ok(
        call.split('\n').some((line) => QUERY_BUILDER.test(line)),
        call,
      );
    assert.ok(!QUERY_BUILDER.test('const selectFromList = 1;'));
  });
});
