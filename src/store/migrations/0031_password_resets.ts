import { notNull, withId, type MigrationContext } from './helpers.ts';

/**
 * Business manager password resets (Hardening III): a merchant admin or the operator makes a
 * one-time link for one account, like an invitation — only the SHA-256 of its token is stored, it
 * lasts PASSWORD_RESET_TTL_MS and works once; a newer link, or the account's removal, ends it.
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  await withId(db.schema.createTable('merchant_password_resets'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('merchant_users.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'bigint', notNull)
    .addColumn('used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('created_by', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('merchant_password_resets_user_idx').on('merchant_password_resets').column('user_id').execute();
}
