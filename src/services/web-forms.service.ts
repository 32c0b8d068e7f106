import type { FormKey } from '../domain/form-keys.ts';
import type { Db, Handle } from '../store/db.ts';
import {
  deleteKeptForm,
  findKeptForm,
  hasFlash,
  purgeKeptForms,
  putFlash,
  putKeptForm,
  recordFormResult,
  takeFlash,
  usedFormKey,
} from '../store/web-forms.repository.ts';

/**
 * The web front ends' form posts (issue 29): a form key used already, where its answer went, and
 * the one-time displays (a message, a new secret) of the page a POST's 303 leads to. The key is
 * consumed in the write's own transaction by the audit row (store/audit.repository.ts); this is
 * what the front ends ask before and after. Design: docs/decisions.md, "Form posts".
 */

/** An unread one-time display lasts this long: the 303 is followed at once; a forgotten one goes. */
const FLASH_TTL_MS = 15 * 60_000;

export const formKeyUsed = (db: Handle, formKey: FormKey) => usedFormKey(db, formKey);

export const rememberFormResult = (db: Db, formKey: FormKey, requestId: string, resultPath: string, now: number) =>
  db.transaction().execute((trx) => recordFormResult(trx, formKey, requestId, resultPath, now));

export const keepFlash = (db: Db, sessionHash: string, slot: string, sealed: string, now: number) =>
  db.transaction().execute((trx) => putFlash(trx, sessionHash, slot, sealed, now, FLASH_TTL_MS));

/** Every signed-in page view asks (for a notice): one DELETE … RETURNING in its own transaction. */
export const popFlash = async (db: Db, sessionHash: string, slot: string, now: number) =>
  // Nearly every page view has no notice: a read answers that without the transaction a take
  // (a delete) needs, which on PostgreSQL would cost two more round trips on every page.
  (await hasFlash(db, sessionHash, slot)) ? db.transaction().execute((trx) => takeFlash(trx, sessionHash, slot, now, FLASH_TTL_MS)) : null;

/**
 * A form sent after its session ended lasts this long (Front ends III, 3): time to sign in again,
 * with a second factor, not a day on a shared computer.
 */
export const KEPT_FORM_TTL_MS = 15 * 60_000;

export const keepForm = (db: Db, row: { handleHash: string; page: string; action: string; sealed: string }, now: number) =>
  db.transaction().execute((trx) => putKeptForm(trx, row, now, KEPT_FORM_TTL_MS));

export const keptForm = (db: Handle, handleHash: string, now: number) => findKeptForm(db, handleHash, now, KEPT_FORM_TTL_MS);

/** True when this request took the kept form (a second tab filling it at once gets false). */
export const forgetKeptForm = (db: Db, handleHash: string) => db.transaction().execute((trx) => deleteKeptForm(trx, handleHash));

/** The worker's purge of kept forms nobody signed in again for (jobs/purger.ts). */
export const purgeExpiredKeptForms = (db: Db, now: number) => db.transaction().execute((trx) => purgeKeptForms(trx, now, KEPT_FORM_TTL_MS));
