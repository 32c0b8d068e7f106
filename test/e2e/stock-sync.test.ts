import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebhookWorker } from '../../src/jobs/webhook.worker.ts';
import { ORDER_CATALOGUE, order } from '../fixtures.ts';
import { ADMIN_KEY, buildTestApp, loadCatalogue, newMerchant } from '../helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Waits (bounded) until `test` holds, checking every 100 ms. */
async function waitFor(what: string, test: () => boolean | Promise<boolean>, output: () => string, seconds = 60) {
  const deadline = Date.now() + seconds * 1000;
  while (!(await test())) {
    if (Date.now() > deadline) assert.fail(`${what} did not happen within ${seconds} s:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('examples/stock-sync.ts', () => {
  it('keeps a local copy of stock equal to /v1/product/stocks by push, from a baseline of the change feed', async (t) => {
    const testApp = await buildTestApp(t, 'sqlite');
    await loadCatalogue(testApp, ORDER_CATALOGUE);
    const shop = await newMerchant(testApp, 'Shop');
    // Changes before the example starts reach it through the feed, later ones by push.
    await testApp.merchant(shop.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 2 }]));
    const worker = new WebhookWorker({ store: testApp.store, config: { env: 'sandbox', stockWebhookIntervalMs: 200 } });
    worker.start(50);
    t.after(() => worker.stop());
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-sync-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const outFile = path.join(dir, 'stock.json');
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/stock-sync.ts', '--url', url, '--out', outFile], {
      cwd: ROOT,
      env: { ...process.env, ADMIN_API_KEY: ADMIN_KEY, STOCKIST_CLIENT_ID: '', STOCKIST_CLIENT_SECRET: '', STOCKIST_TOKEN: '' },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    t.after(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    await waitFor(
      'registration',
      () => out.includes('Listening for stock.changed'),
      () => out,
    );
    assert.match(out, /baseline: \d+ changes from the feed → 5 stock rows/);

    for (let i = 0; i < 5; i++)
      assert.equal((await testApp.merchant(shop.token, 'POST', '/openapi/v1/order/orders', order([{ sku: 'C', quantity: 1 }]))).status, 200);
    assert.equal((await testApp.admin('PUT', '/admin/v1/stocks', { items: [{ sku: 'B', warehouseCode: 'US01', qty: 9 }] })).status, 200);
    assert.equal((await testApp.admin('POST', '/admin/v1/stocks/adjust', { items: [{ sku: 'A', warehouseCode: 'G007', delta: -3 }] })).status, 200);
    const head = (await testApp.merchant(shop.token, 'GET', '/openapi/v1/product/stocks/changes?cursor=now')).body.data.nextCursor;
    await waitFor(
      'the delivery of the last change',
      () => out.includes(`→ cursor ${head}`),
      () => out,
    );

    child.kill('SIGTERM');
    assert.equal(await exited, 0, out);
    assert.match(out, /verified 6 stock rows against \/v1\/product\/stocks: all equal/);
    const local = JSON.parse(fs.readFileSync(outFile, 'utf8')) as Record<string, number>;
    const truth = (await testApp.merchant(shop.token, 'GET', '/openapi/v1/product/stocks?skus=A,B,C')).body.data.list as any[];
    for (const record of truth)
      for (const w of record.warehouseStockList) assert.equal(local[`${record.sku}/${w.warehouseCode}`], w.qty, `${record.sku}/${w.warehouseCode}`);
    assert.equal(local['B/US01'], 9);
    assert.match(out, /\d+ deliveries applied; 6 stock rows written to /);
    assert.equal((await testApp.admin('GET', '/admin/v1/webhooks')).body.data.total, 0, 'the example deleted its endpoint on the way out');
  });
});
