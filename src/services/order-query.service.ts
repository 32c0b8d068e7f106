import { fieldError, notFound } from '../domain/errors.ts';
import { parseId } from '../domain/ids.ts';
import {
  ORDER_TOTAL_CAP,
  decodeOrderCursor,
  encodeOrderCursor,
  noFilters,
  sameFilters,
  sortModeOf,
  type OrderCursor,
  type OrderFilters,
} from '../domain/order-cursor.ts';
import { timeWindow } from '../domain/time.ts';
import { presentOrder } from '../present/order.presenter.ts';
import type { OrderRecord } from '../schemas/orders.ts';
import type { OrderQuery } from '../schemas/orders.ts';
import type { Handle } from '../store/db.ts';
import { allMerchants, type MerchantScope } from '../store/tenancy.ts';

import * as orders from '../store/orders.repository.ts';
import { pageOffset } from '../domain/paging.ts';

const MAX_ORDER_IDS = 100;
const DEFAULT_PAGE_SIZE = 10;

/** `"1,2, 3"` → [1,2,3]; at most 100; each a decimal id. */
function parseIdList(text: string | undefined): number[] | null {
  if (text === undefined || text.trim() === '') return null;
  const parts = [
    ...new Set(
      text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  ];
  if (parts.length > MAX_ORDER_IDS) throw fieldError('ids', `at most ${MAX_ORDER_IDS} ids per request (got ${parts.length})`, { limit: MAX_ORDER_IDS });
  const bad = parts.find((p) => parseId(p) === null);
  if (bad !== undefined) throw fieldError('ids', `"${bad}" is not an order id`);
  return parts.map((p) => parseId(p)!);
}

function filtersOf(q: OrderQuery, merchantId: number | null): OrderFilters {
  const ids = parseIdList(q.ids);
  const { start: createStart, end: createEnd } = timeWindow(['createStartTime', q.createStartTime], ['createEndTime', q.createEndTime]);
  const { start: updateStart, end: updateEnd } = timeWindow(['updateStartTime', q.updateStartTime], ['updateEndTime', q.updateEndTime]);
  return { ids: ids && [...ids].sort((a, b) => a - b), createStart, createEnd, updateStart, updateEnd, merchantId };
}

/**
 * SPEC §4.6: filters, then either page numbers (offset) or a keyset `cursor`; newest first, or
 * update-ascending for sync. Every page carries `nextCursor` (null after the last row). A cursor
 * carries its query: the request may repeat the filters (they must match) or leave them out.
 * `readerFor` gives the merchant's scope, or the operator's view narrowed by `merchantId`.
 */
async function runOrderQuery(readerFor: (merchantId: number | null) => orders.OrderReader, q: OrderQuery, merchantId: number | null) {
  let filters = filtersOf(q, merchantId);
  let cursor: OrderCursor | null = null;
  if (q.cursor !== undefined) {
    if (q.pageNumber !== undefined) throw fieldError('pageNumber', 'cannot be combined with cursor: follow nextCursor, or page by number without it');
    cursor = decodeOrderCursor(q.cursor.trim());
    if (cursor === null) throw fieldError('cursor', 'is not a cursor this API issued (pass nextCursor from a previous page unchanged)');
    if (noFilters(filters)) filters = cursor.filters;
    else if (!sameFilters(filters, cursor.filters))
      throw fieldError('cursor', 'belongs to a query with other filters: keep the filters of the walk, or leave them out');
  }
  const pageSize = q.pageSize ?? cursor?.pageSize ?? DEFAULT_PAGE_SIZE;
  const pageNumber = cursor?.page ?? q.pageNumber ?? 1;
  const reader = readerFor(filters.merchantId);
  const page = await orders.pageOrders(reader, {
    ...filters,
    after: cursor?.after ?? null,
    offset: cursor ? 0 : pageOffset(pageNumber, pageSize),
    limit: pageSize,
    totalCap: ORDER_TOTAL_CAP,
  });
  const list: OrderRecord[] = (await orders.withChildren(reader, page.orders)).map(presentOrder);
  const nextCursor = page.next && encodeOrderCursor({ mode: sortModeOf(filters), after: page.next, filters, pageSize, page: pageNumber + 1 });
  return { total: page.total, pageNumber, pageSize, list, nextCursor };
}

/** GET /v2/order/orders: the merchant's own orders. */
export async function queryOrders(scope: MerchantScope, q: OrderQuery) {
  return runOrderQuery(() => scope, q, null);
}

/**
 * GET /admin/v1/orders: every merchant's orders, or one merchant's (`merchantId`, also carried by a
 * cursor). `merchantScope` is the edge's (the operator route's `scopeForOperator`): the merchant may
 * come from the cursor, so the route hands over how to make its scope rather than the scope.
 */
export async function queryOrdersForOperator(db: Handle, q: OrderQuery, merchantId: number | null, merchantScope: (merchantId: number) => MerchantScope) {
  return runOrderQuery((m) => (m === null ? allMerchants(db) : merchantScope(m)), q, merchantId);
}

/** One order by its parent or split id; another tenant's order is indistinguishable from none. */
export async function getOrder(reader: orders.OrderReader, id: number): Promise<OrderRecord> {
  const orderId = await orders.resolveOrderId(reader, id);
  if (orderId === null) throw notFound('order');
  const [aggregate] = await orders.loadOrders(reader, [orderId]);
  return presentOrder(aggregate);
}
