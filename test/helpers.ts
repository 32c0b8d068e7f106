import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { buildApp, type BuildOptions } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { openStore, type Dialect, type Store } from '../src/store/db.ts';
import { migrateTo, migrateToLatest } from '../src/store/migrate.ts';
import { archiveEngine, BackupService } from '../src/services/backup-runs.service.ts';
import { contractHook, type ContractViolation } from './contract.ts';

export const ADMIN_KEY = 'test-admin-key-0123456789';
export const PG_URL = process.env.TEST_DATABASE_URL || null;

/** The dialects this run covers: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export const DIALECTS: Dialect[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];
export const PG_SKIP = PG_URL ? false : 'PostgreSQL suites skipped: TEST_DATABASE_URL is not set';

/**
 * How long a test request may wait for a pooled PostgreSQL connection. The product's 5 s bound turns
 * a long wait into 503/50300; the concurrency suites queue 100+ requests on one locked stock row on
 * purpose, and on a loaded test machine that queue can pass 5 s without anything being wrong.
 */
export const TEST_POOL_WAIT_MS = 60_000;

/** A fresh, migrated database of its own: a temp SQLite file, or a new PostgreSQL schema. */
export async function freshStore(
  dialect: Dialect,
  options: { upTo?: Parameters<typeof migrateTo>[1] } = {},
): Promise<{ store: Store; url: string; schema?: string; drop(): Promise<void> }> {
  const migrate = (store: Store) => (options.upTo ? migrateTo(store, options.upTo) : migrateToLatest(store));
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-test-'));
    const url = `sqlite:${path.join(dir, 'test.db')}`;
    const store = await openStore(url);
    await migrate(store);
    return {
      store,
      url,
      drop: async () => {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (!PG_URL) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  // The latest schema is copied from a template the real migrations made (pgTemplate): a few times
  // faster than migrating each test's schema afresh. A test that asks for an older level migrates.
  const template = options.upTo ? null : await pgTemplate();
  if (template) await loadPgTemplate(template, schema);
  let store = await openStore(PG_URL, { schema, poolSize: 20, connectTimeoutMs: TEST_POOL_WAIT_MS });
  try {
    // On a copy of the template, a no-op that checks the copy is at the latest migration.
    await migrate(store);
  } catch (error) {
    // Seen once in CI under a fully parallel run: the migrator reported this test's brand-new
    // schema missing. Nothing in the project drops it; to tell a lost schema from a migration bug,
    // say so loudly and try once more on a re-created schema (a real migration error fails again).
    if (!/schema .* does not exist/.test(String(error))) throw error;
    console.warn(`freshStore: ${String(error)}; re-creating schema ${schema} and migrating once more`);
    await store.close();
    store = await openStore(PG_URL, { schema, poolSize: 20, connectTimeoutMs: TEST_POOL_WAIT_MS });
    await migrate(store);
  }
  return {
    store,
    url: PG_URL,
    schema,
    drop: async () => {
      await store.close();
      const pg = (await import('pg')).default;
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

interface PgTemplate {
  /** The schema the template was dumped from: every mention of it is renamed when it is loaded. */
  schema: string;
  sql: string;
}

let pgTemplateOnce: Promise<PgTemplate | null> | null = null;

/**
 * The latest PostgreSQL schema as SQL: made once per set of migrations by running the real
 * migrations on a schema of its own and dumping it with pg_dump (tables, indexes, constraints,
 * sequences, and the rows migrations insert, kysely_migration's included), then kept in the temp
 * folder for the rest of the run's processes, keyed by the migrations' sources and pg_dump's
 * version. Without pg_dump, or when the dump fails, null: each test migrates as before.
 */
function pgTemplate(): Promise<PgTemplate | null> {
  pgTemplateOnce ??= (async () => {
    const dir = path.resolve(import.meta.dirname, '../src/store/migrations');
    const version = spawnSync('pg_dump', ['--version'], { encoding: 'utf8' });
    if (version.status !== 0) return null;
    const hash = createHash('sha256').update(version.stdout);
    for (const name of fs.readdirSync(dir).sort()) hash.update(name).update(fs.readFileSync(path.join(dir, name)));
    const cached = path.join(os.tmpdir(), `stockist-pg-template-${hash.digest('hex').slice(0, 24)}.json`);
    if (fs.existsSync(cached)) return JSON.parse(fs.readFileSync(cached, 'utf8')) as PgTemplate;
    const schema = `tpl_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
    const store = await openStore(PG_URL!, { schema });
    try {
      await migrateToLatest(store);
    } finally {
      await store.close();
    }
    const dump = spawnSync('pg_dump', ['--schema', schema, '--inserts', '--no-owner', '--no-privileges', '--dbname', PG_URL!], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: PG_URL! });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).finally(() => client.end());
    if (dump.status !== 0) {
      console.warn(`freshStore: pg_dump of the template failed (${dump.stderr.trim()}); every test schema is migrated instead`);
      return null;
    }
    // psql's meta-commands (\restrict, from pg_dump 15.14 on) are not SQL: the dump runs as one query.
    const template = {
      schema,
      sql: dump.stdout
        .split('\n')
        .filter((line) => !line.startsWith('\\'))
        .join('\n'),
    };
    const partial = `${cached}.${process.pid}`;
    fs.writeFileSync(partial, JSON.stringify(template));
    fs.renameSync(partial, cached);
    return template;
  })();
  return pgTemplateOnce;
}

/** Creates `schema` as a copy of the template, on a connection of its own (the dump resets its search_path). */
async function loadPgTemplate(template: PgTemplate, schema: string): Promise<void> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: PG_URL! });
  await client.connect();
  try {
    await client.query(template.sql.split(template.schema).join(schema));
  } finally {
    await client.end();
  }
}

/**
 * An empty PostgreSQL schema for a spawned process (no migrations: the process under test decides),
 * dropped after the test; `url` points the process at it, `client` lets the test look inside.
 */
export async function emptyPgSchema(t: TestContext, prefix: string) {
  const pg = (await import('pg')).default;
  const schema = `${prefix}_${randomBytes(5).toString('hex')}`;
  const client = new pg.Client({ connectionString: PG_URL! });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  t.after(async () => {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });
  const url = new URL(PG_URL!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { schema, client, url: url.toString() };
}

/**
 * Suites other than the rate-limit ones run with budgets (requests, body bytes) they cannot
 * exhaust (they hammer on purpose), and without the token cache (they change tokens behind the app's back); the cache has
 * its own suite. Event-loop shedding is off too: on a loaded test machine the loop lags past the
 * default second now and then, and a 503/50300 there is the machine's, not the app's (the limits
 * suite turns it on with its own thresholds).
 */
export function testConfig(overrides: Record<string, string> = {}): Config {
  return loadConfig({
    TLS: 'off',
    LOG_LEVEL: 'silent',
    ADMIN_API_KEY: ADMIN_KEY,
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
    RATE_LIMIT_BODY_BYTES_PER_SECOND: '0',
    TOKEN_CACHE_SECONDS: '0',
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    // Usage counters reach the database when a test flushes them or closes the app, never on a
    // timer in the middle of a "nothing written" comparison of every table.
    USAGE_FLUSH_MS: '600000',
    ...overrides,
  });
}

export interface TestApp {
  app: FastifyInstance;
  store: Store;
  config: Config;
  /** The Backups page's service (buildTestApp's): the real archive maker unless the test passed its own. */
  backups?: BackupService;
  /** Operator call with the admin key. */
  admin(method: InjectOptions['method'], url: string, payload?: unknown): Promise<Res>;
  /** Merchant call with a bearer token. */
  merchant(token: string, method: InjectOptions['method'], url: string, payload?: unknown): Promise<Res>;
}

export interface Res {
  status: number;
  headers: Record<string, unknown>;
  body: any;
  raw: string;
}

async function call(app: FastifyInstance, opts: InjectOptions): Promise<Res> {
  const r = await app.inject(opts);
  let body: unknown = null;
  try {
    body = r.body === '' ? null : JSON.parse(r.body);
  } catch {
    body = r.body;
  }
  return { status: r.statusCode, headers: r.headers, body, raw: r.body };
}

const quietLog = { info() {}, warn() {}, error() {} };

/** PG_URL with `search_path` set to the schema, as DATABASE_URL names a schema (docs/deployment.md). */
function pgUrlFor(schema: string): string {
  const url = new URL(PG_URL!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** Builds an app on its own database for one test file; closed and dropped when the suite ends. */
export async function buildTestApp(
  t: { after(fn: () => Promise<void>): void } | TestContext,
  dialect: Dialect,
  env: Record<string, string> = {},
  options: BuildOptions = {},
  /** Parts of the app made on its database: a backup service with a stand-in archive maker (test/backup-engine.ts). */
  parts: { backups?: (store: Store, config: Config) => BackupService } = {},
): Promise<TestApp> {
  const db = await freshStore(dialect);
  // The config names the test's own database (the archive maker snapshots what it names) and, unless
  // the test chose one, a BACKUP_DIR of its own.
  const backupDir = env.BACKUP_DIR ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-test-backups-'));
  const config = testConfig({ DATABASE_URL: db.schema ? pgUrlFor(db.schema) : db.url, ...(backupDir ? { BACKUP_DIR: backupDir } : {}), ...env });
  const backups = parts.backups?.(db.store, config) ?? new BackupService({ config, store: db.store, engine: archiveEngine(config, db.store), log: quietLog });
  // Every response of a documented route is checked against docs/openapi.json or docs/openapi-admin.json (test/contract.ts).
  const violations: ContractViolation[] = [];
  const check = contractHook(violations);
  const onRoute: BuildOptions['onRoute'] = (route) => {
    options.onRoute?.(route);
    check(route);
  };
  const app = await buildApp(
    { config, store: db.store, adminApiKey: ADMIN_KEY, backups },
    { logger: options.logStream ? undefined : false, ...options, onRoute },
  );
  t.after(async () => {
    await backups.stop();
    await app.close();
    await db.drop();
    if (backupDir) fs.rmSync(backupDir, { recursive: true, force: true });
    if (violations.length) {
      throw new Error(
        `${violations.length} response(s) broke the OpenAPI contract (docs/openapi.json, docs/openapi-admin.json):\n${violations.map((v) => `${v.request} → ${v.status}: ${v.problem}\n  ${v.body}`).join('\n')}`,
      );
    }
  });
  return {
    app,
    store: db.store,
    config,
    backups,
    admin: (method, url, payload) =>
      call(app, { method, url, payload: payload as InjectOptions['payload'], headers: { authorization: `Bearer ${ADMIN_KEY}` } }),
    merchant: (token, method, url, payload) =>
      call(app, { method, url, payload: payload as InjectOptions['payload'], headers: { authorization: `Bearer ${token}` } }),
  };
}

/** Creates a merchant and a token through the operator API. */
export async function newMerchant(
  t: TestApp,
  name = 'Acme',
  tokenBody: unknown = {},
): Promise<{ merchantId: string; token: string; tokenId: string; clientId: string; clientSecret: string }> {
  const m = await t.admin('POST', '/admin/v1/merchants', { name });
  if (m.status !== 200) throw new Error(`merchant create failed: ${m.raw}`);
  const tok = await t.admin('POST', `/admin/v1/merchants/${m.body.data.merchantId}/tokens`, tokenBody);
  if (tok.status !== 200) throw new Error(`token issue failed: ${tok.raw}`);
  return {
    merchantId: m.body.data.merchantId,
    token: tok.body.data.accessToken,
    tokenId: tok.body.data.tokenId,
    clientId: m.body.data.clientId,
    clientSecret: m.body.data.clientSecret,
  };
}

/** A small catalogue built through the operator import endpoint. */
export const SMALL_CATALOGUE = {
  warehouses: [
    { warehouseCode: 'G007', name: 'Shenzhen', countryCode: 'CN' },
    { warehouseCode: 'G006', name: 'Yiwu', countryCode: 'cn' },
    { warehouseCode: 'US01', name: 'Los Angeles', countryCode: 'US' },
  ],
  categories: [
    { categoryId: 10, name: 'Home', parentId: 0 },
    { categoryId: 11, name: 'Kitchen', parentId: 10 },
  ],
  products: [
    { sku: 'SKU-A', name: 'Mug', categoryId: 11, price: '9.32', weightGrams: 350 },
    { sku: 'SKU-B', name: 'Plate', categoryId: 11, price: 4.5, weightGrams: 500 },
    { sku: 'SKU-C', name: 'Bowl', categoryId: 11, price: 3, weightGrams: 300 },
  ],
  stocks: [
    { sku: 'SKU-A', warehouseCode: 'G007', qty: 10 },
    { sku: 'SKU-A', warehouseCode: 'US01', qty: 5 },
    { sku: 'SKU-B', warehouseCode: 'G006', qty: 7 },
  ],
  channels: [
    {
      channelCode: 'STD',
      name: 'Standard Shipping',
      channelType: 'Standard',
      warehouseCodes: ['G007', 'G006', 'US01'],
      countries: ['*'],
      baseFee: 2,
      perKgFee: '1.50',
      deliveryDaysMin: 6,
      deliveryDaysMax: 10,
    },
  ],
};

export async function loadCatalogue(t: TestApp, doc: unknown = SMALL_CATALOGUE) {
  const r = await t.admin('POST', '/admin/v1/import', doc);
  if (r.status !== 200) throw new Error(`import failed: ${r.raw}`);
  return r.body.data;
}

/**
 * Every table of the store (new tables are included without touching this list). On SQLite, its
 * ordinary tables: not the FTS5 search index (`orders_search`, a virtual table, and its shadow
 * tables), which takes no trigger and is written only by the triggers on `orders`.
 */
export async function tableNames(store: Store): Promise<string[]> {
  const rows =
    store.dialect === 'sqlite'
      ? (
          await sql<{ name: string }>`select name from pragma_table_list where schema = 'main' and type = 'table' and name not like 'sqlite_%'`.execute(
            store.db,
          )
        ).rows
      : (
          await sql<{ name: string }>`
          select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'
        `.execute(store.db)
        ).rows;
  return rows
    .map((r) => r.name)
    .filter((name) => name !== WRITE_COUNTER)
    .sort();
}

/** The table `countWrites` keeps its count in (not one of the store's: left out of `tableNames`). */
const WRITE_COUNTER = 'test_write_counter';

/**
 * A count of the statements that have written to any table of the store since `countWrites` was
 * called — through triggers on every table (after each row's insert, update or delete on SQLite;
 * after each insert, update, delete or truncate statement on PostgreSQL, even one that matched no
 * row). An unchanged count proves that nothing was written, so a test that checks "refused, nothing
 * written" thousands of times (the fuzzer) digests the tables only when the count moved. A write
 * rolled back takes its count with it. For a test's own schema only: the triggers stay. Once a
 * store's writes are counted, `tableDigests` of that store reads the tables only when the count moved.
 */
export async function countWrites(store: Store): Promise<() => Promise<number>> {
  const installed = counted.get(store);
  if (installed) return installed.writes;
  const tables = await tableNames(store);
  if (store.dialect === 'sqlite') {
    await sql`create table if not exists ${sql.table(WRITE_COUNTER)} (n integer not null)`.execute(store.db);
    for (const table of tables) {
      for (const event of ['insert', 'update', 'delete']) {
        await sql
          .raw(
            `create trigger if not exists "${WRITE_COUNTER}_${table}_${event}" after ${event} on "${table}" begin update ${WRITE_COUNTER} set n = n + 1; end`,
          )
          .execute(store.db);
      }
    }
  } else {
    await sql`create table if not exists ${sql.table(WRITE_COUNTER)} (n bigint not null)`.execute(store.db);
    await sql
      .raw(
        `create or replace function ${WRITE_COUNTER}_bump() returns trigger language plpgsql as $$ begin update ${WRITE_COUNTER} set n = n + 1; return null; end $$`,
      )
      .execute(store.db);
    for (const table of tables) {
      await sql
        .raw(
          `create or replace trigger "${WRITE_COUNTER}_${table}" after insert or update or delete or truncate on "${table}" for each statement execute function ${WRITE_COUNTER}_bump()`,
        )
        .execute(store.db);
    }
  }
  if ((await sql`select n from ${sql.table(WRITE_COUNTER)}`.execute(store.db)).rows.length === 0) {
    await sql`insert into ${sql.table(WRITE_COUNTER)} (n) values (0)`.execute(store.db);
  }
  const writes = async () => Number((await sql<{ n: number | string }>`select n from ${sql.table(WRITE_COUNTER)}`.execute(store.db)).rows[0].n);
  counted.set(store, { writes });
  return writes;
}
/** Stores whose writes are counted, with the digests `tableDigests` last read and the count they were read at. */
const counted = new WeakMap<Store, { writes: () => Promise<number>; last?: { writes: number; digests: Record<string, string> } }>();

/**
 * The content of every table, all rows and all columns, as `rows:sha256` per table: equal before
 * and after a request when it wrote nothing — unlike row counts, which miss an UPDATE. Rows are
 * hashed in a canonical order (sorted by their serialised form), so the database's scan order
 * does not matter.
 */
export async function tableDigests(store: Store): Promise<Record<string, string>> {
  // Where the writes are counted (`countWrites`), an unchanged count means unchanged tables: the
  // digests read at that count are still true. The count is read first, so a write racing with
  // the reading only costs a fresh reading next time.
  const count = counted.get(store);
  if (!count) return readDigests(store);
  const writes = await count.writes();
  if (count.last?.writes === writes) return count.last.digests;
  const digests = await readDigests(store);
  count.last = { writes, digests };
  return digests;
}

async function readDigests(store: Store): Promise<Record<string, string>> {
  const tables = await tableNames(store);
  // PostgreSQL digests every table in one statement (a round trip per table was most of the cost
  // of a "nothing written" check): each row as its jsonb text, sorted, hashed with md5.
  if (store.dialect === 'postgres') {
    const perTable = tables.map(
      (table) => sql`select ${table}::text as t, count(*)::int as n, md5(coalesce(string_agg(r, E'\n' order by r), '')) as h
        from (select (to_jsonb(x) - ${table === 'api_tokens' ? 'last_used_at' : ''}::text)::text as r from ${sql.table(table)} x) rows`,
    );
    const { rows } = await sql<{ t: string; n: number; h: string }>`${sql.join(perTable, sql` union all `)}`.execute(store.db);
    return Object.fromEntries(rows.map((r) => [r.t, `${r.n}:${r.h.slice(0, 16)}`]));
  }
  const out: Record<string, string> = {};
  const digestOf = async (table: string) => {
    const rows = (await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(store.db)).rows;
    const lines = rows
      .map((row) =>
        JSON.stringify(
          Object.keys(row)
            // A token's coarse last use is bookkeeping written off the request's path (LastUsedRecorder), not a change the request made.
            .filter((k) => !(table === 'api_tokens' && k === 'last_used_at'))
            .sort()
            .map((k) => [k, row[k]]),
          (_k, v) => (typeof v === 'bigint' ? v.toString() : v),
        ),
      )
      .sort();
    out[table] = `${rows.length}:${createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 16)}`;
  };
  await Promise.all(tables.map(digestOf));
  return out;
}

/** Row counts of every table of the schema (new tables included automatically), for "nothing written". */
export async function everyTableCount(store: Store): Promise<Record<string, number>> {
  const tables =
    store.dialect === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(store.db)).rows.map(
          (r) => r.name,
        )
      : (
          await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(store.db)
        ).rows.map((r) => r.name);
  const out: Record<string, number> = {};
  for (const t of tables.filter((n) => !n.startsWith('kysely_')).sort()) {
    out[t] = Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(t)}`.execute(store.db)).rows[0].n);
  }
  return out;
}

/**
 * Inside a `describe`: one app (and database) for the suite, built before its tests and dropped
 * after them. The returned object forwards to the app once it exists.
 */
export function useApp(dialect: Dialect, env: Record<string, string> = {}, options: BuildOptions = {}): TestApp {
  let current: TestApp | null = null;
  const cleanups: (() => Promise<void>)[] = [];
  before(async () => {
    current = await buildTestApp({ after: (fn: () => Promise<void>) => cleanups.push(fn) }, dialect, env, options);
  });
  after(async () => {
    for (const fn of cleanups) await fn();
  });
  const get = () => {
    if (!current) throw new Error('useApp: the app is built in the suite’s before hook');
    return current;
  };
  return {
    get app() {
      return get().app;
    },
    get store() {
      return get().store;
    },
    get config() {
      return get().config;
    },
    get backups() {
      return get().backups;
    },
    admin: (...args) => get().admin(...args),
    merchant: (...args) => get().merchant(...args),
  };
}

/**
 * Waits until the next whole second has begun and returns both sides of it: `end`, the second
 * that just finished (as an end bound it covers everything written before the call — SPEC §1: an
 * end bound covers its whole second), and `start`, the new second (as a start bound it covers
 * everything written after the call returns, and nothing written before it).
 */
export async function secondBoundary(): Promise<{ end: string; start: string }> {
  const next = Math.floor(Date.now() / 1000) * 1000 + 1000;
  while (Date.now() < next) await sleep(next - Date.now() + 1);
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { end: iso(next - 1000), start: iso(next) };
}

/**
 * Whether Redis accepts connections, asked when the test runs (not while its file loads, when a
 * busy event loop made a connect look like a timeout). A refused connection is retried for a
 * while: CI may still be starting the service.
 */
async function redisReachable(url: string, patienceMs = 10_000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const deadline = Date.now() + patienceMs;
  for (;;) {
    const connected = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: hostname, port: Number(port || 6379) });
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(false);
      }, patienceMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (connected) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * For a test that needs Redis: true when it is reachable. Otherwise the test is skipped (the run's
 * closing lines say why) — except under CI=true, where Redis is a service (.ci/run), so an
 * unreachable one fails the test instead of shrinking the run quietly.
 */
export async function needRedis(t: TestContext, url: string): Promise<boolean> {
  if (await redisReachable(url)) return true;
  if (process.env.CI === 'true') assert.fail(`Redis is not reachable at ${url} (CI=true: Redis is a service there, so this fails, not skips)`);
  t.skip(`Redis not reachable at ${url}`);
  return false;
}

/** The quantity of `sku` in `warehouseCode`, or null where there is no stock row. */
export async function stockQty(t: TestApp, sku: string, warehouseCode: string): Promise<number | null> {
  const row = await t.store.db
    .selectFrom('stocks')
    .innerJoin('products', 'products.id', 'stocks.product_id')
    .innerJoin('warehouses', 'warehouses.id', 'stocks.warehouse_id')
    .select('stocks.qty')
    .where('products.sku', '=', sku)
    .where('warehouses.code', '=', warehouseCode)
    .executeTakeFirst();
  return row?.qty ?? null;
}

/** The files under `dir` (paths relative to it, with `/`), recursively and sorted; none when it is missing. */
export const filesUnder = (dir: string): string[] =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => fs.statSync(path.join(dir, f)).isFile())
        .map((f) => f.split(path.sep).join('/'))
        .sort()
    : [];
