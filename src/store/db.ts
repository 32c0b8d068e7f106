import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;
/** Storage functions take this first, so a caller can compose several of them in one transaction. */
export type Handle = Kysely<Database> | Transaction<Database>;

export interface Store {
  db: Db;
  dialect: Dialect;
  /** PostgreSQL: the schema tables live in (the migrator's bookkeeping goes there too). */
  schema: string | null;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL only: use (and create) this schema, so test runs never collide. */
  schema?: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** PostgreSQL: how long a query waits for a pool connection (or a new one) before failing. */
  connectTimeoutMs?: number;
}

const INT8_OID = 20;
const NUMERIC_OID = 1700;

export function dialectOf(url: string): Dialect {
  return url.startsWith('sqlite:') ? 'sqlite' : 'postgres';
}

/** Opens the database named by a `sqlite:<file>` or `postgres://` URL. */
export async function openStore(url: string, options: OpenOptions = {}): Promise<Store> {
  if (dialectOf(url) === 'sqlite') return openSqlite(url.slice('sqlite:'.length));
  return openPostgres(url, options);
}

function openSqlite(file: string): Store {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  // A second process (the CLI beside a running server) waits for the writer instead of failing.
  database.pragma('busy_timeout = 5000');
  // Planner statistics (bounded sampling): without them SQLite prefers the merchant index over the
  // primary key for `merchant_id = ? AND id IN (…)` and scans every order of the merchant.
  database.pragma('analysis_limit = 1000');
  database.pragma('optimize = 0x10002');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
  return { db, dialect: 'sqlite', schema: null, close: () => db.destroy() };
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

async function openPostgres(url: string, options: OpenOptions): Promise<Store> {
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
    connectionString: url,
    max: options.poolSize ?? 10,
    types,
    options: options.schema ? `-c search_path=${options.schema}` : undefined,
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
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return { db, dialect: 'postgres', schema: rows[0].schema, close: () => db.destroy() };
}
