import type { Compilable, CompiledQuery, QueryResult, RawBuilder } from 'kysely';
import { PREPARED_SQL_MARK, type Handle } from './db.ts';
import { allMerchants, isMerchantScope, type MerchantScope, type TenantScope } from './tenancy.ts';
import { merchantIdOf, scopeOf } from './scope-mint.ts';
import { handleOf } from './scope-handle.ts';

/**
 * Queries built and compiled once per shape, then run with each call's values.
 *
 * Kysely builds a query as a tree of frozen nodes and compiles the tree to SQL on every call;
 * on the order path that was about a sixth of the service's CPU (16 % of its self time in a
 * profile) for a dozen statements whose SQL never changes (docs/performance.md, item 13). A
 * prepared query calls its builder once with
 * placeholders in place of the values, compiles that, and afterwards only swaps the call's
 * values into the compiled parameters — the SQL text, and with it the driver's prepared
 * statement (SQLite's statement cache, PostgreSQL's plan), is the same every time.
 *
 * The shape of a call is what can change the SQL: the lengths of its arrays, the keys of its
 * objects, which values are null or undefined, and its booleans (passed to the builder as
 * themselves). Each shape is compiled once (at most `MAX_SHAPES` per query; past that, calls are
 * built and compiled as usual). Every other value reaches the builder as a placeholder, so a
 * builder may branch on shape only — never on a number's or string's truthiness. Placeholders
 * refuse to be used as JavaScript values (`${v}`, `v + 1`, `v < 2` throw), so a builder that
 * computes with a value fails at once instead of binding a wrong one, and a value that does not
 * end up as a query parameter (an identifier, raw SQL) is refused at its first compile.
 */
const MAX_SHAPES = 32;

class Placeholder {
  constructor(readonly index: number) {}
  [Symbol.toPrimitive](): never {
    throw new Error('prepared query: the builder used a value as a JavaScript value; compute it before the call');
  }
}

/** The call's shape and its values in walk order; `stand` is the arguments with placeholders. */
function shapeOf(args: readonly unknown[]): { key: string; values: unknown[]; stand: unknown[] } {
  const values: unknown[] = [];
  let key = '';
  const walk = (v: unknown): unknown => {
    if (v === null) {
      key += 'n';
      return null;
    }
    if (v === undefined) {
      key += 'u';
      return undefined;
    }
    if (typeof v === 'boolean') {
      // Booleans are shape, passed as themselves: a builder's `flag ? a : b` sees the real flag
      // (a placeholder would always be truthy).
      key += v ? 't' : 'f';
      return v;
    }
    if (Array.isArray(v)) {
      key += `[${v.length}`;
      const out = v.map(walk);
      key += ']';
      return out;
    }
    if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      key += '{';
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v)) {
        key += `${k}:`;
        out[k] = walk((v as Record<string, unknown>)[k]);
        key += ',';
      }
      key += '}';
      return out;
    }
    key += 'v';
    values.push(v);
    return new Placeholder(values.length - 1);
  };
  const stand = args.map(walk);
  return { key, values, stand };
}

interface Entry {
  compiled: CompiledQuery;
  /** Each compiled parameter: a placeholder's index into the call's values, or a constant. */
  slots: ({ value: number } | { constant: unknown })[];
}

const compile = <O>(db: Handle, q: Compilable<O> | RawBuilder<O>): CompiledQuery<O> => ('isRawBuilder' in q ? q.compile(db) : q.compile());

export interface Prepared<A extends unknown[], O> {
  /** Every row. */
  all(db: Handle, ...args: A): Promise<O[]>;
  /** The first row, if any. */
  first(db: Handle, ...args: A): Promise<O | undefined>;
  /** Rows affected (INSERT, UPDATE, DELETE without RETURNING). */
  run(db: Handle, ...args: A): Promise<number>;
}

export function prepared<A extends unknown[], O>(build: (db: Handle, ...args: A) => Compilable<O> | RawBuilder<O>): Prepared<A, O> {
  // One cache per dialect: the adapter is made once per Kysely instance and shared by its
  // transactions, and the compiled SQL depends on nothing else (PostgreSQL's schema is the
  // connection's search_path, not part of the SQL).
  const caches = new WeakMap<object, Map<string, Entry>>();
  const execute = async (db: Handle, args: A): Promise<QueryResult<O>> => {
    const executor = db.getExecutor();
    let cache = caches.get(executor.adapter);
    if (!cache) caches.set(executor.adapter, (cache = new Map()));
    const { key, values, stand } = shapeOf(args);
    let entry = cache.get(key);
    if (!entry) {
      if (cache.size >= MAX_SHAPES) return db.executeQuery(compile(db, build(db, ...args)));
      const compiled = compile(db, build(db, ...(stand as A)));
      const slots = compiled.parameters.map((p) => (p instanceof Placeholder ? { value: p.index } : { constant: p }));
      const used = new Set(slots.flatMap((s) => ('value' in s ? [s.value] : [])));
      // A value that reached no parameter went somewhere else (an identifier, raw SQL, a
      // JavaScript decision): not a preparable builder.
      if (used.size !== values.length) throw new Error('prepared query: a value did not become a query parameter');
      // Marked, so PostgreSQL runs it as a named statement, planned once per connection (db.ts).
      entry = { compiled: { ...compiled, sql: PREPARED_SQL_MARK + compiled.sql }, slots };
      cache.set(key, entry);
    }
    const parameters = entry.slots.map((s) => ('value' in s ? values[s.value] : s.constant));
    return db.executeQuery<O>({ ...entry.compiled, parameters } as CompiledQuery<O>);
  };
  return {
    all: async (db, ...args) => (await execute(db, args)).rows,
    first: async (db, ...args) => (await execute(db, args)).rows[0],
    run: async (db, ...args) => Number((await execute(db, args)).numAffectedRows ?? 0n),
  };
}

export interface PreparedFor<S, A extends unknown[], O> {
  all(scope: S, ...args: A): Promise<O[]>;
  first(scope: S, ...args: A): Promise<O | undefined>;
  run(scope: S, ...args: A): Promise<number>;
}

/** A prepared query over one merchant's rows: the builder gets a scope (SPEC §2.3), the merchant id is a value. */
export function preparedForMerchant<A extends unknown[], O>(
  build: (scope: MerchantScope, ...args: A) => Compilable<O> | RawBuilder<O>,
): PreparedFor<MerchantScope, A, O> {
  return preparedForTenant(build as (reader: TenantScope, ...args: A) => Compilable<O> | RawBuilder<O>);
}

/**
 * A prepared query for whoever reads (a merchant's scope or the operator's view of all merchants):
 * which of the two is shape (the operator's is a null merchant), a merchant's id is a value.
 */
export function preparedForTenant<A extends unknown[], O>(
  build: (reader: TenantScope, ...args: A) => Compilable<O> | RawBuilder<O>,
): PreparedFor<TenantScope, A, O> {
  // `merchantId === null` does not touch the placeholder's value: it is a test of shape.
  const inner = prepared((db, merchantId: number | null, ...args: A) => build(merchantId === null ? allMerchants(db) : scopeOf(db, merchantId), ...args));
  const merchantOf = (reader: TenantScope) => (isMerchantScope(reader) ? merchantIdOf(reader) : null);
  return {
    all: (reader, ...args) => inner.all(handleOf(reader), merchantOf(reader), ...args),
    first: (reader, ...args) => inner.first(handleOf(reader), merchantOf(reader), ...args),
    run: (reader, ...args) => inner.run(handleOf(reader), merchantOf(reader), ...args),
  };
}
