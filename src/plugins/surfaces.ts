import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/time.ts';
import type { HostResolver } from '../domain/webhook-url.ts';
import { requireAdmin, requireMerchant } from '../http/auth.ts';
import { merchantBodyLimits } from '../http/limits.ts';
import { installMetrics } from '../http/metrics.ts';
import { MERCHANT_PREFIX } from '../http/merchant-routes.ts';
import { installMerchantBodyBudget, installMerchantRateLimit } from '../http/rate-limit.ts';
import { adminAccountRoutes } from '../http/routes/admin/accounts.ts';
import { adminAuditRoutes } from '../http/routes/admin/audit.ts';
import { adminCatalogRoutes } from '../http/routes/admin/catalog.ts';
import { adminClaimRoutes } from '../http/routes/admin/claims.ts';
import { adminFulfillmentRoutes } from '../http/routes/admin/fulfillment.ts';
import { adminMerchantRoutes } from '../http/routes/admin/merchants.ts';
import { adminOrderRoutes } from '../http/routes/admin/orders.ts';
import { adminWebhookRoutes } from '../http/routes/admin/webhooks.ts';
import { docsRoutes } from '../http/routes/docs.ts';
import { healthRoutes } from '../http/routes/health.ts';
import { accountRoutes } from '../http/routes/merchant/account.ts';
import { catalogRoutes } from '../http/routes/merchant/catalog.ts';
import { claimRoutes } from '../http/routes/merchant/claims.ts';
import { orderRoutes } from '../http/routes/merchant/orders.ts';
import { refundRoutes } from '../http/routes/merchant/refunds.ts';
import { stockChangesRoutes } from '../http/routes/merchant/stock-changes.ts';
import { stockRoutes } from '../http/routes/merchant/stocks.ts';
import { webhookRoutes } from '../http/routes/merchant/webhooks.ts';
import { oauthTokenRoutes } from '../http/routes/oauth/token.ts';
import { sdkRoutes } from '../http/routes/sdk.ts';
import { installUsageRecording } from '../http/usage.ts';
import type { BackupService } from '../services/backup-runs.service.ts';
import { clearTokensOnWrite } from '../services/merchants.service.ts';
import { StatementBuilds } from '../services/statement-builds.ts';
import type { Store } from '../store/db.ts';
import { CONSOLE_PREFIX } from '../web/console/console-routes.ts';
import { consolePlugin } from '../web/console/console.plugin.ts';
import { MANAGER_PREFIX } from '../web/manager/manager-routes.ts';
import { managerPlugin } from '../web/manager/manager.plugin.ts';
import { PLUGIN } from './foundation.ts';

/**
 * What each listener serves, as named plugins: each declares the plugins whose hooks and
 * decorations it relies on, so Fastify refuses to start when one is registered out of order. The
 * routes themselves live in their own (encapsulated) plugins under a prefix.
 */

/** The JSON APIs answer in the envelope and refuse what the request rules refuse. */
const API_BASE = [PLUGIN.envelope, PLUGIN.requestRules];

export const healthPlugin = fp(
  async (app: FastifyInstance, { store }: { store: Store }) => {
    await app.register(healthRoutes, { store });
  },
  { name: PLUGIN.health, fastify: '5.x', dependencies: API_BASE },
);

export const metricsPlugin = fp(
  async (app: FastifyInstance, opts: { store: Store; config: Config; adminApiKey: string }) => {
    installMetrics(app, opts);
  },
  { name: PLUGIN.metrics, fastify: '5.x', dependencies: API_BASE },
);

/** The operator API under /admin/v1: the operator key, and every write drops cached token lookups. */
export const operatorApiPlugin = fp(
  async (app: FastifyInstance, { store, config, adminApiKey, now }: { store: Store; config: Config; adminApiKey: string; now?: Clock }) => {
    const dropTokensOnWrite = clearTokensOnWrite(app.tokenCache);
    await app.register(
      async (admin) => {
        requireAdmin(admin, adminApiKey);
        admin.addHook('onSend', dropTokensOnWrite);
        await admin.register(adminCatalogRoutes, { store, adminApiKey });
        await admin.register(adminMerchantRoutes, { store, config, adminApiKey, now });
        await admin.register(adminAccountRoutes, { store, config, adminApiKey });
        await admin.register(adminOrderRoutes, { store });
        await admin.register(adminFulfillmentRoutes, { store, config, adminApiKey });
        await admin.register(adminClaimRoutes, { store, config, adminApiKey });
        await admin.register(adminAuditRoutes, { store });
        await admin.register(adminWebhookRoutes, { store, adminApiKey });
      },
      { prefix: '/admin/v1' },
    );
  },
  { name: PLUGIN.operatorApi, fastify: '5.x', dependencies: [...API_BASE, PLUGIN.credentials], decorators: { fastify: ['tokenCache'] } },
);

/** The operator console (SPEC §14) goes where the operator API goes: ADMIN_PORT when set. */
export const consoleFrontEndPlugin = fp(
  async (app: FastifyInstance, { store, config, now, backups }: { store: Store; config: Config; now: Clock; backups: BackupService }) => {
    await app.register(consolePlugin, { prefix: CONSOLE_PREFIX, config, store, buckets: app.rateBuckets, tokens: app.tokenCache, now, backups });
  },
  { name: PLUGIN.console, fastify: '5.x', dependencies: [PLUGIN.rateBuckets, PLUGIN.credentials], decorators: { fastify: ['rateBuckets', 'tokenCache'] } },
);

/** The merchant API under /v1: a merchant token, its usage counted, its rate limits and body budget. */
export const merchantApiPlugin = fp(
  async (app: FastifyInstance, { store, config, now, resolveHost }: { store: Store; config: Config; now?: Clock; resolveHost?: HostResolver }) => {
    const { tokenCache, tokenLastUsed, rateBuckets, usageRecorder } = app;
    await app.register(
      async (merchant) => {
        requireMerchant(merchant, config, store, tokenCache, now, tokenLastUsed);
        if (usageRecorder) installUsageRecording(merchant, usageRecorder);
        merchant.addHook('onRoute', merchantBodyLimits(config));
        // After the auth hook: only authenticated requests draw from (their merchant's) buckets.
        await installMerchantRateLimit(merchant, config, rateBuckets);
        installMerchantBodyBudget(merchant, config, rateBuckets);
        await merchant.register(stockRoutes, { store });
        await merchant.register(orderRoutes, { store, config });
        await merchant.register(refundRoutes, { store });
        await merchant.register(stockChangesRoutes, { store });
        await merchant.register(catalogRoutes, { store });
        await merchant.register(webhookRoutes, { store, config, resolve: resolveHost });
        await merchant.register(accountRoutes, { store, config });
        await merchant.register(claimRoutes, { store, config });
      },
      { prefix: MERCHANT_PREFIX },
    );
  },
  {
    name: PLUGIN.merchantApi,
    fastify: '5.x',
    dependencies: [...API_BASE, PLUGIN.credentials, PLUGIN.rateBuckets, PLUGIN.usage],
    decorators: { fastify: ['tokenCache', 'tokenLastUsed', 'rateBuckets', 'usageRecorder'], request: ['errorCode'] },
  },
);

/** The token endpoint: outside the merchant API (no bearer token, no envelope, its own error format). */
export const oauthPlugin = fp(
  async (app: FastifyInstance, { store, config, now }: { store: Store; config: Config; now?: Clock }) => {
    const dropTokensOnWrite = clearTokensOnWrite(app.tokenCache);
    const buckets = app.rateBuckets;
    await app.register(
      async (oauth) => {
        oauth.addHook('onSend', dropTokensOnWrite);
        await oauth.register(oauthTokenRoutes, { store, config, buckets, now });
      },
      { prefix: `${MERCHANT_PREFIX}/oauth` },
    );
  },
  {
    name: PLUGIN.oauth,
    fastify: '5.x',
    dependencies: [...API_BASE, PLUGIN.credentials, PLUGIN.rateBuckets],
    decorators: { fastify: ['tokenCache', 'rateBuckets'] },
  },
);

/** The merchant's business manager (SPEC §14) goes where the merchant API goes: the public port. */
export const managerFrontEndPlugin = fp(
  async (app: FastifyInstance, { store, config, now, resolveHost }: { store: Store; config: Config; now: Clock; resolveHost?: HostResolver }) => {
    const statements = new StatementBuilds({ threads: config.statementThreads, perMerchant: config.statementsPerMerchant, queued: config.statementQueue });
    app.addHook('onClose', () => statements.close());
    await app.register(managerPlugin, {
      prefix: MANAGER_PREFIX,
      config,
      store,
      buckets: app.rateBuckets,
      tokens: app.tokenCache,
      now,
      resolveHost,
      statements,
    });
  },
  {
    name: PLUGIN.manager,
    fastify: '5.x',
    // The Usage page flushes the usage counters before reading them.
    dependencies: [PLUGIN.rateBuckets, PLUGIN.credentials, PLUGIN.usage],
    decorators: { fastify: ['rateBuckets', 'tokenCache', 'usageRecorder'] },
  },
);

/** The typed client's package, with the sandbox's self-signed certificate when there is one. */
export const sdkPlugin = fp(
  async (app: FastifyInstance, { certificate }: { certificate: string | null }) => {
    await app.register(sdkRoutes, { certificate });
  },
  { name: PLUGIN.sdk, fastify: '5.x', dependencies: API_BASE },
);

/**
 * The references (SPEC §11), generated from the routes as registered: after the APIs they describe.
 * `apis` names those plugins, so a reference registered before its API fails at start-up.
 */
export const docsPlugin = (apis: string[]) =>
  fp(
    async (app: FastifyInstance, { merchant, admin }: { merchant: boolean; admin: boolean }) => {
      await app.register(docsRoutes, { routes: app.routeList, merchant, admin });
    },
    { name: PLUGIN.docs, fastify: '5.x', dependencies: [...API_BASE, PLUGIN.routeList, ...apis], decorators: { fastify: ['routeList'] } },
  );
