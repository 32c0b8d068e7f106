import { notNull, withId, type MigrationContext } from './helpers.ts';

/**
 * Console staff password resets (issue 32, 5): an owner makes a one-time link for one staff
 * account, as merchant admins do for their team (0031) — only the SHA-256 of its token is stored,
 * it lasts STAFF_PASSWORD_RESET_TTL_MS and works once; a newer link, or disabling the account, ends it.
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  await withId(db.schema.createTable('staff_password_resets'), dialect)
    .addColumn('staff_id', 'bigint', (c) => c.notNull().references('staff_users.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'bigint', notNull)
    .addColumn('used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('created_by', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('staff_password_resets_staff_idx').on('staff_password_resets').column('staff_id').execute();
}
