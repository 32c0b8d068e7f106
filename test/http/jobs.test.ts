import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { SandboxShipper } from '../../src/jobs/sandbox-shipper.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { buildTestApp, loadCatalogue, newMerchant, type TestApp } from '../helpers.ts';

describe('sandbox shipping simulator and metrics', () => {
  /** Each test on an app of its own (closed when the test ends): the order catalogue and a merchant (`token`). */
  const build = async (ctx: TestContext) => {
    const t = await buildTestApp(ctx, 'sqlite', { REFUND_REVIEW: 'manual', SANDBOX_AUTO_SHIP_SECONDS: '60' });
    await loadCatalogue(t, ORDER_CATALOGUE);
    const token = (await newMerchant(t)).token;
    return { t, token };
  };
  /** What the shipping test does, for the metrics to count: two orders, one refund left for review, the other order shipped and delivered. */
  const shipOneRefundOne = async (t: TestApp, token: string) => {
    const shipper = new SandboxShipper(t.store, 60);
    await placeOrder(t, token, [{ sku: 'C', quantity: 1 }]);
    const b = await placeOrder(t, token, [{ sku: 'C', quantity: 1 }]);
    await t.merchant(token, 'POST', `/openapi/v2/order/orders/${b.id}/refund`, {});
    await shipper.runOnce(Date.now() + 61_000);
    await shipper.runOnce(Date.now() + 122_000);
  };

  it('ships after the delay, skips splits with a pending refund, and delivers later', async (ctx) => {
    const { t, token } = await build(ctx);
    const shipper = new SandboxShipper(t.store, 60);
    const a = await placeOrder(t, token, [{ sku: 'C', quantity: 1 }]);
    const b = await placeOrder(t, token, [{ sku: 'C', quantity: 1 }]);
    await t.merchant(token, 'POST', `/openapi/v2/order/orders/${b.id}/refund`, {});
    const now = Date.now();
    assert.deepEqual(await shipper.runOnce(now), { shipped: 0, delivered: 0 }, 'not before the delay');
    assert.deepEqual(await shipper.runOnce(now + 61_000), { shipped: 1, delivered: 0 });
    const shipped = (await t.merchant(token, 'GET', `/openapi/v2/order/orders/${a.id}`)).body.data;
    assert.equal(shipped.fulfillmentStatus, 'fully_shipped');
    assert.equal(shipped.splitOrders[0].carrier, 'SANDBOX');
    const refused = await t.merchant(token, 'POST', `/openapi/v2/order/orders/${a.id}/refund`, {});
    assert.equal(refused.body.code, 40901, 'merchants can test refund-after-shipment');
    assert.equal((await t.merchant(token, 'GET', `/openapi/v2/order/orders/${b.id}`)).body.data.fulfillmentStatus, 'waiting_to_ship');
    assert.deepEqual(await shipper.runOnce(Date.now() + 122_000), { shipped: 0, delivered: 1 });
    assert.equal((await t.merchant(token, 'GET', `/openapi/v2/order/orders/${a.id}`)).body.data.status, 'completed');
  });

  it('serves Prometheus metrics behind the operator key', async (ctx) => {
    const { t, token } = await build(ctx);
    await shipOneRefundOne(t, token);
    assert.equal((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 401);
    const r = await t.admin('GET', '/metrics');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /text\/plain/);
    assert.match(r.raw, /stockist_http_requests_total\{method="POST",route="\/openapi\/v1\/order\/orders",status="200"\} \d+/);
    assert.match(r.raw, /stockist_refunds\{status="pending_review"\} 1/);
    assert.match(r.raw, /stockist_refund_pending_oldest_age_seconds \d/);
    assert.match(r.raw, /stockist_refunds_pending_over_sla 0/);
    assert.match(r.raw, /stockist_orders\{status="completed"\} 1/);
    assert.match(r.raw, /stockist_stock_rows \d+/);
  });
});
