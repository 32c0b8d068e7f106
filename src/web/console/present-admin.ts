import type { Static } from 'typebox';
import type { WebhookDelivery, WebhookEndpoint } from '../../schemas/webhooks.ts';
import type { dashboard } from '../../services/dashboard.service.ts';
import { codes, signInDone, moneyFromCents, moment, query, statusWords, type Choice, type Fact, type Link } from '../shared/present.ts';
import type { Html, PageModel } from '../shared/views.ts';
import { merchantLink } from './present.ts';

/**
 * The presenters of the console's own pages (issue 30, rule 3): the dashboard, the webhook
 * endpoints and one endpoint's delivery log, staff, your account, sign-in and the password reset
 * link's page. Each builds the typed model of one view (console/views.ts) from what a service
 * returned; counts, money, times and ids become text here, so the templates only place them.
 * Unit tests: test/unit/web-presenters-admin.test.ts.
 */

const PREFIX = '/console';
const WEBHOOKS = `${PREFIX}/webhooks`;

/** `1 endpoint`, `3 endpoints`: a count and its noun (`many` when it is not one). */
const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** A `<select>`'s options, the one chosen selected. */
const choices = (values: readonly string[], chosen: string): Choice[] => values.map((value) => ({ value, selected: value === chosen }));
/** A status filter's options: each state in words (`succeeded` → "Delivered"), the code as the value. */
const statusFilter = (values: readonly string[], chosen: string): Choice[] =>
  values.map((value) => ({ value, selected: value === chosen, text: statusWords(value) }));

// ---- The dashboard.

/** What `dashboard()` (services/dashboard.service.ts) answers. */
export type DashboardStats = Awaited<ReturnType<typeof dashboard>>;

/** A figure of a `<dl class="stats">`: its text, and whether it shows a breach (highlighted). */
export interface Stat {
  text: string;
  breach: boolean;
}

/** views.dashboard: the last days' orders and refunds, money, the refund review and worker, low stock and failing webhooks. */
export interface DashboardView extends PageModel {
  /** `Last 30 days`. */
  window: string;
  orders: string;
  refunds: string;
  chart: {
    /** `Orders and refunds per day (UTC), the last 30 days`. */
    caption: string;
    /** The chart's data (console-chart.js reads it from `data-chart`): JSON of the days (epoch seconds), orders and refunds. */
    data: string;
    /** The same numbers as a table: the UTC day (`2026-05-01`) and its counts. */
    days: { day: string; orders: string; refunds: string }[];
  };
  money: {
    /** `Money (production, EUR)`: the environment and the supplier's currency. */
    heading: string;
    received: string;
    owed: string;
    held: string;
  };
  claims: {
    open: string;
    /** `Past the 48 h SLA` (CLAIM_SLA_HOURS). */
    slaLabel: string;
    overdue: Stat;
    /** The claims queue's link, for a role that may open it. */
    queue: string | null;
  };
  review: {
    pending: string;
    /** `Past the 48 h SLA`. */
    slaLabel: string;
    overSla: Stat;
    /** The review queue's link, for a role that may open it. */
    queue: string | null;
  };
  worker: {
    /** `automatic` or `manual`. */
    mode: string;
    claimed: string;
    /** `–` when decisions are manual. */
    due: Stat;
    parked: Stat;
    /** When the oldest waiting refund was requested, or null when none waits. */
    oldestPending: Html | null;
  };
  lowStock: {
    /** `Low stock (at most 5)`. */
    heading: string;
    /** `No SKU is at or below 5 in any warehouse.`, or null when some are. */
    empty: string | null;
    rows: {
      /** `SKU-1@W1`: the row's `data-low-stock`. */
      key: string;
      sku: string;
      /** The product's page, for a role that may open the catalogue. */
      href: string | null;
      name: string;
      warehouseCode: string;
      /** `3`, or `0 (out)`. */
      qty: string;
      out: boolean;
    }[];
    /** `More rows are low; the lowest 20 are shown.`, or null. */
    more: string | null;
  };
  failingEndpoints: {
    rows: {
      id: string;
      merchant: Link;
      url: string;
      /** Disabled (and why), or failing since when. */
      state: { disabled: true; reason: string | null } | { disabled: false; since: Html };
    }[];
    /** `More endpoints are failing; the longest-failing 20 are shown.`, or null. */
    more: string | null;
  };
}

/** The UTC day of a chart point (epoch seconds of its midnight): `2026-05-01`. */
const utcDay = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

export function presentDashboard(stats: DashboardStats, may: { reviewRefunds: boolean; openClaims: boolean; openProducts: boolean }): DashboardView {
  const claims = stats.claims;
  const { series, refundWorker: worker, lowStock, failingEndpoints: failing } = stats;
  const auto = worker.mode === 'auto';
  return {
    title: 'Dashboard',
    window: `Last ${stats.windowDays} days`,
    orders: String(stats.orders),
    refunds: String(stats.refunds),
    chart: {
      caption: `Orders and refunds per day (UTC), the last ${series.days.length} days`,
      data: JSON.stringify(series),
      days: series.days.map((day, i) => ({ day: utcDay(day), orders: String(series.orders[i]), refunds: String(series.refunds[i]) })),
    },
    money: {
      heading: `Money (${stats.money.environment}, ${stats.money.currency})`,
      received: moneyFromCents(stats.money.receivedCents),
      owed: moneyFromCents(stats.money.owedCents),
      held: moneyFromCents(stats.money.heldCents),
    },
    review: {
      pending: String(stats.pendingRefunds),
      slaLabel: `Past the ${stats.slaHours} h SLA`,
      overSla: { text: String(stats.overSla), breach: stats.overSla > 0 },
      queue: may.reviewRefunds ? `${PREFIX}/refunds` : null,
    },
    claims: {
      open: String(claims.open),
      slaLabel: `Past the ${claims.slaHours} h SLA`,
      overdue: { text: String(claims.overdue), breach: claims.overdue > 0 },
      queue: may.openClaims ? `${PREFIX}/claims` : null,
    },
    worker: {
      mode: auto ? 'automatic' : 'manual',
      claimed: String(worker.claimed),
      due: { text: auto ? String(worker.due) : '–', breach: auto && worker.due > 0 },
      parked: { text: String(worker.parked), breach: worker.parked > 0 },
      oldestPending: worker.oldestPendingAt === null ? null : moment(worker.oldestPendingAt),
    },
    lowStock: {
      heading: `Low stock (at most ${lowStock.threshold})`,
      empty: lowStock.rows.length === 0 ? `No SKU is at or below ${lowStock.threshold} in any warehouse.` : null,
      rows: lowStock.rows.map((r) => ({
        key: `${r.sku}@${r.warehouseCode}`,
        sku: r.sku,
        href: may.openProducts ? `${PREFIX}/products/${encodeURIComponent(r.sku)}` : null,
        name: r.name,
        warehouseCode: r.warehouseCode,
        qty: r.qty === 0 ? '0 (out)' : String(r.qty),
        out: r.qty === 0,
      })),
      more: lowStock.more ? `More rows are low; the lowest ${lowStock.rows.length} are shown.` : null,
    },
    failingEndpoints: {
      rows: failing.rows.map((e) => ({
        id: String(e.id),
        merchant: merchantLink(e.merchantId, e.merchantName),
        url: e.url,
        state: e.status === 'disabled' ? { disabled: true, reason: e.disabledReason } : { disabled: false, since: moment(e.failingSince) },
      })),
      more: failing.more ? `More endpoints are failing; the longest-failing ${failing.rows.length} are shown.` : null,
    },
  };
}

// ---- Webhooks: every merchant's endpoints, and one endpoint with its delivery log.

type Endpoint = Static<typeof WebhookEndpoint>;

/** `disabled: the endpoint answered 410`, or the status alone. */
const endpointStatus = (e: Pick<Endpoint, 'status' | 'disabledReason'>) =>
  e.disabledReason ? `${statusWords(e.status)}: ${e.disabledReason}` : statusWords(e.status);

/** views.webhooks: the endpoints of every merchant, filtered by merchant and status. */
export interface WebhooksView extends PageModel {
  filters: { merchant: string; status: string };
  statuses: Choice[];
  /** `3 endpoints.` */
  summary: string;
  rows: {
    id: string;
    href: string;
    merchant: Link;
    url: string;
    events: string;
    status: string;
    pending: string;
    failed: string;
  }[];
  next: string | null;
}

export function presentWebhooks(
  endpoints: {
    total: number;
    pageNumber: number;
    pageSize: number;
    list: readonly (Endpoint & { merchantId: string; merchantName: string; deliveries: { pending: number; failed: number } })[];
  },
  filters: { merchant: string; status: string },
): WebhooksView {
  const { total, pageNumber, pageSize, list } = endpoints;
  return {
    title: 'Webhooks',
    filters,
    statuses: statusFilter(['active', 'disabled'], filters.status),
    summary: `${counted(total, 'endpoint', 'endpoints')}.`,
    rows: list.map((w) => ({
      id: w.id,
      href: `${WEBHOOKS}/${w.id}`,
      merchant: merchantLink(w.merchantId, w.merchantName),
      url: w.url,
      events: w.events.join(', '),
      status: endpointStatus(w),
      pending: String(w.deliveries.pending),
      failed: String(w.deliveries.failed),
    })),
    next: list.length > 0 && total > pageNumber * pageSize ? `${WEBHOOKS}?${query({ ...filters, page: String(pageNumber + 1) })}` : null,
  };
}

/** views.webhook: one endpoint, its disable or enable form, and its deliveries, newest first. */
export interface WebhookView extends PageModel {
  id: string;
  back: string;
  facts: Fact[];
  /** The Disable form's action (an active endpoint), or null. */
  disable: string | null;
  /** The Enable form's action (a disabled endpoint), or null. */
  enable: string | null;
  /** The delivery log's filter form. */
  filter: { action: string; statuses: Choice[] };
  /** `3 deliveries, newest first.` */
  summary: string;
  deliveries: {
    id: string;
    type: string;
    order: Link | null;
    /** The code (the row's data-status) and its words. */
    status: string;
    statusText: string;
    /** When a pending delivery is tried next. */
    next: Html | null;
    attempts: string;
    /** `500 timeout`: the last answer's status code and error. */
    lastResult: string;
    created: Html;
    /** The Retry form's action (an active endpoint), or null. */
    retry: string | null;
  }[];
  next: string | null;
}

export function presentWebhook(
  log: {
    endpoint: Endpoint & { merchantId: string };
    total: number;
    pageNumber: number;
    pageSize: number;
    deliveries: readonly Static<typeof WebhookDelivery>[];
  },
  merchantName: string,
  status: string,
): WebhookView {
  const { endpoint: w, total, pageNumber, pageSize, deliveries } = log;
  const base = `${WEBHOOKS}/${w.id}`;
  const active = w.status === 'active';
  return {
    title: `Webhook ${w.id}`,
    id: w.id,
    back: WEBHOOKS,
    facts: [
      { label: 'Merchant', link: merchantLink(w.merchantId, merchantName) },
      { label: 'URL', text: w.url },
      { label: 'Events', html: codes(w.events) },
      { label: 'Status', field: 'webhook-status', text: endpointStatus(w) },
      { label: 'Failing since', html: moment(w.failingSince) },
    ],
    disable: active ? `${base}/disable` : null,
    enable: active ? null : `${base}/enable`,
    filter: { action: base, statuses: statusFilter(['pending', 'succeeded', 'failed'], status) },
    summary: `${counted(total, 'delivery', 'deliveries')}, newest first.`,
    deliveries: deliveries.map((d) => ({
      id: d.id,
      type: d.type,
      order: d.orderId ? { href: `${PREFIX}/orders/${d.orderId}`, text: d.orderId } : null,
      status: d.status,
      statusText: statusWords(d.status),
      next: d.nextAttemptAt ? moment(d.nextAttemptAt) : null,
      attempts: String(d.attempts),
      lastResult: `${d.lastStatusCode ?? ''} ${d.lastError ?? ''}`,
      created: moment(d.createdAt),
      retry: active ? `${base}/deliveries/${d.id}/retry` : null,
    })),
    next: deliveries.length > 0 && total > pageNumber * pageSize ? `${base}?${query({ status, page: String(pageNumber + 1) })}` : null,
  };
}

// ---- Staff (owners).

/** A staff account as the store lists it (store/staff.repository.ts `listStaff`). */
export interface StaffRecord {
  id: number;
  email: string;
  email_key: string;
  role: string;
  status: string;
  last_sign_in_at: number | null;
}

/** One staff account's row: who, and the forms an owner may use on it. */
export interface StaffRowView {
  id: string;
  /** The row's `data-staff`: the email in lower case. */
  key: string;
  /** The code (the row's data-status) and its words. */
  status: string;
  statusText: string;
  email: string;
  /** The signed-in owner's own account (`(you)`; no role or disable form). */
  you: boolean;
  role: string;
  lastSignIn: Html;
  /** The Set role form (another's account): its action and the roles, the account's selected. */
  roleForm: { action: string; roles: Choice[] } | null;
  /** The Disable form's action (another's active account). */
  disable: string | null;
  /** The Enable form's action (another's disabled account). */
  enable: string | null;
  /** The Password reset link form's action (an active account). */
  resetPassword: string | null;
}

/** views.staff: the one-time displays after a change, a refusal, the accounts and the Add form. */
export interface StaffView extends PageModel {
  /** A new account's password, shown once. */
  secret: { email: string; password: string } | null;
  /** A password reset link, shown once, and until when it works. */
  reset: { email: string; url: string; expires: Html } | null;
  /** `Refused: …`: why the change was not made. */
  error: string | null;
  rows: StaffRowView[];
  /** The Add form: what a refused one held, and the roles to choose from. */
  form: { email: string; roles: Choice[] };
}

export function presentStaff(
  accounts: readonly StaffRecord[],
  {
    me,
    roles,
    secret = null,
    reset = null,
    error = null,
    form = { email: '', role: 'support' },
  }: {
    me: number;
    roles: readonly string[];
    secret?: { email: string; password: string } | null;
    reset?: { email: string; url: string; expiresAt: number } | null;
    error?: string | null;
    form?: { email: string; role: string };
  },
): StaffView {
  const staff = `${PREFIX}/staff`;
  return {
    title: 'Staff',
    secret: secret && { email: secret.email, password: secret.password },
    reset: reset && { email: reset.email, url: reset.url, expires: moment(Number(reset.expiresAt)) },
    error: error === null ? null : `Refused: ${error}`,
    rows: accounts.map((s) => {
      const you = s.id === me;
      const active = s.status === 'active';
      const at = `${staff}/${s.id}`;
      return {
        id: String(s.id),
        key: s.email_key,
        status: s.status,
        statusText: statusWords(s.status),
        email: s.email,
        you,
        role: s.role,
        lastSignIn: moment(s.last_sign_in_at, 'never'),
        roleForm: you ? null : { action: `${at}/role`, roles: choices(roles, s.role) },
        disable: !you && active ? `${at}/disable` : null,
        enable: !you && !active ? `${at}/enable` : null,
        resetPassword: active ? `${at}/reset-password` : null,
      };
    }),
    form: { email: form.email, roles: choices(roles, form.role) },
  };
}

// ---- Your account, sign-in and the password reset link's page.

/** views.account: the password form, where you are signed in, and the sign-out-everywhere form. */
export interface AccountView extends PageModel {
  /** The password form's hidden username (for password managers). */
  email: string;
  /** Why the password was not changed. */
  error: string | null;
  sessions: { current: boolean; signedIn: Html; lastActive: Html; address: string; state: string }[];
}

export function presentAccount(
  email: string,
  sessions: readonly { current: boolean; address: string | null; createdAt: number; lastSeenAt: number }[],
  error: string | null = null,
): AccountView {
  return {
    title: 'Your account',
    email,
    error,
    sessions: sessions.map((s) => ({
      current: s.current,
      signedIn: moment(s.createdAt),
      lastActive: moment(s.lastSeenAt),
      address: s.address ?? '—',
      state: s.current ? 'this session' : 'signed in',
    })),
  };
}

/** views['sign-in']: the form with the email typed, why the last try failed, or what just happened. */
export interface SignInView extends PageModel {
  email: string;
  error: string | null;
  /** A password was just set through a reset link: sign in with it. */
  done: string | null;
}

export const presentSignIn = ({
  email = '',
  error = null,
  passwordReset = false,
  signedOutEverywhere = false,
}: {
  email?: string;
  error?: string | null;
  passwordReset?: boolean;
  signedOutEverywhere?: boolean;
} = {}): SignInView => ({
  title: 'Sign in',
  email,
  error,
  done: signInDone({ passwordReset, signedOutEverywhere }),
});

/** views['password-reset']: choosing a new password through an owner's reset link. */
export interface PasswordResetView extends PageModel {
  /** The account the link is for. */
  email: string;
  action: string;
  error: string | null;
}

export const presentPasswordReset = (reset: { email: string }, token: string, error: string | null = null): PasswordResetView => ({
  title: 'Choose a new password',
  email: reset.email,
  action: `${PREFIX}/password-reset/${token}`,
  error,
});
