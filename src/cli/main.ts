import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import { parseId } from '../domain/ids.ts';
import { SCOPES, type Scope } from '../domain/scopes.ts';
import { STAFF_ROLES, staffPasswordResetUrl, type StaffRole } from '../domain/staff.ts';
import { invitationUrl, MERCHANT_ROLES, type MerchantRole } from '../domain/merchant-users.ts';
import type { Actor } from '../domain/audit.ts';
import { textProblem } from '../domain/text.ts';
import { formatSigned, parseAmount } from '../domain/ledger.ts';
import { CurrencyChangeRefused, formatMoney, moneyOf } from '../domain/money.ts';
import { ENVIRONMENTS, type StockistEnv } from '../domain/vocabulary.ts';
import { formatInstant } from '../domain/time.ts';
import type { Role } from '../runtime/server.ts';
import type { Store } from '../store/db.ts';
import { NoDatabase, describeDatabase, noMigrations, requireExistingSqlite } from './database.ts';
import { IMPORT_HELP } from './import-help.ts';
import { StopFailed } from './stop.ts';
import { ImportRefused, problemText } from '../domain/import-format.ts';
import { BackupRefused } from '../domain/backup.ts';

// Heavy modules (Fastify, Kysely, TypeBox, the services) are imported inside the commands that use
// them, so `stockist --help` and the small commands start in a fraction of a second.

/** Flags win over the environment; the environment is read and validated once, here. */
function configWith(overrides: Record<string, string | undefined>): Config {
  const env = { ...process.env };
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) env[k] = v;
  return loadConfig(env);
}

/** Every command says, on stderr, which database it works on: the CLI resolves paths against the current directory. */
/**
 * The primary of `serve --processes N`: prepares the database once (migrations, demo data, the
 * admin key, the certificate), holds the pid file, forks the processes (runtime/cluster.ts) and
 * prints the banner once every one of them listens.
 */
async function servePrimary(config: Config, role: Role, processes: number): Promise<void> {
  const { prepareDatabase, startupBanner } = await import('../runtime/server.ts');
  const { runPrimary } = await import('../runtime/cluster.ts');
  const { claimPidFile } = await import('../runtime/pid-file.ts');
  const prepared = await prepareDatabase(config);
  const pid = claimPidFile(config.dataDir, role);
  if (pid.heldBy !== null) process.stderr.write(`stockist: another server (pid ${pid.heldBy}) holds ${pid.file}; this one is not recorded in it\n`);
  runPrimary(config, {
    processes,
    onListening: (urls) => {
      const facts = { ...prepared, urls, role, processes };
      const banner = startupBanner(facts, config, { pidFile: pid.heldBy === null ? pid.file : null, tty: Boolean(process.stdout.isTTY) });
      process.stdout.write(`${banner}\n`);
    },
    onStopped: () => pid.release(),
  });
}

function announce(config: Config): void {
  process.stderr.write(`stockist: database ${describeDatabase(config.databaseUrl)}\n`);
}

/**
 * Opens the database for a command. Only serve, migrate and seed may create one; the others
 * refuse a database that does not exist (or was never migrated) rather than make an empty one.
 */
async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>, mode: 'create' | 'existing' | 'as-is' = 'existing'): Promise<T> {
  announce(config);
  if (mode !== 'create') requireExistingSqlite(config, process.env);
  const { openStore } = await import('../store/db.ts');
  const { isInitialised, migrateToLatest } = await import('../store/migrate.ts');
  const store = await openStore(config.databaseUrl);
  try {
    if (mode !== 'create' && !(await isInitialised(store))) throw noMigrations(config.databaseUrl);
    // 'as-is' (backup): the database is read as it stands, at whatever migration it is.
    if (mode !== 'as-is') {
      await migrateToLatest(store);
      // The server's rule (issue 41 item 6): money is never read in another currency than its own.
      const { checkSupplierCurrency } = await import('../services/currency.service.ts');
      await checkSupplierCurrency(store.db, config.supplierCurrency);
    }
    return await fn(store);
  } finally {
    await store.close();
  }
}

const positiveInt = (value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('must be a positive whole number');
  return Number(value);
};

/** Ids as the operator API takes them (1 … 2^53 − 1). */
/** The most processes `serve --processes` takes: more than the cores only adds switching. */
const MAX_PROCESSES = 64;

/** `--processes`: a whole number from 1, or `auto` for the machine's cores. */
const processCount = (value: string) => {
  const cores = os.availableParallelism();
  if (value === 'auto') return Math.min(cores, MAX_PROCESSES);
  if (!/^[1-9]\d*$/.test(value) || Number(value) > MAX_PROCESSES) {
    throw new InvalidArgumentError(`must be a whole number from 1 to ${MAX_PROCESSES}, or auto (one per core: ${cores} here)`);
  }
  return Number(value);
};

const idArgument = (what: string) => (value: string) => {
  const id = parseId(value);
  if (id === null) throw new InvalidArgumentError(`${what} must be an id: an integer from 1 to ${Number.MAX_SAFE_INTEGER}`);
  return id;
};

/** SPEC §1 Text holds for the CLI's free text as for the operator API's. */
const text = (what: string, value: string) => {
  const problem = textProblem(value);
  if (problem) throw new InvalidArgumentError(`${what} ${problem}`);
  return value;
};

const scopesList = (value: string): Scope[] => {
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = list.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (bad.length || list.length === 0) throw new InvalidArgumentError(`scopes are a comma-separated list of ${SCOPES.join(', ')}`);
  return list as Scope[];
};

export function buildCli(): Command {
  const program = new Command('stockist')
    .description("Stockist: a supplier's Order, Refund and Stock Open API server")
    .configureOutput({ outputError: (text, write) => write(text) })
    .addHelpText(
      'after',
      '\nThe database is DATABASE_URL, else DATA_DIR/stockist.db (DATA_DIR defaults to ./data); relative paths are resolved\n' +
        'against the current directory. Every command names the database it uses on stderr.',
    );

  program
    .command('serve')
    .description('start the API server (migrates the database first); writes DATA_DIR/stockist.pid while it runs')
    .addOption(new Option('--role <role>', 'api: HTTP only; worker: background jobs only; all: both').choices(['api', 'worker', 'all']).default('all'))
    .addOption(new Option('--seed <mode>', 'demo: load demo data into an empty database (overrides SEED)').choices(['demo', 'none']))
    .option('--port <port>', 'listen port (overrides PORT)')
    .option('--host <host>', 'listen address (overrides HOST)')
    .option('--processes <n>', 'API processes sharing the port and the database: a number, or auto (one per core)', processCount, 1)
    .action(async (opts: { role: Role; seed?: string; port?: string; host?: string; processes: number }) => {
      const config = configWith({ SEED: opts.seed, PORT: opts.port, HOST: opts.host });
      const cluster = await import('../runtime/cluster.ts');
      const member = cluster.groupMember(opts.role);
      if (!member) announce(config);
      if (opts.processes > 1 && !member) {
        if (opts.role === 'worker')
          throw new InvalidArgumentError('--processes serves the API in several processes; run one `--role worker` process beside them');
        await servePrimary(config, opts.role, opts.processes);
        return;
      }
      // V8 lets the old generation grow to ~2-4× what survived the last full collection before it
      // collects again; most of what reaches it here is request garbage promoted under load, so the
      // server's peak RSS was mostly uncollected garbage (console pages: 200 MB against a 27 MB live
      // heap). 1.5× bounds it for a few more ~10 ms collections (docs/performance.md, "Memory").
      // Set here rather than on the command line: it works however the server is launched, and
      // NODE_OPTIONS does not accept this flag.
      v8.setFlagsFromString('--heap-growing-percent=50');
      const { startServer, startupBanner } = await import('../runtime/server.ts');
      const { claimPidFile } = await import('../runtime/pid-file.ts');
      const role = member?.role ?? opts.role;
      const server = await startServer(config, role, member ? cluster.joinGroup() : undefined);
      const log = server.apps[0].log;
      // In a group the primary holds the pid file and prints the banner.
      const pid = member ? null : claimPidFile(config.dataDir, opts.role);
      if (pid && pid.heldBy !== null) log.warn({ pidFile: pid.file, heldBy: pid.heldBy }, 'another server holds the pid file; this one is not recorded in it');
      const stop = (signal: string) => {
        log.info({ signal }, 'shutting down');
        server.close().then(
          () => {
            pid?.release();
            process.exit(0);
          },
          (error) => {
            process.stderr.write(`stockist: shutdown failed: ${error}\n`);
            process.exit(1);
          },
        );
      };
      // Before the banner: whoever reads it may signal at once, and until a listener exists the
      // signal's default action ends the process without a clean shutdown.
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
      log.info({ urls: server.urls, role, pid: process.pid, ...(member ? { processIndex: member.index } : {}) }, 'listening');
      if (member) cluster.reportListening(server.urls);
      else {
        const banner = startupBanner({ ...server, dialect: server.store.dialect }, config, {
          pidFile: pid && pid.heldBy === null ? pid.file : null,
          tty: Boolean(process.stdout.isTTY),
        });
        process.stdout.write(`${banner}\n`);
      }
    });

  program
    .command('stop')
    .description('stop the servers running from DATA_DIR (SIGTERM to the pid in DATA_DIR/stockist*.pid), waiting until they exit')
    .option('--timeout <seconds>', 'how long to wait for in-flight work to finish', positiveInt, 40)
    .action(async (opts: { timeout: number }) => {
      const config = configWith({});
      process.stderr.write(`stockist: data folder ${config.dataDir}\n`);
      const { stopServers } = await import('./stop.ts');
      await stopServers(config.dataDir, opts.timeout, (line) => process.stdout.write(`${line}\n`));
    });

  program
    .command('migrate')
    .description('apply pending database migrations (creates the database if it does not exist)')
    .action(async () => {
      const config = configWith({});
      announce(config);
      const { openStore } = await import('../store/db.ts');
      const { migrateToLatest } = await import('../store/migrate.ts');
      const store = await openStore(config.databaseUrl);
      try {
        const names = await migrateToLatest(store);
        process.stdout.write(names.length ? `applied ${names.join(', ')}\n` : 'database is up to date\n');
      } finally {
        await store.close();
      }
    });

  program
    .command('seed')
    .description('load data sets')
    .command('demo')
    .description('load the demo catalogue and demo merchant (SPEC §12); safe to repeat; creates the database if needed')
    .action(async () => {
      const config = configWith({});
      const { seedDemo } = await import('../demo/seed.ts');
      const creds = await withStore(config, (store) => seedDemo(store, config), 'create');
      process.stdout.write(`demo data loaded; demo merchant ${creds.merchantId}, token ${creds.token}\n`);
    });

  program
    .command('import <files...>')
    .description('import catalogue JSON documents (the POST /admin/v1/import body) and products/stocks CSV files, all or nothing')
    .addHelpText('after', IMPORT_HELP)
    .action(async (files: string[]) => {
      const config = configWith({});
      const { runImport } = await import('./import.ts');
      await withStore(config, (store) => runImport(store, cliActor(), files, { stdout: process.stdout, stderr: process.stderr }));
    });

  const merchant = program.command('merchant').description('manage merchants');
  merchant
    .command('create <name>')
    .description('create a merchant; prints its OAuth client id and secret (shown once)')
    .action(async (name: string) => {
      const config = configWith({});
      const trimmed = name.trim();
      if (trimmed.length < 1 || trimmed.length > 128) throw new InvalidArgumentError('name must be 1 to 128 characters');
      text('name', trimmed);
      const { createMerchant } = await import('../services/merchants.service.ts');
      const m = await withStore(config, (store) => createMerchant(store.db, cliActor(), trimmed, Date.now()));
      process.stdout.write(`merchant ${m.merchantId} "${m.name}"\nclient_id     ${m.clientId}\nclient_secret ${m.clientSecret}  (shown once)\n`);
    });

  merchant
    .command('invite <merchantId> <email>')
    .description('invite a user to the merchant’s business manager; prints the one-time link (valid 72 h)')
    .addOption(new Option('--role <role>', 'what the user may do in the business manager').choices([...MERCHANT_ROLES]).makeOptionMandatory())
    .action(async (merchantId: string, email: string, opts: { role: MerchantRole }) => {
      const config = configWith({});
      const id = positiveInt(merchantId);
      const { inviteUser } = await import('../services/merchant-invitations.service.ts');
      const { forMerchant } = await import('../store/tenancy.ts');
      const invitation = await withStore(config, (store) => inviteUser(forMerchant(store.db, id), cliActor(), { email, role: opts.role }, Date.now()));
      // No request to take an origin from: PUBLIC_BASE_URL, else this server's own address.
      const origin = config.publicBaseUrl ?? `${config.tls ? 'https' : 'http'}://${config.host}:${config.port}`;
      process.stdout.write(
        `invited ${invitation.email} (${invitation.role}) to merchant ${invitation.merchantId}; the link works once, until ${formatInstant(invitation.expiresAt)}:\n${invitationUrl(origin, invitation.token)}\n`,
      );
    });

  merchant
    .command('reset-two-factor <merchantId> <email>')
    .description(
      'turn off two-factor sign-in of that address’s business manager account at this merchant (a lost phone and lost recovery codes): its key and recovery codes go and its sessions end; the password stays, and the person enrols again',
    )
    .action(async (merchantId: string, email: string) => {
      const config = configWith({});
      const id = positiveInt(merchantId);
      const { resetTwoFactor } = await import('../services/merchant-two-factor.service.ts');
      const { forMerchant } = await import('../store/tenancy.ts');
      const r = await withStore(config, (store) => resetTwoFactor(forMerchant(store.db, id), cliActor(), { email }, Date.now()));
      process.stdout.write(
        `two-factor sign-in of ${r.email} at merchant ${id} is off; ${r.sessionsEnded} session${r.sessionsEnded === 1 ? '' : 's'} ended. They sign in with their password and turn it on again.\n`,
      );
    });

  const token = program.command('token').description('manage merchant bearer tokens');
  token
    .command('issue <merchantId>')
    .description('issue a bearer token to a merchant (shown once)')
    .option('--scopes <list>', `comma-separated scopes (default: all of ${SCOPES.join(', ')})`, scopesList)
    .option('--expires-in <seconds>', 'lifetime in seconds (default: no expiry)', positiveInt)
    .action(async (merchantId: string, opts: { scopes?: Scope[]; expiresIn?: number }) => {
      const config = configWith({});
      const id = positiveInt(merchantId);
      const { issueToken } = await import('../services/merchants.service.ts');
      const { forMerchant } = await import('../store/tenancy.ts');
      const t = await withStore(config, (store) =>
        issueToken(forMerchant(store.db, id), cliActor(), config.env, { scopes: opts.scopes, expiresInSeconds: opts.expiresIn }, Date.now()),
      );
      process.stdout.write(
        `token ${t.tokenId} for merchant ${t.merchantId} (${t.scopes.join(' ')}; expires ${formatInstant(t.expiresAt) ?? 'never'})\n${t.accessToken}\n`,
      );
    });
  token
    .command('revoke <tokenId>')
    .description('revoke a bearer token')
    .action(async (tokenId: string) => {
      const config = configWith({});
      const id = positiveInt(tokenId);
      const { revokeToken } = await import('../services/merchants.service.ts');
      const r = await withStore(config, (store) => revokeToken(store.db, cliActor(), id, Date.now()));
      process.stdout.write(`token ${r.tokenId} revoked at ${formatInstant(r.revokedAt)}\n`);
    });

  const refunds = program
    .command('refunds')
    .description('review refunds (REFUND_REVIEW=manual, or parked for manual review after REFUND_MAX_ATTEMPTS failed attempts)');
  refunds
    .command('list')
    .description('list refunds, oldest pending first')
    .addOption(new Option('--status <status>', 'filter by state').choices(['pending_review', 'refund_successfully', 'refund_failed']).default('pending_review'))
    .option('--limit <n>', 'at most this many', positiveInt, 50)
    .option('--manual-review', 'only refunds the worker gave up on after REFUND_MAX_ATTEMPTS failed attempts')
    .action(async (opts: { status: 'pending_review' | 'refund_successfully' | 'refund_failed'; limit: number; manualReview?: boolean }) => {
      const config = configWith({});
      const { listRefundsForOperator } = await import('../services/refunds.service.ts');
      const page = await withStore(config, (store) =>
        listRefundsForOperator(store.db, config, opts.status, 1, opts.limit, Date.now(), opts.manualReview ? true : null),
      );
      if (page.list.length === 0) process.stdout.write(`no ${opts.status}${opts.manualReview ? ' manual-review' : ''} refunds\n`);
      for (const r of page.list) {
        const items = r.items.map((i) => `${i.skuCode}×${i.quantity}`).join(' ');
        const attempts = r.lastError
          ? `  ${r.manualReview ? 'MANUAL REVIEW' : 'RETRYING'} after ${r.attempts} attempt${r.attempts === 1 ? '' : 's'}: ${r.lastError.replace(/\s+/g, ' ')}`
          : '';
        process.stdout.write(
          `${r.refundNo}  order ${r.id}  merchant ${r.merchantId}  ${r.refundStatus}  ${formatMoney(moneyOf(Math.round(r.amount * 100), config.supplierCurrency))}  ${items}  age ${r.ageSeconds}s${r.overSla ? '  OVER SLA' : ''}${attempts}\n`,
        );
      }
      if (page.total > page.list.length) process.stdout.write(`(${page.total - page.list.length} more)\n`);
    });
  for (const verb of ['approve', 'reject'] as const) {
    refunds
      .command(`${verb} <refundNo>`)
      .description(`${verb} a pending refund`)
      .option('--reason <text>', 'why (shown to the merchant as failureReason on reject)')
      .action(async (refundNo: string, opts: { reason?: string }) => {
        const config = configWith({});
        idArgument('refundNo')(refundNo);
        const reason = opts.reason === undefined ? undefined : text('--reason', opts.reason.trim());
        const decision = verb === 'approve' ? { approve: true as const } : { approve: false as const, reason: reason || 'rejected by the operator' };
        const { reviewRefund } = await import('../services/refunds.service.ts');
        const r = await withStore(config, (store) => reviewRefund(store.db, cliActor(), idArgument('refundNo')(refundNo), decision));
        process.stdout.write(
          `refund ${r.refundNo}: ${r.refundStatus}${r.failureReason ? ` (${r.failureReason})` : ''}, ${formatMoney(moneyOf(Math.round(r.amount * 100), config.supplierCurrency))}\n`,
        );
      });
  }

  const environmentOption = () =>
    new Option('--environment <environment>', 'the account of this environment (default: STOCKIST_ENV)').choices([...ENVIRONMENTS]);
  const amountArgument = (signed: boolean) => (value: string) => {
    const cents = parseAmount(value, signed);
    if (cents === null) throw new InvalidArgumentError(`must be an amount with at most two decimals${signed ? ', signed' : ''} (e.g. 12.50)`);
    return cents;
  };
  const account = program.command('account').description("a merchant's money account (SPEC §15, docs/money.md)");
  const printAccount = (a: {
    account_key: string;
    currency: string;
    balance_cents: number;
    billing_mode: string;
    credit_limit_cents: number;
    low_balance_threshold_cents: number | null;
  }) =>
    process.stdout.write(
      `${a.account_key || 'no money has moved yet'}  balance ${formatSigned(a.balance_cents)} ${a.currency}  ${a.billing_mode}  credit limit ${formatSigned(a.credit_limit_cents)}  available ${formatSigned(a.balance_cents + a.credit_limit_cents)}${a.low_balance_threshold_cents === null ? '' : `  low-balance threshold ${formatSigned(a.low_balance_threshold_cents)}`}\n`,
    );
  account
    .command('show <merchantId>')
    .description("the account's balance, mode and limit")
    .addOption(environmentOption())
    .action(async (merchantId: string, opts: { environment?: StockistEnv }) => {
      const config = configWith({});
      const id = idArgument('merchantId')(merchantId);
      const { accountForOperator } = await import('../services/ledger.service.ts');
      const { forMerchant } = await import('../store/tenancy.ts');
      printAccount(await withStore(config, (store) => accountForOperator(forMerchant(store.db, id), config, opts.environment ?? config.env)));
    });
  /** A top-up or an adjustment from the command line, audited as the OS user; prints the entry. */
  const postFromCli = async (type: 'top_up' | 'adjustment', merchantId: string, amount: string, text: string, environment: StockistEnv | undefined) => {
    const config = configWith({});
    const id = idArgument('merchantId')(merchantId);
    const cents = amountArgument(type === 'adjustment')(amount);
    const { postByOperator } = await import('../services/ledger.service.ts');
    const { forMerchant } = await import('../store/tenancy.ts');
    const r = await withStore(config, (store) =>
      postByOperator(
        forMerchant(store.db, id),
        store.dialect,
        config,
        cliActor(),
        { type, environment: environment ?? config.env, amountCents: cents, text },
        Date.now(),
      ),
    );
    const e = r.entry;
    process.stdout.write(
      `${r.replayed ? 'already recorded: ' : ''}entry ${e.id}: ${type === 'top_up' ? 'top-up' : 'adjustment'} ${formatSigned(e.amount_cents)} ${e.currency}, balance ${formatSigned(e.balance_after_cents)}\n`,
    );
  };
  account
    .command('top-up <merchantId> <amount>')
    .description('record a payment received from the merchant (idempotent on --reference)')
    .requiredOption('--reference <text>', "the payment's reference (bank transfer id, invoice number); a repeat posts nothing")
    .addOption(environmentOption())
    .action((merchantId: string, amount: string, opts: { reference: string; environment?: StockistEnv }) =>
      postFromCli('top_up', merchantId, amount, text('--reference', opts.reference.trim()), opts.environment),
    );
  account
    .command('adjust <merchantId> <amount>')
    .description('post a signed correction (e.g. -12.50) with a reason; audited')
    .requiredOption('--reason <text>', 'why (shown to the merchant in its transactions)')
    .addOption(environmentOption())
    .action((merchantId: string, amount: string, opts: { reason: string; environment?: StockistEnv }) =>
      postFromCli('adjustment', merchantId, amount, text('--reason', opts.reason.trim()), opts.environment),
    );
  const ledger = program.command('ledger').description('the money ledger');
  ledger
    .command('verify')
    .description('check every invariant of the money ledger over the whole database; one line per breach, exit 1 on any')
    .action(async () => {
      const config = configWith({});
      const { verifyLedger } = await import('../services/ledger-verify.service.ts');
      const report = await withStore(config, (store) => verifyLedger(store.db));
      for (const b of report.breaches) process.stdout.write(`BREACH ${b.rule}: ${b.message}\n`);
      process.stdout.write(
        `ledger: ${report.entries} entries over ${report.accounts} accounts, ${report.breaches.length === 0 ? 'every invariant holds' : `${report.breaches.length} breach${report.breaches.length === 1 ? '' : 'es'}`}\n`,
      );
      if (report.breaches.length > 0) process.exitCode = 1;
    });
  ledger
    .command('export')
    .description(
      "every journal entry of a period (a UTC month, or --from and --to days, both included) across merchants as CSV, the console Books page's export (docs/money.md)",
    )
    .option('--month <YYYY-MM>', 'the month, e.g. 2026-11')
    .option('--from <YYYY-MM-DD>', 'the first day')
    .option('--to <YYYY-MM-DD>', 'the last day')
    .addOption(new Option('--environment <environment>', 'the environment (default: STOCKIST_ENV)').choices([...ENVIRONMENTS]))
    .option('--output <file>', 'write the CSV here instead of standard output')
    .action(async (opts: { month?: string; from?: string; to?: string; environment?: StockistEnv; output?: string }) => {
      const config = configWith({});
      const { journalCsv, periodFor } = await import('../services/books.service.ts');
      const { csvStream } = await import('../present/csv.presenter.ts');
      const { pipeline } = await import('node:stream/promises');
      const fs = await import('node:fs');
      const period = periodFor(opts, Date.now());
      const environment = opts.environment ?? config.env;
      await withStore(config, async (store) => {
        // A read that fails part-way ends the file early: the command must then fail, not exit 0 on half a journal.
        const failed: { error?: Error } = {};
        const csv = csvStream(journalCsv(store.db, environment, period), (error) => {
          failed.error = error;
        });
        await pipeline(csv, opts.output ? fs.createWriteStream(opts.output) : process.stdout);
        if (failed.error) throw failed.error;
      });
      if (opts.output) process.stderr.write(`stockist: journal of ${period.label} (${environment}) written to ${opts.output}\n`);
    });

  const backup = program
    .command('backup')
    .description(
      'write a consistent snapshot of the database into one archive (online: the server keeps taking orders); without --with-secrets the admin key and TLS key stay out',
    )
    .option(
      '--to <dir>',
      "write one archive into this folder and do nothing else; without it the backup goes into BACKUP_DIR (else DATA_DIR/backups) as the schedule's do: one at a time, recorded, verified, uploaded to BACKUP_S3_URL when set, older ones pruned",
    )
    .option('--with-secrets', "also store DATA_DIR's admin key and TLS key and certificate in the archive")
    .action(async (opts: { to?: string; withSecrets?: boolean }) => {
      const config = configWith({});
      const { runBackup } = await import('./backup.ts');
      const toDir = opts.to === undefined ? null : path.resolve(opts.to);
      await withStore(config, (store) => runBackup({ config, store }, { toDir, withSecrets: Boolean(opts.withSecrets), actor: cliActor() }, process), 'as-is');
    });
  backup
    .command('verify <archive>')
    .description(
      'restore the archive into a temporary place (a temporary SQLite file, or a scratch PostgreSQL database on the DATABASE_URL server), run every check, remove it; exit 0 only when all hold',
    )
    .action(async (archive: string) => {
      const config = configWith({});
      const { runVerify } = await import('./backup.ts');
      await runVerify(config, path.resolve(archive), process);
    });

  program
    .command('restore <archive>')
    .description(
      'restore a backup archive into DATA_DIR / DATABASE_URL, which must hold no data: checks the whole archive first, migrates an older one forward, then verifies the ledger and stock',
    )
    .action(async (archive: string) => {
      const config = configWith({});
      const { runRestore } = await import('./backup.ts');
      await runRestore(config, path.resolve(archive), process);
    });

  const operator = program.command('operator').description('manage operator console staff accounts (roles: owner, support, warehouse)');
  operator
    .command('create <email>')
    .description('create a staff account; prints a generated one-time password unless --password-stdin')
    .addOption(new Option('--role <role>', 'what the account may do in the console').choices([...STAFF_ROLES]).makeOptionMandatory())
    .option('--password-stdin', 'read the password from standard input instead of generating one')
    .action(async (email: string, opts: { role: StaffRole; passwordStdin?: boolean }) => {
      const config = configWith({});
      const supplied = opts.passwordStdin ? await passwordFromStdin() : null;
      const { createStaff } = await import('../services/staff.service.ts');
      const { generatePassword } = await import('../services/accounts.service.ts');
      const password = supplied ?? generatePassword();
      const row = await withStore(config, (store) => createStaff(store.db, cliActor(), { email, role: opts.role, password }, Date.now()));
      process.stdout.write(`operator ${row.email} (${row.role}) created\n`);
      if (!supplied) process.stdout.write(`password ${password}  (shown once; \`stockist operator reset-password ${row.email}\` sets a new one)\n`);
    });
  operator
    .command('list')
    .description('list staff accounts')
    .action(async () => {
      const config = configWith({});
      const { listStaff } = await import('../services/staff.service.ts');
      const rows = await withStore(config, (store) => listStaff(store.db));
      if (rows.length === 0) process.stdout.write('no staff accounts\n');
      for (const r of rows) {
        process.stdout.write(
          `${r.email}  ${r.role}  ${r.status}  created ${formatInstant(r.created_at)}  last sign-in ${formatInstant(r.last_sign_in_at) ?? 'never'}\n`,
        );
      }
    });
  operator
    .command('disable <email>')
    .description('disable a staff account and end its sessions')
    .action(async (email: string) => {
      const config = configWith({});
      const { disableStaff } = await import('../services/staff.service.ts');
      const r = await withStore(config, (store) => disableStaff(store.db, cliActor(), email, Date.now()));
      process.stdout.write(`operator ${r.row.email} disabled; ${r.sessionsEnded} session${r.sessionsEnded === 1 ? '' : 's'} ended\n`);
    });
  operator
    .command('enable <email>')
    .description('let a disabled staff account sign in again')
    .action(async (email: string) => {
      const config = configWith({});
      const { enableStaff } = await import('../services/staff.service.ts');
      const row = await withStore(config, (store) => enableStaff(store.db, cliActor(), email, Date.now()));
      process.stdout.write(`operator ${row.email} enabled\n`);
    });
  operator
    .command('set-role <email>')
    .description('change what a staff account may do in the console (from its next request)')
    .addOption(new Option('--role <role>', 'the new role').choices([...STAFF_ROLES]).makeOptionMandatory())
    .action(async (email: string, opts: { role: StaffRole }) => {
      const config = configWith({});
      const { setStaffRole } = await import('../services/staff.service.ts');
      const row = await withStore(config, (store) => setStaffRole(store.db, cliActor(), email, opts.role, Date.now()));
      process.stdout.write(`operator ${row.email} is now ${row.role}\n`);
    });
  operator
    .command('reset-password <email>')
    .description(
      "set a new password (generated and printed once, or read with --password-stdin) and end the account's sessions; or, with --link, print a one-time link (24 h) on which the staff member chooses one, as an owner's console reset does",
    )
    .option('--password-stdin', 'read the password from standard input instead of generating one')
    .option('--link', 'print a one-time password reset link instead of setting a password (nothing changes until it is used)')
    .action(async (email: string, opts: { passwordStdin?: boolean; link?: boolean }) => {
      const config = configWith({});
      if (opts.link && opts.passwordStdin) throw new InvalidArgumentError('--link and --password-stdin exclude each other');
      if (opts.link) {
        const { createStaffPasswordReset } = await import('../services/staff.service.ts');
        const reset = await withStore(config, (store) => createStaffPasswordReset(store.db, cliActor(), email, Date.now()));
        // No request to take an origin from: the console's own address (ADMIN_PORT when set, else PORT).
        const origin = `${config.tls ? 'https' : 'http'}://${config.host}:${config.adminPort ?? config.port}`;
        process.stdout.write(
          `password reset link for operator ${reset.email}; it works once, until ${formatInstant(reset.expiresAt)}, and ends the account's sessions when used:\n${staffPasswordResetUrl(origin, reset.token)}\n`,
        );
        return;
      }
      const supplied = opts.passwordStdin ? await passwordFromStdin() : null;
      const { resetPassword } = await import('../services/staff.service.ts');
      const { generatePassword } = await import('../services/accounts.service.ts');
      const password = supplied ?? generatePassword();
      const r = await withStore(config, (store) => resetPassword(store.db, cliActor(), email, password, Date.now()));
      process.stdout.write(`operator ${r.row.email}: new password set; ${r.sessionsEnded} session${r.sessionsEnded === 1 ? '' : 's'} ended\n`);
      if (!supplied) process.stdout.write(`password ${password}  (shown once)\n`);
    });

  return program;
}

/** Changes made on the command line are audited as the OS user who ran it. */
function cliActor(): Actor {
  let user = 'unknown';
  try {
    user = os.userInfo().username || user;
  } catch {
    // No passwd entry (some containers): the kind still says it came from the command line.
  }
  return { kind: 'cli', id: user, requestId: null };
}

/** The whole of standard input, less one trailing newline (`echo … |` and `printf … |` both work). */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new InvalidArgumentError('--password-stdin reads the password from a pipe, e.g. `printf %s "$PW" | stockist operator …`');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Every problem of a refused import, one a line, so all of them can be fixed before the next run. */
function importReport(error: ImportRefused): string {
  const total = error.problems.length + error.omitted;
  if (total === 1) return `stockist: import refused, nothing was written: ${problemText(error.problems[0])}\n`;
  const lines = [`stockist: import refused, nothing was written: ${total} problems`, ...error.problems.map((p) => `  ${problemText(p)}`)];
  if (error.omitted) lines.push(`  … and ${error.omitted} more`);
  return `${lines.join('\n')}\n`;
}

/** Errors a user can act on are one line and a non-zero exit; anything else is a bug and says so. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (error) {
    if (error instanceof ConfigError) process.stderr.write(`stockist: invalid configuration: ${error.message}\n`);
    else if (error instanceof ImportRefused) process.stderr.write(importReport(error));
    else if (error instanceof NoDatabase || error instanceof StopFailed || error instanceof BackupRefused || error instanceof CurrencyChangeRefused)
      process.stderr.write(`stockist: ${error.message}\n`);
    else if (error instanceof AppError || error instanceof InvalidArgumentError) process.stderr.write(`stockist: ${error.message}\n`);
    else if (error instanceof Error && (error as { code?: string }).code === 'EADDRINUSE') process.stderr.write(`stockist: ${error.message} (set PORT)\n`);
    else process.stderr.write(`stockist: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
