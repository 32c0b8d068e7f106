import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { countWrites, DIALECTS, PG_SKIP, freshStore, tableDigests, tableNames } from '../helpers.ts';

/**
 * The tests' own instruments for "refused, nothing written": `countWrites` moves on every kind of
 * write to every table and on nothing else, and is not itself one of the tables the digests read.
 * (The fuzzer trusts an unchanged count instead of digesting every table after each refusal.)
 */
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`countWrites and tableDigests (${dialect})`, { skip: dialect === 'postgres' ? PG_SKIP : false }, () => {
    if (!DIALECTS.includes(dialect)) return;

    it('moves on an insert, an update and a delete in any table, stays on reads and rolled-back writes', async (t) => {
      const db = await freshStore(dialect);
      t.after(() => db.drop());
      const writes = await countWrites(db.store);
      const now = Date.now();
      const start = await writes();
      await db.store.db.selectFrom('merchants').selectAll().execute();
      await tableDigests(db.store);
      assert.equal(await writes(), start, 'reads are not writes');

      const { id } = await db.store.db
        .insertInto('merchants')
        .values({ name: 'a', status: 'active', client_id: 'cli_a', client_secret_hash: 'x', created_at: now, updated_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      const afterInsert = await writes();
      assert.ok(afterInsert > start, 'an insert counts');
      const digestsBefore = await tableDigests(db.store);
      await db.store.db.updateTable('merchants').set({ name: 'b' }).where('id', '=', id).execute();
      const digestsAfter = await tableDigests(db.store);
      assert.notEqual(digestsAfter.merchants, digestsBefore.merchants, 'the digests see an update that keeps the row count');
      assert.deepEqual({ ...digestsAfter, merchants: '' }, { ...digestsBefore, merchants: '' }, 'and only in its table');
      const afterUpdate = await writes();
      assert.ok(afterUpdate > afterInsert, 'an update counts');
      await db.store.db.deleteFrom('merchants').where('id', '=', id).execute();
      const afterDelete = await writes();
      assert.ok(afterDelete > afterUpdate, 'a delete counts');

      await assert.rejects(
        db.store.db.transaction().execute(async (trx) => {
          await trx
            .insertInto('merchants')
            .values({ name: 'c', status: 'active', client_id: 'cli_c', client_secret_hash: 'x', created_at: now, updated_at: now })
            .execute();
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.equal(await writes(), afterDelete, 'a rolled-back write leaves the count');

      // Every table is watched (new tables come from the migrations, not from a list).
      const tables = await tableNames(db.store);
      assert.ok(!tables.includes('test_write_counter'), 'the counter is not one of the digested tables');
      const watched =
        dialect === 'sqlite'
          ? (
              await sql<{ t: string }>`select distinct tbl_name as t from sqlite_master where type = 'trigger' and name like 'test_write_counter_%'`.execute(
                db.store.db,
              )
            ).rows
          : (
              await sql<{
                t: string;
              }>`select distinct event_object_table as t from information_schema.triggers where trigger_schema = current_schema() and trigger_name like 'test_write_counter_%'`.execute(
                db.store.db,
              )
            ).rows;
      assert.deepEqual(watched.map((r) => r.t).sort(), tables);
    });
  });
}
