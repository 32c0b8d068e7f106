import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { DIALECTS, PG_SKIP, freshStore } from '../helpers.ts';
import { up as accountsPerMerchant } from '../../src/store/migrations/0030_accounts_per_merchant.ts';
import { forMerchant } from '../../src/store/tenancy.ts';
import { signIn } from '../../src/services/manager-sessions.service.ts';
import { acceptInvitation, inviteUser } from '../../src/services/merchant-invitations.service.ts';
import { createMerchant } from '../../src/services/merchants.service.ts';

/** Migration 0030 (Hardening III, 6): an address may have an account at each merchant; the rebuild keeps accounts, sessions and ids. */
const actor = { kind: 'cli' as const, id: 'test', requestId: null };
const PASSWORD = 'correct horse battery staple';
const limits = { idleMs: 3600_000, maxMs: 7200_000 };

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`migration 0030: accounts per merchant (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('keeps every account, session and the id range when run over existing ones; the address is unique per merchant only', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const now = Date.now();
      const a = await createMerchant(db.store.db, actor, 'Migrated A', now);
      const b = await createMerchant(db.store.db, actor, 'Migrated B', now);
      const invitation = await inviteUser(forMerchant(db.store.db, a.merchantId), actor, { email: 'kept@example.com', role: 'admin' }, now);
      const user = await acceptInvitation(db.store.db, invitation.token, PASSWORD, 'req', now);
      const session = await signIn(db.store.db, { email: 'kept@example.com', password: PASSWORD, address: null, requestId: 'req' }, limits, now);
      assert.ok(session && 'sessionId' in session);
      const before = {
        users: await db.store.db.selectFrom('merchant_users').selectAll().execute(),
        sessions: await db.store.db.selectFrom('manager_sessions').selectAll().execute(),
      };

      await accountsPerMerchant({ db: db.store.db, dialect });
      assert.deepEqual(await db.store.db.selectFrom('merchant_users').selectAll().execute(), before.users);
      assert.deepEqual(await db.store.db.selectFrom('manager_sessions').selectAll().execute(), before.sessions);
      if (dialect === 'sqlite') assert.deepEqual((await sql`pragma foreign_key_check`.execute(db.store.db)).rows, []);

      // The same address at B: a second account, after A's id; not twice at A.
      const atB = await acceptInvitation(
        db.store.db,
        (await inviteUser(forMerchant(db.store.db, b.merchantId), actor, { email: 'KEPT@example.com', role: 'viewer' }, now)).token,
        PASSWORD,
        'req',
        now,
      );
      assert.ok(atB.id > user.id && atB.id > 7_100_000_000_000, `ids stay in their range: ${atB.id}`);
      await assert.rejects(
        db.store.db
          .insertInto('merchant_users')
          .values({ ...before.users[0], id: undefined, email: 'kept@example.com' } as never)
          .execute(),
        /unique|UNIQUE/,
      );
      // A session still resolves to its user after the rebuild (its foreign key points at the new table).
      await assert.rejects(
        db.store.db
          .insertInto('manager_sessions')
          .values({ ...before.sessions[0], id_hash: 'x', user_id: 42 })
          .execute(),
        /foreign key|FOREIGN KEY/,
      );
    });
  });
}
