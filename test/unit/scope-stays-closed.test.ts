/**
 * Issue 30, rule 1, held by the build: a tenant scope's handle is closed to code outside
 * src/store/. `MerchantScope` and `AllMerchants` (store/tenancy.ts) keep their handle under a
 * symbol key that only store/scope-handle.ts exports, with `handleOf`, the one reader of it;
 * dependency-cruiser (`scope-handle-only-in-store`) fails the build when a file outside store/
 * imports that module, and `tsc` refuses `scope.handle` (test/types/tenancy.types.ts). So a service
 * cannot step out of its scope and read another merchant's rows by raw id: what it needs of a
 * table that is not merchant-owned (audit, stock feed, sessions) the store gives it in a scoped form
 * (`auditIn`, `feedLatestIn`, `deleteSessionsOfMember` …).
 *
 * This test reads the source text, so a way round the types (a cast, `any`, a string key) is
 * caught too. Heuristics:
 * - Every .ts file under src/ outside src/store/ is read with its comments removed (block comments
 *   and `//` comments starting a line or following whitespace, so prose and docs do not count; a
 *   `//` inside a string such as a URL is kept unless whitespace precedes it, which can only hide a
 *   match on that line's tail, never invent one).
 * - A file offends when it: reads a property named `handle` (`.handle`, `?.handle`, `['handle']`);
 *   destructures one (`{ handle` or `, handle` followed by `:`, `,`, `}` or `=` inside a `const`,
 *   `let`, `var` or parameter pattern, i.e. a `{…}` followed by `=` or `)`); imports
 *   store/scope-handle.ts or calls `handleOf(`; or lists an object's symbol keys
 *   (`getOwnPropertySymbols`, `Reflect.ownKeys`), the one way left to reach a symbol-keyed property
 *   without its symbol; or casts (`as`) to a scope type, a scoped id (`ScopedOrderId` …) or a
 *   `RequestId`, the ways round "only the store mints tenancy" and "ids are parsed at the edge"
 *   (Structure II; domain/ids.ts, where ids are parsed, is outside src/store/ and listed in ALLOWED).
 * - Only the property name `handle` is looked for: a Fastify hook or anything else named `handle`
 *   outside store/ would have to be renamed or listed in ALLOWED with its reason (none is today).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** file (relative to src/, with `/`) → why it may do one of the things below. None reads a scope's handle. */
const ALLOWED = new Map<string, string>([['domain/ids.ts', 'parseId and lookupId make the RequestId brand: the one place ids are parsed']]);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [path.relative(SRC, full).split(path.sep).join('/')] : [];
  });
}

/** The text with block comments blanked (newlines kept, so line numbers hold) and line comments cut. */
function withoutComments(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .split('\n')
    .map((line) => line.replace(/(^|\s)\/\/.*$/, '$1'))
    .join('\n');
}

const ESCAPES: [string, RegExp][] = [
  ['reads .handle', /\??\.\s*handle\b/],
  ["reads ['handle']", /\[\s*(['"`])handle\1\s*\]/],
  ['destructures handle', /\{[^{}]*(?:^|[{,\s])handle\s*(?=[:,}=])[^{}]*\}\s*[=)]/m],
  ['imports store/scope-handle.ts', /scope-handle(\.ts)?['"]/],
  ['calls handleOf', /\bhandleOf\s*\(/],
  ['lists symbol keys', /\bgetOwnPropertySymbols\b|\bReflect\s*\.\s*ownKeys\b/],
  // Structure II, item 1: only the store mints tenancy; a cast is the way round the types left.
  ['casts to a scope or a scoped id', /\bas\s+(?:MerchantScope|AllMerchants|TenantScope|Scoped(?:Order|Refund|Split|Claim)Id)\b/],
  ['casts to a request id', /\bas\s+RequestId\b/],
];

/** The escapes a text holds, as `line: what`. */
function escapesIn(text: string): string[] {
  const clean = withoutComments(text);
  const found: string[] = [];
  for (const [what, pattern] of ESCAPES) {
    const global = new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`);
    for (const m of clean.matchAll(global)) found.push(`${clean.slice(0, m.index).split('\n').length}: ${what}`);
  }
  return found;
}

describe('a scope stays closed outside the store', () => {
  it('no file outside src/store/ reaches a scope’s handle', () => {
    const files = sourceFiles(SRC).filter((f) => !f.startsWith('store/'));
    assert.ok(files.length > 100, 'the source tree was read');
    const offending = files.flatMap((file) => (ALLOWED.has(file) ? [] : escapesIn(fs.readFileSync(path.join(SRC, file), 'utf8')).map((e) => `${file}:${e}`)));
    assert.deepEqual(offending, []);
  });

  it('every allowed file still needs its entry', () => {
    for (const file of ALLOWED.keys())
      assert.notDeepEqual(escapesIn(fs.readFileSync(path.join(SRC, file), 'utf8')), [], `${file} no longer needs its entry: drop it from ALLOWED`);
  });

  it('the patterns catch the ways out, and not prose or other names', () => {
    for (const code of [
      'const trx = scope.handle;',
      'const db = merchant?.handle',
      "const db = (scope as any)['handle'];",
      'const { handle: trx, merchantId } = scope;',
      'const { merchantId, handle } = scope;',
      'transactionIn(merchant, async ({ handle: trx, merchantId }) => {',
      "import { handleOf } from '../store/scope-handle.ts';",
      'const db = handleOf(scope);',
      'const [key] = Object.getOwnPropertySymbols(scope);',
      'Reflect.ownKeys(scope)',
      'loadOrders(scope, [raw as ScopedOrderId])',
      'const forged = { ...scope, merchantId: victim } as MerchantScope;',
      'decideRefund(db, n as ScopedRefundId, decision)',
      'getOrder(scope, text as RequestId)',
    ])
      assert.notDeepEqual(escapesIn(code), [], code);
    for (const code of [
      '// the scope.handle is closed',
      '/** reads scope.handle */ const x = 1;',
      'const handler = reply.handler;',
      'const { handled, merchantId } = scope;',
      'app.addHook("onRequest", handleRequest);',
      'const order = row as ScopedOrderRow;',
      '// a raw number cast as ScopedOrderId would not be allowed',
    ])
      assert.deepEqual(escapesIn(code), [], code);
  });
});
