import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { SandboxShipper } from '../../src/jobs/sandbox-shipper.ts';
import { ORDER_CATALOGUE, placeOrder } from '../fixtures.ts';
import { loadCatalogue, newMerchant, useApp } from '../helpers.ts';

describe('sandbox shipping simulator and metrics', () => {
  const t = useApp('sqlite', { REFUND_REVIEW: 'manual', SANDBOX_AUTO_SHIP_SECONDS: '60' });
  let token: string;
  before(async () => {
    await loadCatalogue(t, ORDER_CATALOGUE);
    token = (await newMerchant(t)).token;
  });

  it('ships after the delay, skips splits with a pending refund, and delivers later', async () => {
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

  it('serves Prometheus metrics behind the operator key', async () => {
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
