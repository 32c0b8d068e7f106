import type { Handle } from './db.ts';

/** What /metrics reports of the stored state: counts only, each one aggregate query. */

export async function ordersByStatus(db: Handle) {
  const rows = await db
    .selectFrom('orders')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
}

export async function refundsByStatus(db: Handle) {
  const rows = await db
    .selectFrom('refunds')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  return rows.map((r) => ({ status: r.status, n: Number(r.n) }));
}

/** Pending refunds created before `cutoff` (past the SLA). */
export async function pendingRefundsBefore(db: Handle, cutoff: number): Promise<number> {
  const r = await db
    .selectFrom('refunds')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'pending_review')
    .where('created_at', '<', cutoff)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Pending refunds the worker gave up on (manual review), or that it will try again after a failed attempt. */
export async function pendingRefundsIn(db: Handle, state: 'manual_review' | 'retrying'): Promise<number> {
  let q = db
    .selectFrom('refunds')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'pending_review');
  q = state === 'manual_review' ? q.where('manual_review', '=', 1) : q.where('manual_review', '=', 0).where('last_error', 'is not', null);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

export async function stockRowCount(db: Handle): Promise<number> {
  const r = await db
    .selectFrom('stocks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}
