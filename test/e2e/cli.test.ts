import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runCli, tempDir } from './process.ts';

describe('stockist CLI', () => {
  it('stops on a bad configuration value with one line naming the variable', () => {
    const dir = tempDir();
    const r = runCli(['serve'], { DATA_DIR: dir, PORT: 'eighty' });
    assert.equal(r.status, 1);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^stockist: invalid configuration: PORT: /);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('migrates, seeds, creates merchants and issues and revokes tokens', () => {
    const dir = tempDir();
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'cli.db')}` };
    assert.match(runCli(['migrate'], env).stdout, /applied 0001_foundation/);
    assert.match(runCli(['migrate'], env).stdout, /up to date/);
    const seeded = runCli(['seed', 'demo'], env);
    assert.equal(seeded.status, 0, seeded.stderr);
    assert.match(seeded.stdout, /demo data loaded; demo merchant \d+, token stk_test_/);
    const created = runCli(['merchant', 'create', 'Shop One'], env);
    assert.equal(created.status, 0, created.stderr);
    const merchantId = /^merchant (\d+)/.exec(created.stdout)![1];
    assert.match(created.stdout, /client_secret sks_\w+/);
    const issued = runCli(['token', 'issue', merchantId, '--scopes', 'stock:read,catalog:read', '--expires-in', '3600'], env);
    assert.equal(issued.status, 0, issued.stderr);
    assert.match(issued.stdout, /\(stock:read catalog:read; expires \d{4}-/);
    const tokenId = /^token (\d+)/.exec(issued.stdout)![1];
    assert.match(runCli(['token', 'revoke', tokenId], env).stdout, new RegExp(`token ${tokenId} revoked at`));
    const missing = runCli(['token', 'revoke', '99999'], env);
    assert.equal(missing.status, 1);
    assert.equal(missing.stderr.trim(), 'stockist: token not found');
    const badScope = runCli(['token', 'issue', merchantId, '--scopes', 'root'], env);
    assert.equal(badScope.status, 1);
    assert.match(badScope.stderr, /scopes are a comma-separated list/);
    assert.equal(runCli(['--help'], env).status, 0);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists, approves and rejects refunds for manual review', async () => {
    const dir = tempDir();
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'cli.db')}`, REFUND_REVIEW: 'manual' };
    assert.equal(runCli(['seed', 'demo'], env).status, 0);
    const { loadConfig } = await import('../../src/config.ts');
    const { openStore } = await import('../../src/store/db.ts');
    const { buildApp } = await import('../../src/app.ts');
    const config = loadConfig({ ...env, TLS: 'off', LOG_LEVEL: 'silent' });
    const store = await openStore(config.databaseUrl);
    const app = await buildApp({ config, store, adminApiKey: 'cli-admin-key-0123456789' }, { logger: false });
    const token = fs.readFileSync(path.join(dir, 'demo-token-sandbox'), 'utf8').trim();
    const headers = { authorization: `Bearer ${token}` };
    const created = (await app.inject({ method: 'POST', url: '/openapi/v1/order/orders', headers, payload: { orderAddress: { country: 'US', phone: '1', recipient: 'R', province: 'CA' }, orderItemsList: [{ sku: 'DEMO-0001', quantity: 2 }] } })).json().data;
    const r1 = (await app.inject({ method: 'POST', url: `/openapi/v2/order/orders/${created}/refund`, headers, payload: { skuCode: 'DEMO-0001', quantity: 1 } })).json().data;
    const r2 = (await app.inject({ method: 'POST', url: `/openapi/v2/order/orders/${created}/refund`, headers, payload: { skuCode: 'DEMO-0001', quantity: 1 } })).json().data;
    await app.close();
    await store.close();
    const list = runCli(['refunds', 'list'], env);
    assert.equal(list.status, 0, list.stderr);
    assert.deepEqual(list.stdout.trim().split('\n').map((l) => l.split(' ')[0]), [r1, r2]);
    assert.match(runCli(['refunds', 'approve', r1], env).stdout, new RegExp(`refund ${r1}: refund_successfully`));
    assert.match(runCli(['refunds', 'reject', r2, '--reason', 'opened box'], env).stdout, /refund_failed \(opened box\)/);
    const again = runCli(['refunds', 'approve', r1], env);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /already decided/);
    assert.match(runCli(['refunds', 'list', '--status', 'refund_successfully'], env).stdout, new RegExp(`^${r1} `));
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
