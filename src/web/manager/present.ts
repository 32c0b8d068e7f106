import type { ManagerUser } from '../../services/manager-sessions.service.ts';
import type { OrderDetail, OrderSearchResult } from '../../services/order-search.service.ts';
import {
  itemsOf,
  listTools,
  money,
  moment,
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
  type ListTools,
  type TransactionRecord,
  type TrackingLink,
  type TransactionRow,
  type SplitHead,
  type TableView,
  fulfilmentWords,
  statusWords,
} from '../shared/present.ts';
import { countsText } from '../list-counts.ts';
import type { Chrome, PageModel } from '../shared/views.ts';

/**
 * The business manager's presenters (issue 30, rule 3): the typed models of its views
 * (manager/views.ts). Unit tests: test/unit/web-presenters.test.ts.
 */

const PREFIX = '/manager';
const ORDERS = `${PREFIX}/orders`;

/** The manager's layout parts: the environment badge always; navigation once the sign-in is complete. */
export function managerChrome(
  user: Pick<ManagerUser, 'email' | 'role' | 'merchantName'> | null,
  nav: readonly { href: string; label: string }[],
  path: string,
  environment: string,
): Chrome {
  return {
    product: 'Stockist business manager',
    home: PREFIX,
    homeLink: 'Back to the business manager',
    assets: `${PREFIX}/assets`,
    stylesheet: 'manager.css',
    scripts: ['htmx.min.js', 'manager.js', 'local-time.js', 'copy.js'],
    navLabel: 'Business manager',
    nav: nav.map((l) => ({ href: l.href, label: l.label, current: l.href === path })),
    environment: {
      name: environment,
      text: environment === 'production' ? 'Production (stk_live_ keys)' : 'Sandbox (stk_test_ keys)',
    },
    who: user
      ? {
          text: `${user.email} (${user.role}, ${user.merchantName})`,
          links: [
            { href: `${PREFIX}/account`, label: 'Your account' },
            { href: `${PREFIX}/two-factor`, label: 'Two-factor' },
          ],
          signOut: `${PREFIX}/sign-out`,
        }
      : null,
  };
}

/** A split order on the manager's order page: how it ships and its items, one line each. */
export interface ManagerSplitView extends SplitHead {
  items: string[];
  /** "Open a claim" on this split order (shipped, within the window, something left to claim; a role that may), or null. */
  claim: string | null;
}

/** views.order: one of the merchant's orders (read-only). */
export interface ManagerOrderView extends PageModel {
  id: string;
  back: string;
  facts: Fact[];
  splits: ManagerSplitView[];
  refunds: TableView;
  /** The claims list filtered to this order. */
  claims: string;
}

export function presentManagerOrder(
  { order: o, refunds }: OrderDetail,
  trackingLink: TrackingLink,
  claimable: ReadonlySet<string> = new Set(),
): ManagerOrderView {
  const currency = o.currencyCode;
  return {
    title: `Order ${o.id}`,
    id: o.id,
    back: ORDERS,
    facts: [
      { label: 'Custom id', text: o.customOrderId ?? '—' },
      { label: 'Status', field: 'status', text: statusWords(o.status) },
      { label: 'Fulfilment', field: 'fulfillment', text: fulfilmentWords(o) },
      { label: 'Refund', text: o.refundStatus ? statusWords(o.refundStatus) : '—' },
      { label: 'Placed', html: moment(o.purchaseDate) },
      { label: 'Total', text: `${money(o.finalAmount, currency)} (items ${money(o.subTotalAmount)}, freight ${money(o.freightAmount)})` },
      { label: 'Refunded', num: true, text: money(o.refundedAmount, currency) },
      { label: 'Ship to', text: shipTo(o.shippingAddress) },
    ],
    splits: o.splitOrders.map((s) => ({
      ...splitHead(o, s, { freight: false, trackingLink }),
      items: itemsOf(o, s.id).map((i) => `${i.skuCode} ${i.productName} × ${i.productNum}${i.refundedQuantity ? ` (${i.refundedQuantity} refunded)` : ''}`),
      claim: claimable.has(s.id) ? `${PREFIX}/split-orders/${s.id}/claim` : null,
    })),
    refunds: refundsTable(refunds, 'Decision'),
    claims: `${PREFIX}/claims?${query({ order: o.id })}`,
  };
}

/** views.orders: the merchant's order search. */
export interface ManagerOrdersView extends PageModel {
  filters: { q: string; status: string; from: string; to: string };
  statuses: readonly Choice[];
  tools: ListTools;
  orders: TableView;
  next: string | null;
}

export function presentManagerOrders({ filters: all, list, after, counts }: OrderSearchResult): ManagerOrdersView {
  // The merchant is the user's own: never a filter of this page or its links.
  const filters = { q: all.q, status: all.status, from: all.from, to: all.to };
  return {
    title: 'Orders',
    filters,
    statuses: statusChoices(filters.status),
    tools: listTools(counts, `${ORDERS}.csv?${query(filters)}`),
    orders: ordersTable(list, { href: (id) => `${ORDERS}/${id}` }),
    next: after ? `${ORDERS}?${query({ ...filters, after })}` : null,
  };
}

/** views.balance: the merchant's account in this server's environment, its statements and transactions. */
export interface BalanceView extends PageModel {
  environment: string;
  /** `-12.50 EUR`: the account's currency. */
  balance: string;
  available: string;
  creditLimit: string;
  prepaid: boolean;
  months: readonly string[];
  counts: string;
  /** The account's currency, which its amounts are in (the table's headings say it). */
  currency: string;
  rows: TransactionRow[];
  next: string | null;
}

export function presentBalance(
  account: { environment: string; currency: string; balance: number; available: number; creditLimit: number; billingMode: string },
  result: { list: readonly TransactionRecord[]; pageNumber: number; pageSize: number; total: number; nextCursor: string | null },
  months: readonly string[],
  countCap: number,
): BalanceView {
  const first = (result.pageNumber - 1) * result.pageSize + 1;
  return {
    title: 'Balance',
    environment: account.environment,
    balance: money(account.balance, account.currency),
    available: money(account.available),
    creditLimit: money(account.creditLimit),
    prepaid: account.billingMode === 'prepaid',
    months,
    counts: countsText({ first, last: first + result.list.length - 1, about: result.total, capped: result.total >= countCap }),
    currency: account.currency,
    rows: result.list.map(transactionRow),
    next: result.nextCursor ? `${PREFIX}/balance?${query({ cursor: result.nextCursor })}` : null,
  };
}

/** views.audit: the merchant's audit log, newest first; the operator's staff are not named. */
export interface ManagerAuditView extends PageModel {
  rows: (AuditRow & { actor: string })[];
  next: string | null;
}

export function presentManagerAudit(rows: {
  list: readonly (Parameters<typeof auditRow>[0] & { actorKind: string; actorEmail: string | null })[];
  nextBefore: string | null;
}): ManagerAuditView {
  return {
    title: 'Audit log',
    rows: rows.list.map((e) => ({
      ...auditRow(e),
      actor: e.actorEmail ?? (e.actorKind === 'merchant_user' ? 'a removed team member' : 'the operator'),
    })),
    next: rows.nextBefore ? `${PREFIX}/audit?${query({ before: rows.nextBefore })}` : null,
  };
}
