import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { BackupRefused, type BackupCounts, type CurrencyTotals } from '../domain/backup.ts';
import type { Db, Handle } from './db.ts';
import type { Database } from './schema.ts';

/**
 * The database side of backups (SPEC §17): snapshots that writers do not wait for, the facts a
 * manifest records, and PostgreSQL's own tools (pg_dump, pg_restore) run on the store's schema.
 */

export interface SnapshotFacts {
  /** The latest migration applied (names sort in the order they apply). */
  schemaVersion: string;
  counts: BackupCounts;
  ledgerTotals: Record<string, CurrencyTotals>;
}

export interface SnapshotOptions {
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
}

/** The latest migration recorded in the database, or null when it has none. */
export async function appliedMigration(db: Handle): Promise<string | null> {
  const { rows } = await sql<{ name: string | null }>`select max(name) as name from kysely_migration`.execute(db);
  return rows[0]?.name ?? null;
}

/** Counts and ledger totals of a database, read in the caller's snapshot (one transaction or one pinned read). */
export async function snapshotFacts(db: Handle): Promise<SnapshotFacts> {
  const schemaVersion = await appliedMigration(db);
  if (schemaVersion === null) throw new BackupRefused('the database has no applied migrations: it is not a Stockist database');
  const { rows } = await sql<Record<keyof BackupCounts, number | string>>`
    select (select count(*) from merchants) as merchants, (select count(*) from orders) as orders,
      (select count(*) from refunds) as refunds, (select count(*) from journal_entries) as "journalEntries",
      (select count(*) from stocks) as "stockRows"`.execute(db);
  const c = rows[0];
  const counts: BackupCounts = {
    merchants: Number(c.merchants),
    orders: Number(c.orders),
    refunds: Number(c.refunds),
    journalEntries: Number(c.journalEntries),
    stockRows: Number(c.stockRows),
  };
  const ledgerTotals: Record<string, CurrencyTotals> = {};
  const total = (currency: string) => (ledgerTotals[currency] ??= { accounts: 0, balanceCents: 0, entries: 0, debitsCents: 0, creditsCents: 0 });
  const accounts = await sql<{ currency: string; accounts: number | string; balance: number | string }>`
    select currency, count(*) as accounts, coalesce(sum(balance_cents), 0) as balance
    from ledger_accounts where kind = 'merchant' group by currency`.execute(db);
  for (const a of accounts.rows) Object.assign(total(a.currency), { accounts: Number(a.accounts), balanceCents: Number(a.balance) });
  const entries = await sql<{ currency: string; entries: number | string; debits: number | string; credits: number | string }>`
    select currency, count(*) as entries,
      coalesce(sum(case when amount_cents < 0 then amount_cents else 0 end), 0) as debits,
      coalesce(sum(case when amount_cents > 0 then amount_cents else 0 end), 0) as credits
    from journal_entries group by currency`.execute(db);
  for (const e of entries.rows) {
    Object.assign(total(e.currency), { entries: Number(e.entries), debitsCents: Number(e.debits), creditsCents: Number(e.credits) });
  }
  return { schemaVersion, counts, ledgerTotals };
}

/** Pages copied per step of SQLite's online backup: 4 MiB, a few milliseconds of work at a time. */
const PAGES_PER_STEP = 1024;

/**
 * Copies a live SQLite file into `dest` with SQLite's online backup API, in steps, on a connection
 * of its own (the store's is inside Kysely, busy with requests). That connection first opens a read
 * transaction: in WAL mode it pins one snapshot that the steps copy from, while writers keep
 * committing to the WAL. Without it, each step would see the other connections' commits and SQLite
 * would restart the copy from page one — under steady order intake, forever.
 */
export async function sqliteSnapshot(source: string, dest: string, options: SnapshotOptions = {}): Promise<SnapshotFacts> {
  const connection = new SQLite(source, { readonly: true, fileMustExist: true });
  try {
    connection.pragma('busy_timeout = 5000');
    connection.exec('begin');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
    // Read first, in the pinned snapshot: the facts describe exactly the pages copied below.
    const facts = await snapshotFacts(db);
    await connection.backup(dest, {
      progress({ totalPages, remainingPages }) {
        if (options.signal?.aborted) throw new BackupRefused('the backup was cancelled');
        options.onProgress?.(totalPages - remainingPages, totalPages);
        return PAGES_PER_STEP;
      },
    });
    connection.exec('commit');
    return facts;
  } finally {
    connection.close();
  }
}

/** What a SQLite file holds, for a restore that must not overwrite data. */
export function sqliteContents(file: string): 'absent' | 'empty' | 'data' | 'unreadable' {
  if (!fs.existsSync(file)) return 'absent';
  if (fs.statSync(file).size === 0) return 'empty';
  let connection: SQLite.Database | undefined;
  try {
    connection = new SQLite(file, { readonly: true, fileMustExist: true });
    const row = connection.prepare("select count(*) as n from sqlite_master where type in ('table', 'view')").get() as { n: number };
    return row.n > 0 ? 'data' : 'empty';
  } catch {
    return 'unreadable';
  } finally {
    connection?.close();
  }
}

// --- PostgreSQL -------------------------------------------------------------------------------

/**
 * The connection for pg_dump and pg_restore: the URL without its password (which would show in
 * the process list), and the password in their environment.
 */
function toolConnection(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const u = new URL(url);
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (u.password) env.PGPASSWORD = decodeURIComponent(u.password);
  u.password = '';
  // libpq does not read `+` as a space (URLSearchParams writes `options=-c+search_path…`).
  const query = [...u.searchParams].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
  u.search = query ? `?${query}` : '';
  return { dbname: u.toString(), env };
}

/** The schema a `postgres://` URL works in: its `options=-c search_path=…`, else `public`. */
export function pgTargetSchema(url: string): string {
  const options = new URL(url).searchParams.get('options') ?? '';
  const m = /search_path=([^\s,]+)/.exec(options);
  const schema = m ? m[1].replace(/^"|"$/g, '') : 'public';
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new BackupRefused(`the schema ${JSON.stringify(schema)} of DATABASE_URL is not a plain lower-case name`);
  return schema;
}

/** The same server and credentials, another database (and no search_path: the caller names its schema). */
function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  u.searchParams.delete('options');
  return u.toString();
}

async function withClient<T>(url: string, fn: (client: import('pg').Client) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const u = new URL(url);
  u.searchParams.delete('options');
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The major version of a PostgreSQL client tool on PATH; refuses when it is missing. */
function toolMajor(tool: 'pg_dump' | 'pg_restore', serverMajor: number): number {
  const r = spawnSync(tool, ['--version'], { encoding: 'utf8' });
  const install = `install PostgreSQL ${serverMajor}'s client tools (Debian: apt-get install postgresql-client-${serverMajor}) and put ${tool} on PATH`;
  if (r.error) throw new BackupRefused(`${tool} is not installed or not on PATH: ${install}`);
  const m = /(\d+)(?:\.\d+)?/.exec(r.stdout ?? '');
  if (!m) throw new BackupRefused(`${tool} --version printed no version: ${install}`);
  return Number(m[1]);
}

async function serverMajor(db: Handle): Promise<number> {
  const { rows } = await sql<{ v: string }>`select current_setting('server_version_num') as v`.execute(db);
  return Math.floor(Number(rows[0].v) / 10000);
}

/** Runs a PostgreSQL tool; a failure becomes one line (its last message). Each stderr line goes to `onLine`. */
function runTool(tool: string, args: string[], env: NodeJS.ProcessEnv, onLine?: (line: string) => void, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(tool, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const lines: string[] = [];
    let rest = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        if (!line.trim()) continue;
        onLine?.(line);
        if (
          !/: (last built-in OID|reading|identifying|finding|flagging|saving|dumping|creating|processing|executing|connecting|implied data-only|disabling|enabling|setting owner|restoring)/.test(
            line,
          )
        )
          lines.push(line);
        if (lines.length > 20) lines.shift();
      }
    });
    const abort = () => child.kill('SIGTERM');
    signal?.addEventListener('abort', abort, { once: true });
    child.on('error', (error) => reject(new BackupRefused(`${tool} could not run: ${error.message}`)));
    child.on('close', (code, killed) => {
      signal?.removeEventListener('abort', abort);
      if (signal?.aborted) return reject(new BackupRefused('the backup was cancelled'));
      if (code === 0) return resolve();
      const last = lines.filter((l) => /error|fatal/i.test(l)).at(-1) ?? lines.at(-1) ?? `exited with ${code ?? killed}`;
      reject(new BackupRefused(`${tool} failed: ${last.replace(/^\S*(pg_dump|pg_restore): /, '').trim()}`));
    });
  });
}

/**
 * `pg_dump --format=custom` of the store's schema, in a snapshot this connection exported: the
 * facts read here and the dump are the same instant (pg_dump's own snapshot would be a moment
 * later, with a few more orders). pg_dump older than the server is refused before it starts.
 */
export async function pgDumpSnapshot(db: Db, url: string, schema: string, dest: string, options: SnapshotOptions = {}): Promise<SnapshotFacts> {
  const server = await serverMajor(db);
  const dump = toolMajor('pg_dump', server);
  if (dump < server) {
    throw new BackupRefused(
      `pg_dump ${dump} is older than the PostgreSQL ${server} server and cannot dump it: install postgresql-client-${server} and put its pg_dump first on PATH`,
    );
  }
  return db.connection().execute(async (c) => {
    await sql`begin isolation level repeatable read read only`.execute(c);
    try {
      const { rows } = await sql<{ id: string }>`select pg_export_snapshot() as id`.execute(c);
      const facts = await snapshotFacts(c);
      const tables = await sql<{ n: number | string }>`select count(*) as n from pg_tables where schemaname = ${schema}`.execute(c);
      const total = Number(tables.rows[0].n);
      let done = 0;
      options.onProgress?.(0, total);
      const { dbname, env } = toolConnection(url);
      await runTool(
        'pg_dump',
        ['--format=custom', `--schema=${schema}`, `--snapshot=${rows[0].id}`, '--verbose', '--file', dest, '--dbname', dbname],
        env,
        (line) => {
          if (/dumping contents of table/.test(line)) options.onProgress?.(Math.min(++done, total), total);
        },
        options.signal,
      );
      return facts;
    } finally {
      await sql`commit`.execute(c);
    }
  });
}

/** Tables, sequences, views and other relations in a schema (0 when the schema is absent). */
export async function pgRelationCount(url: string, schema: string): Promise<number> {
  return withClient(url, async (client) => {
    const { rows } = await client.query('select count(*)::int as n from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1', [
      schema,
    ]);
    return rows[0].n as number;
  });
}

/** A new, empty database on the same server, for a trial restore; `drop` removes it. Needs CREATEDB. */
export async function pgScratchDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `stockist_scratch_${randomBytes(6).toString('hex')}`;
  await withClient(url, async (client) => {
    try {
      await client.query(`create database ${quoteIdent(name)}`);
    } catch (error) {
      throw new BackupRefused(
        `could not create a scratch database on the server to restore into first (${(error as Error).message}): the database user needs CREATEDB`,
      );
    }
  });
  return {
    url: withDatabase(url, name),
    drop: () => withClient(url, (client) => client.query(`drop database if exists ${quoteIdent(name)} with (force)`)).then(() => undefined),
  };
}

/**
 * pg_restore of a custom-format dump into the database of `url`, all or nothing (one transaction),
 * without the dump's owners and grants (the restoring user owns what it creates). When `schema`
 * already exists there (created empty by the operator), its CREATE SCHEMA is left out.
 */
export async function pgRestore(dump: string, url: string, schema: string, work: string): Promise<void> {
  const server = await withClient(url, async (client) =>
    Math.floor(Number((await client.query('show server_version_num')).rows[0].server_version_num) / 10000),
  );
  toolMajor('pg_restore', server);
  const { dbname, env } = toolConnection(withDatabase(url, new URL(url).pathname.slice(1)));
  const args = ['--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', '--dbname', dbname];
  const exists = await withClient(url, async (client) => (await client.query('select 1 from pg_namespace where nspname = $1', [schema])).rowCount! > 0);
  if (exists) {
    const listed = spawnSync('pg_restore', ['--list', dump], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    if (listed.status !== 0) throw new BackupRefused(`pg_restore could not read the dump: ${(listed.stderr ?? '').trim().split('\n').at(-1)}`);
    const entry = new RegExp(`^\\d+; \\d+ \\d+ SCHEMA - ${schema} `);
    const list = `${work}/restore.list`;
    fs.writeFileSync(
      list,
      listed.stdout
        .split('\n')
        .map((line) => (entry.test(line) ? `;${line}` : line))
        .join('\n'),
    );
    args.push('--use-list', list);
  }
  await withClient(url, async (client) => {
    // The order search's trigram index (migration 0047) names pg_trgm's operator class in `public`,
    // which a dump of one schema leaves out: a database restored into must have the extension first.
    const { rows } = await client.query(`
      select exists (select 1 from pg_available_extensions where name = 'pg_trgm')
        and not exists (select 1 from pg_extension where extname = 'pg_trgm')
        and exists (select 1 from pg_namespace where nspname = 'public') as missing`);
    if (rows[0].missing) await client.query('create extension if not exists pg_trgm with schema public');
  });
  await runTool('pg_restore', [...args, dump], env);
}

/** The schema a restore into an empty scratch database made: the one holding the migrator's table. */
export async function pgRestoredSchema(url: string): Promise<string> {
  return withClient(url, async (client) => {
    const { rows } = await client.query("select table_schema as s from information_schema.tables where table_name = 'kysely_migration'");
    if (rows.length !== 1) throw new BackupRefused(`the dump holds ${rows.length} Stockist schemas, not one`);
    return rows[0].s as string;
  });
}

/** Renames a restored schema in a scratch database to the target's name (an empty one of that name, e.g. `public`, goes first). */
export async function pgRenameSchema(url: string, from: string, to: string): Promise<void> {
  if (from === to) return;
  await withClient(url, async (client) => {
    await client.query('begin');
    await client.query(`drop schema if exists ${quoteIdent(to)}`);
    await client.query(`alter schema ${quoteIdent(from)} rename to ${quoteIdent(to)}`);
    await client.query('commit');
  });
}

/** `pg_dump --format=custom` of one schema of a database nobody else writes (a scratch database). */
export async function pgDumpSchema(url: string, schema: string, dest: string): Promise<void> {
  const { dbname, env } = toolConnection(url);
  await runTool('pg_dump', ['--format=custom', `--schema=${schema}`, '--file', dest, '--dbname', dbname], env);
}
