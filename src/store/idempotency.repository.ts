import type { Handle } from './db.ts';

export interface KeyRef {
  merchantId: number;
  key: string;
}

const where = (r: KeyRef) => ({ merchant_id: r.merchantId, idempotency_key: r.key });

/** Inserts the key as in flight; false when a row for it already exists. */
export async function claimKey(db: Handle, r: KeyRef, requestHash: string, now: number, ttlMs: number): Promise<boolean> {
  const inserted = await db
    .insertInto('idempotency_keys')
    .values({ ...where(r), request_hash: requestHash, state: 'in_flight', response_status: null, response_body: null, created_at: now, expires_at: now + ttlMs })
    .onConflict((oc) => oc.columns(['merchant_id', 'idempotency_key']).doNothing())
    .returning('merchant_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export const findKey = (db: Handle, r: KeyRef) =>
  db.selectFrom('idempotency_keys').selectAll().where('merchant_id', '=', r.merchantId).where('idempotency_key', '=', r.key).executeTakeFirst();

/** Removes the key if it expired (so it can be claimed afresh). */
export async function deleteExpiredKey(db: Handle, r: KeyRef, now: number): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('merchant_id', '=', r.merchantId).where('idempotency_key', '=', r.key).where('expires_at', '<=', now).execute();
}

/** Takes over an in-flight claim whose owner died (its claim time is older than `staleBefore`). */
export async function takeOverStaleKey(db: Handle, r: KeyRef, staleBefore: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ created_at: now })
    .where('merchant_id', '=', r.merchantId)
    .where('idempotency_key', '=', r.key)
    .where('state', '=', 'in_flight')
    .where('created_at', '<', staleBefore)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function completeKey(db: Handle, r: KeyRef, status: number, body: string): Promise<void> {
  await db.updateTable('idempotency_keys').set({ state: 'done', response_status: status, response_body: body }).where('merchant_id', '=', r.merchantId).where('idempotency_key', '=', r.key).execute();
}

export async function releaseKey(db: Handle, r: KeyRef): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('merchant_id', '=', r.merchantId).where('idempotency_key', '=', r.key).where('state', '=', 'in_flight').execute();
}
