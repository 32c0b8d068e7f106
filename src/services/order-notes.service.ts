import type { Actor } from '../domain/audit.ts';
import { fieldError, notFound } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import { insertAudit } from '../store/audit.repository.ts';
import type { Db, Handle } from '../store/db.ts';
import { deleteOrderNote, findOrderNote, saveOrderNote } from '../store/order-notes.repository.ts';
import { resolveOrderId } from '../store/orders.repository.ts';
import { allMerchants } from '../store/tenancy.ts';

/** The longest internal note (a few paragraphs). */
export const MAX_ORDER_NOTE = 2000;

/** The order's internal note for the console (null when there is none): its text, who saved it last, when. */
export async function orderNoteForOperator(db: Handle, orderId: number) {
  const row = await findOrderNote(db, orderId);
  return row ? { note: row.note, author: row.author, createdAt: formatInstant(row.createdAt), updatedAt: formatInstant(row.updatedAt) } : null;
}

/**
 * A staff member writes (or rewrites) the internal note on an order; an empty note removes it.
 * Audited in the same transaction, without a merchant: the note is the operator's, never shown to
 * the order's merchant (not in the business manager's audit page, not in the merchant API).
 * Returns the order's id (the page to show next).
 */
export async function setOrderNote(db: Db, actor: Actor, requested: number, text: string, now: number): Promise<number> {
  // Line ends as the browser sends them (CRLF) are kept as LF; surrounding blank space is dropped.
  const note = text.replace(/\r\n?/g, '\n').trim();
  if (note.length > MAX_ORDER_NOTE) throw fieldError('note', `is ${note.length} characters long; at most ${MAX_ORDER_NOTE}`);
  if (actor.kind !== 'staff') throw new Error('order notes are written by staff');
  return db.transaction().execute(async (trx) => {
    const orderId = await resolveOrderId(allMerchants(trx), requested);
    if (orderId === null) throw notFound('order');
    const before = await findOrderNote(trx, orderId);
    if (note === '') await deleteOrderNote(trx, orderId);
    else await saveOrderNote(trx, orderId, note, Number(actor.id), now);
    await insertAudit(
      trx,
      actor,
      {
        action: 'order.note',
        target: `order:${orderId}`,
        before: before ? { note: before.note.slice(0, 200), author: before.author } : null,
        after: note === '' ? null : { note: note.slice(0, 200), length: note.length },
      },
      now,
    );
    return orderId;
  });
}
