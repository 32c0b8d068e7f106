import { sql } from 'kysely';
import { notNull, startIdsAfter, withId, type MigrationContext } from './helpers.ts';

/** Merchant users in a range of their own (staff: 7e12; see 0006 for the others). */
const MERCHANT_USER_ID_START = 7_100_000_000_000;

/**
 * The merchant's business manager (SPEC §14, issue 20): merchant users, their invitations and
 * sessions; several OAuth clients per merchant (the merchant's one client from `merchants` is
 * copied in, so the token endpoint keeps accepting it); personal access tokens (`api_tokens` with
 * kind `personal`, a name and a coarse last-used time); the audit log gains the merchant a row
 * concerns, so a merchant admin can read its own merchant's rows.
 */
export async function up(ctx: MigrationContext): Promise<void> {
  const { db, dialect } = ctx;
  // 0/1: a merchant admin may require two-factor sign-in of the whole team.
  await db.schema
    .alterTable('merchants')
    .addColumn('require_two_factor', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await withId(db.schema.createTable('merchant_users'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id'))
    .addColumn('email', 'text', notNull)
    // One account per address across merchants (until 0030: one per merchant).
    .addColumn('email_key', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', notNull)
    .addColumn('password_hash', 'text', notNull)
    // RFC 6238 secret (base32) once enrolled; `totp_pending_secret` while enrolling.
    .addColumn('totp_secret', 'text')
    .addColumn('totp_pending_secret', 'text')
    // The last time step a code was accepted for: a code is good once (RFC 6238 §5.2).
    .addColumn('totp_last_step', 'bigint')
    .addColumn('last_sign_in_at', 'bigint')
    .addColumn('password_changed_at', 'bigint', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await startIdsAfter(ctx, 'merchant_users', MERCHANT_USER_ID_START);
  await db.schema.createIndex('merchant_users_merchant_idx').on('merchant_users').column('merchant_id').execute();

  await withId(db.schema.createTable('merchant_invitations'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id'))
    .addColumn('email', 'text', notNull)
    .addColumn('email_key', 'text', notNull)
    .addColumn('role', 'text', notNull)
    // SHA-256 of the link's token: a copy of this table accepts no invitation.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'bigint', notNull)
    .addColumn('accepted_at', 'bigint')
    .addColumn('created_by', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('merchant_invitations_merchant_idx').on('merchant_invitations').column('merchant_id').execute();

  await db.schema
    .createTable('manager_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('merchant_users.id'))
    .addColumn('csrf_secret', 'text', notNull)
    // `password`: the password was right, a TOTP code is still due; `complete`: signed in.
    .addColumn('stage', 'text', notNull)
    .addColumn('address', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('last_seen_at', 'bigint', notNull)
    .addColumn('idle_expires_at', 'bigint', notNull)
    .addColumn('expires_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('manager_sessions_user_idx').on('manager_sessions').column('user_id').execute();

  await withId(db.schema.createTable('oauth_clients'), dialect)
    .addColumn('merchant_id', 'bigint', (c) => c.notNull().references('merchants.id'))
    .addColumn('client_id', 'text', (c) => c.notNull().unique())
    .addColumn('client_secret_hash', 'text', notNull)
    .addColumn('name', 'text', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('rotated_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('oauth_clients_merchant_idx').on('oauth_clients').column('merchant_id').execute();
  await sql`insert into oauth_clients (merchant_id, client_id, client_secret_hash, name, created_at)
            select id, client_id, client_secret_hash, 'Default client', created_at from merchants order by id`.execute(db);

  // Tokens issued to an OAuth client (revoking the client revokes them); personal tokens' names; last use.
  await db.schema.alterTable('api_tokens').addColumn('oauth_client_id', 'bigint').execute();
  await db.schema.alterTable('api_tokens').addColumn('name', 'text').execute();
  await db.schema.alterTable('api_tokens').addColumn('last_used_at', 'bigint').execute();
  await db.schema.createIndex('api_tokens_client_idx').on('api_tokens').column('oauth_client_id').execute();
  await db.schema.createIndex('api_tokens_merchant_kind_idx').on('api_tokens').columns(['merchant_id', 'kind']).execute();
  await db.schema.alterTable('oauth_refresh_tokens').addColumn('oauth_client_id', 'bigint').execute();
  await db.schema.createIndex('oauth_refresh_tokens_client_idx').on('oauth_refresh_tokens').column('oauth_client_id').execute();

  await db.schema.alterTable('audit_log').addColumn('merchant_id', 'bigint').execute();
  await db.schema.createIndex('audit_log_merchant_idx').on('audit_log').columns(['merchant_id', 'id']).execute();
}
