import { isUniqueViolation } from '../store/faults.ts';
import { createHash } from 'node:crypto';
import { AppError, isKeptRefusal } from '../domain/errors.ts';
import { rollbackToSavepoint, savepoint, type Db, type Dialect, type Trx } from '../store/db.ts';
import * as keys from '../store/idempotency.repository.ts';
import { envelopeStatus, errorEnvelope, successEnvelope } from '../present/envelope.ts';

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/**
 * Versions before the owned claims stored an `in_flight` row before running the request. Such a
 * row is honoured while its owner may still be running — REQUEST_TIMEOUT_MS is at most an hour —
 * and taken over after that. This version writes only finished responses.
 */
const LEGACY_CLAIM_MS = 3600 * 1000;

export const idempotencyConflict = (message: string) => new AppError('conflict', 40900, message);

/** Thrown inside an attempt to roll it back and run it again (a lost race, a deadlock victim). */
export class RetryAttempt extends Error {}

export interface StoredResponse {
  status: number;
  body: unknown;
  /** True when this is a replay of an earlier request's response. */
  replayed: boolean;
}

/** JSON with sorted keys: the same request always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

export const requestHash = (value: unknown) => createHash('sha256').update(canonical(value)).digest('hex');

const RETRYABLE_DB_CODES = new Set(['40001', '40P01', 'SQLITE_BUSY']);

/** Unique violations and serialization failures mean "someone else got there first": try again. */
function isRetryable(error: unknown): boolean {
  if (error instanceof RetryAttempt) return true;
  if (error instanceof AppError) return false;
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  // SQLITE_BUSY_SNAPSHOT: another process committed after this transaction's first read (WAL); only a fresh attempt can succeed.
  return RETRYABLE_DB_CODES.has(code) || code.startsWith('SQLITE_BUSY') || isUniqueViolation(error);
}

/** PostgreSQL's deadlock victim and serialization failure: the transaction did nothing, and a fresh one can succeed. */
const LOST_RACE_CODES = new Set(['40001', '40P01']);

/**
 * Runs `attempt` (one whole transaction) again when the database chose it as a deadlock's victim or
 * failed its serialization — up to 5 times — instead of answering 500: for the operator's writes
 * that hold several rows another request may lock in another order (a claim's return into stock
 * and its credit or reshipment, while orders take the same stock). Nothing else is retried: a
 * refusal or a unique violation means what it says there.
 */
export async function retryLostRaces<T>(attempt: () => Promise<T>): Promise<T> {
  for (let round = 1; ; round++) {
    try {
      return await attempt();
    } catch (error) {
      const code = String((error as { code?: unknown } | null)?.code ?? '');
      if (round >= 5 || !LOST_RACE_CODES.has(code)) throw error;
    }
  }
}

export interface IdempotencyScope {
  merchantId: number;
  /** The Idempotency-Key header, or null when the client sent none. */
  key: string | null;
  /**
   * The route and the normalised request, hashed (requestHash) only when a key was sent: a
   * request without one (most of them) never pays for hashing a large body.
   */
  request: unknown;
  requestId: string;
}

/** Where keys live: the database, and the keys this process is running now. */
export interface KeyStore {
  db: Db;
  dialect: Dialect;
  keysInFlight: Set<string>;
}

const inFlight = () => idempotencyConflict('a request with this Idempotency-Key is still in flight; retry after it completes');

/**
 * The Idempotency-Key's row, for an attempt that writes it in a statement of its own work (the
 * PostgreSQL order, store/order-placement.repository.ts: one round trip fewer). `rowFor(value)` is
 * the row of the response `value` will get; the attempt calls `stored(row)` once a statement of its
 * transaction wrote it, and the response is not saved again. The row is written after the
 * savepoint, like the work: a kept refusal after it rolls it back with the work.
 */
export interface KeyInWork<T> {
  rowFor(value: T): KeyRow;
  stored(row: KeyRow): void;
}

type KeyRow = ReturnType<typeof keys.doneKeyValues>;

/** A business refusal stored under its key: the transaction commits it, then the refusal is thrown. */
class Refused {
  constructor(readonly error: AppError) {}
}

/**
 * Runs `attempt` in a transaction (retried when it loses a race) and returns its envelope.
 * With an Idempotency-Key (SPEC §4.4) the claim is the transaction itself: it takes the key
 * (`lockKey`: an advisory lock on PostgreSQL, the write lock on SQLite), checks that no response
 * is stored, runs the work, and stores the response beside it — all or nothing. So a request runs
 * at most once per key (a repeat either finds the stored response or finds the key held: 409), no
 * claim is ever taken over by time, and a crashed owner's claim ends with its transaction: the
 * retry is answered as soon as the process or connection is gone. Business refusals (4xx) are
 * stored and replayed too (the work is rolled back to a savepoint, the refusal committed), but
 * not one that depends on the balance (42203, `isKeptRefusal`); failures (5xx) store nothing.
 */
export async function runIdempotent<T>(
  store: KeyStore,
  scope: IdempotencyScope,
  /** `key`: null without an Idempotency-Key; an attempt may also ignore it (the response is then saved after it). */
  attempt: (trx: Trx, key: KeyInWork<T> | null) => Promise<T>,
  present: (value: T) => { data: unknown; replayed?: boolean },
  now: () => number = Date.now,
): Promise<StoredResponse> {
  const run = async (trx: Trx, key: KeyInWork<T> | null): Promise<StoredResponse> => {
    const { data, replayed = false } = present(await attempt(trx, key));
    return { status: 200, body: successEnvelope(data), replayed };
  };
  if (scope.key === null) return inTransaction(store.db, (trx) => run(trx, null));
  const ref = { merchantId: scope.merchantId, key: scope.key };
  // First, before any query: on SQLite a query waits while the owner's transaction holds the connection.
  const local = `${ref.merchantId}\n${ref.key}`;
  if (store.keysInFlight.has(local)) throw inFlight();
  store.keysInFlight.add(local);
  try {
    // Most repeats are replays: answer them without a write transaction.
    const hash = requestHash(scope.request);
    const before = await keys.findKey(store.db, ref);
    const stored = settled(before, hash, now());
    if (stored) return stored;
    // A new key (the usual case) is not read again under the lock: one round trip less. Should a
    // request with the same key have stored its response in between, this attempt's own insert of
    // the key is a unique violation — the attempt rolls back, work and all, and runs again, and
    // that attempt reads the row under the lock as every retry does.
    let unread = before === undefined;
    /** The response body the attempt's own statement stored under the key, in this transaction. */
    let storedBody: string | null = null;
    const key: KeyInWork<T> = {
      rowFor: (value) =>
        keys.doneKeyValues(ref, {
          requestHash: hash,
          status: 200,
          body: JSON.stringify(successEnvelope(present(value).data)),
          now: now(),
          ttlMs: IDEMPOTENCY_TTL_MS,
        }),
      stored: (row) => {
        storedBody = row.response_body ?? null;
      },
    };
    const outcome = await inTransaction(store.db, async (trx): Promise<StoredResponse | Refused> => {
      storedBody = null;
      if (!(await keys.lockKey(trx, store.dialect, ref))) throw inFlight();
      const row = unread ? undefined : await keys.findKey(trx, ref);
      unread = false;
      const finished = settled(row, hash, now());
      if (finished) return finished;
      if (row) await keys.deleteKey(trx, ref);
      const save = (status: number, body: unknown) =>
        keys.insertDoneKey(trx, ref, { requestHash: hash, status, body: JSON.stringify(body), now: now(), ttlMs: IDEMPOTENCY_TTL_MS });
      await savepoint(trx, 'idempotent_work');
      try {
        const response = await run(trx, key);
        if (storedBody === null) await save(response.status, response.body);
        // A stored row that is not this response would replay another answer than the one given.
        else if (storedBody !== JSON.stringify(response.body)) throw new Error('runIdempotent: the work stored another response than it returned');
        return response;
      } catch (error) {
        // A refusal that depends on the balance rolls back with the key: a retry after a top-up runs again.
        if (!(error instanceof AppError) || !isKeptRefusal(error)) throw error;
        await rollbackToSavepoint(trx, 'idempotent_work');
        await save(envelopeStatus(error.code), errorEnvelope(error, scope.requestId));
        return new Refused(error);
      }
    });
    if (outcome instanceof Refused) throw outcome.error;
    return outcome;
  } finally {
    store.keysInFlight.delete(local);
  }
}

/**
 * `runIdempotent` for work whose only write is one statement that checks what the work read and
 * writes nothing when that changed (throwing RetryAttempt then): atomic on its own. Without an
 * Idempotency-Key, `unlocked` runs first, outside a transaction — no BEGIN and COMMIT, two round
 * trips fewer on PostgreSQL. If it lost a race (the rows changed, or the database chose it as a
 * deadlock's victim), and always with a key (the key's row commits with the work), `locked` runs in
 * runIdempotent's transaction: it locks before it reads, so under contention requests queue on the
 * lock instead of retrying each other out.
 */
export async function runCheckedStatement<T>(
  store: KeyStore,
  scope: IdempotencyScope,
  unlocked: () => Promise<T>,
  locked: (trx: Trx) => Promise<T>,
  present: (value: T) => { data: unknown },
): Promise<StoredResponse> {
  if (scope.key === null) {
    try {
      return { status: 200, body: successEnvelope(present(await unlocked()).data), replayed: false };
    } catch (error) {
      if (!isRetryable(error)) throw error;
    }
  }
  return runIdempotent(store, scope, (trx) => locked(trx), present);
}

/** Runs `work` in a transaction, again from the start when it lost a race (up to 8 times). */
async function inTransaction<R>(db: Db, work: (trx: Trx) => Promise<R>): Promise<R> {
  for (let round = 1; ; round++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (round < 8 && isRetryable(error)) continue;
      throw error;
    }
  }
}

/**
 * What a stored key row means for a request with `hash`: its stored response (a replay), a
 * conflict, or nothing to go by (no row, expired, or an earlier version's abandoned claim).
 */
function settled(row: Awaited<ReturnType<typeof keys.findKey>>, hash: string, now: number): StoredResponse | null {
  if (!row || row.expires_at <= now) return null;
  if (row.request_hash !== hash) throw idempotencyConflict('this Idempotency-Key was used with a different request');
  if (row.state === 'in_flight') {
    if (row.created_at > now - LEGACY_CLAIM_MS) throw inFlight();
    return null;
  }
  return { status: row.response_status!, body: JSON.parse(row.response_body!), replayed: true };
}

/** Keys deleted per statement: one statement never holds the write lock for long. */
const PURGE_BATCH = 1000;

/**
 * Deletes expired keys (SPEC §4.4: stored 24 h, purged after that) in batches of PURGE_BATCH, at
 * most `maxBatches` per call (600 a minute: 10,000 keys a second, beyond any intake this server
 * reaches); returns how many went. Run by the worker role (jobs/purger.ts).
 */
export async function purgeExpiredKeys(db: Db, now: number, maxBatches = 600): Promise<number> {
  let purged = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    // A transaction per batch: each commits on its own, so the write lock is never held long.
    const deleted = await db.transaction().execute((trx) => keys.purgeExpiredKeys(trx, now, PURGE_BATCH));
    purged += deleted;
    if (deleted < PURGE_BATCH) break;
  }
  return purged;
}
