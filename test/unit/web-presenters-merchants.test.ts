import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  postingNotice,
  presentMerchant,
  presentMerchants,
  presentRefundList,
  termsNotice,
  type MerchantAccountInput,
  type MerchantCredentials,
  type MerchantTeam,
  type RefundSearchAnswer,
} from '../../src/web/console/present-merchants.ts';
import { CONSOLE_VIEWS } from '../../src/web/console/views.ts';
import type { Cell } from '../../src/web/shared/present.ts';

// The console's merchant pages and all-refunds list (issue 30, rule 3): what each presenter makes of a service's answer, no template.

const CREATED = '2026-05-01T14:03:07Z';
const CREATED_TIME = '<time datetime="2026-05-01T14:03:07Z" title="2026-05-01 14:03:07 UTC">2026-05-01 14:03 UTC</time>';
const LATER = '2026-06-02T08:00:00Z';
const LATER_TIME = '<time datetime="2026-06-02T08:00:00Z" title="2026-06-02 08:00:00 UTC">2026-06-02 08:00 UTC</time>';

const cellText = (c: Cell) => (typeof c === 'string' ? c : 'html' in c ? c.html : c.text);

describe('the merchants list (views.merchants → MerchantsView)', () => {
  const merchants = [
    { id: 1, name: 'Shop & Co', status: 'active', createdAt: Date.parse(CREATED) },
    { id: 2, name: 'Other', status: 'disabled', createdAt: CREATED },
  ];

  it('lists every merchant by id with its page’s link and when it was created (epoch ms or ISO text alike)', () => {
    const view = presentMerchants(merchants, { canWrite: false, duplicate: null });
    assert.equal(view.title, 'Merchants');
    assert.equal(view.create, null, 'a role that does not write gets no form');
    assert.deepEqual(view.merchants.columns, ['Id', 'Name', 'Status', 'Created']);
    assert.deepEqual(view.merchants.rows[0].data, { name: 'merchant', value: '1' });
    assert.deepEqual(view.merchants.rows[0].cells[0], { href: '/console/merchants/1', text: '1' });
    assert.deepEqual(
      view.merchants.rows.map((r) => r.cells.map(cellText)),
      [
        ['1', 'Shop & Co', 'active', CREATED_TIME],
        ['2', 'Other', 'disabled', CREATED_TIME],
      ],
    );
    assert.deepEqual(view.merchants.empty, { text: 'No merchants yet.' });
    assert.equal(presentMerchants([], { canWrite: false, duplicate: null }).merchants.rows.length, 0);
  });

  it('gives a writer the create form and, for a name in use, the merchants that have it (quoted trimmed, typed as typed)', () => {
    assert.deepEqual(presentMerchants(merchants, { canWrite: true, duplicate: null }).create, { action: '/console/merchants', duplicate: null });
    const view = presentMerchants(merchants, { canWrite: true, duplicate: { name: '  shop & co ', same: [{ id: '1', name: 'Shop & Co', status: 'active' }] } });
    assert.deepEqual(view.create?.duplicate, {
      name: 'shop & co',
      value: '  shop & co ',
      same: [{ link: { href: '/console/merchants/1', text: 'Shop & Co' }, detail: '(id 1, active)' }],
    });
  });
});

describe('the merchant page (views.merchant → MerchantView)', () => {
  const credentials: MerchantCredentials = {
    merchant: { id: '7', name: 'Shop', status: 'active', clientId: 'cli_abc', requireTwoFactor: true, createdAt: CREATED },
    position: { tokensBefore: '', clientsAfter: '' },
    tokensPage: { counts: { first: 1, last: 2, about: 45, capped: false }, next: '30' },
    clientsPage: { counts: { first: 1, last: 2, about: 2, capped: false }, next: null },
    clients: [
      { id: '1', clientId: 'cli_abc', name: 'default', createdAt: CREATED, rotatedAt: null, lastUsedAt: LATER, revokedAt: null, state: 'active' },
      { id: '2', clientId: 'cli_def', name: 'CI', createdAt: CREATED, rotatedAt: LATER, lastUsedAt: null, revokedAt: LATER, state: 'revoked' },
    ],
    tokens: [
      {
        id: '31',
        kind: 'bearer',
        environment: 'sandbox',
        scopes: ['orders:read', 'stock:read'],
        createdAt: CREATED,
        expiresAt: null,
        revokedAt: null,
        state: 'active',
      },
      { id: '30', kind: 'oauth', environment: 'sandbox', scopes: ['orders:read'], createdAt: CREATED, expiresAt: LATER, revokedAt: LATER, state: 'revoked' },
    ],
  };
  const team: MerchantTeam = {
    members: [
      { id: '5', email: 'a@shop.test', role: 'admin', twoFactor: 'on', canResetTwoFactor: true, lastSignInAt: null, createdAt: CREATED },
      { id: '6', email: 'v@shop.test', role: 'viewer', twoFactor: 'off', canResetTwoFactor: false, lastSignInAt: LATER, createdAt: CREATED },
    ],
    invitations: [{ id: '9', email: 'new@shop.test', role: 'developer', createdAt: CREATED, expiresAt: LATER }],
  };
  const account = (environment: string, extra: Partial<MerchantAccountInput> = {}): MerchantAccountInput => ({
    environment,
    currency: 'USD',
    balance: -1250.5,
    creditLimit: 2000,
    available: 749.5,
    billingMode: 'on_account',
    lowBalanceThreshold: null,
    termsVersion: 1,
    current: false,
    transactions: [],
    total: 0,
    nextCursor: null,
    ...extra,
  });
  const transactions = [
    { id: '11', type: 'order_charge', amount: -48.96, balanceAfter: -1250.5, orderId: '100', refundNo: null, description: 'Order 100', createDate: CREATED },
    { id: '12', type: 'refund_credit', amount: 9.99, balanceAfter: -1201.54, orderId: '100', refundNo: '77', description: 'Refund 77', createDate: CREATED },
    { id: '13', type: 'top_up', amount: 250, balanceAfter: -951.54, orderId: null, refundNo: null, description: 'Bank ref 42', createDate: LATER },
  ];
  const input = (canWrite: boolean, extra: Partial<Parameters<typeof presentMerchant>[1]> = {}) => ({
    team,
    rateLimit: { requests: { available: 17.9, capacity: 20, perSecond: 5 }, body: null },
    accounts: [
      account('production', { current: true, transactions, total: 25, nextCursor: 'c1' }),
      account('sandbox', { billingMode: 'prepaid', lowBalanceThreshold: 100 }),
    ],
    secret: null,
    scopes: ['orders:read', 'orders:write', 'stock:read'],
    readScopes: ['orders:read', 'stock:read'],
    canWrite,
    countCap: 10_000,
    ...extra,
  });

  it('states the merchant, when it was created, and its rate limits in whole units', () => {
    const view = presentMerchant(credentials, input(false));
    assert.deepEqual(
      [view.title, view.id, view.name, view.back, view.status, view.clientId],
      ['Merchant Shop', '7', 'Shop', '/console/merchants', 'Active', 'cli_abc'],
    );
    assert.equal(view.created, CREATED_TIME);
    assert.deepEqual(view.rateLimit, [
      { label: 'Requests available', field: 'requests-available', text: '17 of 20' },
      { label: 'Refill', text: '5 a second' },
    ]);
    const withBody = presentMerchant(
      credentials,
      input(false, { rateLimit: { requests: { available: 20, capacity: 20, perSecond: 5 }, body: { available: 1023.7, capacity: 4096, perSecond: 512 } } }),
    );
    assert.deepEqual(withBody.rateLimit?.at(-1), { label: 'Body bytes available', field: 'body-available', text: '1023 of 4096' });
    assert.equal(presentMerchant(credentials, input(false, { rateLimit: null })).rateLimit, null, 'the buckets cannot be read');
  });

  it('offers Disable for an active merchant and Enable for a disabled one, to a role that writes only', () => {
    assert.deepEqual([presentMerchant(credentials, input(false)).disable, presentMerchant(credentials, input(false)).enable], [null, null]);
    const active = presentMerchant(credentials, input(true));
    assert.deepEqual([active.disable, active.enable], ['/console/merchants/7/disable', null]);
    const disabled = presentMerchant({ ...credentials, merchant: { ...credentials.merchant, status: 'disabled' } }, input(true));
    assert.deepEqual([disabled.disable, disabled.enable], [null, '/console/merchants/7/enable']);
  });

  it('gives each account its figures as money text, its newest transactions and a link to all of them', () => {
    const [production, sandbox] = presentMerchant(credentials, input(false)).accounts;
    assert.equal(production.heading, 'production account (this server)');
    assert.equal(sandbox.heading, 'sandbox account');
    assert.deepEqual(production.facts, [
      { label: 'Balance', field: 'balance', num: true, text: '-1250.50 USD' },
      { label: 'Billing mode', field: 'billing-mode', text: 'on account' },
      { label: 'Credit limit', field: 'credit-limit', num: true, text: '2000.00' },
      { label: 'Available', field: 'available', num: true, text: '749.50' },
      { label: 'Low-balance threshold', num: true, text: 'none' },
    ]);
    assert.deepEqual(
      sandbox.facts.map((f) => ('text' in f ? f.text : '')),
      ['-1250.50 USD', 'prepaid', '2000.00', '749.50', '100.00'],
    );
    assert.deepEqual(production.transactions[0], {
      id: '11',
      when: CREATED_TIME,
      type: 'Order charge',
      amount: '-48.96',
      balanceAfter: '-1250.50',
      order: { href: '/console/orders/100', text: 'order 100' },
      refundNo: null,
      description: null,
    });
    assert.deepEqual(
      [production.transactions[1].order?.text, production.transactions[1].refundNo, production.transactions[1].description],
      ['order 100', '77', null],
    );
    assert.deepEqual(
      [production.transactions[2].when, production.transactions[2].amount, production.transactions[2].order, production.transactions[2].description],
      [LATER_TIME, '250.00', null, 'Bank ref 42'],
      'a transaction for no order says what it is for',
    );
    assert.deepEqual(production.all, { href: '/console/merchants/7/transactions?environment=production', text: 'All 25 transactions' });
    assert.equal(sandbox.all, null, 'no more than the ones shown');
    assert.deepEqual(sandbox.empty, { text: 'No transactions yet.' });
    const capped = presentMerchant(credentials, input(false, { accounts: [account('production', { transactions, total: 10_000, nextCursor: 'c' })] }));
    assert.equal(capped.accounts[0].all?.text, 'All 10,000+ transactions');
  });

  it('gives a role that writes the money forms, the terms form filled with the figures (blank threshold for none)', () => {
    assert.equal(presentMerchant(credentials, input(false)).accounts[0].forms, null);
    const [production, sandbox] = presentMerchant(credentials, input(true)).accounts;
    assert.deepEqual(production.forms, {
      topUp: '/console/merchants/7/account/top-ups',
      adjust: '/console/merchants/7/account/adjustments',
      terms: '/console/merchants/7/account',
      currency: 'USD',
      billingModes: [
        { value: 'on_account', label: 'on account (no limit)', selected: true },
        { value: 'prepaid', label: 'prepaid (orders need available funds)', selected: false },
      ],
      creditLimit: '2000.00',
      threshold: '',
      topUpState: { refused: null, invalid: {}, values: { amount: '', reference: '' } },
      adjustState: { refused: null, invalid: {}, values: { amount: '', reason: '' } },
      termsState: { refused: null, invalid: {}, values: {} },
      version: '1',
    });
    assert.deepEqual(
      sandbox.forms?.billingModes.map((m) => m.selected),
      [false, true],
    );
    assert.equal(sandbox.forms?.threshold, '100.00');
  });

  it('shows a refused money form again on its own account, with the reason, the fields it names and what was typed', () => {
    const refusal = {
      environment: 'sandbox',
      form: 'terms' as const,
      message: 'a credit limit of 10.00 leaves …',
      invalid: ['creditLimit'],
      values: { billingMode: 'prepaid', creditLimit: '10.00', lowBalanceThreshold: '' },
    };
    const [production, sandbox] = presentMerchant(credentials, { ...input(true), refusal }).accounts;
    assert.equal(production.forms?.termsState.refused, null, 'the other environment is as it was');
    assert.equal(production.forms?.creditLimit, '2000.00');
    assert.deepEqual(sandbox.forms?.termsState, { refused: 'a credit limit of 10.00 leaves …', invalid: { creditLimit: true }, values: refusal.values });
    assert.equal(sandbox.forms?.creditLimit, '10.00', 'what was typed, not the figure');
    assert.equal(sandbox.forms?.threshold, '');
    assert.deepEqual(
      sandbox.forms?.billingModes.map((m) => m.selected),
      [false, true],
    );
    assert.equal(sandbox.forms?.adjustState.refused, null, 'only the refused form');
  });

  it('lists the clients with their times (never for a missing one) and where the page stands', () => {
    const view = presentMerchant(credentials, input(false));
    assert.equal(view.clients.counts, '1–2 of 2');
    assert.deepEqual(view.clients.rows[0], {
      id: '1',
      name: 'default',
      clientId: 'cli_abc',
      created: CREATED_TIME,
      rotated: 'never',
      lastUsed: LATER_TIME,
      state: 'active',
      stateText: 'Active',
      revoked: null,
    });
    assert.deepEqual([view.clients.rows[1].rotated, view.clients.rows[1].lastUsed, view.clients.rows[1].revoked], [LATER_TIME, 'never', LATER_TIME]);
    assert.deepEqual([view.clients.first, view.clients.more], [null, null]);
    assert.deepEqual(view.clients.empty, { text: 'No clients.' });
  });

  it('pages clients and tokens each keeping the other’s position', () => {
    const paged = presentMerchant(
      { ...credentials, position: { tokensBefore: '30', clientsAfter: '2' }, clientsPage: { ...credentials.clientsPage, next: '4' } },
      input(false),
    );
    assert.equal(paged.clients.first, '/console/merchants/7?tokensBefore=30#clients');
    assert.equal(paged.clients.more, '/console/merchants/7?tokensBefore=30&clientsAfter=4#clients');
    assert.equal(paged.tokens.newest, '/console/merchants/7?clientsAfter=2#tokens');
    assert.equal(paged.tokens.older, '/console/merchants/7?clientsAfter=2&tokensBefore=30#tokens');
    const first = presentMerchant(credentials, input(false));
    assert.deepEqual([first.tokens.newest, first.tokens.older], [null, '/console/merchants/7?clientsAfter=&tokensBefore=30#tokens']);
  });

  it('lists the tokens with their scopes and times, Revoke on an active one for a role that writes', () => {
    const read = presentMerchant(credentials, input(false));
    assert.equal(read.tokens.issue, null);
    assert.equal(read.tokens.actions, false);
    assert.equal(read.tokens.counts, '1–2 of 45');
    assert.deepEqual(read.tokens.rows[0], {
      id: '31',
      kind: 'bearer',
      environment: 'sandbox',
      scopes: 'orders:read stock:read',
      issued: CREATED_TIME,
      expires: 'never',
      state: 'active',
      stateText: 'Active',
      revoked: null,
      revoke: null,
    });
    const write = presentMerchant(credentials, input(true));
    assert.equal(write.tokens.actions, true);
    assert.deepEqual(
      write.tokens.rows.map((t) => t.revoke),
      ['/console/merchants/7/tokens/31/revoke', null],
      'a revoked token has nothing to revoke',
    );
    assert.deepEqual([write.tokens.rows[1].expires, write.tokens.rows[1].revoked], [LATER_TIME, LATER_TIME]);
    assert.deepEqual(write.tokens.issue, {
      action: '/console/merchants/7/tokens',
      scopes: [
        { value: 'orders:read', checked: true },
        { value: 'orders:write', checked: false },
        { value: 'stock:read', checked: true },
      ],
    });
    assert.deepEqual(write.tokens.empty, { text: 'No tokens.' });
  });

  it('lists the business manager’s users and invitations, their actions for a role that writes only', () => {
    const read = presentMerchant(credentials, input(false)).team;
    assert.equal(read.actions, false);
    assert.equal(read.invite, null);
    assert.deepEqual(read.members[0], {
      id: '5',
      email: 'a@shop.test',
      role: 'admin',
      twoFactor: 'on',
      lastSignIn: 'never',
      since: CREATED_TIME,
      resetTwoFactor: null,
      remove: null,
    });
    assert.deepEqual(read.invitations[0], {
      id: '9',
      email: 'new@shop.test',
      role: 'developer',
      sent: CREATED_TIME,
      validUntil: LATER_TIME,
      resend: null,
      cancel: null,
    });
    const write = presentMerchant(credentials, input(true)).team;
    assert.equal(write.invite, '/console/merchants/7/users');
    assert.deepEqual(write.members[0].resetTwoFactor, {
      action: '/console/merchants/7/users/5/reset-two-factor',
      nextSignIn: 'The next sign-in asks for the password only, then for setting up an app again (this merchant requires two-factor).',
    });
    assert.equal(write.members[1].resetTwoFactor, null, 'no second factor to reset');
    assert.equal(write.members[1].lastSignIn, LATER_TIME);
    assert.equal(write.members[1].remove, '/console/merchants/7/users/6/remove');
    assert.deepEqual(
      [write.invitations[0].resend, write.invitations[0].cancel],
      ['/console/merchants/7/invitations/9/resend', '/console/merchants/7/invitations/9/cancel'],
    );
    const optional = presentMerchant({ ...credentials, merchant: { ...credentials.merchant, requireTwoFactor: false } }, input(true)).team;
    assert.equal(optional.members[0].resetTwoFactor?.nextSignIn, 'The next sign-in asks for the password only.');
    const empty = presentMerchant(credentials, input(false, { team: { members: [], invitations: [] } })).team;
    assert.deepEqual([empty.membersEmpty, empty.invitationsEmpty], [{ text: 'No users yet.' }, { text: 'No pending invitations.' }]);
  });

  it('shows a secret made by the last form once, as it was kept (no merchant id)', () => {
    assert.equal(presentMerchant(credentials, input(true)).secret, null);
    const fields = [
      { label: 'Token id', value: '31', secret: false },
      { label: 'Access token', value: 'stk_secret', secret: true },
    ];
    const kept = { title: 'Token 31 issued', what: 'bearer token', fields, merchantId: '7' };
    assert.deepEqual(presentMerchant(credentials, input(true, { secret: kept })).secret, { title: 'Token 31 issued', what: 'bearer token', fields });
  });
});

describe("all refunds (views['refund-list'] → RefundListView)", () => {
  const refund = (refundNo: string, extra: Partial<RefundSearchAnswer['list'][number]> = {}): RefundSearchAnswer['list'][number] => ({
    refundNo,
    id: '100',
    remark: null,
    refundReason: 'Out Of Stock',
    refundStatus: 'pending_review',
    failureReason: null,
    amount: 9.99,
    items: [
      { itemId: '1', skuCode: 'SKU-1', quantity: 1, countryCode: 'US' },
      { itemId: '2', skuCode: 'SKU-2', quantity: 2, countryCode: 'US' },
    ],
    createDate: CREATED,
    updateDate: CREATED,
    merchantId: '42',
    merchantName: 'Shop',
    decidedBy: null,
    decidedAt: null,
    ...extra,
  });
  const answer: RefundSearchAnswer = {
    filters: { status: 'refund_failed', merchant: '42', from: '2026-05-01', to: '' },
    merchant: { id: '42', name: 'Shop' },
    list: [
      refund('77'),
      refund('76', { refundStatus: 'refund_failed', failureReason: 'card expired', decidedBy: 'auto', decidedAt: Date.parse(LATER), amount: 1250.5 }),
      refund('75', { refundStatus: 'refund_successfully', decidedBy: 'staff:1', decidedAt: Date.parse(LATER) }),
    ],
    after: '170.5',
    counts: { first: 51, last: 53, about: 1234, capped: false },
  };
  const REFUND_STATES = ['pending_review', 'refund_successfully', 'refund_failed'];

  it('keeps the filters as typed, the status chosen selected, the merchant filtered on linked', () => {
    const view = presentRefundList(answer, REFUND_STATES, 'EUR');
    assert.equal(view.title, 'All refunds');
    assert.deepEqual(view.filters, answer.filters);
    assert.deepEqual(view.statuses, [
      { value: 'pending_review', selected: false, text: 'Waiting for review' },
      { value: 'refund_successfully', selected: false, text: 'Refunded' },
      { value: 'refund_failed', selected: true, text: 'Refund failed' },
    ]);
    assert.deepEqual(view.merchant, { href: '/console/merchants/42', text: 'Shop' });
    assert.deepEqual(view.tools, { counts: '51–53 of 1,234', csv: '/console/refunds/all.csv?status=refund_failed&merchant=42&from=2026-05-01&to=' });
    assert.equal(view.next, '/console/refunds/all?status=refund_failed&merchant=42&from=2026-05-01&to=&after=170.5');
  });

  it('gives each refund its links, time, items, amount as money text, status with the failure, and who decided when', () => {
    const [pending, failed, approved] = presentRefundList(answer, REFUND_STATES, 'EUR').rows;
    assert.deepEqual(pending, {
      refundNo: '77',
      order: { href: '/console/orders/100', text: '100' },
      merchant: { href: '/console/merchants/42', text: 'Shop', data: { name: 'merchant', value: '42' } },
      requested: CREATED_TIME,
      items: 'SKU-1 × 1, SKU-2 × 2',
      amount: '9.99 EUR',
      status: 'pending_review',
      statusText: 'Waiting for review',
      decided: null,
    });
    assert.deepEqual(
      [failed.amount, failed.status, failed.statusText, failed.decided],
      ['1250.50 EUR', 'refund_failed', 'Refund failed: card expired', { when: LATER_TIME, by: 'automatically' }],
    );
    assert.deepEqual(approved.decided, { when: LATER_TIME, by: 'by the operator' });
  });

  it('says nothing matches, with no next page, on an empty answer', () => {
    const view = presentRefundList(
      {
        filters: { status: '', merchant: '', from: '', to: '' },
        merchant: null,
        list: [],
        after: null,
        counts: { first: 0, last: 0, about: 0, capped: false },
      },
      REFUND_STATES,
      'EUR',
    );
    assert.deepEqual([view.rows, view.merchant, view.next, view.empty], [[], null, null, { text: 'No refunds match.' }]);
    assert.equal(view.tools.csv, '/console/refunds/all.csv?status=&merchant=&from=&to=');
    assert.ok(view.statuses.every((s) => !s.selected));
  });
});

describe('the notices after the money forms (issue 44, 7)', () => {
  const account = { balance_cents: 123456, currency: 'USD', billing_mode: 'prepaid', credit_limit_cents: 1500, low_balance_threshold_cents: null };
  it('says what a top-up or an adjustment posted and the balance it left', () => {
    assert.equal(
      postingNotice('top_up', 'sandbox', { replayed: false, entry: { amount_cents: 5000 }, account }),
      'Top-up of 50.00 USD posted to the sandbox account. Balance now 1234.56 USD.',
    );
    assert.equal(
      postingNotice('adjustment', 'production', { replayed: false, entry: { amount_cents: -325 }, account }),
      'Adjustment of -3.25 USD posted to the production account. Balance now 1234.56 USD.',
    );
    assert.match(postingNotice('top_up', 'sandbox', { replayed: true, entry: { amount_cents: 5000 }, account }), /recorded already: nothing posted/);
  });
  it('states the saved terms', () => {
    assert.equal(termsNotice('sandbox', account), 'Billing terms of the sandbox account saved: prepaid, credit limit 15.00 USD, low-balance notice none.');
  });
});

describe('the templates of these views', () => {
  it('are typed, and build no link, number, money or time themselves', () => {
    const web = path.join(import.meta.dirname, '../../src/web');
    for (const spec of [CONSOLE_VIEWS.merchant, CONSOLE_VIEWS.merchants, CONSOLE_VIEWS['refund-list']]) {
      const text = fs.readFileSync(path.join(web, `${spec.template}.eta`), 'utf8');
      assert.doesNotMatch(text, /toFixed|toLocale|it\.time\(|\/ 100|new Date|Math\.|URLSearchParams|\.join\(|\.map\(|\.includes\(/, spec.template);
    }
  });
});
