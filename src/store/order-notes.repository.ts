import type { Handle, Trx } from './db.ts';

/**
 * The operator's internal note on an order (migration 0040). Operator-only: no merchant scope
 * reads it, and neither the merchant API nor the business manager shows it.
 */
export const findOrderNote = (db: Handle, orderId: number) =>
  db
    .selectFrom('order_notes')
    .innerJoin('staff_users', 'staff_users.id', 'order_notes.author_staff_id')
    .select(['order_notes.note as note', 'staff_users.email as author', 'order_notes.created_at as createdAt', 'order_notes.updated_at as updatedAt'])
    .where('order_notes.order_id', '=', orderId)
    .executeTakeFirst();

/** Writes the note (the first one, or a new text of it); the author becomes whoever saved it last. */
export async function saveOrderNote(trx: Trx, orderId: number, note: string, authorStaffId: number, now: number): Promise<void> {
  await trx
    .insertInto('order_notes')
    .values({ order_id: orderId, note, author_staff_id: authorStaffId, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('order_id').doUpdateSet({ note, author_staff_id: authorStaffId, updated_at: now }))
    .execute();
}

export async function deleteOrderNote(trx: Trx, orderId: number): Promise<void> {
  await trx.deleteFrom('order_notes').where('order_id', '=', orderId).execute();
}
