import { notNull, withId, type MigrationContext } from './helpers.ts';

/**
 * Business manager recovery codes (issue 29, 13): ten one-time codes made when a user turns
 * two-factor sign-in on (or regenerates them), each usable once instead of a TOTP code. Only the
 * SHA-256 of a code is stored, like a token's; a used code keeps its row (`used_at`) so the page can
 * say how many are left. `merchant_id` makes the table merchant-owned (store/tenancy.ts).
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  await withId(db.schema.createTable('merchant_recovery_codes'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id'))
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('merchant_users.id'))
    .addColumn('code_hash', 'text', notNull)
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('merchant_recovery_codes_user_idx').on('merchant_recovery_codes').columns(['user_id', 'code_hash']).execute();
}
