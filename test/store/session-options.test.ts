import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { openStore } from '../../src/store/db.ts';
import { PG_SKIP, PG_URL } from '../helpers.ts';

/**
 * A store opened on a schema of its own keeps the session options its URL (`?options=`) or libpq's
 * PGOPTIONS give beside the schema's search_path (node-postgres would take one `options` only).
 * The test runner relies on it: its PostgreSQL sessions run with PGOPTIONS=-c synchronous_commit=off.
 */
describe('PostgreSQL session options beside a schema', { skip: PG_SKIP }, () => {
  const show = async (url: string, setting: string) => {
    const schema = `opt_${randomBytes(4).toString('hex')}`;
    const store = await openStore(url, { schema });
    try {
      const { rows } = await sql<{ value: string; schema: string }>`select current_setting(${setting}) as value, current_schema() as schema`.execute(store.db);
      assert.equal(rows[0].schema, schema);
      return rows[0].value;
    } finally {
      await sql`drop schema ${sql.id(schema)} cascade`.execute(store.db);
      await store.close();
    }
  };

  it('keeps the URL’s options', async () => {
    const url = new URL(PG_URL!);
    url.searchParams.set('options', '-c statement_timeout=4321');
    assert.equal(await show(url.toString(), 'statement_timeout'), '4321ms');
  });

  it('keeps PGOPTIONS when the URL has none', async (t) => {
    const before = process.env.PGOPTIONS;
    t.after(() => {
      if (before === undefined) delete process.env.PGOPTIONS;
      else process.env.PGOPTIONS = before;
    });
    process.env.PGOPTIONS = '-c lock_timeout=1234';
    const url = new URL(PG_URL!);
    url.searchParams.delete('options');
    assert.equal(await show(url.toString(), 'lock_timeout'), '1234ms');
  });
});
