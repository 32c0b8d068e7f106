import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { seedDemo } from '../demo/seed.ts';
import { AppError } from '../domain/errors.ts';
import { formatInstant } from '../domain/time.ts';
import { SCOPES, type Scope } from '../schemas/admin.ts';
import { createMerchant, issueToken, revokeToken } from '../services/merchants.service.ts';
import { listRefundsForOperator, reviewRefund } from '../services/refunds.service.ts';
import { openStore, type Store } from '../store/db.ts';
import { migrateToLatest } from '../store/migrate.ts';
import { startServer, startupBanner, type Role } from '../runtime/server.ts';
import { runImport } from './import.ts';

/** Flags win over the environment; the environment is read and validated once, here. */
function configWith(overrides: Record<string, string | undefined>): Config {
  const env = { ...process.env };
  for (const [k, v] of Object.entries(overrides)) if (v !== undefined) env[k] = v;
  return loadConfig(env);
}

async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(config.databaseUrl);
  try {
    await migrateToLatest(store);
    return await fn(store);
  } finally {
    await store.close();
  }
}

const positiveInt = (value: string) => {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive whole number');
  return Number(value);
};

const scopesList = (value: string): Scope[] => {
  const list = value.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = list.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (bad.length || list.length === 0) throw new InvalidArgumentError(`scopes are a comma-separated list of ${SCOPES.join(', ')}`);
  return list as Scope[];
};

export function buildCli(): Command {
  const program = new Command('stockist')
    .description("Stockist: a supplier's Order, Refund and Stock Open API server")
    .configureOutput({ outputError: (text, write) => write(text) });

  program
    .command('serve')
    .description('start the API server (migrates the database first)')
    .addOption(new Option('--role <role>', 'api: HTTP only; worker: background jobs only; all: both').choices(['api', 'worker', 'all']).default('all'))
    .addOption(new Option('--seed <mode>', 'demo: load demo data into an empty database (overrides SEED)').choices(['demo', 'none']))
    .option('--port <port>', 'listen port (overrides PORT)')
    .option('--host <host>', 'listen address (overrides HOST)')
    .action(async (opts: { role: Role; seed?: string; port?: string; host?: string }) => {
      const config = configWith({ SEED: opts.seed, PORT: opts.port, HOST: opts.host });
      const server = await startServer(config, opts.role);
      server.apps[0].log.info({ urls: server.urls, role: opts.role }, 'listening');
      process.stdout.write(`${startupBanner(server, config)}\n`);
      const stop = (signal: string) => {
        server.apps[0].log.info({ signal }, 'shutting down');
        server.close().then(
          () => process.exit(0),
          (error) => {
            process.stderr.write(`stockist: shutdown failed: ${error}\n`);
            process.exit(1);
          },
        );
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const config = configWith({});
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
    .description('load the demo catalogue and demo merchant (SPEC §12); safe to repeat')
    .action(async () => {
      const config = configWith({});
      const creds = await withStore(config, (store) => seedDemo(store, config));
      process.stdout.write(`demo data loaded; demo merchant ${creds.merchantId}, token ${creds.token}\n`);
    });

  program
    .command('import <files...>')
    .description('import catalogue JSON documents (the POST /admin/v1/import body) and products/stocks CSV files, all or nothing')
    .action(async (files: string[]) => {
      const config = configWith({});
      await withStore(config, (store) => runImport(store, files, { stdout: process.stdout, stderr: process.stderr }));
    });

  const merchant = program.command('merchant').description('manage merchants');
  merchant
    .command('create <name>')
    .description('create a merchant; prints its OAuth client id and secret (shown once)')
    .action(async (name: string) => {
      const config = configWith({});
      const trimmed = name.trim();
      if (trimmed.length < 1 || trimmed.length > 128) throw new InvalidArgumentError('name must be 1 to 128 characters');
      const m = await withStore(config, (store) => createMerchant(store.db, trimmed, Date.now()));
      process.stdout.write(`merchant ${m.merchantId} "${m.name}"\nclient_id     ${m.clientId}\nclient_secret ${m.clientSecret}  (shown once)\n`);
    });

  const token = program.command('token').description('manage merchant bearer tokens');
  token
    .command('issue <merchantId>')
    .description('issue a bearer token to a merchant (shown once)')
    .option('--scopes <list>', `comma-separated scopes (default: all of ${SCOPES.join(', ')})`, scopesList)
    .option('--expires-in <seconds>', 'lifetime in seconds (default: no expiry)', positiveInt)
    .action(async (merchantId: string, opts: { scopes?: Scope[]; expiresIn?: number }) => {
      const config = configWith({});
      const t = await withStore(config, (store) =>
        issueToken(store.db, config.env, positiveInt(merchantId), { scopes: opts.scopes, expiresInSeconds: opts.expiresIn }, Date.now()),
      );
      process.stdout.write(`token ${t.tokenId} for merchant ${t.merchantId} (${t.scopes.join(' ')}; expires ${formatInstant(t.expiresAt) ?? 'never'})\n${t.accessToken}\n`);
    });
  token
    .command('revoke <tokenId>')
    .description('revoke a bearer token')
    .action(async (tokenId: string) => {
      const config = configWith({});
      const r = await withStore(config, (store) => revokeToken(store.db, positiveInt(tokenId), Date.now()));
      process.stdout.write(`token ${r.tokenId} revoked at ${formatInstant(r.revokedAt)}\n`);
    });

  const refunds = program.command('refunds').description('review refunds (REFUND_REVIEW=manual)');
  refunds
    .command('list')
    .description('list refunds, oldest pending first')
    .addOption(new Option('--status <status>', 'filter by state').choices(['pending_review', 'refund_successfully', 'refund_failed']).default('pending_review'))
    .option('--limit <n>', 'at most this many', positiveInt, 50)
    .action(async (opts: { status: 'pending_review' | 'refund_successfully' | 'refund_failed'; limit: number }) => {
      const config = configWith({});
      const page = await withStore(config, (store) => listRefundsForOperator(store.db, config, opts.status, 1, opts.limit));
      if (page.list.length === 0) process.stdout.write(`no ${opts.status} refunds\n`);
      for (const r of page.list) {
        const items = r.items.map((i) => `${i.skuCode}×${i.quantity}`).join(' ');
        process.stdout.write(`${r.refundNo}  order ${r.id}  merchant ${r.merchantId}  ${r.refundStatus}  ${r.amount.toFixed(2)} USD  ${items}  age ${r.ageSeconds}s${r.overSla ? '  OVER SLA' : ''}\n`);
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
        positiveInt(refundNo);
        const decision = verb === 'approve' ? { approve: true as const } : { approve: false as const, reason: opts.reason?.trim() || 'rejected by the operator' };
        const r = await withStore(config, (store) => reviewRefund(store.db, refundNo, decision));
        process.stdout.write(`refund ${r.refundNo}: ${r.refundStatus}${r.failureReason ? ` (${r.failureReason})` : ''}, ${r.amount.toFixed(2)} USD\n`);
      });
  }

  return program;
}

/** Errors a user can act on are one line and a non-zero exit; anything else is a bug and says so. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (error) {
    if (error instanceof ConfigError) process.stderr.write(`stockist: invalid configuration: ${error.message}\n`);
    else if (error instanceof AppError || error instanceof InvalidArgumentError) process.stderr.write(`stockist: ${error.message}\n`);
    else if (error instanceof Error && (error as { code?: string }).code === 'EADDRINUSE') process.stderr.write(`stockist: ${error.message} (set PORT)\n`);
    else process.stderr.write(`stockist: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
