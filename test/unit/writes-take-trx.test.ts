/**
 * Issue 30, rule 1, held by the build: a store function that writes or locks takes a transaction
 * (`Trx`, or `MerchantScope<Trx>`), never a bare handle (`Kysely<Database>`, `Handle`, `Db`, a
 * scope over one, the operator's `AllMerchants`), so a caller has to open the transaction and `tsc`
 * refuses a call on `store.db` (test/types/transactions.types.ts keeps a few such calls under
 * `@ts-expect-error`). This test keeps a function written later from slipping back.
 *
 * It reads the TypeScript compiler's view of src/store/*.ts (a `Program` over those files with the
 * project's compiler options), not the text, so an alias, a `Kysely<Database>` spelled out or a
 * parameter on a wrapped line is seen as what it is (a text reading missed `probeWrite(db:
 * Kysely<Database>)`; Structure II, item 5):
 * - The units are the top-level declarations of each file (functions, and `const`/`let`
 *   declarations: arrow functions, prepared queries).
 * - A unit writes or locks when it calls a method named `insertInto`, `updateTable`, `deleteFrom`,
 *   `replaceInto`, `mergeInto`, `forUpdate` or `forNoKeyUpdate` that the checker resolves to
 *   Kysely's declarations or calls on a tenant scope (`MerchantScope`'s builders); when a template tagged with
 *   Kysely's `sql` holds `insert into`, `delete from`, `update <table> set`, `for update` or an
 *   advisory lock; or when it refers to (calls, or runs as a prepared query) another unit of the
 *   store that does — the checker resolves the name through imports — followed to a fixed point.
 * - Every parameter of an exported writing unit whose type is a handle (the checker's type:
 *   Kysely's `Kysely`/`Transaction`, a scope — anything with the scope's `[HANDLE]` — or a union
 *   of them) must be a transaction: `Transaction<Database>`, or a scope whose handle is one (or
 *   `OneStatement`, db.ts: the database outside a transaction, said out loud for a write that is
 *   one statement, atomic on its own — PostgreSQL's checked refund request). An
 *   exported writing unit that is not a function (a prepared query) is reported too: it runs on
 *   whatever handle its caller passes.
 * - A unit that returns a statement for its caller to run (its return type is a Kysely query:
 *   `compile` and `toOperationNode`) and runs nothing itself is a builder: it may take any handle,
 *   and its writes count against the units that run it (`postingCtes`, `orderStatusUpdate`).
 * - tenancy.ts, scope-mint.ts, edge-scopes.ts, prepared.ts and scope-handle.ts (the machinery that makes scopes and prepared
 *   queries, and whose query calls build statements for the functions above) are not units, and
 *   the migrations (run by Kysely's migrator on its own transaction) are not read.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '../..');
const STORE = path.join(ROOT, 'src/store');

/** The scope and prepared-query machinery: it builds handles and statements for the storage functions, and runs none itself. */
const MACHINERY = new Set(['tenancy.ts', 'scope-mint.ts', 'edge-scopes.ts', 'prepared.ts', 'scope-handle.ts']);

const WRITE_METHODS = new Set(['insertInto', 'updateTable', 'deleteFrom', 'replaceInto', 'mergeInto']);
const LOCK_METHODS = new Set(['forUpdate', 'forNoKeyUpdate']);
/** Methods that run a statement (Kysely's builders, `sql`, and store/prepared.ts's prepared queries). */
const RUN_METHODS = new Set(['execute', 'executeTakeFirst', 'executeTakeFirstOrThrow', 'stream', 'executeQuery', 'all', 'first', 'run']);
const WRITE_SQL = [/\binsert\s+into\b/i, /\bdelete\s+from\b/i, /\bupdate\s+[\w".]+\s+set\b/i, /\bfor\s+(no\s+key\s+)?update\b/i, /advisory/i];

interface Unit {
  file: string;
  name: string;
  node: ts.Node;
  exported: boolean;
  /** The function it is, when it is one (a declaration, or a `const` holding an arrow or function expression). */
  fn: ts.SignatureDeclaration | null;
}

const normal = (file: string) => path.resolve(file).split(path.sep).join('/');
const fromKysely = (file: string) => normal(file).includes('/node_modules/kysely/');

function isExported(node: ts.Node): boolean {
  const modifiers = ts.canHaveModifiers(node) ? ts.getModifiers(node) : undefined;
  return modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ?? false;
}

function unitsOf(source: ts.SourceFile): Unit[] {
  const file = path.relative(ROOT, source.fileName).split(path.sep).join('/');
  const units: Unit[] = [];
  for (const statement of source.statements) {
    if (ts.isFunctionDeclaration(statement) && statement.name)
      units.push({ file, name: statement.name.text, node: statement, exported: isExported(statement), fn: statement });
    else if (ts.isVariableStatement(statement))
      for (const d of statement.declarationList.declarations) {
        if (!ts.isIdentifier(d.name)) continue;
        const init = d.initializer;
        const fn = init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) ? init : null;
        units.push({ file, name: d.name.text, node: d, exported: isExported(statement), fn });
      }
  }
  return units;
}

/** The method called is Kysely's, or a tenant scope's (`MerchantScope`'s builders, store/tenancy.ts). */
function callsQueryBuilder(checker: ts.TypeChecker, call: ts.CallExpression & { expression: ts.PropertyAccessExpression }): boolean {
  const declaration = checker.getResolvedSignature(call)?.declaration;
  if (declaration && fromKysely(declaration.getSourceFile().fileName)) return true;
  return handleKind(checker, checker.getTypeAtLocation(call.expression.expression)) !== 'none';
}

/** The symbol a name stands for, through imports. */
function symbolOf(checker: ts.TypeChecker, node: ts.Node): ts.Symbol | undefined {
  const symbol = checker.getSymbolAtLocation(node);
  return symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/** What a unit does itself, and the units it refers to. */
function effectsOf(checker: ts.TypeChecker, unit: Unit, unitOf: (d: ts.Declaration) => Unit | undefined) {
  let writes = false;
  let runs = false;
  const refers = new Set<Unit>();
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      if (
        (WRITE_METHODS.has(method) || LOCK_METHODS.has(method)) &&
        callsQueryBuilder(checker, node as ts.CallExpression & { expression: ts.PropertyAccessExpression })
      )
        writes = true;
      if (RUN_METHODS.has(method)) runs = true;
    }
    if (ts.isTaggedTemplateExpression(node)) {
      const tag = ts.isPropertyAccessExpression(node.tag) ? node.tag.expression : node.tag;
      const declaration = symbolOf(checker, tag)?.declarations?.[0];
      if (declaration && fromKysely(declaration.getSourceFile().fileName)) {
        const t = node.template;
        const text = ts.isNoSubstitutionTemplateLiteral(t) ? t.text : [t.head.text, ...t.templateSpans.map((s) => s.literal.text)].join(' ? ');
        if (WRITE_SQL.some((w) => w.test(text))) writes = true;
      }
    }
    // A unit is named by a plain identifier; a property's name (`q.execute`) is not one, and
    // resolving it would make the checker type the whole chain before it.
    if (ts.isIdentifier(node) && !(ts.isPropertyAccessExpression(node.parent) && node.parent.name === node)) {
      for (const declaration of symbolOf(checker, node)?.declarations ?? []) {
        const other = unitOf(declaration);
        if (other && other !== unit) refers.add(other);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(unit.node);
  return { writes, runs, refers };
}

/** The handle a type stands for: a transaction, a bare handle, or none (not a handle). */
function handleKind(checker: ts.TypeChecker, type: ts.Type): 'trx' | 'bare' | 'none' {
  if (type.isUnion()) {
    const kinds = type.types.map((t) => handleKind(checker, t));
    return kinds.includes('bare') ? 'bare' : kinds.includes('trx') ? 'trx' : 'none';
  }
  // `OneStatement` (store/db.ts): the database outside a transaction, named so for a write that is
  // one statement, atomic on its own; only scope-mint's `outsideTransaction` makes one.
  const alias = type.aliasSymbol?.declarations?.[0];
  if (type.aliasSymbol?.name === 'OneStatement' && alias && path.resolve(alias.getSourceFile().fileName) === path.join(STORE, 'db.ts')) return 'trx';
  const symbol = type.getSymbol() ?? type.aliasSymbol;
  const declaration = symbol?.declarations?.[0];
  if (symbol && declaration && fromKysely(declaration.getSourceFile().fileName)) {
    if (symbol.name === 'Transaction') return 'trx';
    if (symbol.name === 'Kysely') return 'bare';
  }
  // A tenant scope (`MerchantScope<H>`, `AllMerchants`): the handle under its `[HANDLE]` key.
  const handle = checker.getPropertiesOfType(type).find((p) => {
    const d = p.valueDeclaration;
    return d && (ts.isPropertySignature(d) || ts.isPropertyAssignment(d)) && ts.isComputedPropertyName(d.name) && d.name.expression.getText() === 'HANDLE';
  });
  if (handle?.valueDeclaration) {
    const kind = handleKind(checker, checker.getTypeOfSymbol(handle));
    return kind === 'none' ? 'bare' : kind;
  }
  return 'none';
}

/** A Kysely statement not yet run: what a builder returns. */
function isStatement(checker: ts.TypeChecker, type: ts.Type): boolean {
  const names = new Set(checker.getPropertiesOfType(type).map((p) => p.name));
  return names.has('compile') && names.has('toOperationNode');
}

/** Exported units that write or lock while a parameter is a bare handle (or that are not functions at all). */
function offenders(program: ts.Program, files: string[]): string[] {
  const checker = program.getTypeChecker();
  const sources = files.map((f) => program.getSourceFile(f)!);
  assert.ok(
    sources.every((s) => s),
    'every store file is in the program',
  );
  const units = sources.flatMap(unitsOf);
  const byNode = new Map<ts.Node, Unit>(units.map((u) => [u.node, u]));
  const unitOf = (d: ts.Declaration) => byNode.get(d);
  const effects = new Map(units.map((u) => [u, effectsOf(checker, u, unitOf)]));
  const writers = new Set(units.filter((u) => effects.get(u)!.writes));
  for (let changed = true; changed; ) {
    changed = false;
    for (const u of units)
      if (!writers.has(u) && [...effects.get(u)!.refers].some((r) => writers.has(r))) {
        writers.add(u);
        changed = true;
      }
  }
  const out: string[] = [];
  for (const u of writers) {
    if (!u.exported) continue;
    const where = `${u.file}:${ts.getLineAndCharacterOfPosition(u.node.getSourceFile(), u.node.getStart()).line + 1} ${u.name}`;
    if (!u.fn) {
      out.push(`${where} (not a function: runs on any handle)`);
      continue;
    }
    const signature = checker.getSignatureFromDeclaration(u.fn);
    if (!signature) continue;
    const builder = !effects.get(u)!.runs && isStatement(checker, checker.getReturnTypeOfSignature(signature));
    if (builder) continue;
    const bare = signature.parameters.filter((p) => handleKind(checker, checker.getTypeOfSymbol(p)) === 'bare');
    if (bare.length) out.push(`${where}(${bare.map((p) => `${p.name}: ${checker.typeToString(checker.getTypeOfSymbol(p))}`).join(', ')})`);
  }
  return out.sort();
}

/** A Program over the store's files (plus `extra`, files that exist only in memory), with the project's compiler options. */
function storeProgram(extra: Record<string, string>): { program: ts.Program; files: string[] } {
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const options = ts.convertCompilerOptionsFromJson(config.config.compilerOptions, ROOT).options;
  const files = fs
    .readdirSync(STORE)
    .filter((f) => f.endsWith('.ts') && !MACHINERY.has(f))
    .map((f) => path.join(STORE, f));
  const host = ts.createCompilerHost(options, true);
  const inMemory = new Map(Object.entries(extra).map(([f, text]) => [normal(f), text]));
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (f, language, ...rest) =>
    inMemory.has(normal(f)) ? ts.createSourceFile(f, inMemory.get(normal(f))!, language, true) : getSourceFile.call(host, f, language, ...rest);
  host.fileExists = (f) => inMemory.has(normal(f)) || fileExists.call(host, f);
  host.readFile = (f) => inMemory.get(normal(f)) ?? readFile.call(host, f);
  return { program: ts.createProgram({ rootNames: [...files, ...Object.keys(extra)], options, host }), files };
}

/** A store file that exists only in memory, to check the check: each function's name says whether it is an offender. */
const SAMPLE = path.join(STORE, 'writes-take-trx-sample.ts');
const SAMPLE_SOURCE = `
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';
import type { Db, Handle, Trx } from './db.ts';
import { prepared } from './prepared.ts';
import type { AllMerchants, MerchantScope, TenantScope } from './tenancy.ts';
import { handleOf } from './scope-handle.ts';
import { insertAudit } from './audit.repository.ts';
import { orderStatusUpdate } from './orders.repository.ts';
type Alias = Handle;

/** A comment that says update orders set nothing. */
export const readOk = (db: Handle, id: number) => db.selectFrom('orders').where('id', '=', id).execute();
export async function writeBad(db: Handle, id: number): Promise<void> {
  await db.updateTable('orders').set({ status: 'cancel' }).where('id', '=', id).execute();
}
export async function spelledOutBad(db: Kysely<Database>): Promise<void> {
  await db.updateTable('storage_probe').set({ probed_at: 1 }).where('id', '=', 1).execute();
}
export async function aliasBad(db: Alias, id: number): Promise<void> {
  await db.deleteFrom('orders').where('id', '=', id).execute();
}
export async function writeInTrxOk(trx: Trx, id: number): Promise<void> {
  await trx.deleteFrom('orders').where('id', '=', id).execute();
}
const insertRow = prepared((db, id: number) => db.selectFrom('orders').select('id').where('id', '=', id).forUpdate());
export const viaPreparedBad = (db: Handle, id: number) => insertRow.first(db, id);
async function helper(db: Handle) {
  await sql\`select pg_advisory_xact_lock(1)\`.execute(db);
}
export async function viaHelperBad(
  db: Db,
): Promise<void> {
  await helper(db);
}
export async function viaImportedOk(trx: Trx): Promise<void> {
  await insertAudit(trx, {} as never, {} as never, 0);
}
export async function scopedBad(scope: MerchantScope, id: number) {
  await sql\`update webhooks set x = \${id} where id = 7\`.execute(handleOf(scope));
}
export async function scopeBuilderBad(scope: MerchantScope, id: number) {
  await scope.deleteFrom('orders').where('id', '=', id).execute();
}
export async function scopedInTrxOk(scope: MerchantScope<Trx>, id: number) {
  await scope.updateTable('orders').set({ status: 'cancel' }).where('id', '=', id).execute();
}
export async function allMerchantsBad(reader: AllMerchants | TenantScope) {
  await handleOf(reader).deleteFrom('orders').execute();
}
export async function locksBad(db: Handle) {
  return db.selectFrom('orders').selectAll().forUpdate().execute();
}
export const builderOk = (db: Handle) => db.updateTable('orders').set({ status: 'cancel' });
export const runsBuilderBad = (db: Handle) => orderStatusUpdate(db, 1, {} as never, 0).execute();
export const preparedWriteBad = prepared((db, id: number) => db.deleteFrom('orders').where('id', '=', id));
export const preparedReadOk = prepared((db, id: number) => db.selectFrom('orders').selectAll().where('id', '=', id));
`;

describe('writes and locks take a transaction', () => {
  const { program, files } = storeProgram({ [SAMPLE]: SAMPLE_SOURCE });

  it('no exported store function that writes or locks takes a bare handle', () => {
    assert.ok(files.length > 20, 'the store was read');
    assert.deepEqual(offenders(program, files), []);
  });

  it('the check catches a write, a lock, a prepared write and a call of a writing helper, whatever the handle type is called, and passes reads, transactions and builders', () => {
    const diagnostics = program.getSemanticDiagnostics(program.getSourceFile(SAMPLE));
    assert.deepEqual(
      diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
      [],
      'the sample compiles',
    );
    assert.deepEqual(
      offenders(program, [...files, SAMPLE])
        .filter((o) => o.startsWith(path.relative(ROOT, SAMPLE)))
        .map((o) => o.split(' ')[1].split('(')[0])
        .sort((a, b) => a.localeCompare(b)),
      [
        'viaPreparedBad',
        'writeBad',
        'spelledOutBad',
        'aliasBad',
        'viaHelperBad',
        'scopedBad',
        'scopeBuilderBad',
        'allMerchantsBad',
        'locksBad',
        'runsBuilderBad',
        'preparedWriteBad',
      ].sort((a, b) => a.localeCompare(b)),
    );
  });
});
