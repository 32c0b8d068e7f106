import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { AuditFieldChange } from '../../src/present/audit.presenter.ts';
import type { OrderRecord } from '../../src/schemas/orders.ts';
import type { RefundRecord } from '../../src/schemas/refunds.ts';
import type { OrderDetail, OrderSearchResult } from '../../src/services/order-search.service.ts';
import {
  consoleChrome,
  presentConsoleAudit,
  presentConsoleOrder,
  presentConsoleOrders,
  presentRefundDecided,
  presentRefundQueue,
  presentSplitCancel,
  presentTransactions,
} from '../../src/web/console/present.ts';
import { CONSOLE_VIEWS } from '../../src/web/console/views.ts';
import { managerChrome, presentBalance, presentManagerAudit, presentManagerOrder, presentManagerOrders } from '../../src/web/manager/present.ts';
import { MANAGER_VIEWS } from '../../src/web/manager/views.ts';
import { fulfilmentWords, money, moneyFromCents, moment, orderStatusWords, statusChoices, statusWords, type Cell } from '../../src/web/shared/present.ts';

// Page models without a template (issue 30, rule 3): what each presenter makes of a service's answer.

const PLACED = '2026-05-01T14:03:07Z';
const SHIPPED = '2026-05-02T09:30:00Z';
const PLACED_TIME = '<time datetime="2026-05-01T14:03:07Z" title="2026-05-01 14:03:07 UTC">2026-05-01 14:03 UTC</time>';

const split = (id: string, status: OrderRecord['splitOrders'][number]['status'], extra: Partial<OrderRecord['splitOrders'][number]> = {}) => ({
  id,
  warehouseCode: 'W1',
  warehouseId: 1,
  countryCode: 'US',
  channelCode: 'express',
  channelType: 'express',
  status,
  freightAmount: 4.5,
  itemIds: [],
  carrier: null,
  trackingCode: null,
  shippedDate: null,
  deliveredDate: null,
  ...extra,
});

const item = (id: string, splitOrderId: string, refundedQuantity: number) => ({
  id,
  itemId: id,
  skuCode: `SKU-${id}`,
  productName: `Product ${id}`,
  imageUrl: null,
  amount: 9.99,
  productNum: 2,
  total: 19.98,
  refundedQuantity,
  fulfillmentStatus: 'waiting_to_ship' as const,
  refundStatus: null,
  countryCode: 'US',
  warehouseCode: 'W1',
  splitOrderId,
});

const order: OrderRecord = {
  id: '1001',
  customOrderId: null,
  salePlatform: null,
  status: 'processing',
  financialStatus: 'paid',
  fulfillmentStatus: 'partially_shipped' as OrderRecord['fulfillmentStatus'],
  refundStatus: null,
  purchaseDate: PLACED,
  payDate: PLACED,
  completedDate: null,
  cancelDate: null,
  refundDate: null,
  currencyCode: 'USD',
  subTotalAmount: 39.96,
  freightAmount: 9,
  couponAmount: 0,
  promotionAmount: 0,
  finalAmount: 48.96,
  refundedAmount: 0,
  refundableAmount: 48.96,
  remark: null,
  channelType: null,
  shippingAddress: {
    country: 'DE',
    phone: '1',
    recipient: 'Ada <b>',
    province: 'Berlin',
    street1: null,
    street2: null,
    city: null,
    zip: null,
    ioss: null,
    vat: null,
  },
  orderItems: [item('1', '11', 0), item('2', '12', 1)],
  splitOrders: [split('11', 'waiting_to_ship'), split('12', 'shipped', { carrier: 'DHL', trackingCode: 'TRK1', shippedDate: SHIPPED })],
  fulfillments: [],
  createDate: PLACED,
  updateDate: PLACED,
};

const refund: RefundRecord = {
  refundNo: '77',
  id: '1001',
  remark: null,
  refundReason: 'Other',
  refundStatus: 'refund_failed' as RefundRecord['refundStatus'],
  failureReason: 'rejected by the operator',
  amount: 9.99,
  items: [{ itemId: '2', skuCode: 'SKU-2', quantity: 1, countryCode: 'US' }],
  createDate: PLACED,
  updateDate: PLACED,
};

const delivery = {
  id: '5',
  webhookId: 'msg_5',
  eventId: '9',
  type: 'order.shipped',
  orderId: '1001',
  cursorFrom: null,
  cursorTo: null,
  status: 'failed' as const,
  attempts: 3,
  lastStatusCode: 500,
  lastError: 'HTTP 500',
  lastAttemptAt: PLACED,
  nextAttemptAt: PLACED,
  deliveredAt: PLACED,
  createdAt: PLACED,
  endpointId: '3',
  url: 'https://example.com/hook',
} as OrderDetail['deliveries'][number];

const detail: OrderDetail = { merchantId: 42, merchantName: 'Shop <b>', order, refunds: [refund], deliveries: [delivery] };
const ALL = { fulfil: true, cancel: true, webhooks: true, note: true, channels: true };
const NONE = { fulfil: false, cancel: false, webhooks: false, note: false, channels: false };
const trackingLink = (channelCode: string, code: string | null) => (channelCode === 'express' && code ? `https://track.example/${code}` : null);
const SHIPPING = { carriersOf: () => [] as string[], trackingLink, refused: null };
const NO_NOTE = { note: { note: null, refused: null, max: 2000 }, shipping: SHIPPING };
const texts = (cells: readonly Cell[]) =>
  cells.map((c) => (typeof c === 'string' ? c : 'html' in c ? c.html : `${c.text} → ${c.href}${c.data ? ` [${c.data.name}=${c.data.value}]` : ''}`));

describe('values as text (src/web/shared/present.ts)', () => {
  it('writes money with two decimals, a minus sign when negative, and the currency when given', () => {
    assert.equal(money(12.5, 'USD'), '12.50 USD');
    assert.equal(money(-3), '-3.00');
    assert.equal(money(0, null), '0.00');
    assert.equal(moneyFromCents(1999, 'EUR'), '19.99 EUR', 'integer minor units');
    assert.equal(moneyFromCents(-5), '-0.05');
  });

  it('writes an instant as the shared <time> element, and what stands for a missing one', () => {
    assert.equal(moment(PLACED), PLACED_TIME);
    assert.equal(moment(null), '—');
    assert.equal(moment(null, 'never'), 'never');
  });

  it('says statuses in words, never as codes (issue 44, 7)', () => {
    assert.equal(statusWords('waiting_to_ship'), 'Waiting to ship');
    assert.equal(statusWords('cancel'), 'Cancelled');
    assert.equal(statusWords('pending_review'), 'Waiting for review');
    assert.equal(statusWords('refund_successfully'), 'Refunded');
    assert.equal(statusWords('partial_refund'), 'Partly refunded');
    assert.equal(statusWords('some_new_state'), 'Some new state', 'a code without words: spaces and a capital');
    assert.equal(statusWords('toString'), 'ToString', 'no inherited property is taken for words');
    assert.equal(orderStatusWords({ status: 'completed', refundStatus: 'partial_refund' }), 'Completed (Partly refunded)');
    assert.deepEqual(
      statusChoices('cancel').map((c) => [c.value, c.text, c.selected]),
      [
        ['processing', 'Processing', false],
        ['completed', 'Completed', false],
        ['cancel', 'Cancelled', true],
      ],
      'the filter sends the code and shows the words',
    );
  });

  it('says a cancelled order ships nothing instead of "waiting to ship" (issue 44, 7)', () => {
    assert.equal(fulfilmentWords({ status: 'cancel', fulfillmentStatus: 'waiting_to_ship' }), 'None: cancelled');
    assert.equal(fulfilmentWords({ status: 'processing', fulfillmentStatus: 'waiting_to_ship' }), 'Waiting to ship');
    assert.equal(
      fulfilmentWords({ status: 'cancel', fulfillmentStatus: 'partially_shipped' }),
      'Partly shipped',
      'what shipped before a cancellation stays said',
    );
  });
});

describe('the console order page (views.order → ConsoleOrderView)', () => {
  it('states the order as facts: money with its currency, the time as a <time>, missing values as —', () => {
    const view = presentConsoleOrder(detail, ALL, NO_NOTE);
    assert.equal(view.title, 'Order 1001');
    assert.deepEqual(
      view.facts.map((f) => [f.label, 'html' in f ? f.html : 'link' in f ? `${f.link.text} → ${f.link.href}` : f.text]),
      [
        ['Merchant', 'Shop <b> → /console/merchants/42'],
        ['Custom id', '—'],
        ['Status', 'Processing'],
        ['Fulfilment', 'Partly shipped'],
        ['Refund', '—'],
        ['Placed', PLACED_TIME],
        ['Items', '39.96 USD'],
        ['Freight', '9.00 USD'],
        ['Total', '48.96 USD'],
        ['Refunded', '0.00 USD'],
        ['Ship to', 'Ada <b>, Berlin, DE'],
      ],
    );
    assert.deepEqual(
      view.facts.filter((f) => f.field).map((f) => f.field),
      ['status', 'fulfillment'],
    );
  });

  it('gives each split its route, freight, tracking and items, and only the actions its status and the role allow', () => {
    const [waiting, shipped] = presentConsoleOrder(detail, ALL, NO_NOTE).splits;
    assert.equal(waiting.route, 'Ships from warehouse W1 (US) to DE by express');
    assert.equal(waiting.freight, '4.50 USD');
    assert.equal(waiting.tracking, null);
    assert.deepEqual(waiting.ship, {
      action: '/console/splits/11/ship',
      carriers: [],
      carrier: '',
      trackingCode: '',
      error: null,
      channelCode: 'express',
      editChannel: '/console/channels/express/edit',
    });
    const refused = presentConsoleOrder(detail, NONE, {
      note: NO_NOTE.note,
      shipping: {
        carriersOf: () => ['DHL', 'UPS'],
        trackingLink,
        refused: { splitId: 11, message: 'carrier is not one of the channel’s', carrier: 'UPS', trackingCode: 'T9' },
      },
    });
    assert.equal(refused.splits[0].ship, null, 'no Ship form for a role that does not fulfil');
    const [again] = presentConsoleOrder(
      detail,
      { ...ALL, channels: false },
      {
        note: NO_NOTE.note,
        shipping: { carriersOf: () => ['DHL', 'UPS'], trackingLink, refused: { splitId: 11, message: 'no', carrier: 'UPS', trackingCode: 'T9' } },
      },
    ).splits;
    assert.deepEqual(
      [again.ship?.carriers, again.ship?.trackingCode, again.ship?.error, again.ship?.editChannel],
      [
        [
          { value: 'DHL', selected: false },
          { value: 'UPS', selected: true },
        ],
        'T9',
        'Not shipped: no.',
        null,
      ],
    );
    assert.equal(waiting.cancel, '/console/splits/11/cancel');
    assert.equal(waiting.deliver, null);
    assert.deepEqual(waiting.items.columns, ['SKU', 'Product', 'Quantity', 'Refunded', 'Unit', 'Total']);
    assert.deepEqual(texts(waiting.items.rows[0].cells), ['SKU-1', 'Product 1', '2', '0', '9.99', '19.98']);
    assert.equal(waiting.items.empty, null, 'an empty split still shows its table');
    assert.deepEqual(shipped.tracking, { carrier: 'DHL', code: 'TRK1', href: 'https://track.example/TRK1' });
    assert.match(shipped.shipped ?? '', /datetime="2026-05-02T09:30:00Z"/);
    assert.equal(shipped.deliver, '/console/splits/12/deliver');
    assert.equal(shipped.ship, null);
    assert.equal(shipped.cancel, null, 'a shipped split cannot be cancelled');

    const readOnly = presentConsoleOrder(detail, NONE, NO_NOTE).splits;
    assert.deepEqual(
      readOnly.map((s) => [s.ship, s.deliver, s.cancel]),
      [
        [null, null, null],
        [null, null, null],
      ],
    );
  });

  it('lists refunds and deliveries as tables; an endpoint is a link only for a role that opens webhooks', () => {
    const view = presentConsoleOrder(detail, ALL, NO_NOTE);
    assert.deepEqual(view.refunds.label, { by: 'refunds' });
    assert.equal(view.refunds.columns.at(-1), 'Status');
    assert.deepEqual(view.refunds.rows[0].data, { name: 'refund', value: '77' });
    assert.deepEqual(texts(view.refunds.rows[0].cells), ['77', PLACED_TIME, 'SKU-2 × 1', '9.99', 'Other', 'Refund failed: rejected by the operator']);
    assert.deepEqual(texts(view.deliveries.rows[0].cells), [
      '5',
      '<code>order.shipped</code>',
      'https://example.com/hook → /console/webhooks/3',
      'Failed',
      '3',
      '500 HTTP 500',
    ]);
    assert.equal(texts(presentConsoleOrder(detail, NONE, NO_NOTE).deliveries.rows[0].cells)[2], 'https://example.com/hook');
    const empty = presentConsoleOrder({ ...detail, refunds: [], deliveries: [] }, ALL, NO_NOTE);
    assert.deepEqual([empty.refunds.empty, empty.deliveries.empty], [{ text: 'None.' }, { text: 'None.' }]);
  });

  it('shows a decided refund as its queue row', () => {
    const decided = { ...refund, merchantId: '42', merchantName: 'Shop' };
    const row = presentRefundDecided(decided, 'USD', 2);
    assert.deepEqual(
      [row.amount, row.items, row.decision, row.status, row.summary],
      ['9.99 USD', 'SKU-2 × 1', 'Rejected: rejected by the operator', 'refund_failed', '2 refunds waiting, oldest first.'],
    );
    assert.equal(
      presentRefundDecided({ ...decided, refundStatus: 'refund_successfully' as RefundRecord['refundStatus'], failureReason: null }, 'USD', 0).decision,
      'Approved',
    );
  });
});

describe("the split cancellation and the refund queue (views['split-cancel'], views.refunds)", () => {
  const preview = { splitOrderId: 11, orderId: 1001, merchantId: 42, status: 'waiting_to_ship', warehouseCode: 'W1', units: 1, creditCents: 1449 };

  it('says what a cancellation does, in the supplier’s currency, or why it cannot be done', () => {
    const view = presentSplitCancel(preview, 'Shop', 'USD');
    assert.deepEqual(
      [view.refusal, view.units, view.credit, view.action, view.orderHref],
      [null, '1 unit', '14.49 USD', '/console/splits/11/cancel', '/console/orders/1001'],
    );
    assert.equal(presentSplitCancel({ ...preview, units: 3 }, 'Shop', 'EUR').units, '3 units');
    assert.equal(
      presentSplitCancel({ ...preview, status: 'shipped' }, 'Shop', 'USD').refusal,
      'This split order is shipped: only a split order waiting to ship can be cancelled.',
    );
  });

  it('places the queue’s page, ages each refund in hours and names the one the worker gave up on', () => {
    const queued = {
      ...refund,
      merchantId: '42',
      merchantName: 'Shop',
      ageSeconds: 3 * 3600 + 59,
      overSla: true,
      manualReview: true,
      lastError: 'HTTP 503',
      lines: [{ sku: 'SKU-2', productName: 'Product 2', quantity: 1, splitOrderId: 11, splitStatus: 'waiting_to_ship' }],
      shippedSplits: [],
    };
    const view = presentRefundQueue({ total: 51, pageNumber: 1, pageSize: 50, list: [queued] }, { currency: 'USD', canReview: true });
    assert.deepEqual(
      [view.summary, view.tools.counts, view.tools.csv, view.next],
      ['51 refunds waiting, oldest first.', '1–1 of 51', '/console/refunds.csv', '/console/refunds?page=2'],
    );
    assert.deepEqual(
      [view.rows[0].amount, view.rows[0].waiting, view.rows[0].gaveUp, view.rows[0].approve],
      ['9.99 USD', '3 h', 'worker gave up: HTTP 503', '/console/refunds/77/approve'],
    );
    assert.deepEqual(
      [view.rows[0].merchantReason, view.rows[0].lines, view.rows[0].shipped, view.rows[0].shippedAny, view.rows[0].refused],
      [refund.refundReason, ['SKU-2 Product 2 × 1 (split 11, waiting to ship)'], 'Nothing shipped', false, null],
    );
    const shipped = presentRefundQueue(
      { total: 1, pageNumber: 1, pageSize: 50, list: [{ ...queued, shippedSplits: [11, 12] }] },
      { currency: 'USD', canReview: true, refused: { refundNo: '77', message: 'say why', reason: ' ' } },
    ).rows[0];
    assert.deepEqual([shipped.shipped, shipped.shippedAny, shipped.refused, shipped.reasonTyped], ['Splits 11, 12 shipped', true, 'say why', ' ']);
    const empty = presentRefundQueue({ total: 1, pageNumber: 1, pageSize: 50, list: [] }, { currency: 'USD', canReview: false });
    assert.deepEqual([empty.summary, empty.tools.counts, empty.next], ['1 refund waiting, oldest first.', '', null]);
  });
});

describe('the business manager order page (views.order → ManagerOrderView)', () => {
  it('states the total with its parts, lists each split’s items as lines, and names the last refund column Decision', () => {
    const view = presentManagerOrder(detail, () => null);
    assert.deepEqual(view.splits[1].tracking, { carrier: 'DHL', code: 'TRK1', href: null }, 'no tracking page: the number alone');
    assert.equal(view.facts.find((f) => f.label === 'Total' && 'text' in f && f.text === '48.96 USD (items 39.96, freight 9.00)')?.label, 'Total');
    assert.equal(
      view.facts.some((f) => f.label === 'Merchant'),
      false,
      'the merchant is the user’s own',
    );
    assert.deepEqual(
      view.splits.map((s) => s.items),
      [['SKU-1 Product 1 × 2'], ['SKU-2 Product 2 × 2 (1 refunded)']],
    );
    assert.equal(view.splits[0].freight, null, 'the manager’s split sentence has no freight');
    assert.equal(view.refunds.columns.at(-1), 'Decision');
  });
});

describe('the order searches (views.orders)', () => {
  const result: OrderSearchResult = {
    filters: { q: 'a&b', merchant: '42', status: 'completed', from: '', to: '' },
    list: [{ ...order, merchantId: 42, merchantName: 'Shop' }],
    after: '170.5',
    counts: { first: 26, last: 50, about: 1234, capped: false },
  };

  it('console: counts, the CSV and next links carry the filters, the merchant column, the status selected', () => {
    const view = presentConsoleOrders(result);
    assert.deepEqual(view.tools, { counts: '26–50 of 1,234', csv: '/console/orders.csv?q=a%26b&merchant=42&status=completed&from=&to=' });
    assert.equal(view.next, '/console/orders?q=a%26b&merchant=42&status=completed&from=&to=&after=170.5');
    assert.deepEqual(view.orders.columns, ['Order', 'Custom id', 'Merchant', 'Placed', 'Status', 'Fulfilment', 'Total']);
    assert.deepEqual(texts(view.orders.rows[0].cells), [
      '1001 → /console/orders/1001',
      '',
      'Shop → /console/merchants/42 [merchant=42]',
      PLACED_TIME,
      'Processing',
      'Partly shipped',
      '48.96 USD',
    ]);
    assert.deepEqual(
      view.statuses.filter((s) => s.selected).map((s) => s.value),
      ['completed'],
    );
    assert.deepEqual(presentConsoleOrders({ ...result, list: [], after: null }).orders.empty, { text: 'No orders match.' });
  });

  it('manager: no merchant column or filter in its links', () => {
    const view = presentManagerOrders(result);
    assert.equal(view.tools.csv, '/manager/orders.csv?q=a%26b&status=completed&from=&to=');
    assert.equal(view.next, '/manager/orders?q=a%26b&status=completed&from=&to=&after=170.5');
    assert.equal(view.orders.columns.includes('Merchant'), false);
  });
});

describe('account transactions (console views.transactions, manager views.balance)', () => {
  const entry = {
    id: '9',
    type: 'charge',
    amount: -48.96,
    balanceAfter: -1250.5,
    orderId: '1001',
    refundNo: null,
    description: 'order 1001',
    createDate: PLACED,
  };
  const result = { list: [entry], pageNumber: 1, pageSize: 50, total: 10_000, nextCursor: 'c/1 2' };

  it('console: amounts signed with two decimals, the count capped, the next page keeps the environment', () => {
    const view = presentTransactions({ id: '42', name: 'Shop' }, 'sandbox', result, 10_000, 'EUR');
    assert.deepEqual([view.rows[0].amount, view.rows[0].balanceAfter, view.rows[0].when], ['-48.96', '-1250.50', PLACED_TIME]);
    assert.equal(view.counts, '1–1 of 10,000 or more transactions, newest first');
    assert.equal(view.csv, '/console/merchants/42/transactions.csv?environment=sandbox');
    assert.equal(view.next, '/console/merchants/42/transactions?environment=sandbox&cursor=c%2F1+2');
    assert.equal(view.currency, 'EUR', 'the headings name the currency');
    assert.equal(
      presentTransactions({ id: '42', name: 'Shop' }, 'sandbox', { ...result, list: [], nextCursor: null }, 10_000, 'EUR').counts,
      'No transactions',
    );
  });

  it('manager: the balance with its currency, the other figures without, prepaid said once', () => {
    const account = { environment: 'sandbox', currency: 'USD', balance: -1250.5, available: -250.5, creditLimit: 1000, billingMode: 'prepaid' };
    const view = presentBalance(account, result, ['2026-05'], 10_000);
    assert.deepEqual([view.balance, view.available, view.creditLimit, view.prepaid], ['-1250.50 USD', '-250.50', '1000.00', true]);
    assert.equal(view.next, '/manager/balance?cursor=c%2F1+2');
    assert.equal(presentBalance({ ...account, billingMode: 'on_account' }, result, [], 10_000).prepaid, false);
  });
});

describe('audit logs (console and manager views.audit)', () => {
  const AT = Date.parse(PLACED);
  const entry = {
    id: '8',
    action: 'merchant_token.issue',
    createdAt: AT,
    target: 'merchant:1',
    actorKind: 'staff',
    actorId: 7,
    actorEmail: null as string | null,
    actorMerchant: null as { id: string; name: string } | null,
    targetMerchant: null as { id: string; name: string } | null,
    changes: [
      { field: 'status', label: 'status', before: { text: 'active' }, after: { text: 'revoked' }, changed: true },
      { field: 'expiresAt', label: 'expires at', before: null, after: { time: AT }, changed: false },
      { field: 'name', label: 'name', before: { text: 'ci' }, after: null, changed: false },
      { field: 'merchantId', label: 'merchant', before: null, after: { merchant: '3', name: 'Other' }, changed: false },
    ] as AuditFieldChange[],
  };

  it('writes each change a line: before → after, the one value, a time as <time>, a missing side as —', () => {
    const [row] = presentConsoleAudit({ actor: '', action: '', target: '' }, ['merchant_token.issue'], {
      list: [entry],
      nextCursor: null,
      counts: { first: 1, last: 1, about: 1, capped: false },
    }).rows;
    assert.equal(row.when, PLACED_TIME);
    assert.deepEqual(
      row.changes.map((c) => c.values.map((v) => ('html' in v ? v.html : 'link' in v ? `${v.link.text} → ${v.link.href}` : v.text))),
      [['Active', 'Revoked'], [PLACED_TIME], ['ci', '—'], ['Other → /console/merchants/3']],
      'a state in words',
    );
    assert.deepEqual([row.actor, row.actorCode, row.actorKind], ['a staff member', 'staff:7', null], 'no email: the kind in words, the code the filter takes');
    assert.deepEqual([row.action, row.actionWords, row.target, row.targetWords], ['merchant_token.issue', 'Merchant token: issue', 'merchant:1', 'Merchant 1']);
    assert.deepEqual(
      presentConsoleAudit({ actor: '', action: '', target: '' }, ['split_order.cancel'], {
        list: [],
        nextCursor: null,
        counts: { first: 0, last: 0, about: 0, capped: false },
      }).actions,
      [{ value: 'split_order.cancel', selected: false, text: 'Split order: cancel' }],
    );
  });

  it('names the actor: the console by email and kind, the manager never names the operator’s staff', () => {
    const named = { ...entry, actorEmail: 'ops@example.com', targetMerchant: { id: '1', name: 'Shop' } };
    const console = presentConsoleAudit({ actor: '', action: 'merchant_token.issue', target: '' }, ['a', 'merchant_token.issue'], {
      list: [named],
      nextCursor: '99',
      counts: { first: 1, last: 1, about: 1, capped: false },
    });
    assert.deepEqual([console.rows[0].actor, console.rows[0].actorKind, console.rows[0].actorMerchant], ['ops@example.com', 'staff', null]);
    assert.deepEqual(console.rows[0].targetMerchant, { href: '/console/merchants/1', text: 'Shop', data: { name: 'merchant', value: '1' } });
    const user = presentConsoleAudit({ actor: '', action: '', target: '' }, [], {
      list: [{ ...named, actorKind: 'merchant_user', actorMerchant: { id: '1', name: 'Shop' } }],
      nextCursor: null,
      counts: { first: 1, last: 1, about: 1, capped: false },
    });
    assert.equal(user.rows[0].actorMerchant?.href, '/console/merchants/1', 'a merchant user is named with the merchant, linked');
    assert.deepEqual(
      console.actions.filter((a) => a.selected).map((a) => a.value),
      ['merchant_token.issue'],
    );
    assert.equal(console.next, '/console/audit?actor=&action=merchant_token.issue&target=&cursor=99');
    const manager = presentManagerAudit({ list: [entry, { ...entry, actorKind: 'merchant_user' }], nextBefore: '8' });
    assert.deepEqual(
      manager.rows.map((r) => r.actor),
      ['the operator', 'a removed team member'],
    );
    assert.equal(manager.next, '/manager/audit?before=8');
    assert.deepEqual(manager.rows[0].changes[3].values, [{ text: 'Other' }], 'the manager names a merchant without a console link');
  });
});

describe('the layout’s parts (Chrome)', () => {
  const nav = [
    { href: '/console', label: 'Dashboard' },
    { href: '/console/orders', label: 'Orders' },
  ];

  it('console: the current page marked, who is signed in; nothing of the user before sign-in', () => {
    const chrome = consoleChrome({ email: 'o@example.com', role: 'owner' }, nav, '/console/orders');
    assert.deepEqual(
      chrome.nav.map((l) => l.current),
      [false, true],
    );
    assert.equal(chrome.who?.text, 'o@example.com (owner)');
    assert.equal(chrome.environment, null);
    const anonymous = consoleChrome(null, nav, '/console/sign-in');
    assert.deepEqual([anonymous.who, anonymous.nav.length], [null, 0]);
  });

  it('manager: the environment badge names the keys; the user line names the merchant', () => {
    const chrome = managerChrome({ email: 'm@example.com', role: 'admin', merchantName: 'Shop' }, [], '/manager', 'sandbox');
    assert.deepEqual(chrome.environment, { name: 'sandbox', text: 'Sandbox (stk_test_ keys)' });
    assert.equal(managerChrome(null, [], '/manager', 'production').environment?.text, 'Production (stk_live_ keys)');
    assert.equal(chrome.who?.text, 'm@example.com (admin, Shop)');
    assert.deepEqual(
      chrome.who?.links.map((l) => l.label),
      ['Your account', 'Two-factor'],
    );
  });
});

describe('the view registries (console/views.ts, manager/views.ts)', () => {
  const web = path.join(import.meta.dirname, '../../src/web');
  for (const [name, registry] of [
    ['console', CONSOLE_VIEWS],
    ['manager', MANAGER_VIEWS],
  ] as const) {
    it(`${name}: every registered view has its template, and every template of views/ is registered`, () => {
      for (const spec of Object.values(registry)) assert.ok(fs.existsSync(path.join(web, `${spec.template}.eta`)), spec.template);
      const registered = new Set(Object.values(registry).map((s) => s.template));
      for (const file of fs.readdirSync(path.join(web, name, 'views'))) assert.ok(registered.has(`${name}/views/${file.replace(/\.eta$/, '')}`), file);
    });
  }

  it('no view’s template formats money or a time itself, or reads what untyped views used to get (it.user, it.nav, it.time)', () => {
    for (const spec of [...Object.values(CONSOLE_VIEWS), ...Object.values(MANAGER_VIEWS)]) {
      const text = fs.readFileSync(path.join(web, `${spec.template}.eta`), 'utf8');
      assert.doesNotMatch(text, /toFixed|toLocale|it\.time\(|\/ 100|new Date|it\.user\b|it\.nav\b/, spec.template);
    }
  });
});
