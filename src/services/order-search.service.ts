import type { CsvCell, CsvExport } from '../domain/csv.ts';
import { fieldError, notFound } from '../domain/errors.ts';
import { parseId } from '../domain/ids.ts';
import { blank, choiceFilter, dayRange, decodeTimeKeyset as decodeAfter, encodeTimeKeyset as encodeAfter, merchantFilter } from '../domain/list-filters.ts';
import { ORDER_STATUSES, type OrderStatus } from '../domain/vocabulary.ts';
import { presentDelivery } from '../present/webhook.presenter.ts';
import { presentOrder } from '../present/order.presenter.ts';
import { presentRefund } from '../present/refund.presenter.ts';
import type { Dialect, Handle } from '../store/db.ts';
import * as orders from '../store/orders.repository.ts';
import { merchantIdsNamedLike, merchantNamesOf } from '../store/merchants.repository.ts';
import { refundsOfOrder } from '../store/refunds.repository.ts';
import { allMerchants, type MerchantScope } from '../store/tenancy.ts';
import { deliveriesOfOrder } from '../store/webhooks.repository.ts';

/** Rows per page of the console's order search. */
const ORDER_SEARCH_PAGE = 25;
/** The search's count stops here: the page says "about 10,000 or more" rather than count every order. */
const ORDER_COUNT_CAP = 10_000;
/** Orders read per round trip while an export streams. */
const EXPORT_BATCH = 200;
/** The order page shows this many of its refunds and webhook deliveries (newest first). */
const DETAIL_ROWS = 100;

/** What the console's search form sends; every field may be empty (a blank form field). */
export interface OrderSearchForm {
  q?: string;
  merchant?: string;
  status?: string;
  from?: string;
  to?: string;
  after?: string;
}

/** The search a form asks for (a malformed field is a 400 naming it), its fields as typed, and the page's keyset position. */
async function parseOrderSearch(reader: orders.OrderReader, dialect: Dialect, form: OrderSearchForm) {
  const term = blank(form.q);
  const merchantText = blank(form.merchant);
  const merchantId = merchantFilter(merchantText);
  const statusText = blank(form.status);
  const status = choiceFilter<OrderStatus>('status', statusText, ORDER_STATUSES);
  const fromText = blank(form.from);
  const toText = blank(form.to);
  const days = dayRange(fromText, toText);
  const afterText = blank(form.after);
  const before = afterText === '' ? null : decodeAfter(afterText);
  if (afterText !== '' && before === null) throw fieldError('after', 'is not a position this search gave (follow its Next link)');

  const search = { term: term === '' ? null : await termOf(reader, dialect, term), merchantId, status, ...days };
  const filters = { q: term, merchant: merchantText, status: statusText, from: fromText, to: toText };
  return { search, filters, before };
}

/** A term shorter than this matches exact ids only: the trigram indexes (migration 0047) need three characters. */
const TEXT_MATCH_MIN = 3;

/**
 * What a search term matches: the order, split-order or custom order id it is; with three
 * characters or more, also a part of an order's id, custom order id or recipient and (the
 * operator's search) of a merchant's name — case-insensitively, every character literal.
 */
async function termOf(reader: orders.OrderReader, dialect: Dialect, term: string): Promise<orders.OrderTerm> {
  const text = [...term].length >= TEXT_MATCH_MIN ? term : null;
  const [ids, merchantIds, textIds] = await Promise.all([
    orders.ordersNamedBy(reader, term, parseId(term)),
    text === null ? [] : merchantIdsNamedLike(reader, text),
    text === null ? null : orders.ordersWithText(reader, dialect, text),
  ]);
  return { ids, merchantIds, text, textIds };
}

/**
 * The console's order search across every merchant (SPEC §14): by a term (`termOf`), merchant, status and purchase dates (UTC days, both ends included), newest first, one
 * keyset page at a time, each order with its merchant's name. `first`–`last` of `about` place the
 * page in the walk (the count stops at ORDER_COUNT_CAP). A malformed field is a 400 naming it.
 */
export const searchOrdersForOperator = (db: Handle, dialect: Dialect, form: OrderSearchForm) => searchOrders(allMerchants(db), dialect, form);

/** The search of `searchOrdersForOperator`, read through the operator's view or (the business manager) a merchant's scope. */
async function searchOrders(reader: orders.OrderReader, dialect: Dialect, form: OrderSearchForm) {
  const { search, filters, before } = await parseOrderSearch(reader, dialect, form);
  const [page, about, shownBefore] = await Promise.all([
    orders.searchOrderIds(reader, dialect, { ...search, before, limit: ORDER_SEARCH_PAGE }),
    orders.countSearchedOrders(reader, dialect, search, ORDER_COUNT_CAP, null),
    before === null ? 0 : orders.countSearchedOrders(reader, dialect, search, ORDER_COUNT_CAP, before),
  ]);
  const aggregates = await orders.loadOrders(reader, page.ids);
  const names = await merchantNamesOf(
    reader,
    aggregates.map((a) => a.order.merchant_id),
  );
  const list = aggregates.map((aggregate) => ({
    merchantId: aggregate.order.merchant_id,
    merchantName: names.get(aggregate.order.merchant_id) ?? '',
    ...presentOrder(aggregate),
  }));
  const counts = { first: list.length ? shownBefore + 1 : 0, last: shownBefore + list.length, about, capped: about >= ORDER_COUNT_CAP };
  return { filters, list, after: page.next && encodeAfter(page.next), counts };
}

/** A page of the order search, as both front ends show it. */
export type OrderSearchResult = Awaited<ReturnType<typeof searchOrdersForOperator>>;

const ORDER_CSV_COLUMNS = [
  'order_id',
  'custom_order_id',
  'merchant_id',
  'merchant',
  'placed_at',
  'status',
  'fulfillment_status',
  'refund_status',
  'currency',
  'subtotal',
  'freight',
  'coupon',
  'total',
  'refunded',
  'items',
] as const;

/**
 * Every order the search matches (its `after` ignored), newest first, as CSV rows: read in keyset
 * batches while the file is written. The filters are checked before the first row, so a malformed
 * one is a 400 page, not a broken download.
 */
export const ordersCsvForOperator = (db: Handle, dialect: Dialect, form: OrderSearchForm, batch = EXPORT_BATCH): Promise<CsvExport> =>
  ordersCsv(allMerchants(db), dialect, form, batch);

/** The export of `ordersCsvForOperator`, read through the operator's view or (the business manager) a merchant's scope. */
async function ordersCsv(reader: orders.OrderReader, dialect: Dialect, form: OrderSearchForm, batch: number): Promise<CsvExport> {
  const { search } = await parseOrderSearch(reader, dialect, { ...form, after: '' });
  async function* rows() {
    let before: [number, number] | null = null;
    do {
      const page = await orders.searchOrderIds(reader, dialect, { ...search, before, limit: batch });
      const aggregates = await orders.loadOrders(reader, page.ids);
      const names = await merchantNamesOf(
        reader,
        aggregates.map((a) => a.order.merchant_id),
      );
      for (const aggregate of aggregates) {
        const o = presentOrder(aggregate);
        yield {
          order_id: o.id,
          custom_order_id: o.customOrderId,
          merchant_id: String(aggregate.order.merchant_id),
          merchant: names.get(aggregate.order.merchant_id) ?? '',
          placed_at: o.purchaseDate,
          status: o.status,
          fulfillment_status: o.fulfillmentStatus,
          refund_status: o.refundStatus,
          currency: o.currencyCode,
          subtotal: o.subTotalAmount.toFixed(2),
          freight: o.freightAmount.toFixed(2),
          coupon: o.couponAmount.toFixed(2),
          total: o.finalAmount.toFixed(2),
          refunded: o.refundedAmount.toFixed(2),
          items: o.orderItems.map((i) => `${i.skuCode} x ${i.productNum}`).join('; '),
        } satisfies Record<(typeof ORDER_CSV_COLUMNS)[number], CsvCell>;
      }
      before = page.next;
    } while (before !== null);
  }
  return { name: 'orders', columns: ORDER_CSV_COLUMNS, rows: rows() };
}

/** The business manager's search: the same, always within the user's merchant. */
export const searchOrdersForMerchant = (scope: MerchantScope, dialect: Dialect, form: Omit<OrderSearchForm, 'merchant'>) =>
  searchOrders(scope, dialect, { ...form, merchant: String(scope.merchantId) });

/** The business manager's export: the same, always within the user's merchant (a `merchant` in the query is ignored). */
export const ordersCsvForMerchant = (scope: MerchantScope, dialect: Dialect, form: Omit<OrderSearchForm, 'merchant'>) =>
  ordersCsv(scope, dialect, { ...form, merchant: String(scope.merchantId) }, EXPORT_BATCH);

/** One order as the console shows it: the record, its merchant, its refunds and its webhook deliveries. */
export const orderForOperator = (db: Handle, id: number) => orderDetail(allMerchants(db), id);

/** The same for the business manager: another merchant's order is not there (404, like a missing one). */
export const orderForMerchant = (scope: MerchantScope, id: number) => orderDetail(scope, id);

/** One order with its refunds and webhook deliveries, as both front ends show it. */
export type OrderDetail = Awaited<ReturnType<typeof orderDetail>>;

async function orderDetail(reader: orders.OrderReader, id: number) {
  const orderId = await orders.resolveOrderId(reader, id);
  if (orderId === null) throw notFound('order');
  const [aggregate] = await orders.loadOrders(reader, [orderId]);
  const merchantId = aggregate.order.merchant_id;
  const [refunds, deliveries, names] = await Promise.all([
    refundsOfOrder(reader, orderId, 0, DETAIL_ROWS),
    deliveriesOfOrder(reader, merchantId, orderId, DETAIL_ROWS),
    merchantNamesOf(reader, [merchantId]),
  ]);
  return {
    merchantId,
    merchantName: names.get(merchantId) ?? '',
    order: presentOrder(aggregate),
    refunds: refunds.rows.map((r) => presentRefund(r, refunds.items)),
    deliveries: deliveries.map((d) => ({ ...presentDelivery(d), endpointId: String(d.endpointId), url: d.url })),
  };
}
