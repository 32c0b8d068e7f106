import { Migrator, sql, type Migration, type MigrationProvider, type MigrationResultSet } from 'kysely';
import type { Store } from './db.ts';
import { describeStorageFault } from './faults.ts';
import type { MigrationContext } from './migrations/helpers.ts';
import * as m0001 from './migrations/0001_foundation.ts';
import * as m0002 from './migrations/0002_stock_feed.ts';
import * as m0003 from './migrations/0003_oauth.ts';
import * as m0004 from './migrations/0004_orders.ts';
import * as m0005 from './migrations/0005_refunds.ts';
import * as m0006 from './migrations/0006_webhooks.ts';
import * as m0007 from './migrations/0007_nfc_skus.ts';
import * as m0009 from './migrations/0009_refund_attempts.ts';
import * as m0011 from './migrations/0011_stock_webhooks.ts';
import * as m0012 from './migrations/0012_stock_window_marks.ts';
import * as m0020 from './migrations/0020_console.ts';
import * as m0022 from './migrations/0022_manager.ts';
import * as m0023 from './migrations/0023_usage.ts';
import * as m0024 from './migrations/0024_console_order_search.ts';
import * as m0025 from './migrations/0025_console_catalog.ts';
import * as m0026 from './migrations/0026_write_path_indexes.ts';
import * as m0027 from './migrations/0027_money.ts';
import * as m0028 from './migrations/0028_ledger_keys.ts';
import * as m0029 from './migrations/0029_invitation_revocation.ts';
import * as m0030 from './migrations/0030_accounts_per_merchant.ts';
import * as m0031 from './migrations/0031_password_resets.ts';
import * as m0032 from './migrations/0032_staff_password_resets.ts';
import * as m0034 from './migrations/0034_stock_ledger_reasons.ts';
import * as m0033 from './migrations/0033_web_forms.ts';
import * as m0035 from './migrations/0035_lean_order_writes.ts';
import * as m0036 from './migrations/0036_stock_history_by_time.ts';
import * as m0037 from './migrations/0037_recovery_codes.ts';
import * as m0038 from './migrations/0038_channel_carriers.ts';
import * as m0039 from './migrations/0039_client_secret_grace.ts';
import * as m0040 from './migrations/0040_delivery_responses_order_notes.ts';
import * as m0041 from './migrations/0041_console_list_indexes.ts';
import * as m0042 from './migrations/0042_backups.ts';
import * as m0043 from './migrations/0043_edit_versions.ts';
import * as m0044 from './migrations/0044_ledger_sequence.ts';
import * as m0045 from './migrations/0045_claims.ts';
import * as m0046 from './migrations/0046_order_currency.ts';
import * as m0047 from './migrations/0047_order_text_search.ts';
import * as m0048 from './migrations/0048_web_kept_forms.ts';
import * as m0049 from './migrations/0049_order_search_without_id.ts';

/** Numbered migrations, shared by both dialects; append only. */
const MIGRATIONS: Record<string, { up(ctx: MigrationContext): Promise<void> }> = {
  '0001_foundation': m0001,
  '0002_stock_feed': m0002,
  '0003_oauth': m0003,
  '0004_orders': m0004,
  '0005_refunds': m0005,
  '0006_webhooks': m0006,
  '0007_nfc_skus': m0007,
  '0009_refund_attempts': m0009,
  '0011_stock_webhooks': m0011,
  '0012_stock_window_marks': m0012,
  '0020_console': m0020,
  '0022_manager': m0022,
  '0023_usage': m0023,
  '0024_console_order_search': m0024,
  '0025_console_catalog': m0025,
  '0026_write_path_indexes': m0026,
  '0027_money': m0027,
  '0028_ledger_keys': m0028,
  '0029_invitation_revocation': m0029,
  '0030_accounts_per_merchant': m0030,
  '0031_password_resets': m0031,
  '0032_staff_password_resets': m0032,
  '0034_stock_ledger_reasons': m0034,
  '0033_web_forms': m0033,
  '0035_lean_order_writes': m0035,
  '0036_stock_history_by_time': m0036,
  '0037_recovery_codes': m0037,
  '0038_channel_carriers': m0038,
  '0039_client_secret_grace': m0039,
  '0040_delivery_responses_order_notes': m0040,
  '0041_console_list_indexes': m0041,
  '0042_backups': m0042,
  '0043_edit_versions': m0043,
  '0044_ledger_sequence': m0044,
  '0045_claims': m0045,
  '0046_order_currency': m0046,
  '0047_order_text_search': m0047,
  '0048_web_kept_forms': m0048,
  '0049_order_search_without_id': m0049,
};

/** Every migration this build can apply, by name: a backup made at another one came from a newer build. */
export const KNOWN_MIGRATIONS: readonly string[] = Object.keys(MIGRATIONS);
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

class MigrationFailed extends Error {}

/** Applies pending migrations; returns the names applied by this call. */
export async function migrateToLatest(store: Store): Promise<string[]> {
  let { error, results }: MigrationResultSet = await migrator(store).migrateToLatest();
  // Kysely checks its bookkeeping tables by introspecting every schema of the database; another
  // schema dropped in that instant (test runs, other tenants) fails the check with "… does not
  // exist" before anything of ours ran. Nothing was applied, so asking again is safe.
  for (let attempt = 1; attempt < 4 && error && !results?.some((r) => r.status === 'Error') && /does not exist/.test(String(error)); attempt++) {
    ({ error, results } = await migrator(store).migrateToLatest());
  }
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    const plain = describeStorageFault(error, store.location);
    // No failed migration named: the migrator's own bookkeeping (its tables, its lock) failed.
    const what = failed ? `migration ${failed} failed` : 'could not check or apply the database migrations';
    throw new MigrationFailed(`${what}: ${plain ?? (error instanceof Error ? error.message : String(error))}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Applies the migrations up to and including `name`: for tests of a migration over rows written before it. */
export async function migrateTo(store: Store, name: keyof typeof MIGRATIONS): Promise<void> {
  const { error } = await migrator(store).migrateTo(name);
  if (error) throw error;
}

/**
 * True when every known migration has been applied (used by /readyz). Read from the bookkeeping
 * table itself, not through Kysely's migrator: that introspects every schema of the database on
 * each call, and fails with "schema … does not exist" when another schema is dropped meanwhile.
 */
export async function migrationsCurrent(store: Store): Promise<boolean> {
  if (!(await isInitialised(store))) return false;
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(store.db);
  const applied = new Set(rows.map((r) => r.name));
  return Object.keys(MIGRATIONS).every((name) => applied.has(name));
}

/**
 * True when the migrator's bookkeeping table exists in this database (schema): Stockist set it up.
 * Asked directly, not through Kysely's introspection, which would find another schema's table.
 */
export async function isInitialised(store: Store): Promise<boolean> {
  if (store.dialect === 'sqlite') {
    const { rows } = await sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name = 'kysely_migration'`.execute(store.db);
    return Number(rows[0].n) > 0;
  }
  const { rows } = await sql<{ t: string | null }>`select to_regclass(quote_ident(${store.schema ?? 'public'}) || '.kysely_migration')::text as t`.execute(
    store.db,
  );
  return rows[0].t !== null;
}
