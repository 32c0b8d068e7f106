import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { RefundWorker } from '../../src/jobs/refund.worker.ts';
import { ORDER_CATALOGUE } from '../fixtures.ts';
import { ADMIN_KEY, buildTestApp, loadCatalogue } from '../helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/quickstart.ts', ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('examples/quickstart.ts', () => {
  it('walks the merchant flow against a running server, printing each step', async (t) => {
    const testApp = await buildTestApp(t, 'sqlite');
    await loadCatalogue(testApp, ORDER_CATALOGUE);
    const worker = new RefundWorker({ store: testApp.store, config: { refundReview: 'auto', refundAutoDelayMs: 500 } });
    worker.start(100);
    t.after(() => worker.stop());
    await testApp.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(testApp.app.server.address() as AddressInfo).port}`;

    // No merchant credentials: the local-demo path makes a merchant with the operator key, then OAuth.
    const { code, out } = await run(['--url', url, '--timeout', '30'], { ADMIN_API_KEY: ADMIN_KEY, STOCKIST_CLIENT_ID: '', STOCKIST_CLIENT_SECRET: '', STOCKIST_TOKEN: '' });
    assert.equal(code, 0, out);
    for (const heading of ['1. Access token', '2. Categories', '3. Stock', '4. Channel quote', '5. Order', '6. Query the order', '7. Partial refund', '8. Wait for the decision']) {
      assert.ok(out.includes(heading), `prints "${heading}"\n${out}`);
    }
    assert.match(out, /POST \/openapi\/oauth\/token \(client_credentials\): stk_test_/);
    assert.match(out, /kkOrderId: \d+/);
    assert.match(out, /refund: refund_successfully, amount \d/);
    assert.match(out, /refundStatus partial_refund/);
    assert.match(out, /Done\./);
  });

  it('explains what is missing without credentials', async () => {
    const { code, out } = await run(['--url', 'http://127.0.0.1:9', '--data-dir', '/nonexistent'], { ADMIN_API_KEY: '', STOCKIST_CLIENT_ID: '', STOCKIST_CLIENT_SECRET: '', STOCKIST_TOKEN: '' });
    assert.equal(code, 1);
    assert.match(out, /no credentials: set STOCKIST_CLIENT_ID/);
  });
});
