import type { Handle } from './db.ts';

const count = (row: { n: string | number | bigint } | undefined) => Number(row?.n ?? 0);

/** The operator dashboard's numbers, each one indexed count. */
export async function dashboardCounts(db: Handle, since: number, slaCutoff: number) {
  const [orders, refunds, pending, overSla] = await Promise.all([
    db
      .selectFrom('orders')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('created_at', '>=', since)
      .executeTakeFirst(),
    db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('created_at', '>=', since)
      .executeTakeFirst(),
    db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'pending_review')
      .executeTakeFirst(),
    db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('status', '=', 'pending_review')
      .where('created_at', '<', slaCutoff)
      .executeTakeFirst(),
  ]);
  return { orders: count(orders), refunds: count(refunds), pendingRefunds: count(pending), overSla: count(overSla) };
}
