import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions, type RouteOptions } from 'fastify';
import type { DestinationStream } from 'pino';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import { requestIdFor } from './http/envelope.ts';
import { frameworkErrors } from './http/errors.ts';
import { clientErrorHandler, serverLimits } from './http/limits.ts';
import { trustProxyOption } from './http/https-policy.ts';
import { redactSecretPaths } from './domain/secrets.ts';
import type { Clock } from './domain/time.ts';
import type { HostResolver } from './domain/webhook-url.ts';
import { lazySerializers } from './http/validation.ts';
import { webFrameworkError } from './web/foundation.ts';
import { CONSOLE_PREFIX } from './web/console/console-routes.ts';
import { MANAGER_PREFIX } from './web/manager/manager-routes.ts';
import type { Store } from './store/db.ts';
import { archiveEngine, BackupService } from './services/backup-runs.service.ts';
import {
  PLUGIN,
  type ProcessGroup,
  credentialsPlugin,
  envelopePlugin,
  rateBucketsPlugin,
  requestRulesPlugin,
  routeListPlugin,
  usagePlugin,
} from './plugins/foundation.ts';
import {
  consoleFrontEndPlugin,
  docsPlugin,
  healthPlugin,
  managerFrontEndPlugin,
  merchantApiPlugin,
  metricsPlugin,
  oauthPlugin,
  operatorApiPlugin,
  sdkPlugin,
} from './plugins/surfaces.ts';

export interface AppDeps {
  config: Config;
  store: Store;
  /** The resolved operator key (from the environment or the data directory). */
  adminApiKey: string;
  /**
   * Scheduled and requested backups (the console's Backups page), shared by the listeners of one
   * server (startServer makes it). Absent: this app makes its own with the real archive maker,
   * logging through the app and stopped when it closes.
   */
  backups?: BackupService;
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
  /** The other processes of `serve --processes N`: the shared rate budget and the token-cache word. */
  group?: ProcessGroup;
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
      // Fastify's request serializer, with the one-time token of a secret path (a reset or
      // invitation link: domain/secrets.ts, SECRET_PATHS) cut from the URL.
      serializers: {
        req: (req: FastifyRequest) => ({
          method: req.method,
          url: redactSecretPaths(req.url),
          version: [req.headers?.['accept-version']].flat()[0],
          host: req.host,
          remoteAddress: req.ip,
          remotePort: req.socket?.remotePort,
        }),
      },
      // The same rule over every line as written, for what quotes a URL elsewhere: Fastify's "Route
      // GET:/… not found" and bad-URL messages, an error's message or stack, a Referer.
      hooks: { streamWrite: redactSecretPaths },
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
  let backups = deps.backups;
  if (!backups) {
    const own = new BackupService({ config, store, engine: archiveEngine(config, store), log: app.log });
    app.addHook('onClose', () => own.stop());
    backups = own;
  }
  // The parts, as named plugins that declare what they need (src/plugins/): Fastify checks the order.
  const now = options.now;
  await app.register(routeListPlugin);
  await app.register(envelopePlugin);
  await app.register(requestRulesPlugin, { config, eagerSchemas: options.eagerSchemas });
  await app.register(rateBucketsPlugin, { config, now, group: options.group });
  await app.register(credentialsPlugin, { config, store, group: options.group });
  await app.register(healthPlugin, { store });
  if (surfaces.metrics ?? surfaces.admin) await app.register(metricsPlugin, { store, config, adminApiKey: deps.adminApiKey });
  if (surfaces.admin) {
    await app.register(operatorApiPlugin, { store, config, adminApiKey: deps.adminApiKey, now });
    await app.register(consoleFrontEndPlugin, { store, config, now: now ?? Date.now, backups });
  }
  await app.register(usagePlugin, { config, store, enabled: surfaces.merchant, now });
  if (surfaces.merchant) {
    await app.register(merchantApiPlugin, { store, config, now, resolveHost: options.resolveHost });
    await app.register(oauthPlugin, { store, config, now });
    await app.register(managerFrontEndPlugin, { store, config, now: now ?? Date.now, resolveHost: options.resolveHost });
    // The typed client's package where the merchant API is served; with the certificate when this
    // server made its own (TLS on, no TLS_CERT_FILE): the sandbox's self-signed one.
    const selfSigned = options.https && config.tls && !config.tlsCertFile ? String(options.https.cert) : null;
    await app.register(sdkPlugin, { certificate: selfSigned });
  }
  // The merchants' reference where the merchant API is served, the operator's where the operator API is.
  if (surfaces.merchant || surfaces.admin) {
    const apis = [...(surfaces.merchant ? [PLUGIN.merchantApi] : []), ...(surfaces.admin ? [PLUGIN.operatorApi] : [])];
    await app.register(docsPlugin(apis), { merchant: surfaces.merchant, admin: surfaces.admin });
  }
  return app;
}
