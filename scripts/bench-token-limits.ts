/**
 * The token endpoint's limits against a real server on PostgreSQL (docs/security.md "Abuse"):
 *
 *   node --import tsx scripts/bench-token-limits.ts [--root DIR]
 *
 * 1. 500 concurrent wrong client secrets for one client from one address (OAUTH_FAILURE_LIMIT 10):
 *    how many were checked (401) and how many refused unchecked (429).
 * 2. 40 wrong secrets behind one proxy (TRUST_PROXY=1), each with a different address written to
 *    the left of the one the proxy appended: the client's choice must not give it new buckets.
 * 3. 300 concurrent right-secret grants for one client: how many token pairs were issued — from one
 *    address, and spread over 30 addresses (as a fleet behind several NATs would send them).
 *
 * PostgreSQL at TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), in a schema of
 * its own, dropped afterwards. `--root DIR` serves another checkout's sources (e.g. an earlier
 * commit: `git archive <commit> bin src package.json | tar -x -C DIR`) to compare before and after.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({ options: { root: { type: 'string', default: ROOT } } });
const PG = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_KEY = 'bench-token-limits-admin-key';

const schema = `bench_token_${Date.now().toString(36)}`;
const client = new pg.Client({ connectionString: PG });
await client.connect();
await client.query(`CREATE SCHEMA ${schema}`);
const url = new URL(PG);
url.searchParams.set('options', `-c search_path=${schema}`);
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stockist-token-limits-'));
const child = spawn(process.execPath, ['bin/stockist.js', 'serve', '--port', '0'], {
  cwd: path.resolve(args.root),
  env: {
    ...process.env,
    STOCKIST_SOURCES: '1',
    TLS: 'off',
    TRUST_PROXY: '1',
    DATA_DIR: dataDir,
    ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    DATABASE_URL: url.toString(),
    REDIS_URL: '',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
const port = await new Promise<number>((resolve, reject) => {
  let out = '';
  const on = (d: Buffer) => {
    out += d;
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (m) resolve(Number(m[1]));
  };
  child.stdout.on('data', on);
  child.stderr.on('data', on);
  child.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
});
const base = `http://127.0.0.1:${port}`;

async function newClient(name: string): Promise<{ clientId: string; clientSecret: string }> {
  const r = await fetch(`${base}/admin/v1/merchants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  return (await r.json()).data;
}
async function grant(clientId: string, secret: string, forwardedFor?: string): Promise<number> {
  const r = await fetch(`${base}/openapi/oauth/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
    body: 'grant_type=client_credentials',
  });
  await r.arrayBuffer();
  return r.status;
}
function tally(statuses: number[]): string {
  const counts = new Map<number, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n}× ${status}`).join(', ');
}

try {
  const guessed = await newClient('Guessed');
  console.log(
    `500 concurrent wrong secrets, one client, one address: ${tally(await Promise.all(Array.from({ length: 500 }, (_, i) => grant(guessed.clientId, `sks_wrong_${i}`))))}`,
  );
  const rotating = await newClient('Rotating');
  const rotated: number[] = [];
  for (let i = 0; i < 40; i++) rotated.push(await grant(rotating.clientId, `sks_wrong_${i}`, `198.51.100.${i}, 203.0.113.7`));
  console.log(`40 wrong secrets, X-Forwarded-For rotated left of the proxy's entry (TRUST_PROXY=1): ${tally(rotated)}`);
  for (const addresses of [1, 30]) {
    const minting = await newClient(`Minting ${addresses}`);
    const started = performance.now();
    const grants = await Promise.all(Array.from({ length: 300 }, (_, i) => grant(minting.clientId, minting.clientSecret, `203.0.113.${i % addresses}`)));
    console.log(
      `300 concurrent right-secret grants, one client, from ${addresses} address(es), in ${((performance.now() - started) / 1000).toFixed(2)} s: ${tally(grants)}`,
    );
  }
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
