import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  presentAccount,
  presentDashboard,
  presentPasswordReset,
  presentSignIn,
  presentStaff,
  presentWebhook,
  presentWebhooks,
  type DashboardStats,
} from '../../src/web/console/present-admin.ts';
import { CONSOLE_VIEWS } from '../../src/web/console/views.ts';

// The console's own pages without a template (issue 30, rule 3): what each presenter of
// console/present-admin.ts makes of a service's answer.

const AT = '2026-05-01T14:03:07Z';
const AT_MS = Date.parse(AT);
const AT_TIME = '<time datetime="2026-05-01T14:03:07Z" title="2026-05-01 14:03:07 UTC">2026-05-01 14:03 UTC</time>';
const LATER = '2026-05-02T09:30:00Z';
const LATER_TIME = '<time datetime="2026-05-02T09:30:00Z" title="2026-05-02 09:30:00 UTC">2026-05-02 09:30 UTC</time>';
const DAY = 86_400;
const MAY_1 = Date.parse('2026-05-01T00:00:00Z') / 1000;

/** What `dashboard()` answers (services/dashboard.service.ts), for three days. */
const stats = (extra: Partial<DashboardStats> = {}): DashboardStats => ({
  windowDays: 3,
  orders: 7,
  refunds: 2,
  slaHours: 48,
  pendingRefunds: 4,
  claims: { open: 3, overdue: 2, slaHours: 48 },
  overSla: 1,
  series: { days: [MAY_1, MAY_1 + DAY, MAY_1 + 2 * DAY], orders: [3, 0, 4], refunds: [1, 1, 0] },
  lowStock: {
    threshold: 5,
    rows: [
      { sku: 'SKU 1/A', name: 'Mug', warehouseCode: 'W1', qty: 0 },
      { sku: 'SKU-2', name: 'Cup', warehouseCode: 'W2', qty: 3 },
    ],
    more: true,
  },
  failingEndpoints: {
    rows: [
      { id: 11, merchantId: 7, merchantName: 'Acme', url: 'https://acme.test/hook', status: 'active', failingSince: AT_MS, disabledReason: null },
      { id: 12, merchantId: 8, merchantName: 'Bolt', url: 'https://bolt.test/hook', status: 'disabled', failingSince: AT_MS, disabledReason: 'answered 410' },
    ],
    more: false,
  },
  refundWorker: { mode: 'auto', claimed: 1, due: 2, parked: 0, oldestPendingAt: AT_MS },
  money: { environment: 'production', currency: 'USD', receivedCents: 12050, owedCents: -305, heldCents: 0 },
  ...extra,
});

describe('views.dashboard (presentDashboard)', () => {
  const all = { reviewRefunds: true, openClaims: true, openProducts: true };

  it('counts, the chart’s data and its table by UTC day, money in minor units as text', () => {
    const v = presentDashboard(stats(), all);
    assert.equal(v.title, 'Dashboard');
    assert.equal(v.window, 'Last 3 days');
    assert.deepEqual([v.orders, v.refunds], ['7', '2']);
    assert.equal(v.chart.caption, 'Orders and refunds per day (UTC), the last 3 days');
    assert.deepEqual(JSON.parse(v.chart.data), stats().series, 'console-chart.js reads the series as the service gives it');
    assert.deepEqual(v.chart.days, [
      { day: '2026-05-01', orders: '3', refunds: '1' },
      { day: '2026-05-02', orders: '0', refunds: '1' },
      { day: '2026-05-03', orders: '4', refunds: '0' },
    ]);
    assert.deepEqual(v.money, { heading: 'Money (production, USD)', received: '120.50', owed: '-3.05', held: '0.00' });
  });

  it('the open claims and those past CLAIM_SLA_HOURS, the claims queue’s link only for a role that may open it', () => {
    assert.deepEqual(presentDashboard(stats(), all).claims, {
      open: '3',
      slaLabel: 'Past the 48 h SLA',
      overdue: { text: '2', breach: true },
      queue: '/console/claims',
    });
    const calm = presentDashboard(stats({ claims: { open: 1, overdue: 0, slaHours: 24 } }), { reviewRefunds: false, openClaims: false, openProducts: false });
    assert.deepEqual(calm.claims, { open: '1', slaLabel: 'Past the 24 h SLA', overdue: { text: '0', breach: false }, queue: null });
  });

  it('the review figures against the SLA, the queue’s link only for a role that may open it', () => {
    const v = presentDashboard(stats(), all);
    assert.deepEqual(v.review, { pending: '4', slaLabel: 'Past the 48 h SLA', overSla: { text: '1', breach: true }, queue: '/console/refunds' });
    const calm = presentDashboard(stats({ overSla: 0 }), { reviewRefunds: false, openClaims: false, openProducts: false });
    assert.deepEqual(calm.review.overSla, { text: '0', breach: false });
    assert.equal(calm.review.queue, null);
  });

  it('the refund worker: due only when decisions are automatic, the oldest waiting refund as a time', () => {
    const auto = presentDashboard(stats(), all).worker;
    assert.deepEqual(auto, { mode: 'automatic', claimed: '1', due: { text: '2', breach: true }, parked: { text: '0', breach: false }, oldestPending: AT_TIME });
    const manual = presentDashboard(stats({ refundWorker: { mode: 'manual', claimed: 0, due: 5, parked: 3, oldestPendingAt: null } }), all).worker;
    assert.deepEqual(manual, { mode: 'manual', claimed: '0', due: { text: '–', breach: false }, parked: { text: '3', breach: true }, oldestPending: null });
  });

  it('low stock: out of stock said, the SKU linking its product (escaped in the path) for a role that may open the catalogue', () => {
    const v = presentDashboard(stats(), all).lowStock;
    assert.equal(v.heading, 'Low stock (at most 5)');
    assert.equal(v.empty, null);
    assert.deepEqual(v.rows[0], {
      key: 'SKU 1/A@W1',
      sku: 'SKU 1/A',
      href: '/console/products/SKU%201%2FA',
      name: 'Mug',
      warehouseCode: 'W1',
      qty: '0 (out)',
      out: true,
    });
    assert.deepEqual([v.rows[1].qty, v.rows[1].out], ['3', false]);
    assert.equal(v.more, 'More rows are low; the lowest 2 are shown.');
    assert.equal(presentDashboard(stats(), { reviewRefunds: true, openClaims: true, openProducts: false }).lowStock.rows[0].href, null);
    const none = presentDashboard(stats({ lowStock: { threshold: 5, rows: [], more: false } }), all).lowStock;
    assert.equal(none.empty, 'No SKU is at or below 5 in any warehouse.');
    assert.equal(none.more, null);
  });

  it('failing endpoints: the merchant linked, failing since a time or disabled and why', () => {
    const v = presentDashboard(stats({ failingEndpoints: { ...stats().failingEndpoints, more: true } }), all).failingEndpoints;
    assert.deepEqual(v.rows[0], {
      id: '11',
      merchant: { href: '/console/merchants/7', text: 'Acme', data: { name: 'merchant', value: '7' } },
      url: 'https://acme.test/hook',
      state: { disabled: false, since: AT_TIME },
    });
    assert.deepEqual(v.rows[1].state, { disabled: true, reason: 'answered 410' });
    assert.equal(v.more, 'More endpoints are failing; the longest-failing 2 are shown.');
  });
});

/** An endpoint as presentEndpoint (src/present/webhook.presenter.ts) gives it. */
const endpoint = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  url: `https://shop.test/hooks/${id}`,
  events: ['order.created', 'stock.changed'],
  skus: null,
  status: 'active' as const,
  disabledReason: null as string | null,
  disabledAt: null,
  failingSince: null as string | null,
  createdAt: AT,
  updatedAt: AT,
  merchantId: '7',
  ...extra,
});

/** A delivery as presentDelivery gives it. */
const delivery = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  webhookId: `msg_${id}`,
  eventId: `9${id}`,
  type: 'order.created',
  orderId: '1001' as string | null,
  cursorFrom: null,
  cursorTo: null,
  status: 'failed' as 'pending' | 'succeeded' | 'failed',
  attempts: 3,
  lastStatusCode: 500 as number | null,
  lastError: 'timeout' as string | null,
  lastAttemptAt: LATER,
  nextAttemptAt: null as string | null,
  deliveredAt: null,
  createdAt: AT,
  ...extra,
});

describe('views.webhooks (presentWebhooks)', () => {
  const page = (total: number, list: ReturnType<typeof endpoint>[]) => ({
    total,
    pageNumber: 1,
    pageSize: 2,
    list: list.map((w) => ({ ...w, merchantName: 'Acme', deliveries: { pending: 1, succeeded: 9, failed: 2 } })),
  });

  it('each endpoint linked, its merchant linked, status with the reason it was disabled, counts as text', () => {
    const v = presentWebhooks(page(1, [endpoint('31', { status: 'disabled', disabledReason: 'answered 410' })]), { merchant: '7', status: 'disabled' });
    assert.equal(v.title, 'Webhooks');
    assert.equal(v.summary, '1 endpoint.');
    assert.deepEqual(v.rows, [
      {
        id: '31',
        href: '/console/webhooks/31',
        merchant: { href: '/console/merchants/7', text: 'Acme', data: { name: 'merchant', value: '7' } },
        url: 'https://shop.test/hooks/31',
        events: 'order.created, stock.changed',
        status: 'Disabled: answered 410',
        pending: '1',
        failed: '2',
      },
    ]);
    assert.deepEqual(v.statuses, [
      { value: 'active', selected: false, text: 'Active' },
      { value: 'disabled', selected: true, text: 'Disabled' },
    ]);
    assert.equal(v.next, null);
  });

  it('the next page keeps the filters; none past the last page or on an empty one', () => {
    const v = presentWebhooks(page(3, [endpoint('1'), endpoint('2')]), { merchant: '', status: 'active' });
    assert.equal(v.summary, '3 endpoints.');
    assert.equal(v.rows[0].status, 'Active');
    assert.equal(v.next, '/console/webhooks?merchant=&status=active&page=2');
    const empty = presentWebhooks(page(0, []), { merchant: '', status: '' });
    assert.equal(empty.summary, '0 endpoints.');
    assert.deepEqual(empty.rows, []);
    assert.equal(empty.next, null);
  });
});

describe('views.webhook (presentWebhook)', () => {
  const log = (e: ReturnType<typeof endpoint>, deliveries: ReturnType<typeof delivery>[], total = deliveries.length) => ({
    endpoint: e,
    total,
    pageNumber: 1,
    pageSize: 2,
    deliveries,
  });

  it('the endpoint’s facts, the Disable form, each delivery with its order, next try, result and Retry', () => {
    const v = presentWebhook(
      log(
        endpoint('31', { failingSince: AT }),
        [delivery('5'), delivery('4', { status: 'pending', nextAttemptAt: LATER, orderId: null, lastStatusCode: null, lastError: null })],
        3,
      ),
      'Acme',
      '',
    );
    assert.equal(v.title, 'Webhook 31');
    assert.equal(v.back, '/console/webhooks');
    assert.deepEqual(v.facts, [
      { label: 'Merchant', link: { href: '/console/merchants/7', text: 'Acme', data: { name: 'merchant', value: '7' } } },
      { label: 'URL', text: 'https://shop.test/hooks/31' },
      { label: 'Events', html: '<code>order.created</code>, <code>stock.changed</code>' },
      { label: 'Status', field: 'webhook-status', text: 'Active' },
      { label: 'Failing since', html: AT_TIME },
    ]);
    assert.equal(v.disable, '/console/webhooks/31/disable');
    assert.equal(v.enable, null);
    assert.equal(v.summary, '3 deliveries, newest first.');
    assert.deepEqual(v.deliveries[0], {
      id: '5',
      type: 'order.created',
      order: { href: '/console/orders/1001', text: '1001' },
      status: 'failed',
      statusText: 'Failed',
      next: null,
      attempts: '3',
      lastResult: '500 timeout',
      created: AT_TIME,
      retry: '/console/webhooks/31/deliveries/5/retry',
    });
    assert.equal(v.deliveries[1].order, null);
    assert.equal(v.deliveries[1].next, LATER_TIME);
    assert.equal(v.deliveries[1].lastResult, ' ');
    assert.equal(v.next, '/console/webhooks/31?status=&page=2');
  });

  it('a disabled endpoint: why, the Enable form, no Retry; the status filter selected', () => {
    const v = presentWebhook(log(endpoint('32', { status: 'disabled', disabledReason: 'by the operator' }), [delivery('6')]), 'Acme', 'failed');
    assert.deepEqual(v.facts[3], { label: 'Status', field: 'webhook-status', text: 'Disabled: by the operator' });
    assert.deepEqual(v.facts[4], { label: 'Failing since', html: '—' });
    assert.equal(v.disable, null);
    assert.equal(v.enable, '/console/webhooks/32/enable');
    assert.equal(v.deliveries[0].retry, null);
    assert.deepEqual(v.filter, {
      action: '/console/webhooks/32',
      statuses: [
        { value: 'pending', selected: false, text: 'Pending' },
        { value: 'succeeded', selected: false, text: 'Delivered' },
        { value: 'failed', selected: true, text: 'Failed' },
      ],
    });
    assert.equal(v.summary, '1 delivery, newest first.');
    assert.equal(v.next, null);
  });
});

describe('views.staff (presentStaff)', () => {
  const ROLES = ['owner', 'support', 'warehouse'] as const;
  const row = (id: number, email: string, role: string, status: string, lastSignIn: number | null) => ({
    id,
    email,
    email_key: email.toLowerCase(),
    role,
    status,
    last_sign_in_at: lastSignIn,
    // The store's row has more; none of it reaches the page.
    password_hash: '$argon2id$secret',
  });
  const accounts = [
    row(1, 'Owner@example.com', 'owner', 'active', AT_MS),
    row(2, 'ops@example.com', 'support', 'active', null),
    row(3, 'gone@example.com', 'warehouse', 'disabled', null),
  ];

  it('your own account: (you), no role or disable form, a reset link form', () => {
    const [me] = presentStaff(accounts, { me: 1, roles: ROLES }).rows;
    assert.deepEqual(me, {
      id: '1',
      key: 'owner@example.com',
      status: 'active',
      statusText: 'Active',
      email: 'Owner@example.com',
      you: true,
      role: 'owner',
      lastSignIn: AT_TIME,
      roleForm: null,
      disable: null,
      enable: null,
      resetPassword: '/console/staff/1/reset-password',
    });
    assert.ok(!JSON.stringify(me).includes('argon2'), 'no password hash in the model');
  });

  it('another active account: the role form with its role selected, Disable and reset; a disabled one: Enable, no reset', () => {
    const [, ops, gone] = presentStaff(accounts, { me: 1, roles: ROLES }).rows;
    assert.equal(ops.you, false);
    assert.equal(ops.lastSignIn, 'never');
    assert.deepEqual(ops.roleForm, {
      action: '/console/staff/2/role',
      roles: [
        { value: 'owner', selected: false },
        { value: 'support', selected: true },
        { value: 'warehouse', selected: false },
      ],
    });
    assert.deepEqual([ops.disable, ops.enable, ops.resetPassword], ['/console/staff/2/disable', null, '/console/staff/2/reset-password']);
    assert.deepEqual([gone.disable, gone.enable, gone.resetPassword], [null, '/console/staff/3/enable', null]);
  });

  it('nothing shown once by default; the Add form empty with support chosen', () => {
    const v = presentStaff(accounts, { me: 1, roles: ROLES });
    assert.equal(v.title, 'Staff');
    assert.deepEqual([v.secret, v.reset, v.error], [null, null, null]);
    assert.equal(v.form.email, '');
    assert.deepEqual(
      v.form.roles.filter((r) => r.selected).map((r) => r.value),
      ['support'],
    );
  });

  it('the one-time password and reset link (its expiry a time), a refusal, a refused Add form as typed', () => {
    const v = presentStaff(accounts, {
      me: 1,
      roles: ROLES,
      secret: { email: 'new@example.com', password: 'pw-123' },
      reset: { email: 'ops@example.com', url: 'https://console.test/console/password-reset/abc', expiresAt: AT_MS },
      error: 'email already in use',
      form: { email: 'new@example.com', role: 'warehouse' },
    });
    assert.deepEqual(v.secret, { email: 'new@example.com', password: 'pw-123' });
    assert.deepEqual(v.reset, { email: 'ops@example.com', url: 'https://console.test/console/password-reset/abc', expires: AT_TIME });
    assert.equal(v.error, 'Refused: email already in use');
    assert.equal(v.form.email, 'new@example.com');
    assert.deepEqual(
      v.form.roles.filter((r) => r.selected).map((r) => r.value),
      ['warehouse'],
    );
  });
});

describe('views.account, views[sign-in], views[password-reset]', () => {
  it('account: each session’s times, its address or —, this one said', () => {
    const v = presentAccount('ops@example.com', [
      { current: true, address: '203.0.113.9', createdAt: AT_MS, lastSeenAt: Date.parse(LATER) },
      { current: false, address: null, createdAt: AT_MS, lastSeenAt: AT_MS },
    ]);
    assert.equal(v.title, 'Your account');
    assert.equal(v.email, 'ops@example.com');
    assert.equal(v.error, null);
    assert.deepEqual(v.sessions, [
      { current: true, signedIn: AT_TIME, lastActive: LATER_TIME, address: '203.0.113.9', state: 'this session' },
      { current: false, signedIn: AT_TIME, lastActive: AT_TIME, address: '—', state: 'signed in' },
    ]);
    assert.equal(presentAccount('ops@example.com', [], 'The two new passwords differ.').error, 'The two new passwords differ.');
  });

  it('sign-in: empty, after a reset link was used, and refused with the email kept', () => {
    assert.deepEqual(presentSignIn(), { title: 'Sign in', email: '', error: null, done: null });
    assert.match(presentSignIn({ passwordReset: true }).done ?? '', /^Your new password is set/);
    assert.match(presentSignIn({ signedOutEverywhere: true }).done ?? '', /^Signed out everywhere: every session of your account has ended/);
    assert.deepEqual(presentSignIn({ email: 'ops@example.com', error: 'Wrong email or password, or the account is disabled.' }), {
      title: 'Sign in',
      email: 'ops@example.com',
      error: 'Wrong email or password, or the account is disabled.',
      done: null,
    });
  });

  it('password reset: the account named, the form posting to its link', () => {
    const v = presentPasswordReset({ email: 'ops@example.com' }, 'T0ken', 'The two passwords differ.');
    assert.deepEqual(v, {
      title: 'Choose a new password',
      email: 'ops@example.com',
      action: '/console/password-reset/T0ken',
      error: 'The two passwords differ.',
    });
    assert.equal(presentPasswordReset({ email: 'ops@example.com' }, 'T0ken').error, null);
  });
});

describe('the templates of these views', () => {
  const web = path.join(import.meta.dirname, '../../src/web');
  const views = ['dashboard', 'webhooks', 'webhook', 'staff', 'account', 'sign-in', 'password-reset'] as const;

  it('build no values: no time, date, JSON, URL or path escaping, and nothing of the untyped extras (it.user, it.nav, it.time)', () => {
    for (const name of views) {
      const text = fs.readFileSync(path.join(web, `${CONSOLE_VIEWS[name].template}.eta`), 'utf8');
      assert.doesNotMatch(text, /toFixed|toLocale|\/ 100|new Date|toISOString|JSON\.|URLSearchParams|encodeURI|it\.(time|user|nav|environment)\b/, name);
    }
  });
});
