import { notNull, withId, type MigrationContext } from './helpers.ts';

/**
 * OAuth 2.0 (SPEC §2.2): access tokens issued by the token endpoint live in `api_tokens` beside
 * the operator's (`kind` tells them apart, `family_id` ties them to their refresh-token family so a
 * detected reuse revokes them too); refresh tokens have their own table.
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('api_tokens')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('operator'))
    .execute();
  await db.schema.alterTable('api_tokens').addColumn('family_id', 'text').execute();
  await db.schema.createIndex('api_tokens_family_idx').on('api_tokens').column('family_id').execute();

  await withId(db.schema.createTable('oauth_refresh_tokens'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id'))
    .addColumn('family_id', 'text', notNull)
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('environment', 'text', notNull)
    .addColumn('scopes', 'text', notNull)
    .addColumn('expires_at', 'bigint', notNull)
    // Set once, by the rotation that consumed it; presenting it again is a reuse.
    .addColumn('used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('oauth_refresh_tokens_family_idx').on('oauth_refresh_tokens').column('family_id').execute();
  await db.schema.createIndex('oauth_refresh_tokens_merchant_idx').on('oauth_refresh_tokens').column('merchant_id').execute();
}
