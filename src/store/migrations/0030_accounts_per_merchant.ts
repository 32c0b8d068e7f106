import { sql } from 'kysely';
import type { MigrationContext } from './helpers.ts';

/**
 * A business manager account belongs to one merchant, and an address may have one at each
 * merchant (Hardening III): `merchant_users.email_key` is unique per merchant instead of across
 * merchants, so inviting an address tells nothing about other merchants' teams (docs/decisions.md,
 * "Accounts per merchant"). Sign-in finds the address's accounts through `merchant_users_email_idx`.
 *
 * PostgreSQL drops the column's unique constraint. SQLite cannot drop one, so the table is rebuilt
 * (SQLite's twelve steps: foreign keys off, one transaction, the same ids and id sequence), which
 * keeps every account and session.
 */
export async function up({ db, dialect }: MigrationContext): Promise<void> {
  if (dialect === 'postgres') {
    await sql`alter table merchant_users drop constraint if exists merchant_users_email_key_key`.execute(db);
    await sql`drop index if exists merchant_users_merchant_idx`.execute(db);
  } else {
    await sql`pragma foreign_keys = off`.execute(db);
    try {
      await db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'merchant_users'`.execute(trx);
        await sql`create table merchant_users_next (
          id integer primary key autoincrement,
          merchant_id bigint not null references merchants (id),
          email text not null,
          email_key text not null,
          role text not null,
          password_hash text not null,
          totp_secret text,
          totp_pending_secret text,
          totp_last_step bigint,
          last_sign_in_at bigint,
          password_changed_at bigint not null,
          created_at bigint not null,
          updated_at bigint not null
        )`.execute(trx);
        await sql`insert into merchant_users_next (id, merchant_id, email, email_key, role, password_hash, totp_secret, totp_pending_secret,
                    totp_last_step, last_sign_in_at, password_changed_at, created_at, updated_at)
                  select id, merchant_id, email, email_key, role, password_hash, totp_secret, totp_pending_secret,
                    totp_last_step, last_sign_in_at, password_changed_at, created_at, updated_at from merchant_users`.execute(trx);
        await sql`drop table merchant_users`.execute(trx);
        await sql`alter table merchant_users_next rename to merchant_users`.execute(trx);
        // Ids keep to their range (0022) even when there were no accounts yet.
        const seq = Number(rows[0]?.seq ?? 0);
        await sql`update sqlite_sequence set seq = max(seq, ${seq}) where name = 'merchant_users'`.execute(trx);
        await sql`insert into sqlite_sequence (name, seq) select 'merchant_users', ${seq} where not exists (select 1 from sqlite_sequence where name = 'merchant_users')`.execute(
          trx,
        );
        const broken = await sql`pragma foreign_key_check`.execute(trx);
        if (broken.rows.length > 0) throw new Error(`merchant_users rebuild broke ${broken.rows.length} foreign keys`);
      });
    } finally {
      await sql`pragma foreign_keys = on`.execute(db);
    }
  }
  await sql`create unique index if not exists merchant_users_merchant_email_idx on merchant_users (merchant_id, email_key)`.execute(db);
  await sql`create index if not exists merchant_users_email_idx on merchant_users (email_key)`.execute(db);
}
