import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { AppError } from '../../src/domain/errors.ts';
import { httpStatus } from '../../src/http/errors.ts';
import { purgeExpiredKeys, requestHash, runIdempotent, type IdempotencyScope, type KeyStore } from '../../src/services/idempotency.service.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { DIALECTS, PG_URL, freshStore } from '../helpers.ts';

/** A promise and the function that settles it: the test decides when the owner's work ends. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const scope = (key: string, hash = 'h-1'): IdempotencyScope => ({ merchantId: 7, key, request: hash, requestId: 'req-test' });
const markers = async (store: Store) =>
  (await store.db.selectFrom('storage_probe').select('id').where('id', '>=', 1000).orderBy('id').execute()).map((r) => r.id);
const writeMarker = (id: number) => async (trx: Parameters<Parameters<typeof runIdempotent>[2]>[0]) => {
  await trx.insertInto('storage_probe').values({ id, probed_at: 0 }).execute();
  return id;
};
const asData = (id: number) => ({ data: id });

async function inFlightRefusal(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (e: unknown) => e instanceof AppError && httpStatus(e) === 409 && e.code === 40900 && /in flight/.test(e.message));
}

/**
 * SPEC §4.4: a key's request runs at most once — concurrent or late retries never run it again,
 * and no claim is taken over by time while its owner may still be running — and a retry after the
 * owner died is answered at once. The claim is the owner's transaction.
 */
for (const dialect of DIALECTS) {
  describe(`Idempotency-Key claims (${dialect})`, () => {
    /**
     * Each test on a database of its own (dropped when the test ends), so any one runs alone. It
     * holds the markers of the requests that ran before the test's own (`earlier`, written as they
     * left them), so the test's list of markers reads what its requests added or rolled back.
     */
    const build = async (ctx: TestContext, earlier: number[] = []) => {
      const fresh = await freshStore(dialect);
      ctx.after(() => fresh.drop());
      for (const id of earlier) await fresh.store.db.insertInto('storage_probe').values({ id, probed_at: 0 }).execute();
      return fresh;
    };

    it('a slow owner and a late retry run the request once, however old the claim looks', async (ctx) => {
      const { store } = await build(ctx);
      const owner = gate();
      const started = gate();
      // An earlier design committed an in-flight claim first and took it over after 60 s: age
      // every key row as if a long time had passed while the owner still runs (on SQLite from
      // inside the owner's transaction, which holds the only connection).
      const age = sql`update idempotency_keys set created_at = created_at - 7200000`;
      const first = runIdempotent(
        store,
        scope('slow'),
        async (trx) => {
          const id = await writeMarker(1001)(trx);
          if (dialect === 'sqlite') await age.execute(trx);
          started.open();
          await owner.opened;
          return id;
        },
        asData,
      );
      await started.opened;
      if (dialect === 'postgres') await age.execute(store.db);
      let ranAgain = false;
      const retry = () =>
        runIdempotent(
          store,
          scope('slow'),
          async (trx) => {
            ranAgain = true;
            return writeMarker(1002)(trx);
          },
          asData,
        );
      await inFlightRefusal(retry());
      owner.open();
      const done = await first;
      assert.deepEqual(
        { status: done.status, replayed: done.replayed, body: done.body },
        { status: 200, replayed: false, body: { code: 10000, message: 'success', data: 1001 } },
      );
      const replay = await retry();
      assert.equal(replay.replayed, true);
      assert.deepEqual(replay.body, done.body);
      assert.equal(ranAgain, false, 'the retry never ran the request');
      assert.deepEqual(await markers(store), [1001]);
    });

    it('stores a refusal with nothing of its work, and replays it; a different request is a conflict', async (ctx) => {
      const { store } = await build(ctx, [1001]);
      const refuse = () =>
        runIdempotent(
          store,
          scope('refused'),
          async (trx) => {
            await writeMarker(1003)(trx);
            throw new AppError('unprocessable', 42200, 'not enough stock');
          },
          asData,
        );
      await assert.rejects(refuse(), (e: unknown) => e instanceof AppError && httpStatus(e) === 422);
      assert.deepEqual(await markers(store), [1001], 'the refused work was rolled back');
      const replay = await refuse();
      assert.equal(replay.status, 422);
      assert.equal(replay.replayed, true);
      assert.equal((replay.body as { code: number; requestId: string }).code, 42200);
      assert.equal((replay.body as { requestId: string }).requestId, 'req-test');
      await assert.rejects(
        runIdempotent(store, scope('refused', 'h-other'), writeMarker(1004), asData),
        (e: unknown) => e instanceof AppError && e.code === 40900 && /different request/.test(e.message),
      );
    });

    it('stores nothing for a failure (5xx): the retry runs the request', async (ctx) => {
      const { store } = await build(ctx, [1001]);
      await assert.rejects(
        runIdempotent(
          store,
          scope('failed'),
          async (trx) => {
            await writeMarker(1005)(trx);
            throw new Error('disk on fire');
          },
          asData,
        ),
        /disk on fire/,
      );
      const retry = await runIdempotent(store, scope('failed'), writeMarker(1006), asData);
      assert.equal(retry.replayed, false);
      assert.deepEqual(await markers(store), [1001, 1006]);
    });

    it('work that writes the key row itself is not saved again; a row of another response fails and stores nothing', async (ctx) => {
      const { store } = await build(ctx, [1001]);
      /** Writes marker `id` and the key row of the response `claimed` would get (the PostgreSQL order's way: in its own statement). */
      const storingItself =
        (id: number, claimed: number) =>
        async (trx: Parameters<Parameters<typeof runIdempotent>[2]>[0], key: Parameters<Parameters<typeof runIdempotent<number>>[2]>[1]) => {
          await writeMarker(id)(trx);
          const row = key!.rowFor(claimed);
          await trx.insertInto('idempotency_keys').values(row).execute();
          key!.stored(row);
          return id;
        };
      // Saved a second time, the key row would be a unique violation on every attempt.
      const done = await runIdempotent(store, scope('itself'), storingItself(1010, 1010), asData);
      assert.deepEqual(
        { status: done.status, replayed: done.replayed, body: done.body },
        { status: 200, replayed: false, body: { code: 10000, message: 'success', data: 1010 } },
      );
      const replay = await runIdempotent(store, scope('itself'), writeMarker(1011), asData);
      assert.deepEqual({ replayed: replay.replayed, body: replay.body }, { replayed: true, body: done.body });
      await assert.rejects(runIdempotent(store, scope('other-answer'), storingItself(1012, 9999), asData), /stored another response/);
      const rows = await store.db.selectFrom('idempotency_keys').select('idempotency_key').where('idempotency_key', '=', 'other-answer').execute();
      assert.deepEqual(rows, []);
      assert.deepEqual(await markers(store), [1001, 1010]);
      // A kept refusal after the work wrote its key row rolls the row back with the work and stores the refusal.
      const refusedAfter = () =>
        runIdempotent(
          store,
          scope('refused-after'),
          async (trx, key) => {
            await storingItself(1013, 1013)(trx, key);
            throw new AppError('unprocessable', 42200, 'not enough stock');
          },
          asData,
        );
      await assert.rejects(refusedAfter(), (e: unknown) => e instanceof AppError && e.code === 42200);
      assert.equal((await refusedAfter()).status, 422, 'the refusal was stored and is replayed');
      assert.deepEqual(await markers(store), [1001, 1010]);
    });

    it('a response stored between the lookup and the transaction is replayed; this request’s work is rolled back', async (ctx) => {
      const { store } = await build(ctx, [1001, 1006]);
      // Another instance finishes the same key after this request looked it up and before its
      // transaction took the key: the transaction does not read the key again (a new key's fast
      // path), so its own insert of the key must send it back to read it.
      const other = { status: 200, body: { code: 0, data: 'from the other instance' } };
      let raced = false;
      const racing: KeyStore = {
        ...store,
        db: new Proxy(store.db, {
          get(target, property) {
            if (property !== 'transaction') {
              // Kysely's private fields need the real object as `this`.
              const value = Reflect.get(target, property);
              return typeof value === 'function' ? value.bind(target) : value;
            }
            return () => ({
              execute: async (work: Parameters<ReturnType<typeof target.transaction>['execute']>[0]) => {
                if (!raced) {
                  raced = true;
                  await target
                    .insertInto('idempotency_keys')
                    .values({
                      merchant_id: 7,
                      idempotency_key: 'raced',
                      request_hash: requestHash('h-1'),
                      state: 'done',
                      response_status: other.status,
                      response_body: JSON.stringify(other.body),
                      created_at: Date.now(),
                      expires_at: Date.now() + 3600_000,
                    })
                    .execute();
                }
                return target.transaction().execute(work);
              },
            });
          },
        }),
      };
      const answer = await runIdempotent(racing, scope('raced'), writeMarker(1007), asData);
      assert.equal(raced, true);
      assert.deepEqual({ status: answer.status, replayed: answer.replayed, body: answer.body }, { ...other, replayed: true });
      assert.deepEqual(await markers(store), [1001, 1006], 'the work ran at most once and was rolled back');
    });

    it('forgets an expired key; honours an earlier version’s in-flight claim for an hour, then takes it over', async (ctx) => {
      const { store } = await build(ctx, [1001, 1006]);
      const now = Date.now();
      await store.db
        .insertInto('idempotency_keys')
        .values([
          {
            merchant_id: 7,
            idempotency_key: 'expired',
            request_hash: requestHash('h-1'),
            state: 'done',
            response_status: 200,
            response_body: '{"data":0}',
            created_at: now - 90_000_000,
            expires_at: now - 1,
          },
          {
            merchant_id: 7,
            idempotency_key: 'legacy',
            request_hash: requestHash('h-1'),
            state: 'in_flight',
            response_status: null,
            response_body: null,
            created_at: now - 120_000,
            expires_at: now + 86_000_000,
          },
        ])
        .execute();
      const fresh = await runIdempotent(store, scope('expired'), writeMarker(1007), asData);
      assert.equal(fresh.replayed, false);
      await inFlightRefusal(runIdempotent(store, scope('legacy'), writeMarker(1008), asData));
      await store.db
        .updateTable('idempotency_keys')
        .set({ created_at: now - 3_700_000 })
        .where('idempotency_key', '=', 'legacy')
        .execute();
      assert.equal((await runIdempotent(store, scope('legacy'), writeMarker(1008), asData)).replayed, false);
      assert.deepEqual(await markers(store), [1001, 1006, 1007, 1008]);
    });

    it('purges expired keys in bounded batches', async (ctx) => {
      const { store } = await build(ctx);
      // A live key beside the expired ones: a request that ran a moment ago.
      await runIdempotent(store, scope('live'), writeMarker(1001), asData);
      const now = Date.now();
      const rows = Array.from({ length: 2500 }, (_, i) => ({
        merchant_id: 8,
        idempotency_key: `old-${i}`,
        request_hash: 'h',
        state: 'done' as const,
        response_status: 200,
        response_body: '{}',
        created_at: now - 90_000_000,
        expires_at: now - 1000 + (i % 7),
      }));
      for (let i = 0; i < rows.length; i += 500)
        await store.db
          .insertInto('idempotency_keys')
          .values(rows.slice(i, i + 500))
          .execute();
      const live = await store.db.selectFrom('idempotency_keys').select('idempotency_key').where('expires_at', '>', now).execute();
      assert.equal(await purgeExpiredKeys(store.db, now, 2), 2000, 'two batches of 1000, then it stops');
      assert.equal(await purgeExpiredKeys(store.db, now, 2), 500, 'the rest');
      assert.equal(await purgeExpiredKeys(store.db, now, 2), 0);
      const left = await store.db.selectFrom('idempotency_keys').select('idempotency_key').execute();
      assert.deepEqual(left.map((r) => r.idempotency_key).sort(), live.map((r) => r.idempotency_key).sort(), 'every live key stays');
      assert.ok(left.length > 0);
    });

    if (dialect === 'postgres') {
      it('another instance hears "in flight" while the owner runs, and runs the request once the owner’s session dies', async (ctx) => {
        const fresh = await build(ctx, [1001, 1006, 1007, 1008]);
        const store = fresh.store;
        const other: KeyStore = await openStore(PG_URL!, { schema: fresh.schema!, poolSize: 2 });
        try {
          const started = gate();
          let ownerPid = 0;
          const owner = runIdempotent(
            store,
            scope('crash'),
            async (trx) => {
              await writeMarker(1009)(trx);
              const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
              ownerPid = rows[0].pid;
              started.open();
              // Holds the transaction open until its connection is killed below.
              await sql`select pg_sleep(30)`.execute(trx);
              return rows[0].pid;
            },
            asData,
          );
          owner.catch(() => undefined);
          await started.opened;
          await inFlightRefusal(runIdempotent(other, scope('crash'), writeMarker(1010), asData));
          // The owner's process dies: its database session ends with it (as on kill -9).
          const held = await sql<{ pid: number }>`select pid from pg_locks where locktype = 'advisory' and granted and pid = ${ownerPid}`.execute(other.db);
          assert.equal(held.rows.length, 1, 'the owner holds its key as an advisory lock');
          await sql`select pg_terminate_backend(${ownerPid})`.execute(other.db);
          await assert.rejects(owner);
          const retried = await runIdempotent(other, scope('crash'), writeMarker(1010), asData);
          assert.equal(retried.replayed, false);
          assert.deepEqual(await markers(store), [1001, 1006, 1007, 1008, 1010], 'the dead owner wrote nothing; the retry ran once');
        } finally {
          await (other as Store).close();
        }
      });
    }
  });
}
