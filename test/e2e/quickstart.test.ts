import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
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
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-quickstart-'));
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = { ADMIN_API_KEY: ADMIN_KEY, STOCKIST_CLIENT_ID: '', STOCKIST_CLIENT_SECRET: '', STOCKIST_TOKEN: '' };
    const { code, out } = await run(['--url', url, '--timeout', '30', '--data-dir', dataDir], env);
    assert.equal(code, 0, out);
    assert.match(out, /created merchant "Quickstart" \d+ through the operator API .*kept in .*quickstart-client\.json/);
    for (const heading of [
      '1. Access token',
      '2. Categories',
      '3. Stock',
      '4. Channel quote',
      '5. Order',
      '6. Query the order',
      '7. Partial refund',
      '8. Wait for the decision',
      '9. Your account',
    ]) {
      assert.ok(out.includes(heading), `prints "${heading}"\n${out}`);
    }
    assert.match(out, /POST \/openapi\/oauth\/token \(client_credentials\): stk_test_/);
    assert.match(out, /kkOrderId: \d+/);
    assert.match(out, /refund: refund_successfully, amount \d/);
    assert.match(out, /refundStatus partial_refund/);
    assert.match(out, /GET \/openapi\/v1\/account: balance -?\d+(\.\d+)? USD, on_account/);
    assert.match(out, /refund_credit: \d+(\.\d+)? → balance -?\d/);
    assert.match(out, /order_charge: -\d+(\.\d+)? → balance -?\d/);
    assert.match(out, /Done\./);

    // Step 3 shows the warehouse the order then ships from.
    const picked = /picked: (\S+): \d+ available in (\S+); the order will name \2, so it ships from there/.exec(out);
    assert.ok(picked, out);
    const split = /split \d+: (\S+) via/.exec(out);
    assert.equal(split?.[1], picked[2], 'the order ships from the warehouse step 3 showed');
    assert.equal((/from (\S+):/.exec(out.slice(out.indexOf('4. Channel quote'))) ?? [])[1], picked[2], 'and so does the quote');

    // A second run reuses the Quickstart merchant (and its saved OAuth credentials).
    const second = await run(['--url', url, '--timeout', '30', '--data-dir', dataDir], env);
    assert.equal(second.code, 0, second.out);
    assert.match(second.out, /reusing merchant "Quickstart" \d+ \(client_id /);
    assert.match(second.out, /POST \/openapi\/oauth\/token \(client_credentials\)/);
    // Without the saved file it still reuses the merchant, with an operator-issued token.
    fs.rmSync(path.join(dataDir, 'quickstart-client.json'));
    const third = await run(['--url', url, '--timeout', '30', '--data-dir', dataDir], env);
    assert.equal(third.code, 0, third.out);
    assert.match(third.out, /reusing merchant "Quickstart" \d+ with a 1-hour token from the operator API/);
    const merchants = (await testApp.app.inject({ method: 'GET', url: '/admin/v1/merchants', headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json().data
      .list;
    assert.equal(merchants.filter((m: { name: string }) => m.name === 'Quickstart').length, 1, 'one Quickstart merchant after three runs');
  });

  it('prints its usage for --help, and one line plus the usage for an unknown option', async () => {
    const help = await run(['--help'], {});
    assert.equal(help.code, 0);
    assert.match(help.out, /^Usage: npm run quickstart -- \[options\]/);
    assert.match(help.out, /--insecure/);
    const unknown = await run(['--nope'], {});
    assert.equal(unknown.code, 2);
    assert.match(unknown.out, /^quickstart: Unknown option '--nope'/);
    assert.doesNotMatch(unknown.out, /ERR_PARSE_ARGS|at parseArgs|node:internal/);
  });

  it('explains what is missing without credentials', async () => {
    const { code, out } = await run(['--url', 'http://127.0.0.1:9', '--data-dir', '/nonexistent'], {
      ADMIN_API_KEY: '',
      STOCKIST_CLIENT_ID: '',
      STOCKIST_CLIENT_SECRET: '',
      STOCKIST_TOKEN: '',
    });
    assert.equal(code, 1);
    assert.match(out, /no credentials: set STOCKIST_CLIENT_ID/);
  });
});
