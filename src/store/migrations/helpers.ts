import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';
import type { Dialect } from '../db.ts';

export interface MigrationContext {
  db: Kysely<any>;
  dialect: Dialect;
}

/**
 * A database-generated BIGINT key that is never reused: AUTOINCREMENT on SQLite (plain rowids may
 * be reused after a delete), an identity column on PostgreSQL.
 */
export function withId<T extends string>(
  table: CreateTableBuilder<T, never>,
  dialect: Dialect,
): CreateTableBuilder<T, 'id'> {
  return dialect === 'sqlite'
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    : table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity());
}

export const notNull = (c: ColumnDefinitionBuilder) => c.notNull();
