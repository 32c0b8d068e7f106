import { FormAlreadySent, FORM_KEY_TTL_MS, type FormKey } from '../domain/form-keys.ts';
import type { Handle, Trx } from './db.ts';

/**
 * One-time form keys and one-time page displays of the web front ends (migration 0033; design:
 * docs/decisions.md, "Form posts").
 */

/**
 * Records a form's key in the transaction of the write it guards. A key recorded by another
 * request (committed, or committing: PostgreSQL's insert waits for it) throws FormAlreadySent and
 * the write rolls back; the same request recording it twice (a write with two audit rows) is fine.
 */
export async function consumeFormKey(trx: Trx, formKey: FormKey, requestId: string, now: number): Promise<void> {
  const inserted = await trx
    .insertInto('web_form_keys')
    .values({ form_key: formKey.key, session_hash: formKey.sessionHash, request_id: requestId, result_path: null, created_at: now })
    .onConflict((oc) => oc.column('form_key').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return;
  const first = await trx
    .selectFrom('web_form_keys')
    .select(['request_id', 'session_hash', 'result_path'])
    .where('form_key', '=', formKey.key)
    .executeTakeFirst();
  if (first?.request_id === requestId) return;
  throw new FormAlreadySent(first?.session_hash === formKey.sessionHash ? first.result_path : null);
}

/** A key this session used already, with where its answer went; null when the key is new (or another session's). */
export async function usedFormKey(db: Handle, formKey: FormKey): Promise<{ resultPath: string | null } | null> {
  const row = await db
    .selectFrom('web_form_keys')
    .select('result_path')
    .where('form_key', '=', formKey.key)
    .where('session_hash', '=', formKey.sessionHash)
    .executeTakeFirst();
  return row ? { resultPath: row.result_path } : null;
}

/** After the write committed: where its answer sent the browser, for a later resubmission. Forgets keys past their time. */
export async function recordFormResult(db: Trx, formKey: FormKey, requestId: string, resultPath: string, now: number): Promise<void> {
  await db.updateTable('web_form_keys').set({ result_path: resultPath }).where('form_key', '=', formKey.key).where('request_id', '=', requestId).execute();
  await db
    .deleteFrom('web_form_keys')
    .where('created_at', '<', now - FORM_KEY_TTL_MS)
    .execute();
}

/** A one-time display kept for a session's next page: replaces an unread one of the same slot. */
export async function putFlash(db: Trx, sessionHash: string, slot: string, payload: string, now: number, ttlMs: number): Promise<void> {
  await db
    .insertInto('web_flashes')
    .values({ session_hash: sessionHash, slot, payload, created_at: now })
    .onConflict((oc) => oc.columns(['session_hash', 'slot']).doUpdateSet({ payload, created_at: now }))
    .execute();
  await db
    .deleteFrom('web_flashes')
    .where('created_at', '<', now - ttlMs)
    .execute();
}

/** Reads and forgets a session's display of one slot (null when none, or past its time). */
/** Whether the session has a one-time display waiting in this slot (a read: most pages have none). */
export async function hasFlash(db: Handle, sessionHash: string, slot: string): Promise<boolean> {
  const row = await db.selectFrom('web_flashes').select('slot').where('session_hash', '=', sessionHash).where('slot', '=', slot).executeTakeFirst();
  return row !== undefined;
}

export async function takeFlash(db: Trx, sessionHash: string, slot: string, now: number, ttlMs: number): Promise<string | null> {
  const row = await db
    .deleteFrom('web_flashes')
    .where('session_hash', '=', sessionHash)
    .where('slot', '=', slot)
    .returning(['payload', 'created_at'])
    .executeTakeFirst();
  return row && row.created_at >= now - ttlMs ? row.payload : null;
}

/** A form sent after its session ended (migration 0048): kept under its handle's hash; older ones past `ttlMs` go. */
export async function putKeptForm(
  db: Trx,
  row: { handleHash: string; page: string; action: string; sealed: string },
  now: number,
  ttlMs: number,
): Promise<void> {
  await db
    .insertInto('web_kept_forms')
    .values({ handle_hash: row.handleHash, page: row.page, action: row.action, sealed: row.sealed, created_at: now })
    .execute();
  await purgeKeptForms(db, now, ttlMs);
}

/** The kept form of a handle, while it lasts; null when none. */
export async function findKeptForm(db: Handle, handleHash: string, now: number, ttlMs: number) {
  const row = await db
    .selectFrom('web_kept_forms')
    .select(['page', 'action', 'sealed'])
    .where('handle_hash', '=', handleHash)
    .where('created_at', '>=', now - ttlMs)
    .executeTakeFirst();
  return row ?? null;
}

/** Forgets a kept form (it was filled back in); true when this call removed it. */
export async function deleteKeptForm(db: Trx, handleHash: string): Promise<boolean> {
  const result = await db.deleteFrom('web_kept_forms').where('handle_hash', '=', handleHash).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Kept forms past their time (nobody signed in again for them): deleted. */
export async function purgeKeptForms(db: Trx, now: number, ttlMs: number): Promise<number> {
  const result = await db
    .deleteFrom('web_kept_forms')
    .where('created_at', '<', now - ttlMs)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
