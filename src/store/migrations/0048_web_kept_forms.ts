import { notNull, type MigrationContext } from './helpers.ts';

/**
 * A form sent after its session ended (Front ends III, 3): what was typed, kept for a few minutes
 * so that signing in again leads back to the form filled in. Keyed by the SHA-256 of a random handle
 * that only the browser's short-lived cookie holds; the fields are sealed (AES-256-GCM) under a key
 * derived from that handle, and never hold a password, a code or the CSRF token
 * (docs/decisions.md, "A form survives the session's end").
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('web_kept_forms')
    .addColumn('handle_hash', 'text', (c) => c.primaryKey())
    // The page the form was on (where signing in leads back to) and where it posted (which form to fill).
    .addColumn('page', 'text', notNull)
    .addColumn('action', 'text', notNull)
    .addColumn('sealed', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('web_kept_forms_created_idx').on('web_kept_forms').column('created_at').execute();
}
