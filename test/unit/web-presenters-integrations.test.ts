import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MerchantUsage } from '../../src/services/usage.service.ts';
import type { deliveryLog } from '../../src/services/webhooks.service.ts';
import { MERCHANT_ROUTES } from '../../src/http/merchant-routes.ts';
import { ERROR_CATALOGUE } from '../../src/http/openapi/error-catalogue.ts';
import {
  errorCodeWords,
  presentCredentials,
  presentGetStarted,
  presentUsage,
  presentWebhook,
  presentWebhookLog,
  presentWebhooks,
  requestWords,
  type ClientRecord,
  type TokenRecord,
} from '../../src/web/manager/present-integrations.ts';
import type { Cell } from '../../src/web/shared/present.ts';
import { LOOPBACK_FAILURE } from '../../src/domain/webhook-url.ts';

// The business manager's integration pages without a template (issue 30, rule 3): Get started,
// Usage, API credentials, webhooks and the delivery log, from inputs shaped like the services' answers.

const AT = Date.parse('2026-05-01T14:03:07Z');
const AT_TIME = '<time datetime="2026-05-01T14:03:07Z" title="2026-05-01 14:03:07 UTC">2026-05-01 14:03 UTC</time>';
const LATER = '2026-05-02T09:30:00Z';
const LATER_TIME = '<time datetime="2026-05-02T09:30:00Z" title="2026-05-02 09:30:00 UTC">2026-05-02 09:30 UTC</time>';
const texts = (cells: readonly Cell[]) => cells.map((c) => (typeof c === 'string' ? c : 'html' in c ? c.html : `${c.text} → ${c.href}`));

describe('Get started (views.overview → GetStartedView)', () => {
  const input = {
    origin: 'https://shop.example',
    environment: 'sandbox' as const,
    selfSigned: false,
    tarball: 'stockist-client-1.2.3.tgz',
    certificate: 'certificate.pem',
    example: 'read-stock.mjs',
    token: null,
    canCreate: true,
  };

  it('gives the API’s addresses, the token prefix of the environment, and curl without -k on a trusted certificate', () => {
    const view = presentGetStarted(input);
    assert.equal(view.baseUrl, 'https://shop.example/openapi');
    assert.equal(view.docsUrl, 'https://shop.example/docs');
    assert.equal(view.openapiUrl, 'https://shop.example/docs/openapi.json');
    assert.equal(view.tryUrl, 'https://shop.example/openapi/v1/product/products?pageSize=5');
    assert.equal(view.tokenPrefix, 'stk_test_');
    assert.equal(presentGetStarted({ ...input, environment: 'production' }).tokenPrefix, 'stk_live_');
    assert.deepEqual([view.curlFlags, view.selfSigned, view.canCreate, view.token], ['', false, true, null]);
  });

  it('writes the typed client’s commands for this server; the run with the token only when there is one', () => {
    const sdk = presentGetStarted(input).sdk;
    assert.ok(sdk);
    assert.deepEqual(sdk.install.split('\n'), [
      'mkdir stockist-example && cd stockist-example',
      'npm install https://shop.example/sdk/stockist-client-1.2.3.tgz',
    ]);
    assert.equal(sdk.run, 'STOCKIST_URL=https://shop.example node node_modules/@stockist/client/examples/read-stock.mjs');
    assert.equal(sdk.runWithToken, null);
    assert.equal(sdk.example, 'node_modules/@stockist/client/examples/read-stock.mjs');
    assert.equal(sdk.listing, 'https://shop.example/sdk');
    assert.equal(sdk.trustCertificate, false);
    const withToken = presentGetStarted({ ...input, token: 'stk_test_abc' });
    assert.equal(withToken.token, 'stk_test_abc');
    assert.equal(
      withToken.sdk?.runWithToken,
      'STOCKIST_URL=https://shop.example STOCKIST_TOKEN=stk_test_abc node node_modules/@stockist/client/examples/read-stock.mjs',
    );
  });

  it('on its own certificate: curl -k, and the commands fetch and trust the certificate; without a package, no commands', () => {
    const view = presentGetStarted({ ...input, selfSigned: true });
    assert.equal(view.curlFlags, '-k ');
    assert.equal(view.selfSigned, true);
    assert.deepEqual(view.sdk?.install.split('\n'), [
      'mkdir stockist-example && cd stockist-example',
      'curl -k -sS -o stockist-sandbox.pem https://shop.example/sdk/certificate.pem',
      'export NODE_EXTRA_CA_CERTS="$PWD/stockist-sandbox.pem"',
      'npm install https://shop.example/sdk/stockist-client-1.2.3.tgz',
    ]);
    assert.equal(view.sdk?.trustCertificate, true);
    assert.equal(presentGetStarted({ ...input, tarball: null }).sdk, null);
  });
});

describe('Usage (views.usage → UsageView)', () => {
  const day = (d: string, byClass: Record<2 | 3 | 4 | 5, number>) => ({ day: d, byClass, total: byClass[2] + byClass[3] + byClass[4] + byClass[5] });
  const usage: MerchantUsage = {
    days: [day('2026-04-30', { 2: 5, 3: 0, 4: 1, 5: 0 }), day('2026-05-01', { 2: 3, 3: 1, 4: 2, 5: 1 })],
    byCode: [{ code: 40400, count: 2, lastDay: '2026-05-01' }],
    recent: [{ requestId: 'req-1', at: AT, method: 'GET', route: '/openapi/v2/order/orders/:id', status: 404, code: 40400 }],
  };
  const budget = { requests: { available: 44.7, capacity: 50, perSecond: 10 }, body: { available: 1023.9, capacity: 2048, perSecond: 100 } };

  it('totals each status class over the window and keeps one row a day with its four counts', () => {
    const view = presentUsage(usage, budget, 'sandbox');
    assert.deepEqual(
      view.totals.map((t) => `${t.label} ${t.count}`),
      ['2xx 8', '3xx 1', '4xx 3', '5xx 1'],
    );
    assert.deepEqual(view.days[1], {
      day: '2026-05-01',
      counts: [
        { label: '2xx', count: 3 },
        { label: '3xx', count: 1 },
        { label: '4xx', count: 2 },
        { label: '5xx', count: 1 },
      ],
    });
    assert.equal(view.environment, 'sandbox');
    assert.equal(presentUsage(usage, budget, 'production').environment, 'production');
  });

  it('gives the chart its series as JSON: days in epoch seconds, one series a class', () => {
    const chart = JSON.parse(presentUsage(usage, budget, 'sandbox').chart);
    assert.deepEqual(chart.days, [Date.parse('2026-04-30T00:00:00Z') / 1000, Date.parse('2026-05-01T00:00:00Z') / 1000]);
    assert.deepEqual(
      [chart.ok, chart.redirect, chart.clientError, chart.serverError],
      [
        [5, 3],
        [0, 1],
        [1, 2],
        [0, 1],
      ],
    );
  });

  it('writes the budget in whole units left of the bucket; unreadable buckets and an off body budget are said', () => {
    const view = presentUsage(usage, budget, 'sandbox');
    assert.deepEqual(view.budget, { requests: '44 of 50', perSecond: '10', body: '1023 of 2048' });
    assert.equal(presentUsage(usage, { ...budget, body: null }, 'sandbox').budget?.body, null);
    assert.equal(presentUsage(usage, null, 'sandbox').budget, null);
  });

  it('names each error code’s status and meaning, each recent 4xx’s request in words and its time as a <time>', () => {
    const view = presentUsage(usage, budget, 'sandbox');
    assert.deepEqual(view.codes, [{ code: '40400', words: 'Not found', status: '404', count: '2', lastDay: '2026-05-01' }]);
    assert.deepEqual(view.recent, [
      {
        requestId: 'req-1',
        at: AT_TIME,
        request: 'Read an order',
        route: 'GET /openapi/v2/order/orders/:id',
        status: '404',
        code: '40400',
        words: 'Not found',
      },
    ]);
    const quiet = presentUsage({ days: [], byCode: [], recent: [] }, null, 'sandbox');
    assert.deepEqual([quiet.codes, quiet.recent, quiet.totals.map((t) => t.count)], [[], [], [0, 0, 0, 0]]);
  });
});

describe('Usage: codes and routes in words', () => {
  it('every code of the error catalogue and every merchant route has words, none of them a raw code', () => {
    for (const e of ERROR_CATALOGUE) {
      assert.ok(errorCodeWords(e.code).length > 3, String(e.code));
      assert.doesNotMatch(errorCodeWords(e.code), /[a-z]+_[a-z_]+|\d{5}/, String(e.code));
    }
    for (const r of MERCHANT_ROUTES) {
      assert.equal(requestWords(r.method, `/openapi${r.path}`), r.what);
      assert.match(r.what, /^[A-Z][a-z]+ [a-z’' ]+$/, `${r.method} ${r.path}`);
    }
    assert.deepEqual(
      [errorCodeWords(42203), errorCodeWords(40300), errorCodeWords(42900)],
      ['Not enough funds on the account', 'Not allowed: the token lacks the scope, or the account is disabled', 'Too many requests (rate limit)'],
    );
    assert.equal(requestWords('POST', '/openapi/v2/order/orders/:orderId/refund'), 'Request a refund', 'whatever the parameter is called');
    assert.equal(requestWords('HEAD', '/openapi/v1/product/stocks'), 'Check stock');
  });

  it('a code outside the catalogue reads as its HTTP status, and a request no route answered says so', () => {
    assert.equal(errorCodeWords(40500), 'Method Not Allowed');
    assert.equal(errorCodeWords(49900), 'HTTP 499');
    assert.equal(requestWords('GET', 'unmatched'), 'An address the API does not have');
    const view = presentUsage(
      { days: [], byCode: [], recent: [{ requestId: 'req-2', at: AT, method: 'GET', route: 'unmatched', status: 405, code: 40500 }] },
      null,
      'sandbox',
    );
    assert.deepEqual([view.recent[0].request, view.recent[0].route, view.recent[0].words], ['An address the API does not have', 'GET', 'Method Not Allowed']);
  });
});

describe('API credentials (views.credentials → CredentialsView)', () => {
  const client = (id: number, extra: Partial<ClientRecord> = {}): ClientRecord => ({
    id,
    name: `Client ${id}`,
    client_id: `cli_${id}`,
    created_at: AT,
    last_used_at: null,
    rotated_at: null,
    revoked_at: null,
    ...extra,
  });
  const token = (id: number, extra: Partial<TokenRecord> = {}): TokenRecord => ({
    id,
    name: `Token ${id}`,
    scopes: 'orders:read stock:read',
    created_at: AT,
    last_used_at: null,
    expires_at: null,
    revoked_at: null,
    ...extra,
  });
  const listed = {
    clients: [client(1), client(2, { rotated_at: Date.parse(LATER), last_used_at: AT }), client(3, { revoked_at: Date.parse(LATER) })],
    tokens: [token(7, { expires_at: Date.parse(LATER), last_used_at: AT }), token(8, { revoked_at: Date.parse(LATER) })],
  };
  const options = { environment: 'sandbox' as const, tokenUrl: 'https://shop.example/openapi/oauth/token', canWrite: true, shown: null, refused: null };

  it('states each client: times as <time> (— when never used), active, rotated or revoked with when; only live ones have actions', () => {
    const view = presentCredentials(listed, options);
    assert.equal(view.tokenPrefix, 'stk_test_');
    assert.equal(view.tokenUrl, 'https://shop.example/openapi/oauth/token');
    assert.equal(view.maxGraceHours, 24);
    const [fresh, rotated, revoked] = view.clients;
    assert.deepEqual([fresh.id, fresh.clientId, fresh.created, fresh.lastUsed], ['1', 'cli_1', AT_TIME, '—']);
    assert.deepEqual(fresh.state, { text: 'Active', at: null });
    assert.deepEqual(rotated.state, { text: 'Active, rotated', at: LATER_TIME });
    assert.equal(rotated.lastUsed, AT_TIME);
    assert.deepEqual(revoked.state, { text: 'Revoked', at: LATER_TIME });
    assert.deepEqual(
      view.clients.map((c) => c.live),
      [true, true, false],
    );
    assert.deepEqual(fresh.rotate, { open: false, graceHours: '0', error: null });
  });

  it('states each token: its end as a <time> or never, active or revoked; the new-token form ticks the read scopes', () => {
    const view = presentCredentials(listed, options);
    const [live, revoked] = view.tokens;
    assert.deepEqual(
      [live.id, live.scopes, live.created, live.lastUsed, live.expires, live.state, live.live],
      ['7', 'orders:read stock:read', AT_TIME, AT_TIME, LATER_TIME, 'Active', true],
    );
    assert.deepEqual([revoked.expires, revoked.lastUsed, revoked.state, revoked.live], ['never', '—', 'Revoked', false]);
    assert.deepEqual(view.tokenForm, {
      name: '',
      expiresInDays: '',
      error: null,
      scopes: [
        { value: 'catalog:read', checked: true },
        { value: 'stock:read', checked: true },
        { value: 'orders:read', checked: true },
        { value: 'orders:write', checked: false },
        { value: 'refunds:write', checked: false },
        { value: 'account:read', checked: true },
        { value: 'claims:read', checked: true },
        { value: 'claims:write', checked: false },
      ],
    });
  });

  it('shows a new secret once: a client with its old secret’s end as a <time> (none after a rotation without grace), or a token', () => {
    const rotated = presentCredentials(listed, {
      ...options,
      shown: { kind: 'client', name: 'Client 2', clientId: 'cli_2', secret: 's3cret', oldSecretUntil: Date.parse(LATER) },
    });
    assert.deepEqual(rotated.shown, {
      kind: 'client',
      done: 'Secret of client Client 2 rotated',
      name: 'Client 2',
      clientId: 'cli_2',
      secret: 's3cret',
      oldSecretUntil: LATER_TIME,
    });
    const atOnce = presentCredentials(listed, {
      ...options,
      shown: { kind: 'client', name: 'Client 2', clientId: 'cli_2', secret: 's3cret', oldSecretUntil: null },
    });
    assert.equal(atOnce.shown?.done, 'Secret of client Client 2 rotated', 'a rotation without grace says so too');
    const created = presentCredentials(listed, { ...options, shown: { kind: 'client', name: 'Client 4', clientId: 'cli_4', secret: 's3cret' } });
    assert.equal(created.shown?.kind === 'client' && created.shown.oldSecretUntil, null);
    assert.equal(created.shown?.done, 'Client Client 4 created');
    const issued = presentCredentials(listed, { ...options, shown: { kind: 'token', name: 'CI', secret: 'stk_test_x', scopes: 'orders:read' } });
    assert.deepEqual(issued.shown, { kind: 'token', done: 'Token CI created', name: 'CI', secret: 'stk_test_x', scopes: 'orders:read' });
    assert.equal(presentCredentials(listed, options).shown, null);
  });

  it('a refused rotation opens that client’s form with what was typed and why; a refused token keeps its name and days, nothing ticked', () => {
    const rotate = presentCredentials(listed, {
      ...options,
      refused: { status: 400, form: 'rotate', error: 'must be a whole number of hours', typed: { clientId: '2', graceHours: '99' } },
    });
    assert.deepEqual(rotate.clients[1].rotate, { open: true, graceHours: '99', error: 'must be a whole number of hours' });
    assert.deepEqual(rotate.clients[0].rotate, { open: false, graceHours: '0', error: null });
    assert.equal(rotate.tokenForm.error, null);
    const missing = presentCredentials(listed, {
      ...options,
      refused: { status: 400, form: 'rotate', error: 'bad', typed: { clientId: '1', graceHours: undefined } },
    });
    assert.equal(missing.clients[0].rotate.graceHours, '');
    const tokenRefused = presentCredentials(listed, {
      ...options,
      refused: { status: 400, form: 'token', error: 'tick at least one scope', typed: { name: 'CI', expiresInDays: '30' } },
    });
    assert.deepEqual(
      { ...tokenRefused.tokenForm, scopes: tokenRefused.tokenForm.scopes.filter((s) => s.checked) },
      { name: 'CI', expiresInDays: '30', error: 'tick at least one scope', scopes: [] },
    );
    assert.ok(tokenRefused.clients.every((c) => !c.rotate.open));
  });

  it('production: the live token prefix', () => {
    assert.equal(presentCredentials(listed, { ...options, environment: 'production' }).tokenPrefix, 'stk_live_');
  });
});

type Log = Awaited<ReturnType<typeof deliveryLog>>;
const endpoint = (extra: Partial<Log['endpoint']> = {}): Log['endpoint'] => ({
  id: '3000000000001',
  url: 'https://hooks.example.com/in',
  events: ['refund.failed', 'split_order.shipped'],
  skus: null,
  status: 'active',
  disabledReason: null,
  disabledAt: null,
  failingSince: null,
  createdAt: '2026-05-01T14:03:07Z',
  updatedAt: LATER,
  ...extra,
});
const delivery = (id: string, extra: Partial<Log['list'][number]> = {}): Log['list'][number] => ({
  id,
  webhookId: `msg_${id}`,
  eventId: `9${id}`,
  type: 'refund.failed',
  orderId: '1001',
  cursorFrom: null,
  cursorTo: null,
  status: 'succeeded',
  attempts: 1,
  lastStatusCode: 202,
  lastError: null,
  lastAttemptAt: '2026-05-01T14:03:07Z',
  nextAttemptAt: null,
  deliveredAt: '2026-05-01T14:03:07Z',
  createdAt: '2026-05-01T14:03:07Z',
  test: false,
  requestBody: '{"type":"refund.failed"}',
  responseBody: 'accepted',
  durationMs: 120,
  ...extra,
});

describe('webhooks (views.webhooks → WebhooksView)', () => {
  it('lists endpoints as a table: the id links the endpoint’s page, events joined, a disabled one says why', () => {
    const view = presentWebhooks([endpoint(), endpoint({ id: '3000000000002', status: 'disabled', disabledReason: 'every delivery failed for 24 h' })], {
      environment: 'sandbox',
      canWrite: true,
      shown: null,
    });
    assert.deepEqual(view.endpoints.columns, ['Endpoint', 'URL', 'Events', 'Status']);
    assert.deepEqual(view.endpoints.label, { text: 'Webhook endpoints' });
    assert.deepEqual(view.endpoints.rows[0].data, { name: 'endpoint', value: '3000000000001' });
    assert.deepEqual(texts(view.endpoints.rows[0].cells), [
      '3000000000001 → /manager/webhooks/3000000000001',
      'https://hooks.example.com/in',
      '<code>refund.failed</code>, <code>split_order.shipped</code>',
      'Active',
    ]);
    assert.equal(view.endpoints.rows[1].cells[3], 'Disabled: every delivery failed for 24 h');
    assert.equal(view.urlHint, 'https, or http on this machine for local testing');
  });

  it('has an empty state, ticks every event but stock.changed, and shows a new endpoint’s id and secret only', () => {
    const view = presentWebhooks([], {
      environment: 'production',
      canWrite: false,
      shown: { id: '5', secret: 'whsec_x', url: 'https://x' } as { id: string; secret: string },
    });
    assert.deepEqual(view.endpoints.empty, { text: 'No endpoints yet.' });
    assert.equal(view.endpoints.rows.length, 0);
    assert.deepEqual(view.shown, { id: '5', secret: 'whsec_x' });
    assert.equal(view.urlHint, 'https, a public address');
    assert.equal(view.canWrite, false);
    assert.deepEqual(
      view.events.filter((e) => !e.checked).map((e) => e.value),
      ['stock.changed'],
    );
    assert.ok(view.events.length > 1);
  });
});

describe('an endpoint and its delivery log (views.webhook, views["webhook-log"])', () => {
  const log = (list: Log['list'], total = list.length, e = endpoint()): Log => ({ endpoint: e, version: 4, total, list });

  it('states the endpoint: times as <time>, the SKUs only when it follows stock.changed, the edit form filled from it', () => {
    const view = presentWebhook(log([]), { environment: 'sandbox', canWrite: true, shown: null, refused: null });
    assert.deepEqual([view.id, view.back, view.path], ['3000000000001', '/manager/webhooks', '/manager/webhooks/3000000000001']);
    assert.deepEqual([view.url, view.events, view.skus, view.status], ['https://hooks.example.com/in', 'refund.failed, split_order.shipped', null, 'Active']);
    assert.deepEqual([view.created, view.changed], [AT_TIME, LATER_TIME]);
    assert.equal(view.edit.url, 'https://hooks.example.com/in');
    assert.deepEqual(
      view.edit.events.filter((t) => t.checked).map((t) => t.value),
      ['refund.failed', 'split_order.shipped'],
    );
    assert.deepEqual([view.edit.skuList, view.edit.reasons, view.edit.version], ['', [], '4']);
    assert.deepEqual(view.testTypes[0], { value: 'webhook.test', label: 'Webhook test (a ping)' });
    assert.deepEqual(view.testTypes[1], { value: 'refund.succeeded', label: 'Refund succeeded' });
    assert.equal(view.shown, null);
  });

  it('counts the SKUs followed and lists the first 20; none listed: every SKU', () => {
    const stock = (skus: string[] | null) =>
      presentWebhook(log([], 0, endpoint({ events: ['stock.changed'], skus })), { environment: 'sandbox', canWrite: true, shown: null, refused: null });
    assert.equal(stock(null).skus, 'every SKU');
    assert.equal(stock(['C']).skus, '1 SKU: C');
    assert.equal(stock(['C', 'D']).skus, '2 SKUs: C, D');
    assert.equal(stock(['C', 'D']).edit.skuList, 'C\nD');
    const many = Array.from({ length: 25 }, (_, i) => `S${i}`);
    assert.equal(stock(many).skus, `25 SKUs: ${many.slice(0, 20).join(', ')} …`);
  });

  it('a refused edit shows what was typed and why; a rotated secret is shown once', () => {
    const view = presentWebhook(log([]), {
      environment: 'production',
      canWrite: true,
      shown: 'whsec_new',
      refused: { reasons: ['url: must be https'], form: { url: 'ftp://x', events: ['stock.changed'], skuList: 'A\nB', version: '2' } },
    });
    assert.deepEqual([view.edit.url, view.edit.skuList, view.edit.reasons, view.edit.version], ['ftp://x', 'A\nB', ['url: must be https'], '2']);
    assert.deepEqual(
      view.edit.events.filter((t) => t.checked).map((t) => t.value),
      ['stock.changed'],
    );
    assert.equal(view.edit.urlHint, 'https, a public address');
    assert.equal(view.url, 'https://hooks.example.com/in', 'the facts stay the endpoint’s');
    assert.equal(view.shown, 'whsec_new');
  });

  it('the log: its count (the newest shown when there are more), each row’s answer, time taken, retry link and detail id', () => {
    const view = presentWebhookLog(
      log(
        [
          delivery('62', { status: 'failed', attempts: 3, lastStatusCode: null, lastError: 'connect ECONNREFUSED', durationMs: null, responseBody: null }),
          delivery('61'),
        ],
        51,
      ),
      true,
    );
    assert.equal(view.counts, '51 deliveries (the newest 2 shown)');
    assert.deepEqual([view.total, view.columns, view.canWrite], [51, 7, true]);
    assert.equal(view.refresh, '/manager/webhooks/3000000000001/deliveries');
    const [failed, ok] = view.deliveries;
    assert.deepEqual([failed.code, failed.error, failed.duration, failed.attempts, failed.detailId], ['', 'connect ECONNREFUSED', null, '3', 'delivery-62-3']);
    assert.deepEqual(failed.response, {
      sent: true,
      status: 'no answer',
      time: 'not sent (refused before sending)',
      error: 'connect ECONNREFUSED',
      body: { none: 'None: no answer came' },
    });
    assert.equal(failed.retry, '/manager/webhooks/3000000000001/deliveries/62/retry');
    assert.deepEqual([ok.code, ok.duration, ok.lastAttempt, ok.webhookId, ok.requestBody], ['202', '120 ms', AT_TIME, 'msg_61', '{"type":"refund.failed"}']);
    assert.deepEqual(ok.response, { sent: true, status: '202', time: '120 ms', error: null, body: { text: 'accepted' } });
  });

  it('the log: one delivery, a pending one due at a <time>, an answer not kept or empty; a viewer has no retry column', () => {
    const view = presentWebhookLog(
      log([
        delivery('70', {
          status: 'pending',
          attempts: 0,
          lastStatusCode: null,
          lastAttemptAt: null,
          nextAttemptAt: LATER,
          durationMs: null,
          responseBody: null,
          test: true,
        }),
      ]),
      false,
    );
    assert.equal(view.counts, '1 delivery');
    assert.equal(view.columns, 6);
    const [pending] = view.deliveries;
    assert.deepEqual([pending.lastAttempt, pending.test, pending.response], ['—', true, { sent: false, due: LATER_TIME }]);
    const notKept = presentWebhookLog(log([delivery('71', { lastStatusCode: 200, responseBody: null })]), true).deliveries[0].response;
    assert.deepEqual(notKept.sent && notKept.body, {
      none: 'Not kept: the receiver is not at a public address, so only whether it answered 2xx is recorded, never the answer',
    });
    const loopback = presentWebhookLog(log([delivery('73', { lastStatusCode: null, lastError: LOOPBACK_FAILURE, durationMs: null, responseBody: null })]), true)
      .deliveries[0].response;
    assert.ok(loopback.sent);
    assert.equal(loopback.time, 'not recorded (a loopback address)', 'not "refused before sending": it was sent');
    assert.match((loopback.body as { none: string }).none, /^Not kept: the receiver is not at a public address/);
    const empty = presentWebhookLog(log([delivery('72', { responseBody: '' })]), true).deliveries[0].response;
    assert.deepEqual(empty.sent && empty.body, { none: 'Empty' });
    assert.equal(presentWebhookLog(log([]), true).counts, '0 deliveries');
  });

  it('the endpoint’s page carries the same log', () => {
    const l = log([delivery('61')]);
    assert.deepEqual(presentWebhook(l, { environment: 'sandbox', canWrite: false, shown: null, refused: null }).log, presentWebhookLog(l, false));
  });
});
