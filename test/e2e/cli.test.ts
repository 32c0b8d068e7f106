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
});
