import { formatSigned } from '../../domain/ledger.ts';
import { ORDER_STATUSES } from '../../domain/vocabulary.ts';
import type { AuditFieldChange } from '../../present/audit.presenter.ts';
import type { OrderRecord } from '../../schemas/orders.ts';
import type { RefundRecord } from '../../schemas/refunds.ts';
import { countsText, type ListCounts } from '../list-counts.ts';
import { timeElement, type Instant } from '../times.ts';
import type { Html, PageModel } from './views.ts';

/**
 * What both front ends' presenters share (issue 30, rule 3): how money, times and ids become text,
 * and the models of the shared partials (src/web/shared/partials/): facts, tables, empty states,
 * split-order sections, list tools. No template formats a value; these functions do, and
 * test/unit/web-presenters.test.ts checks them without rendering anything.
 */

// ---- Values as text.

/**
 * Money as the pages show it: two decimals, a leading `-` when negative, then the currency when
 * given (`12.50 EUR`). `moneyFromCents` takes integer minor units (the store's); `money` takes
 * major units as the presenters of src/present/ give them (minor units / 100, at most two
 * decimals) and goes back to minor units first, so no float rounding reaches the text.
 */
export const moneyFromCents = (cents: number, currency?: string | null) => `${formatSigned(cents)}${currency ? ` ${currency}` : ''}`;
export const money = (amount: number, currency?: string | null) => moneyFromCents(Math.round(amount * 100), currency);

/**
 * A status as the pages say it (issue 44, 7): "Waiting to ship", not `waiting_to_ship`. The API,
 * the CSV files and the `data-status` attributes keep the codes; a code without words here (a new
 * one) is shown with its underscores as spaces and a capital, never as the raw code.
 */
const STATUS_WORDS: Readonly<Record<string, string>> = {
  // Orders (SPEC §4.6) and their fulfilment.
  processing: 'Processing',
  completed: 'Completed',
  cancel: 'Cancelled',
  waiting_to_ship: 'Waiting to ship',
  partially_shipped: 'Partly shipped',
  fully_shipped: 'Shipped',
  // Split orders.
  shipped: 'Shipped',
  cancelled: 'Cancelled',
  // An order's refund state, and a refund's (SPEC §5.2).
  refunding: 'Refund in progress',
  partial_refund: 'Partly refunded',
  refunded: 'Refunded',
  pending_review: 'Waiting for review',
  refund_successfully: 'Refunded',
  refund_failed: 'Refund failed',
  // Webhook deliveries, endpoints, merchants, staff, warehouses.
  pending: 'Pending',
  succeeded: 'Delivered',
  failed: 'Failed',
  active: 'Active',
  disabled: 'Disabled',
  // A transaction's type (the account's kinds of entry; the CSV keeps the code).
  top_up: 'Top-up',
  order_charge: 'Order charge',
  refund_credit: 'Refund credit',
  cancellation_credit: 'Cancellation credit',
  adjustment: 'Adjustment',
};
export const statusWords = (code: string): string => {
  const known = Object.hasOwn(STATUS_WORDS, code) ? STATUS_WORDS[code] : undefined;
  return known ?? codeWords(code);
};

/** A code read out: underscores as spaces and a capital (`merchant_user` → "Merchant user"); words for codes that have none of their own. */
const codeWords = (code: string): string => {
  const spaced = code.replace(/_/g, ' ').trim();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
};

/** An audit action in words (`split_order.cancel` → "Split order: cancel"); the filter's value and the CSV keep the code. */
export const auditActionWords = (action: string): string => {
  const [subject = '', ...verb] = action.split('.');
  return verb.length > 0 ? `${codeWords(subject)}: ${verb.join(' ').replace(/_/g, ' ')}` : codeWords(subject);
};

/** An audit target in words (`split_order:5000000000001` → "Split order 5000000000001", `catalog:import` → "Catalog import"). */
const auditTargetWords = (target: string): string => {
  const at = target.indexOf(':');
  return at < 0 ? codeWords(target) : `${codeWords(target.slice(0, at))} ${target.slice(at + 1)}`;
};

const ACTOR_WORDS: Readonly<Record<string, string>> = {
  staff: 'a staff member',
  admin_key: 'the operator API',
  cli: 'the command line',
  system: 'the server',
  merchant_user: 'a merchant user',
};
/** Who acted, by kind, where no email names them (audit/domain ACTOR_KINDS): "the operator API", not `admin_key`. */
export const actorKindWords = (kind: string): string => (Object.hasOwn(ACTOR_WORDS, kind) ? ACTOR_WORDS[kind] : kind.replace(/_/g, ' '));

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Codes a developer types, each in a `<code>` (escaped), joined by commas: webhook event types
 * (`split_order.shipped`) are names of the API, not states, so the pages show them as code.
 */
export const codes = (values: readonly string[]) => values.map((v) => `<code>${v.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c)}</code>`).join(', ') as Html;

/** A webhook event type in words, where a `<code>` cannot stand (an `<option>`, a notice): `split_order.shipped` → "Split order shipped". */
export const eventWords = (type: string): string => codeWords(type.replace(/\./g, ' '));

/** An order's fulfilment in words: a cancelled order ships nothing, so it no longer reads "Waiting to ship". */
export const fulfilmentWords = (order: Pick<OrderRecord, 'status' | 'fulfillmentStatus'>): string =>
  order.status === 'cancel' && order.fulfillmentStatus === 'waiting_to_ship' ? 'None: cancelled' : statusWords(order.fulfillmentStatus);

/** An order's status with its refund state, in words: "Completed (Partly refunded)". */
export const orderStatusWords = (order: Pick<OrderRecord, 'status' | 'refundStatus'>): string =>
  order.refundStatus ? `${statusWords(order.status)} (${statusWords(order.refundStatus)})` : statusWords(order.status);

/** An instant as a `<time>` element (web/times.ts: UTC text the browser turns into the viewer's zone); `none` for a missing one. */
export const moment = (value: Instant | null | undefined, none?: string) => timeElement(value, none) as Html;

// ---- Components (their partials are in shared/partials/).

/** A link; `data` is one `data-*` attribute naming what it leads to (`data-merchant="7"`). */
export interface Link {
  href: string;
  text: string;
  data?: { name: string; value: string };
}

/** One fact of a `<dl class="facts">` (shared/partials/facts.eta): text, a link, or markup a presenter made (a time). */
/** `num`: the text is an amount or a quantity, shown in the viewer's locale by local-time.js (issue 44, 7). */
export type Fact = { label: string; field?: string; num?: boolean } & ({ text: string } | { link: Link } | { html: Html });

/** A table cell: text, a link, or markup a presenter made (a time). */
export type Cell = string | Link | { html: Html };

/**
 * A table in its scrolling region (shared/partials/table.eta): labelled by a heading's id or by
 * its own name, an optional visually hidden caption, header cells, and rows (each may carry one
 * `data-*` attribute for tests and scripts). `empty` is the empty state shown instead of a table
 * with no rows (null: show the empty table).
 */
export interface TableView {
  label: { by: string } | { text: string };
  caption: string | null;
  columns: readonly string[];
  rows: readonly { data: { name: string; value: string } | null; cells: readonly Cell[] }[];
  empty: EmptyState | null;
  /** The columns (0-based) of amounts and quantities: their cells get class "num", shown in the viewer's locale. */
  numeric?: readonly number[];
}

/** What a list shows when it has nothing (shared/partials/empty.eta). */
export interface EmptyState {
  text: string;
}

/** "None.": the empty state of a list inside a page. */
export const NONE: EmptyState = { text: 'None.' };

/** Where a list stands and its CSV download (shared/partials/list-tools.eta). */
export interface ListTools {
  counts: string;
  csv: string;
}

export const listTools = (counts: ListCounts, csv: string): ListTools => ({ counts: countsText(counts), csv });

/** A query string from form fields (`q=…&status=…`), in the order given. */
export const query = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

// ---- Orders: the parts both order pages show.

/** `Recipient, City, Province, CC`: where an order ships. */
export const shipTo = (a: OrderRecord['shippingAddress']) => `${a.recipient}, ${[a.city, a.province, a.country].filter(Boolean).join(', ')}`;

/** The head of a split order's section (shared/partials/split-head.eta): its status and the sentence saying how it ships. */
export interface SplitHead {
  id: string;
  status: string;
  /** `Ships from warehouse W1 (US) to DE by express`. */
  route: string;
  /** The split's freight (console), or null. */
  freight: string | null;
  /** The carrier's tracking number, linking the channel's tracking page when it has one. */
  tracking: { carrier: string; code: string; href: string | null } | null;
  shipped: Html | null;
  delivered: Html | null;
}

/** A channel's tracking page for a tracking number, or null (services/catalog.service.ts `trackingLinkOf`). */
export type TrackingLink = (channelCode: string, trackingCode: string | null) => string | null;

export function splitHead(
  order: OrderRecord,
  split: OrderRecord['splitOrders'][number],
  { freight, trackingLink }: { freight: boolean; trackingLink: TrackingLink },
): SplitHead {
  return {
    id: split.id,
    status: statusWords(split.status),
    route: `Ships from warehouse ${split.warehouseCode} (${split.countryCode}) to ${order.shippingAddress.country} by ${split.channelCode}`,
    freight: freight ? money(split.freightAmount, order.currencyCode) : null,
    tracking: split.trackingCode ? { carrier: split.carrier ?? '', code: split.trackingCode, href: trackingLink(split.channelCode, split.trackingCode) } : null,
    shipped: split.shippedDate ? moment(split.shippedDate) : null,
    delivered: split.deliveredDate ? moment(split.deliveredDate) : null,
  };
}

/** The items of a split order. */
export const itemsOf = (order: OrderRecord, splitId: string) => order.orderItems.filter((i) => i.splitOrderId === splitId);

/** An order's refunds (both order pages): the last column is the console's "Status", the manager's "Decision". */
export function refundsTable(refunds: readonly RefundRecord[], statusHeading: string): TableView {
  return {
    label: { by: 'refunds' },
    caption: null,
    columns: ['Refund', 'Requested', 'Items', 'Amount', 'Reason', statusHeading],
    numeric: [3],
    rows: refunds.map((r) => ({
      data: { name: 'refund', value: r.refundNo },
      cells: [
        r.refundNo,
        { html: moment(r.createDate) },
        r.items.map((i) => `${i.skuCode} × ${i.quantity}`).join(', '),
        money(r.amount),
        r.refundReason,
        r.failureReason ? `${statusWords(r.refundStatus)}: ${r.failureReason}` : statusWords(r.refundStatus),
      ],
    })),
    empty: NONE,
  };
}

/** An option of a `<select>`. */
export interface Choice {
  value: string;
  selected: boolean;
  /** What the option says, when not its value (a status in words). */
  text?: string;
}

/** The order search's status options, the one searched for selected. */
export const statusChoices = (selected: string): Choice[] => ORDER_STATUSES.map((value) => ({ value, selected: selected === value, text: statusWords(value) }));

/** A row of an order search (both lists): the order's link, and the merchant's cell where the list spans merchants. */
export function ordersTable<O extends OrderRecord>(
  list: readonly O[],
  { href, merchant }: { href: (id: string) => string; merchant?: (o: O) => Cell },
): TableView {
  const merchants = merchant !== undefined;
  return {
    label: { text: 'Orders found' },
    caption: 'Orders found, newest first',
    columns: ['Order', 'Custom id', ...(merchants ? ['Merchant'] : []), 'Placed', 'Status', 'Fulfilment', 'Total'],
    numeric: [merchants ? 6 : 5],
    rows: list.map((o) => ({
      data: { name: 'order', value: o.id },
      cells: [
        { href: href(o.id), text: o.id },
        o.customOrderId ?? '',
        ...(merchant ? [merchant(o)] : []),
        { html: moment(o.purchaseDate) },
        orderStatusWords(o),
        fulfilmentWords(o),
        money(o.finalAmount, o.currencyCode),
      ],
    })),
    empty: { text: 'No orders match.' },
  };
}

// ---- Accounts: the ledger's figures and transactions (console merchant page and transactions, manager balance).

/** A transaction as src/present/account.presenter.ts gives it. */
export interface TransactionRecord {
  id: string;
  type: string;
  amount: number;
  balanceAfter: number;
  orderId: string | null;
  refundNo: string | null;
  description: string;
  createDate: string;
}

/** A transaction row: its time, amounts as text, and what it is for. */
export interface TransactionRow {
  id: string;
  when: Html;
  type: string;
  amount: string;
  balanceAfter: string;
  orderId: string | null;
  refundNo: string | null;
  description: string;
}

export const transactionRow = (t: TransactionRecord): TransactionRow => ({
  id: t.id,
  when: moment(t.createDate),
  type: statusWords(t.type),
  amount: money(t.amount),
  balanceAfter: money(t.balanceAfter),
  orderId: t.orderId,
  refundNo: t.refundNo,
  description: t.description,
});

// ---- Audit logs (console and manager): one entry's change, a field a line.

/** One field of an audit entry's change: `label: before → after`, or the one value (shared/partials/audit-change.eta). */
export interface ChangeLine {
  field: string;
  label: string;
  /** One value, or before and after; a time as markup, a merchant as a link (console), a missing side as `—`. */
  values: ({ text: string } | { html: Html } | { link: Link })[];
}

/** `merchantLink`: how a front end links a merchant a change names (the console); without it, its name. */
/** A field holding a state (`status`, `refundStatus`): its values read in words, as everywhere else on the pages. */
const isStateField = (field: string) => field === 'status' || field.endsWith('Status');

const changeLines = (changes: readonly AuditFieldChange[], merchantLink?: (id: string, name: string) => Link): ChangeLine[] =>
  changes.map((c) => ({
    field: c.field,
    label: c.label,
    values: (c.changed || c.after === null ? [c.before, c.after] : [c.after]).map((v) =>
      v === null
        ? { text: '—' }
        : 'time' in v
          ? { html: moment(v.time) }
          : 'merchant' in v
            ? merchantLink
              ? { link: merchantLink(v.merchant, v.name) }
              : { text: v.name }
            : { text: isStateField(c.field) && v.text !== '—' ? statusWords(v.text) : v.text },
    ),
  }));

/** An audit entry as both logs list it; who did it is worded by each front end. */
export interface AuditRow {
  id: string;
  /** The action's code (`split_order.cancel`: the filter's value, the CSV's) and in words ("Split order: cancel"). */
  action: string;
  actionWords: string;
  when: Html;
  /** The target's code (`split_order:5000000000001`, what the console's filter takes) and in words. */
  target: string;
  targetWords: string;
  changes: ChangeLine[];
}

export const auditRow = (
  e: { id: string; action: string; createdAt: number; target: string; changes: readonly AuditFieldChange[] },
  merchantLink?: (id: string, name: string) => Link,
): AuditRow => ({
  id: e.id,
  action: e.action,
  actionWords: auditActionWords(e.action),
  when: moment(e.createdAt),
  target: e.target,
  targetWords: auditTargetWords(e.target),
  changes: changeLines(e.changes, merchantLink),
});

/** What the sign-in page says after a write that ended the session (both front ends): a password reset, or signing out everywhere. */
export const signInDone = ({ passwordReset, signedOutEverywhere }: { passwordReset: boolean; signedOutEverywhere: boolean }): string | null =>
  passwordReset
    ? 'Your new password is set, and every session of the account has ended: sign in with it.'
    : signedOutEverywhere
      ? 'Signed out everywhere: every session of your account has ended, on every device.'
      : null;

/** The notice after one's own password change (both front ends): what else it ended. */
export function passwordChangedNotice(sessionsEnded: number, revokedResets: number): string {
  const sessions = `${sessionsEnded} other session${sessionsEnded === 1 ? '' : 's'} signed out`;
  const links = revokedResets > 0 ? `; ${revokedResets} open password reset link${revokedResets === 1 ? '' : 's'} revoked` : '';
  return `Password changed; ${sessions}${links}.`;
}

// ---- Edit conflicts (docs/web.md, "Edit conflicts").

/** One field of an edit form as the conflict page compares it: what was sent, what is stored now. */
export interface ConflictField {
  /** The form field's name (a list: one hidden input per value). */
  name: string;
  label: string;
  yours: string | readonly string[];
  stored: string | readonly string[];
  /**
   * How two values are the same: `text` (trimmed, line ends alike), `number` (`12.5` = `12.50`),
   * `json` (the same JSON value however laid out), `set` (the same values in any order; a text
   * value is split on commas, spaces and lines).
   */
  compare?: 'text' | 'number' | 'json' | 'set';
  /** How the page shows the two values when not as sent (a category's id as `11 · Kitchen`). */
  shown?: { yours: string; stored: string };
}

/** views['edit-conflict'] (shared/views/edit-conflict.eta, both front ends): a save refused because someone saved first. */
export interface EditConflictView extends PageModel {
  lead: string;
  /** The fields where the two differ: the form's label, what was sent, what is stored. */
  rows: { label: string; yours: string; stored: string }[];
  /** The save again, made against the stored version: where it posts and every field as sent. */
  action: string;
  fields: { name: string; value: string }[];
  /** Back to the edit form (or page) of what is stored now, dropping what was sent. */
  discard: Link;
}

const listOf = (v: string | readonly string[]) => (typeof v === 'string' ? v.split(/[\s,]+/) : [...v]).map((s) => s.trim()).filter((s) => s !== '');
const plain = (v: string | readonly string[]) => (typeof v === 'string' ? v.replace(/\r\n?/g, '\n').trim() : listOf(v).join(', '));
function jsonOf(text: string): string | null {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return null;
  }
}

/** Whether the sent and the stored value of a field say the same. */
export function sameValue(f: Pick<ConflictField, 'yours' | 'stored' | 'compare'>): boolean {
  const [a, b] = [plain(f.yours), plain(f.stored)];
  if (a === b) return true;
  switch (f.compare) {
    case 'number':
      return a !== '' && b !== '' && Number(a) === Number(b);
    case 'json':
      return a !== '' && b !== '' && jsonOf(a) !== null && jsonOf(a) === jsonOf(b);
    case 'set':
      return listOf(f.yours).sort().join('\n') === listOf(f.stored).sort().join('\n');
    default:
      return false;
  }
}

/**
 * The conflict page of an edit form whose version is no longer the stored one: which fields differ
 * (the sent and the stored value, field by field), a button that sends the same fields again made
 * against the stored version (`version` replaced), and a way back that keeps the stored one.
 */
export function presentEditConflict({
  what,
  action,
  discard,
  fields,
  storedVersion,
  extra = [],
}: {
  /** `Product SKU-A`, `The sandbox account's billing terms`. */
  what: string;
  action: string;
  discard: Link;
  fields: readonly ConflictField[];
  storedVersion: number;
  /** Fields sent again unchanged that the page does not compare (the environment of a terms form). */
  extra?: readonly { name: string; value: string }[];
}): EditConflictView {
  const rows = fields
    .filter((f) => !sameValue(f))
    .map((f) => ({ label: f.label, yours: (f.shown?.yours ?? plain(f.yours)) || '(empty)', stored: (f.shown?.stored ?? plain(f.stored)) || '(empty)' }));
  return {
    title: `Not saved: ${what} changed meanwhile`,
    lead:
      rows.length === 0
        ? `${what} was saved by someone else after you opened the form, with the same values you sent. Nothing of yours was written.`
        : `${what} was saved by someone else after you opened the form. Nothing of yours was written. Where the two differ:`,
    rows,
    action,
    fields: [
      ...extra,
      ...fields.flatMap((f) => (typeof f.yours === 'string' ? [{ name: f.name, value: f.yours }] : f.yours.map((value) => ({ name: f.name, value })))),
      { name: 'version', value: String(storedVersion) },
    ],
    discard,
  };
}
