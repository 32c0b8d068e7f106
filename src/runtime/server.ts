import type { FastifyInstance } from 'fastify';
import { buildApp } from '../app.ts';
import type { Config } from '../config.ts';
import { demoCredentials, isEmpty, seedDemo, type DemoCredentials } from '../demo/seed.ts';
import { openStore, type Store } from '../store/db.ts';
import { migrateToLatest } from '../store/migrate.ts';
import { resolveAdminKey, type AdminKey } from './admin-key.ts';
import { loadOrCreateCertificate, type TlsMaterial } from './tls.ts';
import { RefundWorker } from '../jobs/refund.worker.ts';
import { SandboxShipper } from '../jobs/sandbox-shipper.ts';
import { WebhookWorker } from '../jobs/webhook.worker.ts';

export type Role = 'api' | 'worker' | 'all';

export interface RunningServer {
  apps: FastifyInstance[];
  store: Store;
  urls: { merchant: string; admin: string };
  adminKey: AdminKey;
  tls: TlsMaterial | null;
  demo: DemoCredentials | null;
  seeded: boolean;
  migrated: string[];
  role: Role;
  close(): Promise<void>;
}

/**
 * Opens the database, migrates it (under the migrator's lock), seeds demo data when asked and the
 * database is empty, and listens: one listener, or two when ADMIN_PORT splits off the operator API.
 */
export async function startServer(config: Config, role: Role = 'all'): Promise<RunningServer> {
  const adminKey = resolveAdminKey(config);
  const store = await openStore(config.databaseUrl, { poolSize: config.dbPoolSize, connectTimeoutMs: config.dbConnectTimeoutMs });
  try {
    const migrated = await migrateToLatest(store);
    let seeded = false;
    if (config.seed === 'demo' && (await isEmpty(store))) {
      await seedDemo(store, config);
      seeded = true;
    }
    const demo = config.env === 'sandbox' ? await demoCredentials(store, config) : null;
    const tls = config.tls ? await loadOrCreateCertificate(config) : null;
    const https = tls ? { key: tls.key, cert: tls.cert } : null;
    const deps = { config, store, adminApiKey: adminKey.key };
    const scheme = tls ? 'https' : 'http';
    const apps: FastifyInstance[] = [];
    const urls = { merchant: '', admin: '' };
    // Role "worker" runs the background jobs and serves only health and metrics.
    const serveApi = role !== 'worker';
    if (config.adminPort === null || !serveApi) {
      const app = await buildApp(deps, { https, surfaces: { merchant: serveApi, admin: serveApi, metrics: true } });
      await app.listen({ port: config.port, host: config.host });
      urls.merchant = urls.admin = `${scheme}://${hostForUrl(config.host)}:${portOf(app)}`;
      apps.push(app);
    } else {
      const merchant = await buildApp(deps, { https, surfaces: { merchant: true, admin: false } });
      const admin = await buildApp(deps, { https, surfaces: { merchant: false, admin: true } });
      await merchant.listen({ port: config.port, host: config.host });
      await admin.listen({ port: config.adminPort, host: config.host });
      urls.merchant = `${scheme}://${hostForUrl(config.host)}:${portOf(merchant)}`;
      urls.admin = `${scheme}://${hostForUrl(config.host)}:${portOf(admin)}`;
      apps.push(merchant, admin);
    }
    const jobs: { stop(): Promise<void> }[] = [];
    if (role !== 'api') {
      const worker = new RefundWorker({ store, config, log: apps[0].log, claimMs: config.refundClaimMs });
      worker.start();
      jobs.push(worker);
      const deliveries = new WebhookWorker({ store, config, log: apps[0].log });
      deliveries.start();
      jobs.push(deliveries);
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
    return { apps, store, urls, adminKey, tls, demo, seeded, migrated, role, close };
  } catch (error) {
    await store.close();
    throw error;
  }
}

function portOf(app: FastifyInstance): number {
  const address = app.server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** The lines `npm start` prints: where it listens, the keys, and a curl line that returns stock. */
export function startupBanner(s: RunningServer, config: Config): string {
  const lines = [`Stockist listening on ${s.urls.merchant} (${config.env}, ${s.store.dialect}, role ${s.role})`];
  if (s.urls.admin !== s.urls.merchant) lines.push(`Operator API on ${s.urls.admin}`);
  if (s.migrated.length) lines.push(`Applied migrations: ${s.migrated.join(', ')}`);
  if (s.seeded) lines.push('Loaded the demo data (SEED=demo).');
  if (s.tls) lines.push(`TLS certificate ${s.tls.generated ? 'generated at' : 'from'} ${s.tls.certFile}`, `  SHA-256 fingerprint ${s.tls.fingerprint256}`);
  if (s.adminKey.generated) lines.push(`Admin API key (generated, shown once; kept in ${s.adminKey.file}):`, `  ${s.adminKey.key}`);
  else if (s.adminKey.file) lines.push(`Admin API key: in ${s.adminKey.file}`);
  else lines.push('Admin API key: from ADMIN_API_KEY');
  if (s.demo) {
    const insecure = s.tls ? '-k ' : '';
    lines.push(
      `Demo merchant token: ${s.demo.token}`,
      'Try it:',
      `  curl ${insecure}-H "Authorization: Bearer ${s.demo.token}" "${s.urls.merchant}/openapi/v1/product/stocks?skus=${s.demo.sampleSkus.join(',')}"`,
    );
  }
  return lines.join('\n');
}
