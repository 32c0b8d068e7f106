import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { exited, freePort, runCli, startProcess, tempDir } from './process.ts';

/** SPEC §10: an API process and a worker process share one database; the worker decides refunds. */
describe('serve --role api + --role worker (real processes)', () => {
  // Two processes start (tens of seconds each on a loaded machine): more than the default per-test timeout.
  it('decides a refund requested through the API process in the worker process', { timeout: 300_000 }, async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    // No event-loop shedding: a loaded test machine is not an overloaded server.
    const base = {
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${path.join(dir, 'roles.db')}`,
      TLS: 'off',
      LOG_LEVEL: 'warn',
      ADMIN_API_KEY: 'roles-admin-key-0123456789',
      REFUND_AUTO_DELAY_MS: '0',
      STOCKIST_ENV: 'sandbox',
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    };
    assert.equal(runCli(['seed', 'demo'], base).status, 0);
    const apiPort = await freePort();
    const api = await startProcess(['serve', '--role', 'api', '--port', String(apiPort)], base, /Stockist listening/);
    t.after(() => api.child.kill('SIGKILL'));
    const workerPort = await freePort();
    const worker = await startProcess(['serve', '--role', 'worker', '--port', String(workerPort)], base, /Stockist listening/);
    t.after(() => worker.child.kill('SIGKILL'));
    assert.match(worker.output(), /role worker/);

    const token = fs.readFileSync(path.join(dir, 'demo-token-sandbox'), 'utf8').trim();
    const call = async (method: string, url: string, body?: unknown) => {
      const r = await fetch(`http://127.0.0.1:${apiPort}${url}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
      return r.json() as Promise<any>;
    };
    const created = await call('POST', '/openapi/v1/order/orders', {
      orderAddress: { country: 'US', phone: '1', recipient: 'R', province: 'CA' },
      orderItemsList: [{ sku: 'DEMO-0001', quantity: 1 }],
    });
    assert.equal(created.code, 10000, JSON.stringify(created));
    const refund = await call('POST', `/openapi/v2/order/orders/${created.data}/refund`, {});
    assert.equal(refund.code, 10000);
    let status = 'pending_review';
    for (const deadline = Date.now() + 120_000; status === 'pending_review' && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await call('GET', `/openapi/v2/order/orders/refund/${created.data}`)).data.list[0].refundStatus;
    }
    assert.equal(status, 'refund_successfully');
    // The worker process serves health and metrics, and no merchant, OAuth, operator or docs routes.
    const onWorker = (method: string, url: string, authorization = `Bearer ${token}`) =>
      fetch(`http://127.0.0.1:${workerPort}${url}`, {
        method,
        headers: { authorization, 'content-type': 'application/json' },
        body: method === 'POST' ? '{}' : undefined,
      });
    assert.equal((await onWorker('GET', '/healthz')).status, 200);
    assert.equal((await onWorker('GET', '/metrics', `Bearer ${base.ADMIN_API_KEY}`)).status, 200);
    for (const [method, url] of [
      ['GET', '/openapi/v1/product/stocks?skus=DEMO-0001'],
      ['GET', `/openapi/v2/order/orders/${created.data}`],
      ['POST', '/openapi/v1/order/orders'],
      ['POST', '/openapi/oauth/token'],
      ['GET', '/docs/openapi.json'],
    ]) {
      const r = await onWorker(method, url);
      assert.equal(r.status, 404, `${method} ${url} on the worker: ${r.status}`);
    }
    assert.equal((await onWorker('GET', '/admin/v1/merchants', `Bearer ${base.ADMIN_API_KEY}`)).status, 404);
    // …while the API process serves the same merchant route.
    const onApi = await fetch(`http://127.0.0.1:${apiPort}/openapi/v1/product/stocks?skus=DEMO-0001`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(onApi.status, 200);
    worker.child.kill('SIGTERM');
    api.child.kill('SIGTERM');
    assert.equal(await exited(worker.child), 0);
    assert.equal(await exited(api.child), 0);
  });
});
