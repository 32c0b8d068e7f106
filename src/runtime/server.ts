import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { buildApp } from '../app.ts';
import type { Config } from '../config.ts';
import { demoCredentials, demoManager, demoOwner, isEmpty, seedDemo, type DemoCredentials, type DemoOwner } from '../demo/seed.ts';
import { openStore, type Store } from '../store/db.ts';
import { migrateToLatest } from '../store/migrate.ts';
import { checkSupplierCurrency } from '../services/currency.service.ts';
import { describeDatabase } from '../store/database-url.ts';
import { resolveAdminKey, type AdminKey } from './admin-key.ts';
import { loadOrCreateCertificate, type TlsMaterial } from './tls.ts';
import type { ProcessGroup } from '../plugins/foundation.ts';
import { RefundWorker } from '../jobs/refund.worker.ts';
import { Purger, purgeTasks } from '../jobs/purger.ts';
import { SandboxShipper } from '../jobs/sandbox-shipper.ts';
import { WebhookWorker } from '../jobs/webhook.worker.ts';
import { BackupSchedule } from '../jobs/backup-schedule.ts';
import { archiveEngine, BackupService, type BackupLog } from '../services/backup-runs.service.ts';
import type { FastifyBaseLogger } from 'fastify';

export type Role = 'api' | 'worker' | 'all';

export interface RunningServer {
  apps: FastifyInstance[];
  store: Store;
  urls: { merchant: string; admin: string };
  adminKey: AdminKey;
  tls: TlsMaterial | null;
  demo: DemoCredentials | null;
  /** The sandbox's console owner: its password only on the start that created it. */
  demoOwner: DemoOwner | null;
  /** The demo merchant's business manager admin: its password only on the start that created it. */
  demoManager: DemoOwner | null;
  seeded: boolean;
  migrated: string[];
  role: Role;
  close(): Promise<void>;
}

/** What a start found and made before listening: the banner's facts. */
export interface Prepared {
  migrated: string[];
  seeded: boolean;
  adminKey: AdminKey;
  tls: TlsMaterial | null;
  demo: DemoCredentials | null;
  demoOwner: DemoOwner | null;
  demoManager: DemoOwner | null;
}

/**
 * Migrates the database (under the migrator's lock), refuses a database whose money is in another
 * currency, seeds demo data when asked and the database is empty, and makes the admin key and the
 * TLS certificate when they do not exist yet. `serve --processes N` runs it once in the primary
 * before forking, so that N processes do not race to seed or to write the key.
 */
async function prepareServer(config: Config, store: Store): Promise<Prepared> {
  const adminKey = resolveAdminKey(config);
  const migrated = await migrateToLatest(store);
  // Before anything posts: a database whose money is in another currency is refused here.
  await checkSupplierCurrency(store.db, config.supplierCurrency);
  let seeded = false;
  if (config.seed === 'demo' && (await isEmpty(store))) {
    await seedDemo(store, config);
    seeded = true;
  }
  const demo = config.env === 'sandbox' ? await demoCredentials(store, config) : null;
  const demoPath = config.env === 'sandbox' && config.seed === 'demo';
  const demoOwnerRow = demoPath ? await demoOwner(store) : null;
  const manager = demoPath && demo ? await demoManager(store, demo.merchantId) : null;
  const tls = config.tls ? await loadOrCreateCertificate(config) : null;
  return { migrated, seeded, adminKey, tls, demo, demoOwner: demoOwnerRow, demoManager: manager };
}

/** Opens the database, prepares it (`prepareServer`) and closes it: the primary of `serve --processes N`. */
export async function prepareDatabase(config: Config): Promise<Prepared & { dialect: Store['dialect'] }> {
  const store = await openStore(config.databaseUrl, { poolSize: 1, connectTimeoutMs: config.dbConnectTimeoutMs });
  try {
    return { ...(await prepareServer(config, store)), dialect: store.dialect };
  } finally {
    await store.close();
  }
}

/**
 * Opens the database, prepares it (`prepareServer`) and listens: one listener, or two when
 * ADMIN_PORT splits off the operator API. In a process of `serve --processes N`, `group` is the
 * rest of the group (runtime/cluster.ts): the shared rate budget and the token-cache word.
 */
export async function startServer(config: Config, role: Role = 'all', group?: ProcessGroup): Promise<RunningServer> {
  const store = await openStore(config.databaseUrl, { poolSize: config.dbPoolSize, connectTimeoutMs: config.dbConnectTimeoutMs });
  try {
    const { adminKey, migrated, seeded, demo, demoOwner: owner, demoManager: manager, tls } = await prepareServer(config, store);
    const https = tls ? { key: tls.key, cert: tls.cert } : null;
    // The apps' logger exists only once they are built; the backup service, which they are built
    // with, logs through it from then on.
    let appLog: FastifyBaseLogger | null = null;
    const backupLog: BackupLog = {
      info: (obj, msg) => appLog?.info(obj, msg),
      warn: (obj, msg) => appLog?.warn(obj, msg),
      error: (obj, msg) => appLog?.error(obj, msg),
    };
    const backups = new BackupService({ config, store, engine: archiveEngine(config, store), log: backupLog });
    const deps = { config, store, adminApiKey: adminKey.key, backups };
    const logStream = await logDestination(config);
    const scheme = tls ? 'https' : 'http';
    const apps: FastifyInstance[] = [];
    const urls = { merchant: '', admin: '' };
    // Role "worker" runs the background jobs and serves only health and metrics.
    const serveApi = role !== 'worker';
    if (config.adminPort === null || !serveApi) {
      const app = await buildApp(deps, { https, logStream, group, surfaces: { merchant: serveApi, admin: serveApi, metrics: true } });
      await app.listen({ port: config.port, host: config.host });
      urls.merchant = urls.admin = `${scheme}://${hostForUrl(config.host)}:${portOf(app)}`;
      apps.push(app);
    } else {
      const merchant = await buildApp(deps, { https, logStream, group, surfaces: { merchant: true, admin: false } });
      const admin = await buildApp(deps, { https, logStream, group, surfaces: { merchant: false, admin: true } });
      await merchant.listen({ port: config.port, host: config.host });
      await admin.listen({ port: config.adminPort, host: config.host });
      urls.merchant = `${scheme}://${hostForUrl(config.host)}:${portOf(merchant)}`;
      urls.admin = `${scheme}://${hostForUrl(config.host)}:${portOf(admin)}`;
      apps.push(merchant, admin);
    }
    appLog = apps[0].log;
    const jobs: { stop(): Promise<void> }[] = [];
    // Stopping aborts a run in progress (console or schedule) and waits for it to record its end.
    jobs.push(backups);
    if (role !== 'api') {
      const worker = new RefundWorker({ store, config, log: apps[0].log, claimMs: config.refundClaimMs });
      worker.start();
      jobs.push(worker);
      const deliveries = new WebhookWorker({ store, config, log: apps[0].log });
      deliveries.start();
      jobs.push(deliveries);
      for (const task of purgeTasks(store, config)) {
        const purger = new Purger(task, apps[0].log);
        purger.start();
        jobs.push(purger);
      }
      if (config.backupSchedule !== null) {
        const schedule = new BackupSchedule(backups, config.backupSchedule, backupLog);
        schedule.start();
        jobs.push(schedule);
      }
      if (config.env === 'sandbox' && config.sandboxAutoShipSeconds !== null) {
        const shipper = new SandboxShipper(store, config.sandboxAutoShipSeconds, apps[0].log);
        shipper.start();
        jobs.push(shipper);
      }
    }
    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        // Stop taking work, let in-flight requests and job rounds finish, then release the database.
        await Promise.all([...jobs.map((j) => j.stop()), ...apps.map((a) => a.close())]);
        await store.close();
      })());
    return { apps, store, urls, adminKey, tls, demo, demoOwner: owner, demoManager: manager, seeded, migrated, role, close };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * JSON lines for machines (log shippers, `LOG_FORMAT=json`); on a terminal, one readable line per
 * event (pino-pretty, in process: no worker thread to start). Loaded only when used.
 */
async function logDestination(config: Config): Promise<DestinationStream | undefined> {
  const pretty = config.logFormat === 'pretty' || (config.logFormat === 'auto' && process.stdout.isTTY);
  if (!pretty) return undefined;
  const { default: pinoPretty } = await import('pino-pretty');
  return pinoPretty({ colorize: Boolean(process.stdout.isTTY), singleLine: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', sync: true });
}

function portOf(app: FastifyInstance): number {
  const address = app.server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

export interface BannerOptions {
  /** The pid file this process wrote, named so an operator knows how to stop it. */
  pidFile: string | null;
  /** On a terminal the banner is framed and coloured so it stands out between log lines. */
  tty: boolean;
}

const bold = (text: string, tty: boolean) => (tty ? `\x1b[1m${text}\x1b[22m` : text);
const cyan = (text: string, tty: boolean) => (tty ? `\x1b[36m${text}\x1b[39m` : text);

/** The lines `npm start` prints: where it listens, the keys, a curl line that returns stock, how to stop. */
/** What the banner tells: the start's facts, where it listens, and in how many processes. */
export type BannerFacts = Prepared & { dialect: Store['dialect']; urls: RunningServer['urls']; role: Role; processes?: number };

export function startupBanner(s: BannerFacts, config: Config, options: BannerOptions = { pidFile: null, tty: false }): string {
  const { tty } = options;
  const lines = [
    bold(
      `Stockist listening on ${s.urls.merchant} (${config.env}, ${s.dialect}, role ${s.role}${(s.processes ?? 1) > 1 ? `, ${s.processes} processes` : ''})`,
      tty,
    ),
  ];
  if (s.urls.admin !== s.urls.merchant) lines.push(`Operator API on ${s.urls.admin}`);
  lines.push(`Database: ${describeDatabase(config.databaseUrl)}`);
  if (s.migrated.length) lines.push(`Applied migrations: ${s.migrated.join(', ')}`);
  if (s.seeded) lines.push('Loaded the demo data (SEED=demo).');
  if (s.tls) lines.push(`TLS certificate ${s.tls.generated ? 'generated at' : 'from'} ${s.tls.certFile}`, `  SHA-256 fingerprint ${s.tls.fingerprint256}`);
  if (s.adminKey.generated) lines.push(bold(`Admin API key (generated, shown once; kept in ${s.adminKey.file}):`, tty), `  ${cyan(s.adminKey.key, tty)}`);
  else if (s.adminKey.file) lines.push(`Admin API key: in ${s.adminKey.file}`);
  else lines.push('Admin API key: from ADMIN_API_KEY');
  if (s.demo) {
    const insecure = s.tls ? '-k ' : '';
    lines.push(
      `${bold('Demo merchant token:', tty)} ${cyan(s.demo.token, tty)}`,
      bold('Try it:', tty),
      `  curl ${insecure}-H "Authorization: Bearer ${s.demo.token}" "${s.urls.merchant}/openapi/v1/product/stocks?skus=${s.demo.sampleSkus.join(',')}"`,
      `  curl ${insecure}-H "Authorization: Bearer ${s.demo.token}" "${s.urls.merchant}/openapi/v1/account"`,
    );
  }
  if (s.role !== 'worker') lines.push(`API reference: ${s.urls.merchant}/docs`);
  if (s.role !== 'worker') lines.push(`Operator console: ${s.urls.admin}/console`);
  if (s.demoOwner?.password) {
    lines.push(`${bold('Demo console owner (password shown once):', tty)} ${s.demoOwner.email}  ${cyan(s.demoOwner.password, tty)}`);
  } else if (s.demoOwner) {
    lines.push(`Demo console owner: ${s.demoOwner.email} (\`npx stockist operator reset-password ${s.demoOwner.email}\` sets a new password)`);
  }
  if (s.role !== 'worker') lines.push(`Business manager (merchants): ${s.urls.merchant}/manager`);
  if (s.demoManager?.password) {
    lines.push(`${bold('Demo merchant admin (password shown once):', tty)} ${s.demoManager.email}  ${cyan(s.demoManager.password, tty)}`);
  } else if (s.demoManager && s.demo) {
    lines.push(
      `Demo merchant admin: ${s.demoManager.email} (\`npx stockist merchant invite ${s.demo.merchantId} <email> --role admin\` prints a sign-up link for another)`,
    );
  }
  lines.push(`Stop: Ctrl-C${options.pidFile ? `, or \`npx stockist stop\` with the same DATA_DIR (pid ${process.pid} in ${options.pidFile})` : ''}`);
  if (!tty) return lines.join('\n');
  // Blank lines and a rule above and below: the banner is what a new user needs from the output.
  const rule = '─'.repeat(Math.min(process.stdout.columns || 80, 100));
  return ['', rule, ...lines, rule, ''].join('\n');
}
