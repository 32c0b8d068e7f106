import type { OrderDetail, OrderSearchResult } from '../../services/order-search.service.ts';
import { countsText, type ListCounts } from '../list-counts.ts';
import type { RefundRecord } from '../../schemas/refunds.ts';
import type { ConsoleUser } from '../../services/console-sessions.service.ts';
import {
  itemsOf,
  listTools,
  money,
  moneyFromCents,
  moment,
  NONE,
  ordersTable,
  query,
  refundsTable,
  shipTo,
  splitHead,
  statusChoices,
  transactionRow,
  auditRow,
  type AuditRow,
  type Choice,
  type Fact,
  type Link,
  type ListTools,
  type TransactionRecord,
  type TrackingLink,
  type TransactionRow,
  type SplitHead,
  type TableView,
  fulfilmentWords,
  statusWords,
  actorKindWords,
  auditActionWords,
  codes,
} from '../shared/present.ts';
import type { Chrome, Html, PageModel } from '../shared/views.ts';

/**
 * The console's presenters (issue 30, rule 3): each builds the typed model of one view
 * (console/views.ts) from what a service returned; values become text here, never in a template.
 * Unit tests: test/unit/web-presenters.test.ts.
 */

const PREFIX = '/console';
const ORDERS = `${PREFIX}/orders`;

/** A merchant named by a page: its name, linking its page (`data-merchant` carries the id). */
export const merchantLink = (id: string | number, name: string): Link => ({
  href: `${PREFIX}/merchants/${id}`,
  text: name,
  data: { name: 'merchant', value: String(id) },
});

/** The console's layout parts: its name, assets, the links the user's role may open, and who is signed in. */
export function consoleChrome(user: Pick<ConsoleUser, 'email' | 'role'> | null, nav: readonly { href: string; label: string }[], path: string): Chrome {
  return {
    product: 'Stockist console',
    home: PREFIX,
    homeLink: 'Back to the dashboard',
    assets: `${PREFIX}/assets`,
    stylesheet: 'console.css',
    scripts: ['htmx.min.js', 'console.js', 'local-time.js', 'copy.js'],
    navLabel: 'Console',
    nav: user ? nav.map((l) => ({ href: l.href, label: l.label, current: l.href === path })) : [],
    environment: null,
    who: user ? { text: `${user.email} (${user.role})`, links: [{ href: `${PREFIX}/account`, label: 'Your account' }], signOut: `${PREFIX}/sign-out` } : null,
  };
}

/** A split order on the console's order page: how it ships, its items, and the actions the user's role may take on it. */
export interface ConsoleSplitView extends SplitHead {
  items: TableView;
  /** The Ship form (a split waiting to ship, for a role that fulfils). */
  ship: ShipFormView | null;
  /** The Mark delivered form's action (a shipped split, for a role that fulfils). */
  deliver: string | null;
  /** The cancellation's confirmation page (a split waiting to ship, for a role that cancels). */
  cancel: string | null;
}

/** The order's internal note (staff only) and, for a role that writes notes, its form. */
export interface OrderNoteView {
  /** The note, or null when there is none. */
  text: string | null;
  /** `By ops@example.com, <time>` and, when it was rewritten, when it was first written. */
  author: string;
  updated: Html | null;
  firstWritten: Html | null;
  form: {
    action: string;
    /** `Add a note (at most 2,000 characters; empty it to remove the note)`. */
    label: string;
    /** What the field holds: the refused text, else the note. */
    value: string;
    /** Why the last text was not saved. */
    refused: string | null;
  } | null;
}

/**
 * A split's Ship form: the channel's carriers to choose from (none listed: a text field and a hint,
 * linking the channel's form for a role that edits channels), what a refused form held, and why.
 */
export interface ShipFormView {
  action: string;
  carriers: Choice[];
  /** The text field's value when the channel lists no carriers. */
  carrier: string;
  trackingCode: string;
  /** Why the last Ship was refused (`Not shipped: …`). */
  error: string | null;
  channelCode: string;
  /** The channel's edit form, where carriers are listed (a role that edits channels). */
  editChannel: string | null;
}

/** views.order: one order with its note, splits, refunds and webhook deliveries. */
export interface ConsoleOrderView extends PageModel {
  id: string;
  back: string;
  facts: Fact[];
  note: OrderNoteView;
  splits: ConsoleSplitView[];
  refunds: TableView;
  deliveries: TableView;
}

/** What the user's role may do on the order page. */
export interface ConsoleOrderRights {
  fulfil: boolean;
  cancel: boolean;
  /** Open a webhook endpoint's page (a delivery's endpoint is a link then). */
  webhooks: boolean;
  /** Write the order's internal note. */
  note: boolean;
  /** Edit channels (the ship form's hint links the channel's form). */
  channels: boolean;
}

/** The channels' carriers and tracking pages, and a Ship form the service refused (what was typed, and why). */
export interface ShippingInput {
  carriersOf(channelCode: string): readonly string[];
  trackingLink: TrackingLink;
  refused: { splitId: number; message: string; carrier: string; trackingCode: string } | null;
}

/** The order's note as the store has it, a text the form refused (and why), and the longest note allowed. */
export interface OrderNoteInput {
  note: { note: string; author: string; createdAt: string; updatedAt: string } | null;
  refused: { text: string; reason: string } | null;
  max: number;
}

export function presentConsoleOrder(
  { merchantId, merchantName, order: o, refunds, deliveries }: OrderDetail,
  may: ConsoleOrderRights,
  { note: { note, refused, max }, shipping }: { note: OrderNoteInput; shipping: ShippingInput },
): ConsoleOrderView {
  const currency = o.currencyCode;
  return {
    title: `Order ${o.id}`,
    id: o.id,
    back: ORDERS,
    note: {
      text: note?.note ?? null,
      author: note?.author ?? '',
      updated: note ? moment(note.updatedAt) : null,
      firstWritten: note && note.updatedAt !== note.createdAt ? moment(note.createdAt) : null,
      form: may.note
        ? {
            action: `${ORDERS}/${o.id}/note`,
            label: `${note ? 'Edit the note' : 'Add a note'} (at most ${max.toLocaleString('en')} characters; empty it to remove the note)`,
            value: refused ? refused.text : (note?.note ?? ''),
            refused: refused?.reason ?? null,
          }
        : null,
    },
    facts: [
      { label: 'Merchant', link: merchantLink(merchantId, merchantName) },
      { label: 'Custom id', text: o.customOrderId ?? '—' },
      { label: 'Status', field: 'status', text: statusWords(o.status) },
      { label: 'Fulfilment', field: 'fulfillment', text: fulfilmentWords(o) },
      { label: 'Refund', text: o.refundStatus ? statusWords(o.refundStatus) : '—' },
      { label: 'Placed', html: moment(o.purchaseDate) },
      { label: 'Items', num: true, text: money(o.subTotalAmount, currency) },
      { label: 'Freight', num: true, text: money(o.freightAmount, currency) },
      { label: 'Total', num: true, text: money(o.finalAmount, currency) },
      { label: 'Refunded', num: true, text: money(o.refundedAmount, currency) },
      { label: 'Ship to', text: shipTo(o.shippingAddress) },
    ],
    splits: o.splitOrders.map((s) => {
      const waiting = s.status === 'waiting_to_ship';
      return {
        ...splitHead(o, s, { freight: true, trackingLink: shipping.trackingLink }),
        items: {
          label: { text: `Items of split ${s.id}` },
          caption: `Items of split ${s.id}`,
          columns: ['SKU', 'Product', 'Quantity', 'Refunded', 'Unit', 'Total'],
          numeric: [2, 3, 4, 5],
          rows: itemsOf(o, s.id).map((i) => ({
            data: null,
            cells: [i.skuCode, i.productName, String(i.productNum), String(i.refundedQuantity), money(i.amount), money(i.total)],
          })),
          empty: null,
        },
        ship: may.fulfil && waiting ? shipForm(s.id, s.channelCode, shipping, may.channels) : null,
        deliver: may.fulfil && s.status === 'shipped' ? `${PREFIX}/splits/${s.id}/deliver` : null,
        cancel: may.cancel && waiting ? `${PREFIX}/splits/${s.id}/cancel` : null,
      };
    }),
    refunds: refundsTable(refunds, 'Status'),
    deliveries: {
      label: { by: 'deliveries' },
      caption: null,
      columns: ['Delivery', 'Event', 'Endpoint', 'Status', 'Attempts', 'Last result'],
      rows: deliveries.map((d) => ({
        data: { name: 'delivery', value: d.id },
        cells: [
          d.id,
          { html: codes([d.type]) },
          may.webhooks ? { href: `${PREFIX}/webhooks/${d.endpointId}`, text: d.url } : d.url,
          statusWords(d.status),
          String(d.attempts),
          `${d.lastStatusCode ?? ''} ${d.lastError ?? ''}`,
        ],
      })),
      empty: NONE,
    },
  };
}

function shipForm(splitId: string, channelCode: string, shipping: ShippingInput, editsChannels: boolean): ShipFormView {
  const refused = shipping.refused && String(shipping.refused.splitId) === splitId ? shipping.refused : null;
  return {
    action: `${PREFIX}/splits/${splitId}/ship`,
    carriers: shipping.carriersOf(channelCode).map((c) => ({ value: c, selected: refused?.carrier === c })),
    carrier: refused?.carrier ?? '',
    trackingCode: refused?.trackingCode ?? '',
    error: refused ? `Not shipped: ${refused.message}.` : null,
    channelCode,
    editChannel: editsChannels ? `${PREFIX}/channels/${encodeURIComponent(channelCode)}/edit` : null,
  };
}

/** views.orders: the search form as typed, where the page stands, the orders found and the next page's link. */
export interface ConsoleOrdersView extends PageModel {
  filters: OrderSearchResult['filters'];
  statuses: readonly Choice[];
  tools: ListTools;
  orders: TableView;
  next: string | null;
}

export function presentConsoleOrders({ filters, list, after, counts }: OrderSearchResult): ConsoleOrdersView {
  return {
    title: 'Orders',
    filters,
    statuses: statusChoices(filters.status),
    tools: listTools(counts, `${ORDERS}.csv?${query(filters)}`),
    orders: ordersTable(list, { href: (id) => `${ORDERS}/${id}`, merchant: (o) => merchantLink(o.merchantId, o.merchantName) }),
    next: after ? `${ORDERS}?${query({ ...filters, after })}` : null,
  };
}

/** views['refund-decided']: a refund review row after its decision, swapped in place by htmx. */
export interface ConsoleRefundDecidedView extends PageModel {
  refundNo: string;
  order: Link;
  merchant: Link;
  items: string;
  amount: string;
  status: string;
  /** `Approved`, or `Rejected: <reason>`. */
  decision: string;
  /** The queue's heading after this decision (swapped out of band): `2 refunds waiting, oldest first.` */
  summary: string;
}

export function presentRefundDecided(
  refund: RefundRecord & { merchantId: string; merchantName: string },
  currency: string,
  waiting: number,
): ConsoleRefundDecidedView {
  const verdict = refund.refundStatus === 'refund_successfully' ? 'Approved' : 'Rejected';
  return {
    title: `Refund ${refund.refundNo}`,
    refundNo: refund.refundNo,
    order: { href: `${ORDERS}/${refund.id}`, text: refund.id },
    merchant: merchantLink(refund.merchantId, refund.merchantName),
    items: refund.items.map((i) => `${i.skuCode} × ${i.quantity}`).join(', '),
    amount: money(refund.amount, currency),
    status: refund.refundStatus,
    decision: refund.failureReason ? `${verdict}: ${refund.failureReason}` : verdict,
    summary: refundsWaitingText(waiting),
  };
}

/** views['split-cancel']: what cancelling a split order does, asked before it is done. */
export interface SplitCancelView extends PageModel {
  splitOrderId: string;
  orderId: string;
  orderHref: string;
  /** Null when the split can be cancelled; else why not. */
  refusal: string | null;
  merchant: Link;
  /** `3 units`, `1 unit`. */
  units: string;
  warehouseCode: string;
  credit: string;
  action: string;
}

export function presentSplitCancel(
  preview: { splitOrderId: number; orderId: number; merchantId: number; status: string; warehouseCode: string; units: number; creditCents: number },
  merchantName: string,
  currency: string,
): SplitCancelView {
  const id = String(preview.splitOrderId);
  const orderId = String(preview.orderId);
  return {
    title: `Cancel split order ${id}`,
    splitOrderId: id,
    orderId,
    orderHref: `${ORDERS}/${orderId}`,
    refusal:
      preview.status === 'waiting_to_ship'
        ? null
        : `This split order is ${statusWords(preview.status).toLowerCase()}: only a split order waiting to ship can be cancelled.`,
    merchant: merchantLink(preview.merchantId, merchantName),
    units: `${preview.units} unit${preview.units === 1 ? '' : 's'}`,
    warehouseCode: preview.warehouseCode,
    credit: moneyFromCents(preview.creditCents, currency),
    action: `${PREFIX}/splits/${id}/cancel`,
  };
}

/** A refund waiting in the review queue (refunds.service.ts `refundQueueForConsole`). */
type QueuedRefund = RefundRecord & {
  merchantId: string;
  merchantName: string;
  ageSeconds: number;
  overSla: boolean;
  manualReview: boolean;
  lastError: string | null;
  lines: readonly { sku: string; productName: string; quantity: number; splitOrderId: number; splitStatus: string }[];
  /** The split orders of the refund's order that have shipped (or been delivered). */
  shippedSplits: readonly number[];
};

/** A row of the refund review queue (views['refund-row'], included by views.refunds; htmx swaps it alone when a decision is refused). */
export interface RefundQueueRow {
  refundNo: string;
  order: Link;
  merchant: Link;
  /** The merchant's reason (one of SPEC §5.1's), and its remark when it wrote one. */
  merchantReason: string;
  remark: string | null;
  /** `MUG-1 Mug × 2 (split 12, waiting_to_ship)`: each line with the state of the split it ships in. */
  lines: string[];
  /** `Nothing shipped`, `Split 12 shipped`: whether any split order of the order has shipped. */
  shipped: string;
  shippedAny: boolean;
  amount: string;
  /** `5 h`. */
  waiting: string;
  overSla: boolean;
  /** The worker gave up on it: why. */
  gaveUp: string | null;
  approve: string;
  reject: string;
  /** A refused decision on this row (a reject without a reason): why, the confirmation shown open. */
  refused: string | null;
  /** The rejection reason as typed (kept when the decision was refused). */
  reasonTyped: string;
}

/** views['refund-row']: one row of the queue with its decision forms. */
export interface RefundRowView extends PageModel, RefundQueueRow {
  canReview: boolean;
}

/** views.refunds: the refund review queue, oldest first, with the decision forms for a role that reviews. */
export interface RefundQueueView extends PageModel {
  /** `3 refunds waiting, oldest first.` */
  summary: string;
  tools: ListTools;
  rows: RefundQueueRow[];
  canReview: boolean;
  next: string | null;
}

/** The queue's heading line, also swapped in by htmx after each decision: `3 refunds waiting, oldest first.` */
const refundsWaitingText = (waiting: number) => `${waiting} refund${waiting === 1 ? '' : 's'} waiting, oldest first.`;

function refundQueueRow(r: QueuedRefund, currency: string, refused: { refundNo: string; message: string; reason: string } | null): RefundQueueRow {
  const refunds = `${PREFIX}/refunds`;
  const mine = refused?.refundNo === r.refundNo ? refused : null;
  return {
    refundNo: r.refundNo,
    order: { href: `${ORDERS}/${r.id}`, text: r.id },
    merchant: merchantLink(r.merchantId, r.merchantName),
    merchantReason: r.refundReason,
    remark: r.remark && r.remark.trim() !== '' ? r.remark : null,
    lines: r.lines.map((l) => `${l.sku} ${l.productName} × ${l.quantity} (split ${l.splitOrderId}, ${statusWords(l.splitStatus).toLowerCase()})`),
    shipped: r.shippedSplits.length === 0 ? 'Nothing shipped' : `Split${r.shippedSplits.length === 1 ? '' : 's'} ${r.shippedSplits.join(', ')} shipped`,
    shippedAny: r.shippedSplits.length > 0,
    amount: money(r.amount, currency),
    waiting: `${Math.floor(r.ageSeconds / 3600)} h`,
    overSla: r.overSla,
    gaveUp: r.manualReview ? `worker gave up: ${r.lastError ?? ''}` : null,
    approve: `${refunds}/${r.refundNo}/approve`,
    reject: `${refunds}/${r.refundNo}/reject`,
    refused: mine?.message ?? null,
    reasonTyped: mine?.reason ?? '',
  };
}

/** views['refund-row']: one queue row alone (htmx's swap of a refused decision). */
export function presentRefundRow(
  r: QueuedRefund,
  currency: string,
  refused: { refundNo: string; message: string; reason: string } | null,
  canReview: boolean,
): RefundRowView {
  return { title: `Refund ${r.refundNo}`, ...refundQueueRow(r, currency, refused), canReview };
}

export function presentRefundQueue(
  queue: { total: number; pageNumber: number; pageSize: number; list: readonly QueuedRefund[] },
  { currency, canReview, refused = null }: { currency: string; canReview: boolean; refused?: { refundNo: string; message: string; reason: string } | null },
): RefundQueueView {
  const first = (queue.pageNumber - 1) * queue.pageSize + 1;
  const counts = { first, last: first + queue.list.length - 1, about: queue.total, capped: false };
  const refunds = `${PREFIX}/refunds`;
  return {
    title: 'Refund review',
    summary: refundsWaitingText(queue.total),
    tools: { counts: queue.list.length ? countsText(counts) : '', csv: `${refunds}.csv` },
    rows: queue.list.map((r) => refundQueueRow(r, currency, refused)),
    canReview,
    next: queue.list.length > 0 && queue.total > queue.pageNumber * queue.pageSize ? `${refunds}?page=${queue.pageNumber + 1}` : null,
  };
}

/** views.products: the catalogue search with each product's stock per warehouse. */
export interface ProductsView extends PageModel {
  /** The New product link (a role that edits the catalogue). */
  newProduct: string | null;
  q: string;
  tools: ListTools;
  /** `No product matches “x”.`, `No product yet.` */
  empty: string;
  caption: string;
  rows: { sku: string; href: string; name: string; price: string; stock: string; total: string }[];
  next: string | null;
}

export function presentProducts(
  q: string,
  results: {
    list: readonly { sku: string; name: string; priceCents: number; stocks: readonly { warehouseCode: string; qty: number }[]; totalQty: number }[];
    nextAfter: string | null;
    counts: ListCounts;
  },
  currency: string,
  canEdit: boolean,
): ProductsView {
  const products = `${PREFIX}/products`;
  return {
    title: 'Catalogue & stock',
    newProduct: canEdit ? `${PREFIX}/new-product` : null,
    q,
    tools: listTools(results.counts, `${products}.csv?${query({ q })}`),
    empty: `No product${q ? ` matches “${q}”` : ' yet'}.`,
    caption: `Products${q ? ` matching ${q}` : ''}, in SKU order`,
    rows: results.list.map((p) => ({
      sku: p.sku,
      href: `${products}/${encodeURIComponent(p.sku)}`,
      name: p.name,
      price: moneyFromCents(p.priceCents, currency),
      stock: p.stocks.length ? p.stocks.map((s) => `${s.warehouseCode}: ${s.qty}`).join(', ') : '–',
      total: String(p.totalQty),
    })),
    next: results.nextAfter ? `${products}?${query({ q, after: results.nextAfter })}` : null,
  };
}

/** A merchant account's figures as the merchant page shows them (facts and the terms form's fields). */
export function accountFigures(a: { balance: number; currency: string; creditLimit: number; available: number; lowBalanceThreshold: number | null }) {
  return {
    balance: money(a.balance, a.currency),
    creditLimit: money(a.creditLimit),
    available: money(a.available),
    threshold: a.lowBalanceThreshold === null ? 'none' : money(a.lowBalanceThreshold),
    /** The threshold field's value: blank for none. */
    thresholdField: a.lowBalanceThreshold === null ? '' : money(a.lowBalanceThreshold),
  };
}

/** views.transactions: one page of a merchant account's transactions, newest first. */
export interface TransactionsView extends PageModel {
  merchant: { name: string; href: string };
  /** The account's currency, which its amounts are in (the table's headings say it). */
  currency: string;
  /** `1–50 of 120 transactions, newest first`, or `No transactions`. */
  counts: string;
  csv: string;
  rows: TransactionRow[];
  next: string | null;
}

export function presentTransactions(
  merchant: { id: string; name: string },
  environment: string,
  result: { list: readonly TransactionRecord[]; pageNumber: number; pageSize: number; total: number; nextCursor: string | null },
  countCap: number,
  currency: string,
): TransactionsView {
  const first = (result.pageNumber - 1) * result.pageSize + 1;
  const counts = countsText({ first, last: first + result.list.length - 1, about: result.total, capped: result.total >= countCap });
  const base = `${PREFIX}/merchants/${merchant.id}`;
  return {
    title: `Transactions of ${merchant.name} (${environment})`,
    merchant: { name: merchant.name, href: `${base}#account-${environment}` },
    currency,
    counts: result.list.length && counts ? `${counts} transactions, newest first` : 'No transactions',
    csv: `${base}/transactions.csv?${query({ environment })}`,
    rows: result.list.map(transactionRow),
    next: result.nextCursor ? `${base}/transactions?${query({ environment, cursor: result.nextCursor })}` : null,
  };
}

/** views.audit: the operator's audit log, filtered by actor, action and target, newest first. */
export interface ConsoleAuditView extends PageModel {
  filter: { actor: string; action: string; target: string };
  actions: readonly Choice[];
  tools: ListTools;
  /** `actorCode`: who acted as the actor filter takes it (`staff:7000000000001`), where no email names them; `actor` is then their kind in words. */
  rows: (AuditRow & { actor: string; actorCode: string | null; actorKind: string | null; actorMerchant: Link | null; targetMerchant: Link | null })[];
  next: string | null;
}

export function presentConsoleAudit(
  filter: { actor: string; action: string; target: string },
  actions: readonly string[],
  entries: {
    list: readonly (Parameters<typeof auditRow>[0] & {
      actorKind: string;
      actorId: string | number;
      actorEmail: string | null;
      actorMerchant: { id: string; name: string } | null;
      targetMerchant: { id: string; name: string } | null;
    })[];
    nextCursor: string | null;
    counts: ListCounts;
  },
): ConsoleAuditView {
  const audit = `${PREFIX}/audit`;
  return {
    title: 'Audit log',
    filter,
    actions: actions.map((value) => ({ value, selected: value === filter.action, text: auditActionWords(value) })),
    tools: listTools(entries.counts, `${audit}.csv?${query(filter)}`),
    rows: entries.list.map((e) => ({
      ...auditRow(e, merchantLink),
      actor: e.actorEmail ?? actorKindWords(e.actorKind),
      actorCode: e.actorEmail ? null : `${e.actorKind}:${e.actorId}`,
      // Named by email: say whose account the email is (a merchant user's merchant, linked).
      actorKind: e.actorEmail ? (e.actorKind === 'staff' ? 'staff' : 'merchant user') : null,
      actorMerchant: e.actorEmail && e.actorMerchant ? merchantLink(e.actorMerchant.id, e.actorMerchant.name) : null,
      targetMerchant: e.targetMerchant ? merchantLink(e.targetMerchant.id, e.targetMerchant.name) : null,
    })),
    next: entries.nextCursor ? `${audit}?${query({ ...filter, cursor: entries.nextCursor })}` : null,
  };
}
