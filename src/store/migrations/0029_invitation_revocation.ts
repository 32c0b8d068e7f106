import type { MigrationContext } from './helpers.ts';

/**
 * Invitations can be revoked (Hardening III): by an admin or the operator, and by the system when
 * the address is invited again, accepts another invitation or is removed from the team — so an old
 * link never brings a removed member back, nor with a role given by mistake. An invitation is open
 * while `accepted_at` and `revoked_at` are null and it has not expired.
 */
export async function up({ db }: MigrationContext): Promise<void> {
  await db.schema.alterTable('merchant_invitations').addColumn('revoked_at', 'bigint').execute();
  await db.schema.createIndex('merchant_invitations_email_idx').on('merchant_invitations').columns(['merchant_id', 'email_key']).execute();
}
