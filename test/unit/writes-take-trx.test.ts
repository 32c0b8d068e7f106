/**
 * Issue 30, rule 1, held by the build: a store function that writes or locks takes a transaction
 * (`Trx`, or `MerchantScope<Trx>`), never a bare `Handle` (nor a `MerchantScope` over one), so a
 * caller has to open the transaction and `tsc` refuses a call on `store.db`
 * (test/types/transactions.types.ts keeps a few such calls under `@ts-expect-error`). This test
 * keeps a function written later from slipping back to `Handle`.
 *
 * Heuristics (a reading of the source text, not of the types):
 * - A file of src/store/ is cut into top-level declarations: each starts at a line in column 0
 *   with `export`, `function`, `async function`, `const` or `let` (Biome's formatting puts every
 *   top-level declaration there). Comments are removed first, so prose does not count.
 * - A declaration writes when its text calls `.insertInto(`, `.updateTable(`, `.deleteFrom(`,
 *   `.replaceInto(` or `.mergeInto(`, or holds raw SQL `insert into`, `delete from` or
 *   `update <table> set`; it locks when it calls `.forUpdate(` / `.forNoKeyUpdate(`, or holds
 *   `for update` or an advisory lock (`advisory`) in its SQL. It also writes or locks when it names
 *   (`name(` or `name.`) a declaration of the same file, or one it imports from another store
 *   file, that does — a prepared write, a local helper — followed to a fixed point.
 * - Its handle parameter is whatever its parameter list says (the first parenthesised group after
 *   the name, or after `=` for an arrow function): the list must not name `Handle`, `Db`,
 *   `TenantScope`, `AllMerchants`, nor `MerchantScope` without `<Trx>`.
 * - Only exported declarations are held to it: a file's own helpers receive the handle of the
 *   exported function that calls them. `BUILDERS` lists the exported functions that only build a
 *   statement (for a caller's prepared query or CTE), run nothing, and so take any handle;
 *   tenancy.ts, scope-mint.ts, edge-scopes.ts and prepared.ts (the machinery that makes scopes and
 *   prepared queries) are not read.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const STORE = path.resolve(import.meta.dirname, '../../src/store');

/** The scope and prepared-query machinery: it builds handles and statements for the storage functions, and runs none itself. */
const MACHINERY = new Set(['tenancy.ts', 'scope-mint.ts', 'edge-scopes.ts', 'prepared.ts']);

/** Exported functions that return a statement for their caller to run inside its own (transaction-typed) function. */
const BUILDERS = new Set<string>(['postingCtes', 'orderStatusUpdate']);

const WRITE = [
  /\.(insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\s*\(/,
  /\.(forUpdate|forNoKeyUpdate)\s*\(/,
  /\binsert\s+into\b/i,
  /\bdelete\s+from\b/i,
  /\bupdate\s+[\w".]+\s+set\b/i,
  /\bfor\s+(no\s+key\s+)?update\b/i,
  /advisory/i,
];

/** A handle type that is not a transaction. */
const BARE_HANDLE = /\b(Handle|Db|TenantScope|AllMerchants)\b|\bMerchantScope\b(?!<Trx>)/;

interface Declaration {
  file: string;
  line: number;
  name: string;
  exported: boolean;
  params: string;
  text: string;
}

function stripComments(source: string): string {
  // Block comments become as many newlines as they held, so line numbers stay right.
  return source
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ''))
    .split('\n')
    .map((line) => line.replace(/(^|\s)\/\/.*$/, ''))
    .join('\n');
}

const START = /^(export\s+)?(?:(?:async\s+)?function\s*\*?\s*(\w+)|(?:const|let)\s+(\w+))/;

/** The text inside the first balanced parentheses at or after `from`. */
function firstParenGroup(text: string, from: number): string {
  const open = text.indexOf('(', from);
  if (open < 0) return '';
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return '';
}

function declarationsOf(file: string, source: string): Declaration[] {
  const lines = stripComments(source).split('\n');
  const out: Declaration[] = [];
  let current: { start: number; name: string; exported: boolean; kind: 'function' | 'const' } | null = null;
  const close = (end: number) => {
    if (!current) return;
    const text = lines.slice(current.start, end).join('\n');
    const afterName = text.indexOf(current.name) + current.name.length;
    const from = current.kind === 'function' ? afterName : text.indexOf('=', afterName);
    out.push({ file, line: current.start + 1, name: current.name, exported: current.exported, params: firstParenGroup(text, from), text });
  };
  lines.forEach((line, i) => {
    if (/^(import|type|interface|export\s+(type|interface|class|enum)|declare)\b/.test(line)) {
      close(i);
      current = null;
      return;
    }
    const m = START.exec(line);
    if (!m) return;
    close(i);
    current = { start: i, name: m[2] ?? m[3], exported: Boolean(m[1]), kind: m[2] ? 'function' : 'const' };
  });
  close(lines.length);
  return out;
}

/** Names a file imports from another file of the store. */
function storeImports(source: string): Set<string> {
  const names = new Set<string>();
  for (const m of source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'\.\/[\w.-]+'/g))
    for (const part of m[1].split(','))
      if (!/^\s*type\s/.test(part) && part.trim())
        names.add(
          part
            .trim()
            .split(/\s+as\s+/)
            .pop()!
            .trim(),
        );
  return names;
}

/** Exported declarations that write or lock while their parameter list names a bare handle. */
function offenders(files: { file: string; source: string }[]): string[] {
  const perFile = files.map(({ file, source }) => ({ declarations: declarationsOf(file, source), imports: storeImports(source) }));
  const writers = new Set<Declaration>(perFile.flatMap((f) => f.declarations).filter((d) => WRITE.some((w) => w.test(d.text))));
  const exportedWriters = () => new Set([...writers].filter((d) => d.exported).map((d) => d.name));
  for (let changed = true; changed; ) {
    changed = false;
    const exported = exportedWriters();
    for (const { declarations, imports } of perFile) {
      const known = new Set([...declarations.filter((d) => writers.has(d)).map((d) => d.name), ...[...imports].filter((n) => exported.has(n))]);
      for (const d of declarations) {
        if (writers.has(d)) continue;
        if ([...known].some((name) => name !== d.name && new RegExp(`\\b${name}\\s*[(.]`).test(d.text))) {
          writers.add(d);
          changed = true;
        }
      }
    }
  }
  return [...writers]
    .filter((d) => d.exported && !BUILDERS.has(d.name) && BARE_HANDLE.test(d.params))
    .map((d) => `${d.file}:${d.line} ${d.name}(${d.params.replace(/\s+/g, ' ').trim()})`)
    .sort();
}

describe('writes and locks take a transaction', () => {
  it('no exported store function that writes or locks takes a bare handle', () => {
    const files = fs
      .readdirSync(STORE)
      .filter((f) => f.endsWith('.ts') && !MACHINERY.has(f))
      .map((f) => ({ file: `src/store/${f}`, source: fs.readFileSync(path.join(STORE, f), 'utf8') }));
    assert.ok(files.length > 20, 'the store was read');
    assert.deepEqual(offenders(files), []);
  });

  it('the heuristics catch a write, a lock and a call of a writing helper, and pass reads and transactions', () => {
    const source = [
      "import type { Handle, Trx } from './db.ts';",
      "import { prepared } from './prepared.ts';",
      '/** A comment that says update orders set nothing. */',
      "export const read = (db: Handle, id: number) => db.selectFrom('orders').where('id', '=', id).execute();",
      'export async function write(db: Handle, id: number): Promise<void> {',
      "  await db.updateTable('orders').set({ status: 'x' }).where('id', '=', id).execute();",
      '}',
      'export async function writeInTrx(trx: Trx, id: number): Promise<void> {',
      "  await trx.deleteFrom('orders').where('id', '=', id).execute();",
      '}',
      "const insertRow = prepared((db, id: number) => db.insertInto('orders').values({ id }));",
      'export const viaPrepared = (db: Handle, id: number) => insertRow.execute(db, id);',
      'async function helper(db: Handle) {',
      '  await sql`select pg_advisory_xact_lock(1)`.execute(db);',
      '}',
      'export async function viaHelper(',
      '  db: Handle,',
      '): Promise<void> {',
      '  await helper(db);',
      '}',
      'export async function scoped(scope: MerchantScope, id: number) {',
      '  await sql`update webhooks set x = 1 where id = 7`.execute(scope.handle);',
      '}',
      'export async function scopedInTrx(scope: MerchantScope<Trx>, id: number) {',
      "  await scope.updateTable('orders').set({ x: 1 }).where('id', '=', id).execute();",
      '}',
      'export async function locks(db: Handle) {',
      "  return db.selectFrom('orders').forUpdate().execute();",
      '}',
    ].join('\n');
    assert.deepEqual(
      offenders([{ file: 'x.ts', source }])
        .map((o) => o.split(' ')[1].split('(')[0])
        .sort(),
      ['locks', 'scoped', 'viaHelper', 'viaPrepared', 'write'],
    );
  });
});
