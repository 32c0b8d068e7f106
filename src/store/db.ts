import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  SqliteDriver,
  sql,
  type DatabaseConnection,
  type Dialect as KyselyDialect,
  type Driver,
  type PostgresPool,
  type PostgresPoolClient,
  type SqliteDialectConfig,
  type SelectQueryBuilder,
  type Transaction,
} from 'kysely';
import { startCheckpointer, type Checkpointer } from './checkpointer.ts';
import { describeStorageFault, StorageHealth } from './faults.ts';
import type { Database } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;
/** Storage functions take this first, so a caller can compose several of them in one transaction. */
export type Handle = Kysely<Database> | Transaction<Database>;
/** For work that must be atomic: a bare handle does not satisfy it, so the caller has to open the transaction. */
export type Trx = Transaction<Database>;
declare const ONE_STATEMENT: unique symbol;
/**
 * The database outside any transaction, for a write that is one statement and atomic on its own:
 * the statement itself checks what the write depends on (PostgreSQL's refund request,
 * refunds.repository `writeRefundRequest`), so no BEGIN and COMMIT are needed around it. Only
 * scope-mint's `outsideTransaction` makes one — the caller says so out loud — and the store rule
 * that writes take a transaction (test/unit/writes-take-trx.test.ts) accepts it as it accepts `Trx`.
 */
export type OneStatement = Db & { readonly [ONE_STATEMENT]: true };

export interface Store {
  db: Db;
  dialect: Dialect;
  /** PostgreSQL: the schema tables live in (the migrator's bookkeeping goes there too). */
  schema: string | null;
  /** The last storage fault (read-only, full, I/O) a query of this process met; `/readyz` reads it. */
  health: StorageHealth;
  /** For messages: `file /abs/path.db` or `server host:port/db` (never credentials). */
  location: string;
  /**
   * Idempotency keys whose request runs in this process now. SQLite serialises write transactions,
   * so a concurrent repeat would otherwise wait for the owner instead of hearing "in flight".
   */
  keysInFlight: Set<string>;
  /** SQLite file: the thread that runs its WAL checkpoints (null for PostgreSQL and `:memory:`). */
  checkpointer: Checkpointer | null;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL only: use (and create) this schema, so test runs never collide. */
  schema?: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** PostgreSQL: how long a query waits for a pool connection (or a new one) before failing. */
  connectTimeoutMs?: number;
  /** How long `/readyz` stays not ready after a storage fault (tests shorten it). */
  faultHoldMs?: number;
  /** SQLite file: how often the checkpoint thread checkpoints the WAL (0: the committing connection does, as SQLite's default). */
  checkpointEveryMs?: number;
  /** SQLite: how often the connection refreshes its planner statistics (`PRAGMA optimize`; 0: only when it opens). */
  plannerStatsEveryMs?: number;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

function dialectOf(url: string): Dialect {
  return url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

/** Opens the database named by a `sqlite:<file>` or `postgres://` URL. */
export async function openStore(url: string, options: OpenOptions = {}): Promise<Store> {
  const health = new StorageHealth(options.faultHoldMs);
  if (dialectOf(url) === 'sqlite') {
    return openSqlite(
      url.slice('sqlite:'.length),
      health,
      options.checkpointEveryMs ?? CHECKPOINT_EVERY_MS,
      options.plannerStatsEveryMs ?? PLANNER_STATS_EVERY_MS,
    );
  }
  return openPostgres(url, options, health);
}

/** Raised when the database cannot be used at start-up; its message is one plain sentence for the operator. */
class StorageOpenError extends Error {}

/** How often the checkpoint thread runs: a few hundred orders' pages at most between two rounds. */
const CHECKPOINT_EVERY_MS = 200;
/**
 * With the checkpoint thread, the committing connection checkpoints only past this many WAL
 * pages (4 KiB each: 40 MiB), the bound on the WAL should the thread fall behind; SQLite's
 * default, 1,000, would have it checkpoint between the thread's rounds under load.
 */
const BACKSTOP_CHECKPOINT_PAGES = 10_000;

/**
 * How often a SQLite connection runs `PRAGMA optimize`. The planner reads its statistics when the
 * connection opens and never again, and a connection only sees the statistics it gathered itself:
 * a server started on a new database keeps the plans of empty tables for its life — for
 * `merchant_id = ? AND id IN (…)`, a walk of every order of the merchant (`ids=` of GET
 * /v2/order/orders) where the primary key finds ten rows. SQLite advises long-lived connections to
 * run it periodically; with `analysis_limit` it costs well under a millisecond when nothing grew.
 */
const PLANNER_STATS_EVERY_MS = 10 * 60_000;

function openSqlite(file: string, health: StorageHealth, checkpointEveryMs: number, plannerStatsEveryMs: number): Store {
  const location = `file ${file === ':memory:' ? file : path.resolve(file)}`;
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  let database: SQLite.Database | undefined;
  try {
    database = new SQLite(file);
    setUpSqlite(database, file);
  } catch (error) {
    database?.close();
    const plain = describeStorageFault(error, location);
    throw plain ? new StorageOpenError(plain) : error;
  }
  const db = new Kysely<Database>({ dialect: watchFaults(new ImmediateSqliteDialect({ database: withStatementCache(database) }), health) });
  let checkpointer: Checkpointer | null = null;
  if (file !== ':memory:' && checkpointEveryMs > 0) {
    database.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
    checkpointer = startCheckpointer(path.resolve(file), checkpointEveryMs);
  }
  // Through Kysely, so it waits for a transaction in progress on the connection rather than joining it.
  // Best effort: a fault here is a fault of the database, which the next request meets and reports.
  const plannerStats = plannerStatsEveryMs > 0 ? setInterval(() => void sql`pragma optimize`.execute(db).catch(() => {}), plannerStatsEveryMs) : null;
  plannerStats?.unref();
  const close = async () => {
    if (plannerStats) clearInterval(plannerStats);
    await checkpointer?.stop();
    await db.destroy();
  };
  return { db, dialect: 'sqlite', schema: null, health, location, keysInFlight: new Set(), checkpointer, close };
}

function setUpSqlite(database: SQLite.Database, file: string) {
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  // A second process (the CLI beside a running server) waits for the writer instead of failing.
  database.pragma('busy_timeout = 5000');
  // Planner statistics (bounded sampling): without them SQLite prefers the merchant index over the
  // primary key for `merchant_id = ? AND id IN (…)` and scans every order of the merchant.
  database.pragma('analysis_limit = 1000');
  database.pragma('optimize = 0x10002');
  // A file we may open but not write (permissions, a read-only disk) would otherwise start and then
  // fail every write; rewriting the header's user_version with its own value is a real write.
  if (file !== ':memory:') database.pragma(`user_version = ${Number(database.pragma('user_version', { simple: true }))}`);
}

/**
 * Notes every storage fault a query meets (read-only, full, I/O, corrupt) in `health`, whatever
 * the statement — including BEGIN and COMMIT — so `/readyz` can report it.
 */
function watchFaults(inner: KyselyDialect, health: StorageHealth): KyselyDialect {
  return {
    createAdapter: () => inner.createAdapter(),
    createIntrospector: (db) => inner.createIntrospector(db),
    createQueryCompiler: () => inner.createQueryCompiler(),
    createDriver() {
      const driver = inner.createDriver();
      const watched = new WeakSet<DatabaseConnection>();
      const acquire = driver.acquireConnection.bind(driver);
      driver.acquireConnection = async () => {
        const connection = await acquire();
        if (!watched.has(connection)) {
          watched.add(connection);
          const execute = connection.executeQuery.bind(connection);
          connection.executeQuery = async (query) => {
            try {
              return await execute(query);
            } catch (error) {
              health.note(error);
              throw error;
            }
          };
        }
        return connection;
      };
      return driver;
    },
  };
}

/**
 * Transactions begin IMMEDIATE (take the write lock first). A deferred transaction reads, then
 * upgrades to writing; if another process committed in between, SQLite answers SQLITE_BUSY_SNAPSHOT
 * at once without calling the busy handler, so busy_timeout never applied and two processes on one
 * file answered some concurrent orders with an immediate 503. Waiting for the lock up front lets
 * the timeout work. Inside one process Kysely's single connection already serialises every
 * transaction, so nothing is lost there.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * On some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM, …) SQLite has already rolled the
   * transaction back itself. Kysely's ROLLBACK then fails with "cannot rollback - no transaction is
   * active", and that error replaced the one that mattered: a full disk answered 500 instead of
   * 503/50300 (Hardening III, 2). Nothing is left to undo then, so the first error goes on.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection);
    } catch (error) {
      if (/no transaction is active/.test(String((error as Error)?.message))) return;
      throw error;
    }
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query anew; preparing was ~10 % of a request's CPU in the
 * profile. Statements are reused by SQL text (bounded, least recently used first out). Safe with
 * one connection: better-sqlite3 runs a statement to completion synchronously.
 */
function withStatementCache(database: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = database.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/**
 * The connection of a store on a schema of its own: the schema's search_path joins the session
 * options the URL's `options` parameter or libpq's PGOPTIONS give, instead of replacing them
 * (node-postgres takes a single `options`, the URL's over ours, PGOPTIONS only when neither is given).
 */
function schemaConnection(url: string, schema: string): { connectionString: string; options: string } {
  const searchPath = `-c search_path=${schema}`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { connectionString: url, options: [process.env.PGOPTIONS, searchPath].filter(Boolean).join(' ') };
  }
  const given = parsed.searchParams.get('options') ?? process.env.PGOPTIONS;
  parsed.searchParams.delete('options');
  return { connectionString: parsed.toString(), options: [given, searchPath].filter(Boolean).join(' ') };
}

async function openPostgres(url: string, options: OpenOptions, health: StorageHealth): Promise<Store> {
  // Loaded only for PostgreSQL: an embedded (SQLite) server starts without it.
  const { default: pg } = await import('pg');
  if (options.schema) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.schema)) throw new Error(`bad schema name ${options.schema}`);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // Retried until the schema is really there: a swallowed duplicate error must not leave us
      // without it (seen once under heavily concurrent test runs).
      for (let attempt = 1; ; attempt++) {
        try {
          await admin.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
        } catch (error) {
          // Two processes creating the same schema at once: the loser sees a duplicate, which is fine.
          if (!['23505', '42P06'].includes((error as { code?: string }).code ?? '')) throw error;
        }
        const { rowCount } = await admin.query('select 1 from pg_namespace where nspname = $1', [options.schema]);
        if (rowCount) break;
        if (attempt === 5) throw new Error(`could not create schema ${options.schema}`);
      }
    } finally {
      await admin.end();
    }
  }
  // BIGINT ids, times and sums all fit in 2^53, so they come back as numbers like on SQLite.
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
      return pg.types.getTypeParser(oid, format);
    },
  };
  const pool = new pg.Pool({
    ...(options.schema ? schemaConnection(url, options.schema) : { connectionString: url }),
    max: options.poolSize ?? 10,
    types,
    // Without a bound, a database that accepts connections but never answers would queue requests forever.
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
  });
  // An idle pooled connection that dies (database restart, pg_terminate_backend) is emitted here;
  // unhandled, that event would crash the process. The pool has already dropped the connection and
  // the next query opens a fresh one, so there is nothing else to do.
  pool.on('error', () => undefined);
  // A connection that dies while checked out (or in the instant it is handed out, before its
  // 'end' event was processed) emits 'error' on the client, where the pool listens only while it
  // is idle: unhandled, that crashed the process under a database outage (test/http/outage.test.ts).
  // The failure still reaches the caller through its query, and the pool discards the connection.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: watchFaults(new PostgresDialect({ pool: namingPreparedStatements(pool) }), health) });
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const target = new URL(url);
  const location = `server ${target.host}${target.pathname}`;
  return { db, dialect: 'postgres', schema: rows[0].schema, health, location, keysInFlight: new Set(), checkpointer: null, close: () => db.destroy() };
}

/**
 * SQL compiled once by `prepared()` (prepared.ts) starts with this comment; the rest is built
 * per call. The comment also names such statements in PostgreSQL's logs and pg_stat_statements.
 */
export const PREPARED_SQL_MARK = '/* prepared */ ';

/**
 * Runs the statements `prepared()` compiled as named server-side prepared statements: each
 * connection parses and plans one once (pg sends the Parse only the first time a connection sees
 * a name) and afterwards only binds and executes it. Unnamed, PostgreSQL parses and plans every
 * statement of every call — a 30-SKU stock read was re-planned per request. Only marked SQL is
 * named: a prepared statement lives as long as its connection, and the marked texts are a bounded
 * set (each prepared query compiles at most a few dozen shapes), while other SQL varies per call
 * (search filters, IN-lists of any length).
 *
 * A plan cached this way is re-planned by PostgreSQL itself when a table it reads changes (DDL,
 * ANALYZE); names are per pool, so each store's connections agree on them.
 */
function namingPreparedStatements(pool: import('pg').Pool): PostgresPool {
  const names = new Map<string, string>();
  const wrapped = new WeakMap<object, PostgresPoolClient>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (name === undefined) names.set(text, (name = `stockist_${names.size + 1}`));
    return name;
  };
  return {
    async connect() {
      const client = await pool.connect();
      let named = wrapped.get(client);
      if (!named) {
        // One wrapper per pg client: Kysely keeps its connection object per client it is handed.
        // Only the (sql, parameters) form: the dialect has no cursor, as nothing streams.
        const query = (text: string, values: unknown[]) =>
          text.startsWith(PREPARED_SQL_MARK) ? client.query({ name: nameOf(text), text, values }) : client.query(text, values);
        named = {
          query: query as unknown as PostgresPoolClient['query'],
          release: () => client.release(),
        };
        wrapped.set(client, named);
      }
      return named;
    },
    end: () => pool.end(),
  };
}

/**
 * Refreshes the planner's statistics of tables that just changed a lot (a bulk import). Without
 * them the planner plans for the tables as they were — a catalogue of 200 SKUs seq-scans the stock
 * rows of 100k — until autovacuum (PostgreSQL) or the connection's next periodic `PRAGMA optimize`
 * (SQLite, `PLANNER_STATS_EVERY_MS`) gets round to them. On SQLite it is that `PRAGMA optimize` now,
 * on the connection that imported (the server's own), which analyses what grew.
 */
export async function refreshPlannerStatistics(db: Handle, dialect: Dialect, tables: (keyof Database)[]): Promise<void> {
  if (tables.length === 0) return;
  if (dialect === 'sqlite') await sql`pragma optimize`.execute(db);
  else await sql`analyze ${sql.join(tables.map((t) => sql.table(t)))}`.execute(db);
}

/**
 * How many rows `matching` returns, counting at most `cap`: `SELECT count(*) FROM (… LIMIT cap)`,
 * a bounded read however many rows match (the lists' "10,000 or more", SPEC §4.6's `total`).
 */
export async function countUpTo<TB extends keyof Database, O>(db: Handle, matching: SelectQueryBuilder<Database, TB, O>, cap: number): Promise<number> {
  const row = await db
    .selectFrom(matching.limit(cap).as('w'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Answers when the database does (readiness: reachable at all). */
export async function ping(db: Handle): Promise<void> {
  await sql`select 1`.execute(db);
}

/**
 * A real (tiny) write, so a database that stopped taking writes is noticed by `/readyz`. Takes a
 * transaction, as every write does: the caller commits it (services/readiness.service.ts).
 */
export async function probeWrite(trx: Trx, now: number): Promise<void> {
  await trx.updateTable('storage_probe').set({ probed_at: now }).where('id', '=', 1).execute();
}

/** A savepoint in the transaction: work after it can be undone alone (`rollbackToSavepoint`), keeping what came before. */
export async function savepoint(trx: Trx, name: 'idempotent_work' | 'claim_reship'): Promise<void> {
  await sql`savepoint ${sql.raw(name)}`.execute(trx);
}

export async function rollbackToSavepoint(trx: Trx, name: 'idempotent_work' | 'claim_reship'): Promise<void> {
  await sql`rollback to savepoint ${sql.raw(name)}`.execute(trx);
}

/**
 * A LIKE pattern for "contains `text`", lower-cased, its `%`, `_` and `\` taken literally: for a
 * `lower(column) like … escape '\'` (an explicit ESCAPE: SQLite's LIKE has no default escape character).
 */
export const likeContaining = (text: string) => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
