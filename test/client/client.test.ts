import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { StockistClient, StockistError } from '../../clients/typescript/src/index.ts';
import { RefundWorker } from '../../src/jobs/refund.worker.ts';
import { ADDRESS, ORDER_CATALOGUE } from '../fixtures.ts';
import { buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';

/** A live in-process server (plain HTTP) with the order catalogue and one merchant. */
async function liveServer(t: Parameters<typeof buildTestApp>[0], env: Record<string, string> = {}) {
  const testApp = await buildTestApp(t, 'sqlite', env);
  await loadCatalogue(testApp, ORDER_CATALOGUE);
  const merchant = await newMerchant(testApp, 'Client Co');
  await testApp.app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;
  return { testApp, merchant, baseUrl };
}

interface Logged {
  path: string;
  grant?: string | null;
  key?: string | null;
  ifNoneMatch?: string | null;
  status?: number;
}

/** A fetch that records each request's path, grant type, Idempotency-Key and If-None-Match, and the answer's status. */
function recordingFetch(log: Logged[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(String(input));
    const headers = new Headers(init?.headers);
    const grant = typeof init?.body === 'string' && url.pathname.endsWith('/oauth/token') ? new URLSearchParams(init.body).get('grant_type') : undefined;
    const entry: Logged = { path: url.pathname, grant, key: headers.get('idempotency-key'), ifNoneMatch: headers.get('if-none-match') };
    log.push(entry);
    const response = await fetch(input, init);
    entry.status = response.status;
    return response;
  };
}

describe('typed client against a live server', () => {
  it('walks every operation with OAuth client credentials', async (t) => {
    const { testApp, merchant, baseUrl } = await liveServer(t);
    const log: Logged[] = [];
    const client = new StockistClient({ baseUrl, clientId: merchant.clientId, clientSecret: merchant.clientSecret, fetch: recordingFetch(log) });

    const categories = [
      { categoryId: 10, name: 'Home', parentId: 0 },
      { categoryId: 11, name: 'Kitchen', parentId: 10 },
    ];
    await testApp.admin('POST', '/admin/v1/import', { categories });
    const categoryCalls = () => log.filter((r) => r.path.endsWith('/v1/product/category'));
    const tree = await client.getCategories();
    assert.equal(tree.list.length, 1);
    assert.equal(tree.list[0].name, 'Home');
    assert.equal(tree.list[0].child[0].name, 'Kitchen');
    assert.deepEqual(await client.getCategories(), tree, 'revalidated with the ETag');
    const [fetched, revalidated] = categoryCalls();
    assert.deepEqual([fetched.status, fetched.ifNoneMatch], [200, null]);
    assert.equal(revalidated.status, 304, 'the unchanged tree cost a 304');
    assert.match(String(revalidated.ifNoneMatch), /^(W\/)?"/);
    // A changed tree is a 200 with the new tree, not the cached one.
    await testApp.admin('POST', '/admin/v1/categories', { categoryId: 12, name: 'Garden', parentId: 0 });
    const changed = await client.getCategories();
    assert.deepEqual(changed.list.map((c) => c.name).sort(), ['Garden', 'Home']);
    assert.equal(categoryCalls()[2].status, 200);
    const warehouses = await client.getWarehouses();
    assert.ok(warehouses.list.some((w) => w.warehouseCode === 'G007'));
    const products = await client.listProducts({ pageSize: 2 });
    assert.equal(products.pageSize, 2);
    assert.equal(typeof products.list[0].price, 'number');
    const stock = await client.queryStocks({ skus: 'A,B' });
    assert.deepEqual(
      stock.list.map((s) => s.sku),
      ['A', 'B'],
    );
    const feed = await client.stockChanges({ limit: 5 });
    assert.equal(typeof feed.nextCursor, 'string');

    const quote = await client.quoteChannels({ shipToCountry: 'US', products: [{ sku: 'A', quantity: 2 }] });
    assert.ok(quote.length > 0 && typeof quote[0].estimatedFreight === 'number');
    const types = await client.quoteChannelTypes({ shipToCountry: 'US', products: [{ sku: 'A', quantity: 2 }] });
    assert.ok(types.some((q) => q.channelType === 'Standard'));

    const orderId = await client.createOrder({ orderAddress: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 3 }] });
    assert.match(orderId, /^\d+$/);
    const viaV2 = await client.createOrderV2({ orderAddress: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 1 }] });
    assert.notEqual(viaV2, orderId);
    const order = await client.getOrder(orderId);
    assert.equal(order.id, orderId);
    assert.equal(order.orderItems[0].productNum, 3);
    const page = await client.queryOrders({ ids: orderId });
    assert.equal(page.list[0].id, orderId);
    const first = await client.queryOrders({ pageSize: 1 });
    assert.equal(typeof first.nextCursor, 'string');
    assert.deepEqual(
      (await client.queryOrders({ cursor: first.nextCursor!, pageSize: 1 })).list.map((o) => o.id),
      [orderId],
      'newest first',
    );
    const walked: string[] = [];
    for await (const o of client.iterateOrders({ pageSize: 1 })) walked.push(o.id);
    assert.deepEqual(walked, [viaV2, orderId], 'iterateOrders follows nextCursor to the end');

    const refundNo = await client.requestRefund(orderId, { orderItems: [{ itemId: order.orderItems[0].itemId, quantity: 1 }], refundReason: 'Other' });
    assert.match(refundNo, /^\d+$/);
    await new RefundWorker({ store: testApp.store, config: { refundReview: 'auto', refundAutoDelayMs: 0 } }).runOnce();
    const refunds = await client.listRefunds(orderId);
    assert.equal(refunds.list[0].refundNo, refundNo);
    assert.equal(refunds.list[0].refundStatus, 'refund_successfully');
  });

  it('claims: uploads evidence, opens a claim naming it, reads, lists, cancels and downloads', async (t) => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-client-claims-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const { testApp, merchant, baseUrl } = await liveServer(t, { DATA_DIR: dataDir });
    const client = new StockistClient({ baseUrl, clientId: merchant.clientId, clientSecret: merchant.clientSecret });
    const orderId = await client.createOrder({ orderAddress: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 2 }] });
    const split = (await client.getOrder(orderId)).splitOrders[0].id;
    await testApp.admin('POST', `/admin/v1/split-orders/${split}/ship`, { carrier: 'UPS', trackingCode: '1Z1' });
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]);
    const file = await client.claims.upload(png, 'image/png');
    assert.deepEqual([file.size, file.contentType], [png.length, 'image/png']);
    const opened = await client.claims.open({
      orderId: split,
      reason: 'damaged',
      resolution: 'refund',
      items: [{ sku: 'C', quantity: 1 }],
      evidence: [file.fileId],
    });
    assert.equal(opened.status, 'open');
    const claim = await client.claims.get(opened.claimNo);
    assert.deepEqual(claim.evidence, [file.fileId]);
    const listed: string[] = [];
    for await (const c of client.claims.list({ status: 'open' })) listed.push(c.claimNo);
    assert.deepEqual(listed, [opened.claimNo]);
    assert.equal((await client.claims.cancel(opened.claimNo)).status, 'cancelled');
    const downloaded = await client.claims.download(file.fileId);
    assert.equal(downloaded.contentType, 'image/png');
    assert.deepEqual(downloaded.bytes, png);
  });

  it('sends an Idempotency-Key on every POST: a caller-chosen key replays, a fresh one per call otherwise', async (t) => {
    const { merchant, baseUrl } = await liveServer(t);
    const log: Logged[] = [];
    const client = new StockistClient({ baseUrl, accessToken: merchant.token, fetch: recordingFetch(log) });
    const body = { orderAddress: ADDRESS, orderItemsList: [{ sku: 'C', quantity: 1 }] };
    const a = await client.createOrder(body, { idempotencyKey: 'order-42' });
    assert.equal(await client.createOrder(body, { idempotencyKey: 'order-42' }), a);
    const b = await client.createOrder(body);
    const c = await client.createOrder(body);
    assert.equal(new Set([a, b, c]).size, 3);
    const keys = log.filter((r) => r.path.endsWith('/v1/order/orders')).map((r) => r.key);
    assert.equal(keys[0], 'order-42');
    assert.match(String(keys[2]), /^[0-9a-f-]{36}$/);
    assert.notEqual(keys[2], keys[3]);
    await client.getWarehouses();
    assert.equal(log.at(-1)!.key, null, 'no key on GET');
  });

  it('registers a stock.changed endpoint and replaces its SKU list with PUT, which carries an Idempotency-Key', async (t) => {
    const { merchant, baseUrl } = await liveServer(t);
    const log: { path: string; key?: string | null }[] = [];
    const client = new StockistClient({ baseUrl, accessToken: merchant.token, fetch: recordingFetch(log) });
    const created = await client.createWebhook({ url: 'http://127.0.0.1:9/stock', events: ['stock.changed'], skus: ['A'] });
    assert.deepEqual(created.skus, ['A']);
    const body = { url: created.url, events: ['stock.changed' as const], skus: ['B', 'C'] };
    const replaced = await client.replaceWebhook(created.id, body, { idempotencyKey: 'skus-1' });
    assert.deepEqual(replaced.skus, ['B', 'C']);
    assert.deepEqual(await client.replaceWebhook(created.id, body, { idempotencyKey: 'skus-1' }), replaced);
    await client.replaceWebhook(created.id, { ...body, skus: null });
    assert.equal((await client.listWebhooks()).list[0].skus, null);
    const keys = log.filter((r) => r.path.endsWith(`/v1/webhooks/${created.id}`)).map((r) => r.key);
    assert.equal(keys[0], 'skus-1');
    assert.match(String(keys[2]), /^[0-9a-f-]{36}$/);
  });

  it('throws StockistError with code, message, errors, requestId and status', async (t) => {
    const { merchant, baseUrl } = await liveServer(t);
    const client = new StockistClient({ baseUrl, accessToken: merchant.token });
    const unknown = await client.createOrder({ orderAddress: ADDRESS, orderItemsList: [{ sku: 'NOPE', quantity: 1 }] }).catch((e: unknown) => e);
    assert.ok(unknown instanceof StockistError);
    assert.equal(unknown.status, 422);
    assert.equal(unknown.code, 42200);
    assert.match(unknown.message, /NOPE/);
    assert.equal(unknown.errors[0].field, 'orderItemsList[0].sku');
    assert.match(String(unknown.requestId), /^req_/);
    const missing = await client.getOrder('987654321').catch((e: unknown) => e);
    assert.ok(missing instanceof StockistError && missing.status === 404 && missing.code === 40400);
    const bad = await new StockistClient({ baseUrl, accessToken: 'stk_test_nope' }).getWarehouses().catch((e: unknown) => e);
    assert.ok(bad instanceof StockistError && bad.status === 401 && bad.code === 40100);
    const wrongSecret = await new StockistClient({ baseUrl, clientId: merchant.clientId, clientSecret: 'wrong' }).getWarehouses().catch((e: unknown) => e);
    assert.ok(wrongSecret instanceof StockistError && wrongSecret.status === 401 && wrongSecret.code === 'invalid_client' && wrongSecret.isOAuthError);
  });

  it('refreshes the token before expiry and falls back to client credentials when the refresh token fails', async (t) => {
    const { merchant, baseUrl } = await liveServer(t, { ACCESS_TOKEN_TTL_SECONDS: '60' });
    const log: Logged[] = [];
    // A margin longer than the lifetime: every call finds the token due for refresh.
    const client = new StockistClient({
      baseUrl,
      clientId: merchant.clientId,
      clientSecret: merchant.clientSecret,
      refreshMarginSeconds: 120,
      fetch: recordingFetch(log),
    });
    await client.getWarehouses();
    await client.getWarehouses();
    const grants = () => log.filter((r) => r.grant).map((r) => r.grant);
    assert.deepEqual(grants(), ['client_credentials', 'refresh_token']);
    (client as unknown as { token: { refreshToken: string } }).token.refreshToken = 'stkr_test_unknown';
    await client.getWarehouses();
    assert.deepEqual(grants(), ['client_credentials', 'refresh_token', 'refresh_token', 'client_credentials']);

    // A long-lived client renews once on 401 (its token was revoked) and carries on.
    const steady = new StockistClient({ baseUrl, clientId: merchant.clientId, clientSecret: merchant.clientSecret });
    const first = await steady.getAccessToken();
    (steady as unknown as { token: { accessToken: string } }).token.accessToken = 'stk_test_revoked';
    await steady.getWarehouses();
    assert.notEqual(await steady.getAccessToken(), first);
  });
});

describe('typed client retries', () => {
  /** A stub answering from a script: each entry is [status, headers, body]. */
  async function stub(t: { after(fn: () => unknown): void }, script: [number, Record<string, string>, unknown][]) {
    const seen: { key: string | undefined; at: number }[] = [];
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ key: req.headers['idempotency-key'] as string | undefined, at: Date.now() });
        const [status, headers, body] = script[Math.min(seen.length - 1, script.length - 1)];
        res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${seen.length}`, ...headers }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => server.close(resolve)));
    return { seen, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }
  const busy = (status: number, retryAfter?: string): [number, Record<string, string>, unknown] => [
    status,
    retryAfter === undefined ? {} : { 'retry-after': retryAfter },
    { code: status * 100, message: 'busy', data: null, requestId: 'req_busy' },
  ];

  it('retries 503 and 429 honouring Retry-After, with the same Idempotency-Key', async (t) => {
    const { seen, baseUrl } = await stub(t, [busy(503, '1'), busy(429, '0'), [200, {}, { code: 10000, message: 'success', data: '1000001' }]]);
    const client = new StockistClient({ baseUrl, accessToken: 'stk_test_x', retryBaseDelayMs: 1 });
    const started = Date.now();
    assert.equal(await client.createOrder({ orderAddress: ADDRESS, orderItemsList: [{ sku: 'A', quantity: 1 }] }), '1000001');
    assert.equal(seen.length, 3);
    assert.ok(seen[1].at - started >= 950, 'waited for Retry-After: 1');
    assert.equal(new Set(seen.map((s) => s.key)).size, 1, 'one key across the retries');
  });

  it('gives up after maxRetries, and at once when Retry-After exceeds maxRetryDelayMs', async (t) => {
    const { seen, baseUrl } = await stub(t, [busy(503)]);
    const client = new StockistClient({ baseUrl, accessToken: 'stk_test_x', maxRetries: 2, retryBaseDelayMs: 1 });
    const error = await client.getWarehouses().catch((e: unknown) => e);
    assert.ok(error instanceof StockistError && error.status === 503 && error.code === 50300 && error.requestId === 'req_busy');
    assert.equal(seen.length, 3);

    const slow = await stub(t, [busy(429, '120')]);
    const impatient = new StockistClient({ baseUrl: slow.baseUrl, accessToken: 'stk_test_x', maxRetryDelayMs: 5000 });
    const limited = await impatient.getWarehouses().catch((e: unknown) => e);
    assert.ok(limited instanceof StockistError && limited.status === 429 && limited.retryAfterSeconds === 120);
    assert.equal(slow.seen.length, 1);
  });
});
