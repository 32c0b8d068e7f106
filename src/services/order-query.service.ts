import { fieldError, notFound } from '../domain/errors.ts';
import { timeWindow } from '../domain/time.ts';
import { presentOrder, type OrderRecord } from '../http/present-order.ts';
import type { OrderQuery } from '../schemas/orders.ts';
import { handleOf } from '../store/tenancy.ts';

import * as orders from '../store/orders.repository.ts';

export const MAX_ORDER_IDS = 100;
const DEFAULT_PAGE_SIZE = 10;


/** `"1,2, 3"` → [1,2,3]; at most 100; each a decimal id. */
export function parseIdList(text: string | undefined): number[] | null {
  if (text === undefined || text.trim() === '') return null;
  const parts = [...new Set(text.split(',').map((s) => s.trim()).filter((s) => s !== ''))];
  if (parts.length > MAX_ORDER_IDS) throw fieldError('ids', `at most ${MAX_ORDER_IDS} ids per request (got ${parts.length})`, { limit: MAX_ORDER_IDS });
  const bad = parts.find((p) => !/^[0-9]{1,18}$/.test(p));
  if (bad !== undefined) throw fieldError('ids', `"${bad}" is not an order id`);
  return parts.map(Number);
}

/** SPEC §4.6: filters, paging (never clamped), newest first or update-ascending for sync. */
export async function queryOrders(reader: orders.OrderReader, q: OrderQuery) {
  const ids = parseIdList(q.ids);
  const { start: createStart, end: createEnd } = timeWindow(['createStartTime', q.createStartTime], ['createEndTime', q.createEndTime]);
  const { start: updateStart, end: updateEnd } = timeWindow(['updateStartTime', q.updateStartTime], ['updateEndTime', q.updateEndTime]);
  const pageNumber = q.pageNumber ?? 1;
  const pageSize = q.pageSize ?? DEFAULT_PAGE_SIZE;
  const page = await orders.pageOrderIds(reader, { ids, createStart, createEnd, updateStart, updateEnd, offset: (pageNumber - 1) * pageSize, limit: pageSize });
  const list: OrderRecord[] = (await orders.loadOrders(handleOf(reader), page.ids)).map(presentOrder);
  return { total: page.total, pageNumber, pageSize, list };
}

/** One order by its parent or split id; another tenant's order is indistinguishable from none. */
export async function getOrder(reader: orders.OrderReader, rawId: string): Promise<OrderRecord> {
  if (!/^[0-9]{1,18}$/.test(rawId)) throw notFound('order');
  const orderId = await orders.resolveOrderId(reader, Number(rawId));
  if (orderId === null) throw notFound('order');
  const [aggregate] = await orders.loadOrders(handleOf(reader), [orderId]);
  return presentOrder(aggregate);
}
