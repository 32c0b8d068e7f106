import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DIALECTS, emptyPgSchema } from '../helpers.ts';
import { runCli, tempDir } from './process.ts';

/**
 * Issue 41 item 6 on the command line: a database whose money is in one currency is not served or
 * changed in another. `serve` (and every command that opens the database) stops with one line
 * naming both currencies and what to do; a database without money yet may still choose.
 */

/** A database of its own for the spawned processes: a SQLite file, or an empty PostgreSQL schema. */
async function databaseFor(c: TestContext, dialect: 'sqlite' | 'postgres') {
  const dir = tempDir();
  c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const url = dialect === 'sqlite' ? `sqlite:${path.join(dir, 'money.db')}` : (await emptyPgSchema(c, 'currency')).url;
  return { DATA_DIR: dir, DATABASE_URL: url, TLS: 'off', PORT: '0', ADMIN_API_KEY: 'currency-admin-key-0123456789' };
}

/** stderr without the line every command starts with (`stockist: database …`). */
const saidLines = (stderr: string) =>
  stderr
    .trim()
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('stockist: database '));

for (const dialect of DIALECTS) {
  describe(`start-up with another SUPPLIER_CURRENCY (real processes, ${dialect})`, () => {
    it('refuses to serve, or to post, money in another currency than the database holds, in one line', { timeout: 300_000 }, async (c) => {
      const env = await databaseFor(c, dialect);
      // The demo data includes money: the demo merchant's opening payment, in USD.
      const seeded = runCli(['seed', 'demo'], { ...env, SUPPLIER_CURRENCY: 'USD' });
      assert.equal(seeded.status, 0, seeded.stderr);
      const merchantId = /demo merchant (\d+)/.exec(seeded.stdout)![1];

      for (const args of [['serve'], ['account', 'top-up', merchantId, '5.00', '--reference', 'EUR-1']]) {
        const r = runCli(args, { ...env, SUPPLIER_CURRENCY: 'EUR' });
        assert.equal(r.status, 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
        const lines = saidLines(r.stderr);
        assert.equal(lines.length, 1, r.stderr);
        assert.equal(
          lines[0],
          'stockist: SUPPLIER_CURRENCY is EUR, but this database already holds money in USD, and amounts cannot change currency: ' +
            'start with SUPPLIER_CURRENCY=USD, or point DATABASE_URL at a new database for EUR',
        );
        assert.equal(r.stdout, '', 'nothing started, nothing posted');
      }
      const shown = runCli(['account', 'show', merchantId], { ...env, SUPPLIER_CURRENCY: 'USD' });
      assert.equal(shown.status, 0, shown.stderr);
      assert.match(shown.stdout, /balance 500\.00 USD/, 'the refused top-up posted nothing');
      assert.doesNotMatch(shown.stdout, /EUR/);
    });

    it('lets a database without money choose its currency', { timeout: 300_000 }, async (c) => {
      const env = await databaseFor(c, dialect);
      assert.equal(runCli(['migrate'], env).status, 0);
      const made = runCli(['merchant', 'create', 'Newcomer'], { ...env, SUPPLIER_CURRENCY: 'USD' });
      assert.equal(made.status, 0, made.stderr);
      const merchantId = /merchant (\d+)/.exec(made.stdout)![1];
      const paid = runCli(['account', 'top-up', merchantId, '5.00', '--reference', 'EUR-1'], { ...env, SUPPLIER_CURRENCY: 'EUR' });
      assert.equal(paid.status, 0, paid.stderr);
      assert.match(paid.stdout, /top-up 5\.00 EUR, balance 5\.00/);
      // From then on the database's money is in EUR.
      const back = runCli(['account', 'show', merchantId], { ...env, SUPPLIER_CURRENCY: 'USD' });
      assert.equal(back.status, 1);
      assert.match(saidLines(back.stderr)[0], /^stockist: SUPPLIER_CURRENCY is USD, but this database already holds money in EUR/);
    });
  });
}
