import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { openStore } from '../../src/store/db.ts';
import { PG_SKIP, PG_URL } from '../helpers.ts';

const until = async (what: string, done: () => boolean) => {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.ok(done(), `timed out waiting for ${what}`);
};

/** Pages the WAL holds that the database file does not (a PASSIVE checkpoint of 0 pages reports them). */
const walFrames = (file: string) => {
  const probe = new SQLite(file);
  try {
    // A checkpoint of nothing: `log` is the WAL's frames, `checkpointed` those already in the file.
    const [r] = probe.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
    return r;
  } finally {
    probe.close();
  }
};

describe('WAL checkpoints on their own thread (SQLite)', () => {
  it('copies committed pages into the database file without the writing connection, and stops on close', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-ckpt-'));
    const file = path.join(dir, 'test.db');
    try {
      const store = await openStore(`sqlite:${file}`, { checkpointEveryMs: 10 });
      assert.ok(store.checkpointer, 'a file database gets a checkpoint thread');
      await sql`create table filler (id integer primary key, body text not null)`.execute(store.db);
      // About 400 pages: below the writer's own auto-checkpoint, so only the thread copies them.
      for (let i = 0; i < 40; i++) {
        await store.db
          .insertInto('filler' as never)
          .values(Array.from({ length: 10 }, (_, j) => ({ id: i * 10 + j, body: 'x'.repeat(3000) })) as never)
          .execute();
      }
      const before = store.checkpointer.rounds;
      await until('a checkpoint by the thread', () => store.checkpointer!.rounds > before);
      assert.ok(!(store.checkpointer.last && 'error' in store.checkpointer.last), JSON.stringify(store.checkpointer.last));
      await until('every frame copied', () => {
        const last = store.checkpointer!.last;
        return last !== null && !('error' in last) && last.checkpointed === last.log && last.log >= 400;
      });
      await store.close();
      // Closed: the thread has closed its connection too, and the data is all there.
      const reopened = new SQLite(file, { readonly: true });
      assert.equal((reopened.prepare('select count(*) as n from filler').get() as { n: number }).n, 400);
      reopened.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with checkpointEveryMs 0 the writing connection checkpoints as SQLite does by default', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-ckpt-'));
    const file = path.join(dir, 'test.db');
    try {
      const store = await openStore(`sqlite:${file}`, { checkpointEveryMs: 0 });
      assert.equal(store.checkpointer, null);
      await sql`create table filler (id integer primary key, body text not null)`.execute(store.db);
      // 1,200 pages in all: past the default auto-checkpoint of 1,000, run by the committing connection.
      for (let i = 0; i < 120; i++) {
        await store.db
          .insertInto('filler' as never)
          .values(Array.from({ length: 10 }, (_, j) => ({ id: i * 10 + j, body: 'x'.repeat(3000) })) as never)
          .execute();
      }
      const frames = walFrames(file);
      assert.ok(frames.log < 1000, `the writer restarted the WAL after its checkpoint (${frames.log} frames)`);
      await store.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('PostgreSQL stores have no checkpoint thread', { skip: PG_SKIP }, async () => {
    const store = await openStore(PG_URL!);
    assert.equal(store.checkpointer, null);
    await store.close();
  });
});
