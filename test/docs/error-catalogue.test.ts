import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE, OAUTH_ERRORS } from '../../src/http/openapi/error-catalogue.ts';
import { HTTP_STATUS } from '../../src/http/errors.ts';
import type { ErrorKind } from '../../src/domain/errors.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(rel) : rel.endsWith('.ts') ? [rel] : [];
  });
}

/**
 * `new AppError('unprocessable', 42201, …)` (or a subclass's `super(…)`) anywhere in src/, across
 * line breaks, with the HTTP status src/http/errors.ts gives its kind; and the domain's helpers.
 */
function codesRaisedInSources(): Map<number, number> {
  const found = new Map<number, number>();
  for (const file of sourceFiles('src')) {
    for (const m of read(file).matchAll(/(?:new AppError|super)\(\s*'(\w+)',\s*(\d{5})/g)) {
      const status = HTTP_STATUS[m[1] as ErrorKind];
      assert.ok(status, `${file}: ${m[1]} is an error kind with an HTTP status`);
      found.set(Number(m[2]), status);
    }
  }
  return found;
}

describe('error catalogue', () => {
  const catalogue = new Map(ERROR_CATALOGUE.map((e) => [e.code, e.status]));

  it('lists every code the sources raise, with its HTTP status', () => {
    const raised = codesRaisedInSources();
    assert.ok(raised.size >= 15, 'the scan finds the error helpers');
    for (const [code, status] of raised) {
      assert.equal(catalogue.get(code), status, `${code} (HTTP ${status}) is raised in src/ but missing from ERROR_CATALOGUE`);
    }
  });

  it('keeps code = HTTP status × 100 + n', () => {
    for (const e of ERROR_CATALOGUE) assert.equal(Math.floor(e.code / 100), e.status, String(e.code));
  });

  it('matches the SPEC §1 table when the spec is beside the repository', (t) => {
    const spec = [path.join(ROOT, '../shared/SPEC.md')].find((f) => fs.existsSync(f));
    if (!spec) return t.skip('SPEC.md is not beside this checkout');
    const section = fs.readFileSync(spec, 'utf8').split('**Error catalogue.**')[1]?.split('\n\n')[1] ?? '';
    const rows = [...section.matchAll(/^\| (\d{3}) \| (\d{5}) \|/gm)].map((m) => [Number(m[2]), Number(m[1])] as const);
    assert.ok(rows.length >= 18, 'the table is found');
    // Every SPEC code is there with its status; codes Stockist adds (408/414/431 limits) follow the status × 100 rule.
    for (const [code, status] of rows) assert.equal(catalogue.get(code), status, `${code} (SPEC §1) is in the catalogue`);
    for (const [code, status] of catalogue) assert.equal(Math.floor(code / 100), status, `${code} follows status × 100 + n`);
  });

  it('documents every code in docs/errors.md, and every token endpoint error', () => {
    const doc = read('docs/errors.md');
    for (const e of ERROR_CATALOGUE) assert.match(doc, new RegExp(`\\| ${e.status} \\| ${e.code} \\|`), `${e.code} is in docs/errors.md`);
    for (const e of OAUTH_ERRORS) assert.ok(doc.includes(`\`${e.error}\``), `${e.error} is in docs/errors.md`);
  });
});
