import type { FastifyInstance } from 'fastify';
import { requireAdmin } from './auth.ts';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.ts';
import type { Store } from '../store/db.ts';
import { storedStateReads } from '../services/metrics.service.ts';

/**
 * GET /metrics (Prometheus text format), behind the operator key: request rate and latency per
 * route, plus gauges read from the database at scrape time (orders, refunds by state, the oldest
 * pending refund's age and how many are past REFUND_SLA_HOURS, refunds failing or parked for manual
 * review, stock rows). One registry per app.
 */
export function installMetrics(app: FastifyInstance, { store, config, adminApiKey }: { store: Store; config: Config; adminApiKey: string }): void {
  const registry = new Registry();
  const requests = new Counter({
    name: 'stockist_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'stockist_http_request_duration_seconds',
    help: 'HTTP request latency by route',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const stored = storedStateReads(store.db, config.refundSlaHours);
  new Gauge({
    name: 'stockist_orders',
    help: 'Orders by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await stored.ordersByStatus()) this.set({ status: r.status }, r.n);
    },
  });
  new Gauge({
    name: 'stockist_refunds',
    help: 'Refunds by state',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      this.reset();
      for (const r of await stored.refundsByStatus()) this.set({ status: r.status }, r.n);
    },
  });
  new Gauge({
    name: 'stockist_refund_pending_oldest_age_seconds',
    help: 'Age of the oldest pending refund (0 when none)',
    registers: [registry],
    async collect() {
      this.set(await stored.oldestPendingRefundAgeSeconds());
    },
  });
  new Gauge({
    name: 'stockist_refunds_pending_over_sla',
    help: 'Pending refunds older than REFUND_SLA_HOURS',
    registers: [registry],
    async collect() {
      this.set(await stored.pendingRefundsOverSla());
    },
  });
  new Gauge({
    name: 'stockist_refunds_manual_review',
    help: 'Pending refunds the worker gave up on after REFUND_MAX_ATTEMPTS failed attempts; they wait for the operator (GET /admin/v1/refunds?manualReview=true)',
    registers: [registry],
    async collect() {
      this.set(await stored.pendingRefundsIn('manual_review'));
    },
  });
  new Gauge({
    name: 'stockist_refunds_retrying',
    help: 'Pending refunds whose last decision attempt failed and that the worker will try again (lastError in GET /admin/v1/refunds)',
    registers: [registry],
    async collect() {
      this.set(await stored.pendingRefundsIn('retrying'));
    },
  });
  new Gauge({
    name: 'stockist_stock_rows',
    help: 'Stock rows (SKU × warehouse)',
    registers: [registry],
    async collect() {
      this.set(await stored.stockRowCount());
    },
  });

  // Backups (SPEC §17) from the runs table, so every process reports the same whichever one ran
  // the backup (the lease picks any worker, or the API process a staff member asked). A scrape
  // collects every metric at once (prom-client's Promise.all): the three below share one read.
  let backupsRead: ReturnType<typeof stored.backupStats> | null = null;
  const backupsNow = () =>
    (backupsRead ??= stored.backupStats().finally(() => {
      backupsRead = null;
    }));
  new Gauge({
    name: 'stockist_backup_last_success_timestamp_seconds',
    help: 'When the newest successful backup (taken, verified, stored) finished, as a Unix time; 0 when none has',
    registers: [registry],
    async collect() {
      const s = await backupsNow();
      this.set(s.lastSuccessAt === null ? 0 : s.lastSuccessAt / 1000);
    },
  });
  new Gauge({
    name: 'stockist_backup_last_duration_seconds',
    help: 'How long the newest successful backup took, from taking the lease to the archive stored; 0 when none has',
    registers: [registry],
    async collect() {
      const s = await backupsNow();
      this.set(s.lastDurationMs === null ? 0 : s.lastDurationMs / 1000);
    },
  });
  new Counter({
    name: 'stockist_backup_failures_total',
    help: 'Backups that failed (taking, verifying or uploading the archive); each is logged at error level with its reason',
    registers: [registry],
    async collect() {
      const s = await backupsNow();
      this.reset();
      this.inc(s.failures);
    },
  });

  // Installed on the root instance, so the hook observes every route of the app.
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ method: request.method, route, status: String(reply.statusCode) });
    latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  app.register(async (scoped) => {
    requireAdmin(scoped, adminApiKey);
    scoped.get('/metrics', { config: { envelope: false } }, async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    });
  });
}
