import { sql, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely';
import type { Dialect } from '../db.ts';

export interface MigrationContext {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema as it was, not today's Database type (Kysely's advice)
  db: Kysely<any>;
  dialect: Dialect;
}

/**
 * A database-generated BIGINT key that is never reused: AUTOINCREMENT on SQLite (plain rowids may
 * be reused after a delete), an identity column on PostgreSQL.
 */
export function withId<T extends string>(table: CreateTableBuilder<T, never>, dialect: Dialect): CreateTableBuilder<T, 'id'> {
  return dialect === 'sqlite'
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    : table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity());
}

export const notNull = (c: ColumnDefinitionBuilder) => c.notNull();

/** Makes a table's generated ids start after `after` (ids of different tables stay apart). */
export async function startIdsAfter({ db, dialect }: MigrationContext, table: string, after: number): Promise<void> {
  if (dialect === 'sqlite') await sql`insert into sqlite_sequence (name, seq) values (${table}, ${after})`.execute(db);
  else await sql`alter table ${sql.table(table)} alter column id restart with ${sql.lit(after + 1)}`.execute(db);
}
