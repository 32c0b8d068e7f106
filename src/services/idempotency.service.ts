import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import { AppError } from '../domain/errors.ts';
import type { Db } from '../store/db.ts';
import * as keys from '../store/idempotency.repository.ts';
import type { Database } from '../store/schema.ts';
import { errorEnvelope, successEnvelope } from '../present/envelope.ts';

const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** A claim older than this whose owner never finished is taken to be abandoned (a crashed process). */
const IN_FLIGHT_STALE_MS = 60 * 1000;

export const idempotencyConflict = (message: string) => new AppError(409, 40900, message);

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
  return RETRYABLE_DB_CODES.has(code) || code.startsWith('SQLITE_BUSY') || code === '23505' || code.startsWith('SQLITE_CONSTRAINT_UNIQUE') || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

export interface IdempotencyScope {
  merchantId: number;
  /** The Idempotency-Key header, or null when the client sent none. */
  key: string | null;
  /** Hash of the route and the normalised request. */
  hash: string;
  requestId: string;
}

/**
 * Runs `attempt` in a transaction (retried when it loses a race) and returns its envelope.
 * With an Idempotency-Key (SPEC §4.4): the first response is stored in the same transaction as
 * the work it reports, so a crash can never leave an order without its stored response or the
 * other way round; a repeat replays it; a different request or one still in flight is 409/40900.
 * Business refusals (4xx) are stored and replayed too; failures (5xx) release the key.
 */
export async function runIdempotent<T>(
  db: Db,
  scope: IdempotencyScope,
  attempt: (trx: Transaction<Database>) => Promise<T>,
  present: (value: T) => { data: unknown; replayed?: boolean },
  now: () => number = Date.now,
): Promise<StoredResponse> {
  const ref = scope.key === null ? null : { merchantId: scope.merchantId, key: scope.key };
  if (ref) {
    const replay = await claimOrReplay(db, ref, scope.hash, now());
    if (replay) return replay;
  }
  try {
    for (let round = 1; ; round++) {
      try {
        return await db.transaction().execute(async (trx) => {
          const { data, replayed = false } = present(await attempt(trx));
          const body = successEnvelope(data);
          if (ref) await keys.completeKey(trx, ref, 200, JSON.stringify(body));
          return { status: 200, body, replayed };
        });
      } catch (error) {
        if (round < 8 && isRetryable(error)) continue;
        throw error;
      }
    }
  } catch (error) {
    if (ref && error instanceof AppError && error.status < 500) {
      await keys.completeKey(db, ref, error.status, JSON.stringify(errorEnvelope(error, scope.requestId)));
    } else if (ref) {
      await keys.releaseKey(db, ref).catch(() => undefined);
    }
    throw error;
  }
}

async function claimOrReplay(db: Db, ref: keys.KeyRef, hash: string, now: number): Promise<StoredResponse | null> {
  for (let round = 0; round < 3; round++) {
    if (await keys.claimKey(db, ref, hash, now, IDEMPOTENCY_TTL_MS)) return null;
    const row = await keys.findKey(db, ref);
    if (!row) continue;
    if (row.expires_at <= now) {
      await keys.deleteExpiredKey(db, ref, now);
      continue;
    }
    if (row.request_hash !== hash) throw idempotencyConflict('this Idempotency-Key was used with a different request');
    if (row.state === 'in_flight') {
      if (await keys.takeOverStaleKey(db, ref, now - IN_FLIGHT_STALE_MS, now)) return null;
      throw idempotencyConflict('a request with this Idempotency-Key is still in flight; retry after it completes');
    }
    return { status: row.response_status!, body: JSON.parse(row.response_body!), replayed: true };
  }
  throw idempotencyConflict('this Idempotency-Key is contended; retry');
}
