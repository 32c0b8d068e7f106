import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PG_SKIP, emptyPgSchema, needRedis } from '../helpers.ts';
import { BIN, ROOT, exited, freePort, runCli, startProcess, tempDir } from './process.ts';

/** Issue 14 item 4: the server and CLI run the compiled bundle in dist/, without a TypeScript loader. */
describe('the compiled program (dist/)', () => {
  it('is built from src/ with source maps, and runs without tsx', async (t) => {
    // scripts/test.mjs rebuilds dist/ when src/ is newer; `npm install` builds it (prepare).
    assert.ok(fs.existsSync(path.join(ROOT, 'dist/stockist.js')), 'dist/stockist.js exists');
    const map = JSON.parse(fs.readFileSync(path.join(ROOT, 'dist/stockist.js.map'), 'utf8'));
    assert.ok(
      map.sources.some((s: string) => s.endsWith('src/cli/main.ts')),
      'with a source map back to src/',
    );

    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${path.join(dir, 'dist.db')}`,
      TLS: 'off',
      LOG_LEVEL: 'warn',
      ADMIN_API_KEY: 'dist-admin-key-0123456789',
      NODE_OPTIONS: '',
    };
    assert.equal(runCli(['migrate'], env).status, 0);
    // A resolve hook records every module resolved that is TypeScript or tsx: there must be none.
    const seen = path.join(dir, 'resolved-ts.txt');
    const hook = `export async function resolve(specifier, context, next) {
      const r = await next(specifier, context);
      if (/[\\\\/]node_modules[\\\\/]tsx[\\\\/]|\\.[cm]?ts$/.test(r.url)) (await import('node:fs')).appendFileSync(${JSON.stringify(seen)}, r.url + '\\n');
      return r;
    }`;
    const probe = path.join(dir, 'probe.mjs');
    fs.writeFileSync(probe, `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});\n`);
    const withProbe = { ...env, NODE_OPTIONS: `--import ${probe}` };

    const help = runCli(['--help'], withProbe);
    assert.equal(help.stderr, '', 'no warning: the build is current');
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /Usage: stockist/);

    const port = await freePort();
    const server = await startProcess(['serve', '--port', String(port)], withProbe, /Stockist listening/);
    t.after(() => server.child.kill('SIGKILL'));
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    assert.ok(!fs.existsSync(seen), `no TypeScript module or tsx was loaded:\n${fs.existsSync(seen) ? fs.readFileSync(seen, 'utf8') : ''}`);
    server.child.kill('SIGTERM');
    assert.equal(await exited(server.child), 0);
  });

  it('loads its lazily imported CommonJS dependencies from the bundle: pg and ioredis', { skip: PG_SKIP }, async (t) => {
    const redisUrl = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
    if (!(await needRedis(t, redisUrl))) return;
    const { url } = await emptyPgSchema(t, 'dist');
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const env = { DATA_DIR: dir, DATABASE_URL: url, REDIS_URL: redisUrl, TLS: 'off', LOG_LEVEL: 'warn', ADMIN_API_KEY: 'dist-admin-key-0123456789' };
    const server = await startProcess(['serve', '--port', String(port), '--seed', 'demo'], env, /Stockist listening/);
    t.after(() => server.child.kill('SIGKILL'));
    assert.match(server.output(), /postgres, role all/);
    assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
    const token = fs.readFileSync(path.join(dir, 'demo-token-sandbox'), 'utf8').trim();
    const stock = await fetch(`http://127.0.0.1:${port}/openapi/v1/product/stocks?skus=DEMO-0001`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(stock.status, 200);
    assert.ok(stock.headers.get('ratelimit-limit'), 'the rate limit (on Redis) answered');
    server.child.kill('SIGTERM');
    assert.equal(await exited(server.child), 0);
  });

  it('loads at start only what serving needs: not the S3 client, tar, qrcode, the password estimator, nor the country names in every language', async (t) => {
    // docs/performance.md, "Memory on Node 24": each was held for the process's life from start.
    // The demo seed on a new database checks its accounts' passwords: on the estimator's worker
    // thread (dist/password-worker.js, left out below), never in the server's own.
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const seen = path.join(dir, 'loaded.txt');
    const hook = `export async function resolve(specifier, context, next) {
      const r = await next(specifier, context);
      if (r.url.startsWith('file:')) (await import('node:fs')).appendFileSync(${JSON.stringify(seen)}, r.url + '\\n');
      return r;
    }`;
    const probe = path.join(dir, 'probe.mjs');
    fs.writeFileSync(probe, `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});\n`);
    const port = await freePort();
    // With BACKUP_S3_URL set: the S3 target exists from start, its SDK only at the first backup.
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: `sqlite:${path.join(dir, 'lazy.db')}`,
      TLS: 'off',
      LOG_LEVEL: 'warn',
      ADMIN_API_KEY: 'dist-admin-key-0123456789',
      BACKUP_S3_URL: 's3://stockist-backups/lazy',
      AWS_REGION: 'eu-west-1',
      NODE_OPTIONS: `--import ${probe}`,
    };
    const server = await startProcess(['serve', '--port', String(port), '--seed', 'demo'], env, /Stockist listening/);
    t.after(() => server.child.kill('SIGKILL'));
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    const chunks = [...new Set(fs.readFileSync(seen, 'utf8').split('\n'))].filter(
      (u) => u.includes('/dist/') && u.endsWith('.js') && !u.endsWith('/dist/password-worker.js'),
    );
    assert.ok(chunks.length > 1, 'the hook saw the bundle load');
    const sources = chunks.flatMap((u) => JSON.parse(fs.readFileSync(`${new URL(u).pathname}.map`, 'utf8')).sources as string[]);
    const notNeeded = sources.filter((s) => /node_modules\/(@aws-sdk|@smithy|tar|qrcode|pngjs|@zxcvbn-ts\/[^/]+)\/|i18n-iso-countries\/langs\//.test(s));
    assert.deepEqual(notNeeded, []);
    assert.ok(
      sources.some((s) => s.endsWith('src/services/backup-targets.ts')),
      'the backup targets themselves are loaded',
    );
    server.child.kill('SIGTERM');
    assert.equal(await exited(server.child), 0);
  });

  it('says how to build it when dist/ is missing', () => {
    const dir = tempDir();
    // bin/ as a deployment copies it (stockist.js and the Node version check beside it).
    fs.cpSync(path.dirname(BIN), path.join(dir, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), '{"type":"module"}\n');
    const r = spawnSync(process.execPath, [path.join(dir, 'bin/stockist.js'), '--help'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 1);
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      new RegExp(
        `^stockist: the compiled program is missing \\(${path.join(dir, 'dist/stockist.js').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\)\\.\\nBuild it with \`npm install\` \\(or \`npm run build\`\\)`,
      ),
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
