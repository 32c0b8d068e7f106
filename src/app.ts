import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions, type RouteOptions } from 'fastify';
import type { DestinationStream } from 'pino';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import { requireAdmin, requireMerchant } from './http/auth.ts';
import { installEnvelope, requestIdFor } from './http/envelope.ts';
import { frameworkErrors, installErrorHandling } from './http/errors.ts';
import { clientErrorHandler, installJsonParser, installOverloadShedding, merchantBodyLimits, serverLimits } from './http/limits.ts';
import { installMetrics } from './http/metrics.ts';
import { installHttpsPolicy, trustProxyOption } from './http/https-policy.ts';
import { MERCHANT_PREFIX } from './http/merchant-routes.ts';
import { installMerchantBodyBudget, installMerchantRateLimit, memoryBuckets, redisBuckets } from './http/rate-limit.ts';
import type { Clock } from './domain/time.ts';
import { adminCatalogRoutes } from './http/routes/admin/catalog.ts';
import { adminMerchantRoutes } from './http/routes/admin/merchants.ts';
import { adminAccountRoutes } from './http/routes/admin/accounts.ts';
import { accountRoutes } from './http/routes/merchant/account.ts';
import { adminOrderRoutes } from './http/routes/admin/orders.ts';
import { adminFulfillmentRoutes } from './http/routes/admin/fulfillment.ts';
import { adminWebhookRoutes } from './http/routes/admin/webhooks.ts';
import { adminAuditRoutes } from './http/routes/admin/audit.ts';
import { docsRoutes } from './http/routes/docs.ts';
import { sdkRoutes } from './http/routes/sdk.ts';
import { healthRoutes } from './http/routes/health.ts';
import { oauthTokenRoutes } from './http/routes/oauth/token.ts';
import { catalogRoutes } from './http/routes/merchant/catalog.ts';
import { stockChangesRoutes } from './http/routes/merchant/stock-changes.ts';
import { stockRoutes } from './http/routes/merchant/stocks.ts';
import { orderRoutes } from './http/routes/merchant/orders.ts';
import { refundRoutes } from './http/routes/merchant/refunds.ts';
import { webhookRoutes } from './http/routes/merchant/webhooks.ts';
import type { HostResolver } from './domain/webhook-url.ts';
import { installTextRule, lazySerializers, validatorCompiler } from './http/validation.ts';
import { consolePlugin } from './web/console/console.plugin.ts';
import { webFrameworkError } from './web/foundation.ts';
import { CONSOLE_PREFIX } from './web/console/console-routes.ts';
import { MANAGER_PREFIX } from './web/manager/manager-routes.ts';
import { managerPlugin } from './web/manager/manager.plugin.ts';
import { clearTokensOnWrite, LastUsedRecorder, TokenCache } from './services/merchants.service.ts';
import { UsageRecorder } from './services/usage.service.ts';
import { installUsageRecording } from './http/usage.ts';
import type { Store } from './store/db.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's usage counters (null: it serves no merchant routes, or USAGE_FLUSH_MS=0). */
    usageRecorder: UsageRecorder | null;
  }
}

export interface AppDeps {
  config: Config;
  store: Store;
  /** The resolved operator key (from the environment or the data directory). */
  adminApiKey: string;
}

export interface BuildOptions {
  /** Which APIs this listener serves; ADMIN_PORT splits them over two listeners. */
  surfaces?: { merchant: boolean; admin: boolean; metrics?: boolean };
  https?: { key: string | Buffer; cert: string | Buffer } | null;
  logger?: FastifyServerOptions['logger'];
  /** Where the JSON log lines go (default stdout); the usual redaction still applies. */
  logStream?: DestinationStream;
  /**
   * The clock of the in-process rate-limit buckets (and of Redis ones, instead of Redis's) and of
   * merchant token checks (expiry, the token cache's lifetime); tests only.
   */
  now?: Clock;
  /** Called for every route registered, before the server starts; tests use it to list the routes. */
  onRoute?: (route: RouteOptions) => void;
  /** Compile every route's validators and serializers while building (default: on each route's first use). */
  eagerSchemas?: boolean;
  /** DNS for webhook URL checks (default: the system resolver); tests map names to addresses. */
  resolveHost?: HostResolver;
}

/** The published samples repeat the base segment; serve `/openapi/openapi/...` as `/openapi/...`. */
function rewriteAlias(url: string): string {
  return url.startsWith('/openapi/openapi/') || url === '/openapi/openapi' ? url.slice('/openapi'.length) : url;
}

export async function buildApp(deps: AppDeps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { config, store } = deps;
  const surfaces = options.surfaces ?? { merchant: true, admin: true };
  const app = Fastify({
    ...(options.https ? { https: { ...options.https, ...serverLimits(config) } } : { http: serverLimits(config) }),
    clientErrorHandler,
    // Under /console a malformed URL is answered with a page; everywhere else with the envelope.
    frameworkErrors: (error, request, reply) =>
      request.url?.startsWith(`${CONSOLE_PREFIX}/`) || request.url?.startsWith(`${MANAGER_PREFIX}/`)
        ? webFrameworkError(error, request, reply)
        : frameworkErrors(error, request, reply),
    logger: options.logger ?? {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
      // Fastify's request serializer, with a business manager invitation's one-time token cut from the URL.
      serializers: {
        req: (req: FastifyRequest) => ({
          method: req.method,
          url: req.url.replace(/^(\/manager\/invitations\/)[^/?#]+/, '$1[redacted]'),
          version: [req.headers?.['accept-version']].flat()[0],
          host: req.host,
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        }),
      },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    bodyLimit: config.bodyLimitBytes,
    trustProxy: trustProxyOption(config.trustProxy),
    genReqId: requestIdFor,
    requestIdHeader: false,
    rewriteUrl: (req) => rewriteAlias(req.url ?? '/'),
    return503OnClosing: true,
    // Slow or stalled clients must not hold connections forever.
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.connectionTimeoutMs,
    keepAliveTimeout: 5_000,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers(options.eagerSchemas) } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  if (options.onRoute) app.addHook('onRoute', options.onRoute);
  // The OpenAPI document is generated from the routes as registered (GET /docs/openapi.json).
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => void routes.push(route));
  app.setValidatorCompiler(validatorCompiler({ eager: options.eagerSchemas }));
  // Only JSON bodies are accepted; anything else is 415 (SPEC §1).
  app.removeContentTypeParser(['text/plain']);
  installJsonParser(app, config.maxJsonDepth);
  installEnvelope(app);
  installErrorHandling(app);
  installHttpsPolicy(app, config);
  installOverloadShedding(app, config);
  installTextRule(app);
  // Past MAX_CONNECTIONS Node closes new sockets at once rather than let them exhaust descriptors.
  if (config.maxConnections > 0) app.server.maxConnections = config.maxConnections;

  // Rate-limit buckets: Redis when configured, so every instance draws on one budget per merchant.
  const buckets = config.redisUrl
    ? await redisBuckets(config.redisUrl, { now: options.now, onError: (error) => app.log.warn({ err: error }, 'redis (rate limits) unavailable') })
    : memoryBuckets(options.now);
  app.addHook('onClose', () => buckets.close());

  // Credentials change through the operator API, the console, the business manager, the token
  // endpoint and the CLI. Any write through this process drops cached token lookups before its
  // answer is sent (clearTokensOnWrite), so a revocation holds from the next request; the CLI and
  // other instances are other processes: there it holds within TOKEN_CACHE_SECONDS.
  const tokens = new TokenCache(config.tokenCacheSeconds * 1000);
  const lastUsed = new LastUsedRecorder(store.db, (error) => app.log.warn({ err: error }, 'could not record a token’s last use'));
  const dropTokensOnWrite = clearTokensOnWrite(tokens);
  await app.register(healthRoutes, { store });
  if (surfaces.metrics ?? surfaces.admin) installMetrics(app, { store, config, adminApiKey: deps.adminApiKey });
  if (surfaces.admin) {
    await app.register(
      async (admin) => {
        requireAdmin(admin, deps.adminApiKey);
        admin.addHook('onSend', dropTokensOnWrite);
        await admin.register(adminCatalogRoutes, { store, adminApiKey: deps.adminApiKey });
        await admin.register(adminMerchantRoutes, { store, config, adminApiKey: deps.adminApiKey, now: options.now });
        await admin.register(adminAccountRoutes, { store, config, adminApiKey: deps.adminApiKey });
        await admin.register(adminOrderRoutes, { store });
        await admin.register(adminFulfillmentRoutes, { store, config, adminApiKey: deps.adminApiKey });
        await admin.register(adminAuditRoutes, { store });
        await admin.register(adminWebhookRoutes, { store, adminApiKey: deps.adminApiKey });
      },
      { prefix: '/admin/v1' },
    );
    // The operator console (SPEC §14) goes where the operator API goes: ADMIN_PORT when set.
    await app.register(consolePlugin, { prefix: CONSOLE_PREFIX, config, store, buckets, tokens, now: options.now ?? Date.now });
  }
  // Per-merchant usage: counted in memory, added to the database every USAGE_FLUSH_MS and at close.
  const usage = surfaces.merchant && config.usageFlushMs > 0 ? new UsageRecorder(store, config.env, app.log, options.now) : null;
  app.decorate('usageRecorder', usage);
  if (usage) {
    usage.start(config.usageFlushMs);
    app.addHook('onClose', () => usage.stop());
  }
  if (surfaces.merchant) {
    await app.register(
      async (merchant) => {
        requireMerchant(merchant, config, store, tokens, options.now, lastUsed);
        if (usage) installUsageRecording(merchant, usage);
        merchant.addHook('onRoute', merchantBodyLimits(config));
        // After the auth hook: only authenticated requests draw from (their merchant's) buckets.
        await installMerchantRateLimit(merchant, config, buckets);
        installMerchantBodyBudget(merchant, config, buckets);
        await merchant.register(stockRoutes, { store });
        await merchant.register(orderRoutes, { store, config });
        await merchant.register(refundRoutes, { store });
        await merchant.register(stockChangesRoutes, { store });
        await merchant.register(catalogRoutes, { store });
        await merchant.register(webhookRoutes, { store, config, resolve: options.resolveHost });
        await merchant.register(accountRoutes, { store, config });
      },
      { prefix: MERCHANT_PREFIX },
    );
    // Outside the merchant plugin: no bearer token, no envelope, its own error format.
    await app.register(
      async (oauth) => {
        oauth.addHook('onSend', dropTokensOnWrite);
        await oauth.register(oauthTokenRoutes, { store, config, buckets, now: options.now });
      },
      { prefix: `${MERCHANT_PREFIX}/oauth` },
    );
    // The merchant's business manager (SPEC §14) goes where the merchant API goes: the public port.
    await app.register(managerPlugin, {
      prefix: MANAGER_PREFIX,
      config,
      store,
      buckets,
      tokens,
      now: options.now ?? Date.now,
      resolveHost: options.resolveHost,
    });
  }
  // The typed client's package where the merchant API is served; with the certificate when this
  // server made its own (TLS on, no TLS_CERT_FILE): the sandbox's self-signed one.
  if (surfaces.merchant) {
    const selfSigned = options.https && config.tls && !config.tlsCertFile ? String(options.https.cert) : null;
    await app.register(sdkRoutes, { certificate: selfSigned });
  }
  // The merchants' reference where the merchant API is served, the operator's where the operator API is.
  if (surfaces.merchant || surfaces.admin) await app.register(docsRoutes, { routes, merchant: surfaces.merchant, admin: surfaces.admin });
  return app;
}
