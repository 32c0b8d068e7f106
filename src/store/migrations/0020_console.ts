import { notNull, startIdsAfter, withId, type MigrationContext } from './helpers.ts';

/** Staff ids in a range of their own (see 0006 for the others). */
const STAFF_ID_START = 7_000_000_000_000;

/**
 * The operator console's foundation (SPEC §14): staff accounts (argon2id hashes), their sessions
 * (only a hash of each session id is kept) and the audit log.
 */
export async function up(ctx: MigrationContext): Promise<void> {
  const { db, dialect } = ctx;
  await withId(db.schema.createTable('staff_users'), dialect)
    // As typed, for display; `email_key` (lower case) is what is unique and looked up.
    .addColumn('email', 'text', notNull)
    .addColumn('email_key', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', notNull)
    .addColumn('password_hash', 'text', notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('last_sign_in_at', 'bigint')
    .addColumn('password_changed_at', 'bigint', notNull)
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('updated_at', 'bigint', notNull)
    .execute();
  await startIdsAfter(ctx, 'staff_users', STAFF_ID_START);

  await db.schema
    .createTable('console_sessions')
    // SHA-256 of the session id the cookie carries: a copy of this table signs nobody in.
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('staff_id', 'bigint', (c) => c.notNull().references('staff_users.id'))
    // The synchronizer token every state-changing request must carry (docs/decisions.md).
    .addColumn('csrf_secret', 'text', notNull)
    .addColumn('address', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .addColumn('last_seen_at', 'bigint', notNull)
    .addColumn('idle_expires_at', 'bigint', notNull)
    .addColumn('expires_at', 'bigint', notNull)
    .execute();
  await db.schema.createIndex('console_sessions_staff_idx').on('console_sessions').column('staff_id').execute();

  await withId(db.schema.createTable('audit_log'), dialect)
    .addColumn('actor_kind', 'text', notNull)
    .addColumn('actor_id', 'text', notNull)
    .addColumn('action', 'text', notNull)
    .addColumn('target', 'text', notNull)
    .addColumn('before_summary', 'text')
    .addColumn('after_summary', 'text')
    .addColumn('request_id', 'text')
    .addColumn('created_at', 'bigint', notNull)
    .execute();
  // The dashboard counts the last 30 days of refunds (orders have orders_created_idx).
  await db.schema.createIndex('refunds_created_idx').on('refunds').columns(['created_at', 'id']).execute();
}
