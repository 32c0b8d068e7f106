import { sql, type Insertable } from 'kysely';
import type { Dialect, Handle, Trx } from './db.ts';
import { prepared } from './prepared.ts';
import type { IdempotencyKeysTable } from './schema.ts';

export interface KeyRef {
  merchantId: number;
  key: string;
}

const keyRow = prepared((db, merchantId: number, key: string) =>
  db.selectFrom('idempotency_keys').selectAll().where('merchant_id', '=', merchantId).where('idempotency_key', '=', key),
);

export const findKey = (db: Handle, r: KeyRef) => keyRow.first(db, r.merchantId, r.key);

/**
 * Claims the key for the rest of `trx`, without waiting: false when another transaction holds it.
 * PostgreSQL: a transaction-scoped advisory lock, released by COMMIT, ROLLBACK or the end of the
 * session — so a killed owner (its connection closes) frees the key at once. SQLite: a write
 * transaction already excludes every other one (BEGIN IMMEDIATE), so holding it is the claim.
 */
export async function lockKey(trx: Trx, dialect: Dialect, r: KeyRef): Promise<boolean> {
  if (dialect === 'sqlite') return true;
  const row = await keyLock.first(trx, `idempotency:${r.merchantId}:${r.key}`);
  return row?.locked === true;
}

const keyLock = prepared((_db, lockName: string) => sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${lockName}, 0)) as locked`);

/** A finished response's row, for `insertDoneKey` or for a statement of the work that writes it itself. */
export function doneKeyValues(
  r: KeyRef,
  row: { requestHash: string; status: number; body: string; now: number; ttlMs: number },
): Insertable<IdempotencyKeysTable> {
  return {
    merchant_id: r.merchantId,
    idempotency_key: r.key,
    request_hash: row.requestHash,
    state: 'done',
    response_status: row.status,
    response_body: row.body,
    created_at: row.now,
    expires_at: row.now + row.ttlMs,
  };
}

/** Writes the finished response, in the transaction of the work it reports. */
export async function insertDoneKey(
  trx: Trx,
  r: KeyRef,
  row: { requestHash: string; status: number; body: string; now: number; ttlMs: number },
): Promise<void> {
  await doneKeyRow.run(trx, doneKeyValues(r, row));
}

const doneKeyRow = prepared((db, row: Insertable<IdempotencyKeysTable>) => db.insertInto('idempotency_keys').values(row));

/** Removes a key row that no longer counts (expired, or an abandoned claim of an earlier version). */
export async function deleteKey(trx: Trx, r: KeyRef): Promise<void> {
  await trx.deleteFrom('idempotency_keys').where('merchant_id', '=', r.merchantId).where('idempotency_key', '=', r.key).execute();
}

/**
 * Deletes up to `limit` expired keys (oldest expiry first); returns how many. Bounded, so one call
 * never holds the write lock long however far behind the purge is.
 */
export async function purgeExpiredKeys(db: Trx, now: number, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('idempotency_keys')
    .where((eb) =>
      eb(
        eb.refTuple('merchant_id', 'idempotency_key'),
        'in',
        eb
          .selectFrom('idempotency_keys as e')
          .select(['e.merchant_id', 'e.idempotency_key'])
          .where('e.expires_at', '<=', now)
          .orderBy('e.expires_at')
          .limit(limit)
          .$asTuple('merchant_id', 'idempotency_key'),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
