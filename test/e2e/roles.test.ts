import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { exited, freePort, runCli, startProcess, tempDir } from './process.ts';

/** SPEC §10: an API process and a worker process share one database; the worker decides refunds. */
describe('serve --role api + --role worker (real processes)', () => {
  it('decides a refund requested through the API process in the worker process', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const base = { DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'roles.db')}`, TLS: 'off', LOG_LEVEL: 'warn', ADMIN_API_KEY: 'roles-admin-key-0123456789', REFUND_AUTO_DELAY_MS: '0', STOCKIST_ENV: 'sandbox' };
    assert.equal(runCli(['seed', 'demo'], base).status, 0);
    const apiPort = await freePort();
    const api = await startProcess(['serve', '--role', 'api', '--port', String(apiPort)], base, /Stockist listening/);
    t.after(() => api.child.kill('SIGKILL'));
    const worker = await startProcess(['serve', '--role', 'worker', '--port', String(await freePort())], base, /Stockist listening/);
    t.after(() => worker.child.kill('SIGKILL'));
    assert.match(worker.output(), /role worker/);

    const token = fs.readFileSync(path.join(dir, 'demo-token-sandbox'), 'utf8').trim();
    const call = async (method: string, url: string, body?: unknown) => {
      const r = await fetch(`http://127.0.0.1:${apiPort}${url}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
      return r.json() as Promise<any>;
    };
    const created = await call('POST', '/openapi/v1/order/orders', { orderAddress: { country: 'US', phone: '1', recipient: 'R', province: 'CA' }, orderItemsList: [{ sku: 'DEMO-0001', quantity: 1 }] });
    assert.equal(created.code, 10000, JSON.stringify(created));
    const refund = await call('POST', `/openapi/v2/order/orders/${created.data}/refund`, {});
    assert.equal(refund.code, 10000);
    let status = 'pending_review';
    for (let i = 0; i < 100 && status === 'pending_review'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await call('GET', `/openapi/v2/order/orders/refund/${created.data}`)).data.list[0].refundStatus;
    }
    assert.equal(status, 'refund_successfully');
    // The worker process serves no merchant routes.
    worker.child.kill('SIGTERM');
    api.child.kill('SIGTERM');
    assert.equal(await exited(worker.child), 0);
    assert.equal(await exited(api.child), 0);
  });
});
