import { Migrator, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { Store } from './db.ts';
import type { MigrationContext } from './migrations/helpers.ts';
import * as m0001 from './migrations/0001_foundation.ts';
import * as m0002 from './migrations/0002_stock_feed.ts';
import * as m0003 from './migrations/0003_oauth.ts';
import * as m0004 from './migrations/0004_orders.ts';
import * as m0005 from './migrations/0005_refunds.ts';
import * as m0006 from './migrations/0006_webhooks.ts';

/** Numbered migrations, shared by both dialects; append only. */
const MIGRATIONS: Record<string, { up(ctx: MigrationContext): Promise<void> }> = {
  '0001_foundation': m0001,
  '0002_stock_feed': m0002,
  '0003_oauth': m0003,
  '0004_orders': m0004,
  '0005_refunds': m0005,
  '0006_webhooks': m0006,
};

export const LATEST_MIGRATION = Object.keys(MIGRATIONS).sort().at(-1)!;

function migrator(store: Store): Migrator {
  const provider: MigrationProvider = {
    async getMigrations() {
      const out: Record<string, Migration> = {};
      for (const [name, m] of Object.entries(MIGRATIONS)) {
        out[name] = { up: (db) => m.up({ db, dialect: store.dialect }) };
      }
      return out;
    },
  };
  // Kysely takes a database lock (an advisory lock on PostgreSQL) around the run, so several
  // processes starting at once apply each migration exactly once.
  // The schema is named explicitly: unqualified, Kysely would find another schema's bookkeeping
  // tables through introspection and skip creating its own.
  return new Migrator({ db: store.db, provider, ...(store.schema ? { migrationTableSchema: store.schema } : {}) });
}

export class MigrationFailed extends Error {}

/** Applies pending migrations; returns the names applied by this call. */
export async function migrateToLatest(store: Store): Promise<string[]> {
  const { error, results }: MigrationResultSet = await migrator(store).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationFailed(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** True when every known migration has been applied (used by /readyz). */
export async function migrationsCurrent(store: Store): Promise<boolean> {
  const migrations = await migrator(store).getMigrations();
  return migrations.every((m) => m.executedAt !== undefined);
}
