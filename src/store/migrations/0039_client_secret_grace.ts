import type { MigrationContext } from './helpers.ts';

/**
 * A rotated OAuth client secret may keep working for a grace period its merchant chooses (0–24 h,
 * issue 29, 14): the replaced secret's hash and the instant it stops. Both null when there is
 * none (never rotated, rotated with no grace, or its grace is over and a later rotation replaced it).
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema.alterTable('oauth_clients').addColumn('previous_secret_hash', 'text').execute();
  await db.schema.alterTable('oauth_clients').addColumn('previous_secret_expires_at', 'bigint').execute();
}
