import { fieldError, notFound } from '../domain/errors.ts';
import { parseInstant } from '../domain/time.ts';
import { presentOrder, type OrderRecord } from '../http/present-order.ts';
import type { OrderQuery } from '../schemas/orders.ts';
import type { Handle } from '../store/db.ts';

/** Loading by ids already resolved within the reader's rows needs no further filter. */
const handleOf = (r: orders.OrderReader): Handle => ('handle' in r && 'merchantId' in r ? r.handle : (r as Handle));
import * as orders from '../store/orders.repository.ts';

export const MAX_ORDER_IDS = 100;
const DEFAULT_PAGE_SIZE = 10;

function instant(value: string | undefined, field: string): number | null {
  if (value === undefined || value.trim() === '') return null;
  const ms = parseInstant(value.trim());
  if (ms === null) throw fieldError(field, 'must be an ISO 8601 instant with Z or an offset, e.g. 2022-11-01T06:21:20Z');
  return ms;
}

function window(q: OrderQuery, startField: 'createStartTime' | 'updateStartTime', endField: 'createEndTime' | 'updateEndTime') {
  const start = instant(q[startField], startField);
  const end = instant(q[endField], endField);
  if (start !== null && end !== null && start > end) throw fieldError(startField, `must not be after ${endField}`);
  return [start, end] as const;
}

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
  const [createStart, createEnd] = window(q, 'createStartTime', 'createEndTime');
  const [updateStart, updateEnd] = window(q, 'updateStartTime', 'updateEndTime');
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
