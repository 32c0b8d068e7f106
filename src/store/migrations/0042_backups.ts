import { notNull, withId, type MigrationContext } from './helpers.ts';

/**
 * Scheduled backups (SPEC §17, issue 39):
 * - `backup_lease`: at most one row per name ('backup'), the claim of the one process whose backup
 *   runs now. Taken by a conditional upsert (insert, or take over a row whose expiry has passed),
 *   renewed while the backup runs, deleted at its end: the database, not a file on one machine,
 *   decides, so two servers on one PostgreSQL database never back up at once.
 * - `backup_runs`: one row per run, for the console's Backups page, the metrics and pruning (which
 *   removes only archives a run recorded).
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('backup_lease')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', notNull)
    .addColumn('expires_at', 'bigint', notNull)
    .execute();
  await withId(db.schema.createTable('backup_runs'), dialect)
    .addColumn('status', 'text', notNull)
    .addColumn('trigger', 'text', notNull)
    .addColumn('requested_by', 'text')
    .addColumn('holder', 'text', notNull)
    .addColumn('started_at', 'bigint', notNull)
    .addColumn('finished_at', 'bigint')
    .addColumn('file', 'text')
    .addColumn('location', 'text')
    .addColumn('bytes', 'bigint')
    .addColumn('duration_ms', 'bigint')
    .addColumn('merchants', 'bigint')
    .addColumn('orders', 'bigint')
    .addColumn('refunds', 'bigint')
    .addColumn('journal_entries', 'bigint')
    .addColumn('stock_rows', 'bigint')
    .addColumn('verified', 'integer')
    .addColumn('error', 'text')
    .addColumn('pruned_at', 'bigint')
    .execute();
  await db.schema.createIndex('backup_runs_started_idx').on('backup_runs').columns(['started_at', 'id']).execute();
  await db.schema.createIndex('backup_runs_file_idx').on('backup_runs').column('file').execute();
}
