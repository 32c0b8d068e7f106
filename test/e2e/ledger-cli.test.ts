import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { runCli, tempDir } from './process.ts';

/** SPEC §15 on the command line: `stockist account show|top-up|adjust` and `stockist ledger verify` (exit 1 naming each breach). */
describe('stockist account and ledger verify (real processes)', () => {
  it('tops up and adjusts a merchant account, verifies the ledger, and fails naming a breach', (c) => {
    const dir = tempDir();
    c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'money.db');
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${file}` };
    const seeded = runCli(['seed', 'demo'], env);
    assert.equal(seeded.status, 0, seeded.stderr);
    const merchantId = /demo merchant (\d+)/.exec(seeded.stdout)![1];

    const topUp = runCli(['account', 'top-up', merchantId, '120.50', '--reference', 'wire 2026-11-27'], env);
    assert.equal(topUp.status, 0, topUp.stderr);
    assert.match(topUp.stdout, /^entry \d+: top-up 120\.50 USD, balance -?\d+\.\d\d\n$/);
    const repeat = runCli(['account', 'top-up', merchantId, '120.50', '--reference', 'wire 2026-11-27'], env);
    assert.match(repeat.stdout, /^already recorded: entry/);
    const adjusted = runCli(['account', 'adjust', merchantId, '-0.50', '--reason', 'bank fee'], env);
    assert.equal(adjusted.status, 0, adjusted.stderr);
    assert.match(adjusted.stdout, /adjustment -0\.50 USD/);
    assert.equal(runCli(['account', 'top-up', merchantId, '1.005', '--reference', 'x'], env).status, 1);
    assert.equal(runCli(['account', 'adjust', merchantId, '5'], env).status, 1, '--reason is required');
    const shown = runCli(['account', 'show', merchantId], env);
    assert.match(shown.stdout, new RegExp(`^merchant:${merchantId}:sandbox  balance -?\\d+\\.\\d\\d USD  on_account`));

    const ok = runCli(['ledger', 'verify'], env);
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    assert.match(ok.stdout, /every invariant holds\n$/);

    const db = new Database(file);
    db.prepare('update ledger_accounts set balance_cents = balance_cents + 7 where merchant_id = ?').run(Number(merchantId));
    db.close();
    const broken = runCli(['ledger', 'verify'], env);
    assert.equal(broken.status, 1);
    // The balance no longer equals its lines, nor the newest entry's balanceAfter.
    assert.match(broken.stdout, new RegExp(`^BREACH account_balance: account merchant:${merchantId}:sandbox: balance .+ but its lines sum to .+\\n`, 'm'));
    assert.match(
      broken.stdout,
      new RegExp(`^BREACH entry_chain: account merchant:${merchantId}:sandbox: balance .+ but its newest entry's balanceAfter is .+\\n`, 'm'),
    );
    assert.match(broken.stdout, /2 breaches\n$/);
  });

  it('refuses an adjustment below a prepaid floor with the numbers, and the ledger still verifies', (c) => {
    const dir = tempDir();
    c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'floor.db');
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${file}` };
    const seeded = runCli(['seed', 'demo'], env);
    assert.equal(seeded.status, 0, seeded.stderr);
    const merchantId = /demo merchant (\d+)/.exec(seeded.stdout)![1];
    assert.equal(runCli(['account', 'top-up', merchantId, '10.00', '--reference', 'floor-1'], env).status, 0);
    // The terms as the operator API would set them: prepaid, a credit limit of exactly what is owed beyond the balance, plus 5.00.
    const db = new Database(file);
    db.prepare(
      "update ledger_accounts set billing_mode = 'prepaid', credit_limit_cents = max(0, -balance_cents) + 500 where merchant_id = ? and kind = 'merchant' and environment = 'sandbox'",
    ).run(Number(merchantId));
    const { balance, credit_limit: limit } = db
      .prepare(
        "select balance_cents as balance, credit_limit_cents as credit_limit from ledger_accounts where merchant_id = ? and kind = 'merchant' and environment = 'sandbox'",
      )
      .get(Number(merchantId)) as { balance: number; credit_limit: number };
    db.close();
    const available = balance + limit;
    const refused = runCli(['account', 'adjust', merchantId, `-${((available + 1) / 100).toFixed(2)}`, '--reason', 'chargeback'], env);
    assert.equal(refused.status, 1, refused.stdout);
    assert.match(
      refused.stderr,
      new RegExp(
        `stockist: an adjustment of -${((available + 1) / 100).toFixed(2).replace('.', '\\.')} would take this prepaid account from .+ below its floor of -${(limit / 100).toFixed(2).replace('.', '\\.')}`,
      ),
    );
    assert.equal(refused.stdout, '');
    const ok = runCli(['ledger', 'verify'], env);
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    const within = runCli(['account', 'adjust', merchantId, `-${(available / 100).toFixed(2)}`, '--reason', 'chargeback'], env);
    assert.equal(within.status, 0, within.stderr);
    assert.equal(runCli(['ledger', 'verify'], env).status, 0);
  });

  it('exports the journal of a month across merchants as CSV (stdout or --output), and refuses a malformed period', (c) => {
    const dir = tempDir();
    c.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'journal.db');
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${file}` };
    const seeded = runCli(['seed', 'demo'], env);
    assert.equal(seeded.status, 0, seeded.stderr);
    const merchantId = /demo merchant (\d+)/.exec(seeded.stdout)![1];
    assert.equal(runCli(['account', 'top-up', merchantId, '120.50', '--reference', 'BANK-77'], env).status, 0);
    const month = new Date().toISOString().slice(0, 7);
    const out = runCli(['ledger', 'export', '--month', month], env);
    assert.equal(out.status, 0, out.stderr);
    assert.ok(out.stdout.startsWith('\uFEFFdate,created_at,entry_id,type,environment,merchant_id,merchant,debit_account,credit_account,amount,currency,'));
    const topUp = out.stdout.split('\r\n').find((l) => l.includes('BANK-77'));
    assert.match(topUp ?? '', new RegExp(`,top_up,sandbox,${merchantId},[^,]+,supplier:cash:sandbox,merchant:${merchantId}:sandbox,120\\.50,USD,BANK-77,`));
    const written = path.join(dir, 'journal.csv');
    const toFile = runCli(['ledger', 'export', '--month', month, '--output', written], env);
    assert.equal(toFile.status, 0, toFile.stderr);
    assert.equal(toFile.stdout, '');
    assert.equal(fs.readFileSync(written, 'utf8'), out.stdout, 'the same file');
    const bad = runCli(['ledger', 'export', '--month', '2026-13'], env);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /stockist: month: must be a month as YYYY-MM/);
    assert.equal(bad.stdout, '');
    const days = runCli(['ledger', 'export', '--from', '2026-11-05', '--to', '2026-11-01'], env);
    assert.equal(days.status, 1);
    assert.match(days.stderr, /to: must not be before from/);
  });
});
