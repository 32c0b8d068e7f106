import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PG_SKIP, emptyPgSchema } from '../helpers.ts';
import { spawnSync } from 'node:child_process';
import { BIN, ROOT, runCli, tempDir } from './process.ts';

const DB_LINE = /^stockist: database (\S+)$/;

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
    // A business manager invitation: a one-time link on PUBLIC_BASE_URL, valid 72 hours.
    const invited = runCli(['merchant', 'invite', merchantId, 'Dev@Shop.example', '--role', 'developer'], {
      ...env,
      PUBLIC_BASE_URL: 'https://api.shop.example',
    });
    assert.equal(invited.status, 0, invited.stderr);
    assert.match(
      invited.stdout,
      /^invited Dev@Shop\.example \(developer\) to merchant \d+; the link works once, until \d{4}-.+Z:\nhttps:\/\/api\.shop\.example\/manager\/invitations\/[A-Za-z0-9]{43}\n$/,
    );
    const twice = runCli(['merchant', 'invite', merchantId, 'dev@shop.example', '--role', 'developer'], env);
    assert.equal(twice.status, 0, 'an open invitation does not block a new one');
    assert.equal(runCli(['merchant', 'invite', merchantId, 'x@shop.example', '--role', 'owner'], env).status, 1);
    assert.equal(
      runCli(['merchant', 'invite', '99999', 'x@shop.example', '--role', 'viewer'], env).stderr.trim().split('\n').at(-1),
      'stockist: merchant not found',
    );
    const issued = runCli(['token', 'issue', merchantId, '--scopes', 'stock:read,catalog:read', '--expires-in', '3600'], env);
    assert.equal(issued.status, 0, issued.stderr);
    assert.match(issued.stdout, /\(stock:read catalog:read; expires \d{4}-/);
    const tokenId = /^token (\d+)/.exec(issued.stdout)![1];
    assert.match(runCli(['token', 'revoke', tokenId], env).stdout, new RegExp(`token ${tokenId} revoked at`));
    const missing = runCli(['token', 'revoke', '99999'], env);
    assert.equal(missing.status, 1);
    assert.equal(missing.stderr.trim().split('\n').at(-1), 'stockist: token not found');
    const badScope = runCli(['token', 'issue', merchantId, '--scopes', 'root'], env);
    assert.equal(badScope.status, 1);
    assert.match(badScope.stderr, /scopes are a comma-separated list/);
    // SPEC §1 Text and operator ids hold on the command line too.
    const control = runCli(['merchant', 'create', 'Bad\u001bName'], env);
    assert.equal(control.status, 1);
    assert.match(control.stderr, /name must not contain control characters \(U\+001B/);
    const unsafe = runCli(['token', 'revoke', '9007199254740993'], env);
    assert.equal(unsafe.status, 1);
    assert.match(unsafe.stderr, /positive whole number/);
    assert.equal(runCli(['--help'], env).status, 0);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('lists, approves and rejects refunds for manual review, and shows refunds the worker gave up on', async () => {
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
    const created = (
      await app.inject({
        method: 'POST',
        url: '/openapi/v1/order/orders',
        headers,
        payload: { orderAddress: { country: 'US', phone: '1', recipient: 'R', province: 'CA' }, orderItemsList: [{ sku: 'DEMO-0001', quantity: 3 }] },
      })
    ).json().data;
    const r1 = (
      await app.inject({ method: 'POST', url: `/openapi/v2/order/orders/${created}/refund`, headers, payload: { skuCode: 'DEMO-0001', quantity: 1 } })
    ).json().data;
    const r2 = (
      await app.inject({ method: 'POST', url: `/openapi/v2/order/orders/${created}/refund`, headers, payload: { skuCode: 'DEMO-0001', quantity: 1 } })
    ).json().data;
    const r3 = (
      await app.inject({ method: 'POST', url: `/openapi/v2/order/orders/${created}/refund`, headers, payload: { skuCode: 'DEMO-0001', quantity: 1 } })
    ).json().data;
    // The worker fails on r3 once and, with REFUND_MAX_ATTEMPTS=1, parks it (only r3 is due: r1, r2 are claimed by "another worker").
    const { RefundWorker } = await import('../../src/jobs/refund.worker.ts');
    await store.db
      .updateTable('refunds')
      .set({ claimed_by: 'elsewhere', claimed_until: Date.now() + 3600_000 })
      .where('id', 'in', [Number(r1), Number(r2)])
      .execute();
    const poisoned = new RefundWorker({
      store,
      config: { refundReview: 'auto', refundAutoDelayMs: 0, refundMaxAttempts: 1 },
      hooks: {
        record: async () => {
          throw new Error('ledger\nexploded');
        },
      },
    });
    assert.equal(await poisoned.runOnce(), 0);
    await store.db.updateTable('refunds').set({ claimed_by: null, claimed_until: null }).execute();
    await app.close();
    await store.close();
    const list = runCli(['refunds', 'list'], env);
    assert.equal(list.status, 0, list.stderr);
    assert.deepEqual(
      list.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(' ')[0]),
      [r1, r2, r3],
    );
    assert.match(list.stdout.trim().split('\n')[2], /MANUAL REVIEW after 1 attempt: Error: ledger exploded$/);
    assert.deepEqual(
      runCli(['refunds', 'list', '--manual-review'], env)
        .stdout.trim()
        .split('\n')
        .map((l) => l.split(' ')[0]),
      [r3],
    );
    assert.match(runCli(['refunds', 'approve', r1], env).stdout, new RegExp(`refund ${r1}: refund_successfully`));
    assert.match(runCli(['refunds', 'reject', r2, '--reason', 'opened box'], env).stdout, /refund_failed \(opened box\)/);
    const again = runCli(['refunds', 'approve', r1], env);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /already decided/);
    assert.match(runCli(['refunds', 'list', '--status', 'refund_successfully'], env).stdout, new RegExp(`^${r1} `));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('creates, lists, disables, enables, re-roles and resets console staff accounts, each change audited as the OS user', async () => {
    const dir = tempDir();
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'cli.db')}` };
    const piped = (args: string[], input: string) => {
      const r = spawnSync(process.execPath, [BIN, ...args], {
        cwd: ROOT,
        env: { ...process.env, LOG_LEVEL: 'warn', ...env },
        input,
        encoding: 'utf8',
        timeout: 60_000,
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    assert.equal(runCli(['migrate'], env).status, 0);
    const created = runCli(['operator', 'create', 'Ops@Example.com', '--role', 'support'], env);
    assert.equal(created.status, 0, created.stderr);
    const generated = /^operator Ops@Example\.com \(support\) created\npassword ([A-Za-z0-9]{20}) {2}\(shown once; /.exec(created.stdout);
    assert.ok(generated, created.stdout);
    const duplicate = runCli(['operator', 'create', 'ops@example.COM', '--role', 'owner'], env);
    assert.equal(duplicate.status, 1);
    assert.match(duplicate.stderr, /a staff account ops@example\.com already exists/);
    assert.match(runCli(['operator', 'create', 'x@example.com', '--role', 'admin'], env).stderr, /Allowed choices are owner, support, warehouse/);
    assert.equal(runCli(['operator', 'create', 'x@example.com'], env).status, 1, '--role is required');
    const short = piped(['operator', 'create', 'pick@example.com', '--role', 'warehouse', '--password-stdin'], 'too short\n');
    assert.equal(short.status, 1);
    assert.match(short.stderr, /password: must be at least 12 characters/);
    const own = piped(['operator', 'create', 'pick@example.com', '--role', 'warehouse', '--password-stdin'], 'a long chosen passphrase\n');
    assert.equal(own.status, 0, own.stderr);
    assert.equal(own.stdout, 'operator pick@example.com (warehouse) created\n', 'a piped password is not printed');
    const list = runCli(['operator', 'list'], env);
    assert.deepEqual(
      list.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('  ').slice(0, 3).join(' ')),
      ['Ops@Example.com support active', 'pick@example.com warehouse active'],
    );
    assert.match(runCli(['operator', 'disable', 'OPS@example.com'], env).stdout, /^operator Ops@Example\.com disabled; 0 sessions ended$/m);
    assert.match(runCli(['operator', 'list'], env).stdout, /Ops@Example\.com {2}support {2}disabled/);
    const enabled = runCli(['operator', 'enable', 'ops@example.com'], env);
    assert.equal(enabled.status, 0, enabled.stderr);
    assert.equal(enabled.stdout, 'operator Ops@Example.com enabled\n');
    const promoted = runCli(['operator', 'set-role', 'ops@example.com', '--role', 'owner'], env);
    assert.equal(promoted.status, 0, promoted.stderr);
    assert.equal(promoted.stdout, 'operator Ops@Example.com is now owner\n');
    assert.match(runCli(['operator', 'set-role', 'ops@example.com', '--role', 'root'], env).stderr, /Allowed choices are owner, support, warehouse/);
    assert.equal(runCli(['operator', 'set-role', 'ops@example.com'], env).status, 1, '--role is required');
    assert.equal(
      runCli(['operator', 'enable', 'nobody@example.com'], env).stderr.trim().split('\n').at(-1),
      'stockist: staff account nobody@example.com not found',
    );
    assert.match(runCli(['operator', 'list'], env).stdout, /Ops@Example\.com {2}owner {2}active/);
    const reset = runCli(['operator', 'reset-password', 'pick@example.com'], env);
    assert.equal(reset.status, 0, reset.stderr);
    const fresh = /password ([A-Za-z0-9]{20}) {2}\(shown once\)/.exec(reset.stdout)![1];
    // --link: a one-time link on which the staff member chooses the password, as an owner's console reset makes.
    const link = runCli(['operator', 'reset-password', 'pick@example.com', '--link'], env);
    assert.equal(link.status, 0, link.stderr);
    assert.match(
      link.stdout,
      /^password reset link for operator pick@example\.com; it works once, until \S+, and ends the account's sessions when used:\nhttps?:\/\/\S+:\d+\/console\/password-reset\/[A-Za-z0-9]{43}\n$/,
    );
    assert.match(
      runCli(['operator', 'reset-password', 'pick@example.com', '--link', '--password-stdin'], env).stderr,
      /--link and --password-stdin exclude each other/,
    );
    assert.equal(
      runCli(['operator', 'disable', 'nobody@example.com'], env).stderr.trim().split('\n').at(-1),
      'stockist: staff account nobody@example.com not found',
    );

    const { openStore } = await import('../../src/store/db.ts');
    const { verifyPassword } = await import('../../src/services/accounts.service.ts');
    const store = await openStore(env.DATABASE_URL);
    try {
      const pick = await store.db.selectFrom('staff_users').selectAll().where('email_key', '=', 'pick@example.com').executeTakeFirstOrThrow();
      assert.match(pick.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      assert.equal(await verifyPassword(pick.password_hash, fresh), true);
      assert.equal(await verifyPassword(pick.password_hash, 'a long chosen passphrase'), false, 'the old password is gone');
      assert.equal(await verifyPassword(pick.password_hash, fresh), true, 'a link changes nothing until it is used');
      const audit = await store.db.selectFrom('audit_log').select(['actor_kind', 'action', 'target']).orderBy('id').execute();
      assert.deepEqual(
        audit.map((a) => `${a.actor_kind} ${a.action} ${a.target}`),
        [
          'cli staff.create staff:ops@example.com',
          'cli staff.create staff:pick@example.com',
          'cli staff.disable staff:ops@example.com',
          'cli staff.enable staff:ops@example.com',
          'cli staff.set_role staff:ops@example.com',
          'cli staff.reset_password staff:pick@example.com',
          'cli staff.create_password_reset staff:pick@example.com',
        ],
      );
    } finally {
      await store.close();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('resets a business manager user’s two-factor (lost phone and recovery codes): key and codes gone, sessions ended, audited (issue 29, 13)', async () => {
    const dir = tempDir();
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'two-factor.db')}` };
    assert.equal(runCli(['migrate'], env).status, 0);
    const merchantId = /^merchant (\d+)/.exec(runCli(['merchant', 'create', 'Locked Shop'], env).stdout)![1];
    const invited = runCli(['merchant', 'invite', merchantId, 'locked@shop.example', '--role', 'admin'], env);
    const token = /invitations\/([A-Za-z0-9]{43})/.exec(invited.stdout)![1];

    const { openStore } = await import('../../src/store/db.ts');
    const users = {
      ...(await import('../../src/services/merchant-invitations.service.ts')),
      ...(await import('../../src/services/manager-sessions.service.ts')),
    };
    const { replaceRecoveryCodes } = await import('../../src/store/merchant-users.repository.ts');
    const { forMerchant } = await import('../../src/store/tenancy.ts');
    const store = await openStore(env.DATABASE_URL);
    try {
      // The person enrolled (the key and codes as enrolment leaves them) and is signed in.
      const now = Date.now();
      const user = await users.acceptInvitation(store.db, token, 'a long chosen passphrase', 'test', now);
      await store.db.updateTable('merchant_users').set({ totp_secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP' }).where('id', '=', user.id).execute();
      await store.db.transaction().execute((trx) => replaceRecoveryCodes(forMerchant(trx, user.merchant_id), user.id, ['a', 'b'], now));
      const limits = { idleMs: 60_000, maxMs: 3_600_000 };
      await users.signIn(store.db, { email: 'locked@shop.example', password: 'a long chosen passphrase', address: null, requestId: 'test' }, limits, now);

      const reset = runCli(['merchant', 'reset-two-factor', merchantId, 'Locked@Shop.example'], env);
      assert.equal(reset.status, 0, reset.stderr);
      assert.equal(
        reset.stdout,
        `two-factor sign-in of locked@shop.example at merchant ${merchantId} is off; 1 session ended. They sign in with their password and turn it on again.\n`,
      );
      const row = await store.db.selectFrom('merchant_users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
      assert.equal(row.totp_secret, null);
      assert.deepEqual(await store.db.selectFrom('merchant_recovery_codes').selectAll().execute(), []);
      assert.deepEqual(await store.db.selectFrom('manager_sessions').selectAll().execute(), []);
      const audit = await store.db
        .selectFrom('audit_log')
        .select(['actor_kind', 'action', 'target'])
        .where('action', '=', 'merchant_user.reset_two_factor')
        .execute();
      assert.deepEqual(audit, [{ actor_kind: 'cli', action: 'merchant_user.reset_two_factor', target: 'merchant_user:locked@shop.example' }]);
    } finally {
      await store.close();
    }
    const again = runCli(['merchant', 'reset-two-factor', merchantId, 'locked@shop.example'], env);
    assert.equal(again.status, 1);
    assert.equal(again.stderr.trim().split('\n').at(-1), 'stockist: two-factor sign-in is not on for this account');
    assert.equal(
      runCli(['merchant', 'reset-two-factor', merchantId, 'nobody@shop.example'], env).stderr.trim().split('\n').at(-1),
      'stockist: team member not found',
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names the database it uses on stderr, one line, for every command', () => {
    const dir = tempDir();
    const file = path.join(dir, 'named.db');
    const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${file}` };
    const commands = [
      ['migrate'],
      ['seed', 'demo'],
      ['merchant', 'create', 'Named'],
      ['token', 'issue', '1'],
      ['refunds', 'list'],
      ['operator', 'list'],
      ['import', path.join(dir, 'missing.csv')],
    ];
    for (const args of commands) {
      const r = runCli(args, env);
      const lines = r.stderr.split('\n').filter((l) => DB_LINE.test(l));
      assert.deepEqual(lines, [`stockist: database sqlite:${file}`], `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.split('\n')[0], lines[0], 'it comes first');
    }
    // A PostgreSQL URL is named without its password.
    const pg = runCli(['refunds', 'list'], { DATA_DIR: dir, DATABASE_URL: 'postgres://stockist:s3cret@127.0.0.1:9/none', DB_CONNECT_TIMEOUT_MS: '200' });
    assert.match(pg.stderr, /^stockist: database postgres:\/\/stockist@127\.0\.0\.1:9\/none\n/);
    assert.doesNotMatch(pg.stderr, /s3cret/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to create a database for commands that work on existing data, naming the path and how to point elsewhere', () => {
    const elsewhere = tempDir();
    for (const args of [
      ['import', path.join(elsewhere, 'p.csv')],
      ['merchant', 'create', 'Lost'],
      ['token', 'revoke', '1'],
      ['refunds', 'list'],
      ['refunds', 'approve', '1'],
    ]) {
      // Run from a folder without data, with neither DATA_DIR nor DATABASE_URL: ./data/stockist.db there.
      const r = runCli(args, { DATA_DIR: '', DATABASE_URL: '' }, elsewhere);
      assert.equal(r.status, 1, args.join(' '));
      const expected = path.join(elsewhere, 'data', 'stockist.db');
      assert.equal(r.stderr.split('\n')[0], `stockist: database sqlite:${expected}`);
      assert.match(
        r.stderr,
        new RegExp(`no database at ${expected.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(from the default DATA_DIR \\./data, relative to `),
      );
      assert.match(r.stderr, /DATABASE_URL=sqlite:<file> or DATA_DIR=<folder>/);
      assert.ok(!fs.existsSync(path.join(elsewhere, 'data')), `${args.join(' ')} created nothing`);
    }
    // DATA_DIR relative to the current folder; migrate and seed create the database there.
    assert.equal(
      runCli(['merchant', 'create', 'X'], { DATA_DIR: 'shop', DATABASE_URL: '' }, elsewhere).stderr.includes('(from DATA_DIR=shop, relative to'),
      true,
    );
    const migrated = runCli(['migrate'], { DATA_DIR: 'shop', DATABASE_URL: '' }, elsewhere);
    assert.equal(migrated.status, 0, migrated.stderr);
    assert.equal(migrated.stderr.trim(), `stockist: database sqlite:${path.join(elsewhere, 'shop', 'stockist.db')}`);
    assert.equal(runCli(['merchant', 'create', 'Found'], { DATA_DIR: 'shop', DATABASE_URL: '' }, elsewhere).status, 0);
    // An existing file that Stockist never set up is refused too.
    fs.writeFileSync(path.join(elsewhere, 'empty.db'), '');
    const empty = runCli(['refunds', 'list'], { DATABASE_URL: 'sqlite:empty.db' }, elsewhere);
    assert.equal(empty.status, 1);
    assert.match(empty.stderr, /empty\.db has no Stockist tables; nothing was created/);
    fs.rmSync(elsewhere, { recursive: true, force: true });
  });

  it('refuses a PostgreSQL schema without Stockist tables, and works once it is migrated', { skip: PG_SKIP }, async (t) => {
    const { schema, client, url } = await emptyPgSchema(t, 'cli');
    const env = { DATABASE_URL: url, DATA_DIR: tempDir() };
    const refused = runCli(['merchant', 'create', 'Nobody'], env);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /has no Stockist tables; nothing was created/);
    const { rows } = await client.query('select count(*)::int as n from information_schema.tables where table_schema = $1', [schema]);
    assert.equal(rows[0].n, 0, 'no table was created');
    assert.equal(runCli(['migrate'], env).status, 0);
    assert.equal(runCli(['merchant', 'create', 'Somebody'], env).status, 0);
    fs.rmSync(env.DATA_DIR, { recursive: true, force: true });
  });

  for (const dialect of ['sqlite', 'postgres'] as const) {
    it(`audits merchant, token and import commands as the OS user, never with a secret (${dialect})`, {
      skip: dialect === 'postgres' ? PG_SKIP : false,
    }, async (t) => {
      const dir = tempDir();
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      let env: Record<string, string>;
      let auditRows: () => Promise<
        {
          actor_kind: string;
          actor_id: string;
          action: string;
          target: string;
          before_summary: string | null;
          after_summary: string | null;
          request_id: string | null;
        }[]
      >;
      if (dialect === 'sqlite') {
        env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${path.join(dir, 'cli.db')}` };
        auditRows = async () => {
          const { openStore } = await import('../../src/store/db.ts');
          const store = await openStore(env.DATABASE_URL);
          try {
            return await store.db.selectFrom('audit_log').selectAll().orderBy('id').execute();
          } finally {
            await store.close();
          }
        };
      } else {
        const { schema, client, url } = await emptyPgSchema(t, 'cliaudit');
        env = { DATA_DIR: dir, DATABASE_URL: url };
        auditRows = async () => (await client.query(`select * from ${schema}.audit_log order by id`)).rows;
      }
      assert.equal(runCli(['migrate'], env).status, 0);
      const created = runCli(['merchant', 'create', 'Shop One'], env);
      assert.equal(created.status, 0, created.stderr);
      const merchantId = /^merchant (\d+)/.exec(created.stdout)![1];
      const secret = /client_secret (sks_\w+)/.exec(created.stdout)![1];
      const issued = runCli(['token', 'issue', merchantId, '--scopes', 'stock:read'], env);
      assert.equal(issued.status, 0, issued.stderr);
      const tokenId = /^token (\d+)/.exec(issued.stdout)![1];
      const token = issued.stdout.trim().split('\n').at(-1)!;
      assert.equal(runCli(['token', 'revoke', tokenId], env).status, 0);
      const catalogue = path.join(dir, 'catalogue.json');
      fs.writeFileSync(
        catalogue,
        JSON.stringify({
          warehouses: [{ warehouseCode: 'W1', name: 'One', countryCode: 'US' }],
          products: [{ sku: 'S1', name: 'One', price: 1, weightGrams: 1 }],
        }),
      );
      const stocks = path.join(dir, 'stocks.csv');
      fs.writeFileSync(stocks, 'sku,warehouseCode,qty\nS1,W1,5\n');
      const imported = runCli(['import', catalogue, stocks], env);
      assert.equal(imported.status, 0, imported.stderr);
      const refused = runCli(['import', path.join(dir, 'missing.csv')], env);
      assert.equal(refused.status, 1, 'a refused import writes nothing, and no audit row');

      const rows = await auditRows();
      assert.deepEqual(
        rows.map((a) => `${a.actor_kind} ${a.action} ${a.target}`),
        [
          `cli merchant.create merchant:${merchantId}`,
          `cli token.issue token:${tokenId}`,
          `cli token.revoke token:${tokenId}`,
          'cli catalog.import catalog:import',
        ],
      );
      assert.ok(
        rows.every((a) => a.actor_id.length > 0 && a.request_id === null),
        'the OS user, and no request',
      );
      assert.deepEqual(JSON.parse(rows[3].after_summary!), {
        source: 'files',
        fileNames: 'catalogue.json, stocks.csv',
        files: 2,
        rows: 3,
        ledgerRows: 1,
        warehouses: 1,
        categories: 0,
        products: 1,
        stocks: 1,
        channels: 0,
      });
      const everything = JSON.stringify(rows);
      assert.ok(!everything.includes(secret) && !everything.includes(token), 'neither the client secret nor the token is recorded');
    });
  }
  for (const dialect of ['sqlite', 'postgres'] as const) {
    it(`refuses to demote or disable the last active owner, with exit code 1 and nothing written (${dialect})`, {
      skip: dialect === 'postgres' ? PG_SKIP : false,
    }, async (t) => {
      const dir = tempDir();
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const env = { DATA_DIR: dir, DATABASE_URL: dialect === 'sqlite' ? `sqlite:${path.join(dir, 'cli.db')}` : (await emptyPgSchema(t, 'cliowner')).url };
      const cli = (...args: string[]) => runCli(['operator', ...args], env);
      const refusedWith = (r: { status: number | null; stderr: string }, message: string) => {
        assert.equal(r.status, 1, r.stderr);
        assert.equal(r.stderr.trim().split('\n').at(-1), `stockist: ${message}`);
      };
      assert.equal(runCli(['migrate'], env).status, 0);
      assert.equal(cli('create', 'boss@example.com', '--role', 'owner').status, 0);
      refusedWith(
        cli('set-role', 'boss@example.com', '--role', 'support'),
        'boss@example.com is the last active owner: make another account owner before you demote it',
      );
      refusedWith(cli('disable', 'boss@example.com'), 'boss@example.com is the last active owner: make another account owner before you disable it');
      assert.equal(cli('set-role', 'boss@example.com', '--role', 'owner').status, 0, 'keeping the role is no demotion');
      // A disabled owner is no owner to fall back on.
      assert.equal(cli('create', 'away@example.com', '--role', 'owner').status, 0);
      assert.equal(cli('disable', 'away@example.com').status, 0);
      refusedWith(cli('disable', 'boss@example.com'), 'boss@example.com is the last active owner: make another account owner before you disable it');
      // With a second active owner the first can go; then the second is the last.
      assert.equal(cli('enable', 'away@example.com').status, 0);
      assert.equal(cli('set-role', 'boss@example.com', '--role', 'warehouse').status, 0);
      refusedWith(
        cli('set-role', 'away@example.com', '--role', 'support'),
        'away@example.com is the last active owner: make another account owner before you demote it',
      );
      assert.deepEqual(
        cli('list')
          .stdout.trim()
          .split('\n')
          .map((l) => l.split('  ').slice(0, 3).join(' ')),
        ['away@example.com owner active', 'boss@example.com warehouse active'],
      );
      const { openStore } = await import('../../src/store/db.ts');
      const store = await openStore(env.DATABASE_URL);
      try {
        const audit = await store.db.selectFrom('audit_log').select(['action', 'target']).orderBy('id').execute();
        assert.deepEqual(
          audit.map((a) => `${a.action} ${a.target}`),
          [
            'staff.create staff:boss@example.com',
            'staff.set_role staff:boss@example.com',
            'staff.create staff:away@example.com',
            'staff.disable staff:away@example.com',
            'staff.enable staff:away@example.com',
            'staff.set_role staff:boss@example.com',
          ],
          'the refusals wrote nothing',
        );
      } finally {
        await store.close();
      }
    });
  }
});
