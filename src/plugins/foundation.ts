import fp from 'fastify-plugin';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/time.ts';
import { installEnvelope } from '../http/envelope.ts';
import { installErrorHandling } from '../http/errors.ts';
import { installHttpsPolicy } from '../http/https-policy.ts';
import { installJsonParser, installOverloadShedding } from '../http/limits.ts';
import { type BucketStore, memoryBuckets, redisBuckets } from '../http/rate-limit.ts';
import { installTextRule, validatorCompiler } from '../http/validation.ts';
import { LastUsedRecorder, TokenCache } from '../services/merchants.service.ts';
import { UsageRecorder } from '../services/usage.service.ts';
import type { Store } from '../store/db.ts';

/**
 * The app's parts are Fastify plugins with a name and the names they need (fastify-plugin's
 * `dependencies`, `decorators`): registering one before what it needs fails at start-up
 * (FST_ERR_PLUGIN_DEPENDENCY_NOT_REGISTERED) instead of misbehaving. These are the shared ones,
 * not encapsulated: what they install and decorate holds for every plugin registered after them.
 */
export const PLUGIN = {
  routeList: 'stockist-route-list',
  envelope: 'stockist-envelope',
  requestRules: 'stockist-request-rules',
  rateBuckets: 'stockist-rate-buckets',
  credentials: 'stockist-credentials',
  usage: 'stockist-usage',
  health: 'stockist-health',
  metrics: 'stockist-metrics',
  operatorApi: 'stockist-operator-api',
  console: 'stockist-console',
  merchantApi: 'stockist-merchant-api',
  oauth: 'stockist-oauth',
  manager: 'stockist-manager',
  sdk: 'stockist-sdk',
  docs: 'stockist-docs',
} as const;

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered after the route list plugin, in order; the OpenAPI documents are generated from them. */
    routeList: RouteOptions[];
    /** The rate-limit buckets (in process, or Redis): merchant requests, sign-ins and the token endpoint draw on them. */
    rateBuckets: BucketStore;
    /** The process's cache of merchant token lookups; every credential write drops it (clearTokensOnWrite). */
    tokenCache: TokenCache;
    /** Records a merchant token's last use, off the request path. */
    tokenLastUsed: LastUsedRecorder;
    /** This app's usage counters (null: it serves no merchant routes, or USAGE_FLUSH_MS=0). */
    usageRecorder: UsageRecorder | null;
  }
}

/** Collects the routes as they are registered: first, so it sees every route. */
export const routeListPlugin = fp(
  async (app: FastifyInstance) => {
    const routes: RouteOptions[] = [];
    app.decorate('routeList', routes);
    app.addHook('onRoute', (route) => void routes.push(route));
  },
  { name: PLUGIN.routeList, fastify: '5.x' },
);

/** Every answer's shape: the request id header, the success envelope, and every failure as the error envelope (SPEC §1). */
export const envelopePlugin = fp(
  async (app: FastifyInstance) => {
    installEnvelope(app);
    installErrorHandling(app);
  },
  { name: PLUGIN.envelope, fastify: '5.x' },
);

/** What a request must be before a route sees it: JSON only, bounded, UTF-8 text, over HTTPS where required, not while overloaded. */
export const requestRulesPlugin = fp(
  async (app: FastifyInstance, { config, eagerSchemas }: { config: Config; eagerSchemas?: boolean }) => {
    app.setValidatorCompiler(validatorCompiler({ eager: eagerSchemas }));
    // Only JSON bodies are accepted; anything else is 415 (SPEC §1).
    app.removeContentTypeParser(['text/plain']);
    installJsonParser(app, config.maxJsonDepth);
    installHttpsPolicy(app, config);
    installOverloadShedding(app, config);
    installTextRule(app);
    // Past MAX_CONNECTIONS Node closes new sockets at once rather than let them exhaust descriptors.
    if (config.maxConnections > 0) app.server.maxConnections = config.maxConnections;
  },
  { name: PLUGIN.requestRules, fastify: '5.x', dependencies: [PLUGIN.envelope], decorators: { request: ['errorCode'] } },
);

/**
 * The other processes of `serve --processes N` (runtime/cluster.ts), as one process's apps see
 * them: the rate budget they share, and the word that a credential changed.
 */
export interface ProcessGroup {
  /** The rate-limit buckets, kept by the primary for every process of the group. */
  buckets: BucketStore;
  /** A credential changed here: the other processes drop their cached token lookups. */
  announceTokensCleared(): void;
  /** Calls `listener` when another process changed a credential. */
  onTokensCleared(listener: () => void): void;
}

/**
 * Rate-limit buckets: Redis when configured, so every instance draws on one budget per merchant;
 * else the group's (kept by the primary of `serve --processes N`), else this process's own.
 */
export const rateBucketsPlugin = fp(
  async (app: FastifyInstance, { config, now, group }: { config: Config; now?: Clock; group?: ProcessGroup }) => {
    const buckets = config.redisUrl
      ? await redisBuckets(config.redisUrl, { now, onError: (error) => app.log.warn({ err: error }, 'redis (rate limits) unavailable') })
      : (group?.buckets ?? memoryBuckets(now));
    app.decorate('rateBuckets', buckets);
    app.addHook('onClose', () => buckets.close());
  },
  { name: PLUGIN.rateBuckets, fastify: '5.x' },
);

/**
 * Credentials change through the operator API, the console, the business manager, the token
 * endpoint and the CLI. Any write through this process drops cached token lookups before its
 * answer is sent (clearTokensOnWrite), so a revocation holds from the next request; the CLI and
 * other instances are other processes: there it holds within TOKEN_CACHE_SECONDS, except among
 * the processes of one `serve --processes N`, which tell each other at once.
 */
export const credentialsPlugin = fp(
  async (app: FastifyInstance, { config, store, group }: { config: Config; store: Store; group?: ProcessGroup }) => {
    const tokens = new TokenCache(config.tokenCacheSeconds * 1000, undefined, group?.announceTokensCleared);
    // Another process of the group changed a credential: its word drops this cache too.
    group?.onTokensCleared(() => tokens.drop());
    app.decorate('tokenCache', tokens);
    app.decorate('tokenLastUsed', new LastUsedRecorder(store.db, (error) => app.log.warn({ err: error }, 'could not record a token’s last use')));
  },
  { name: PLUGIN.credentials, fastify: '5.x' },
);

/** Per-merchant usage: counted in memory, added to the database every USAGE_FLUSH_MS and at close. */
export const usagePlugin = fp(
  async (app: FastifyInstance, { config, store, enabled, now }: { config: Config; store: Store; enabled: boolean; now?: Clock }) => {
    const usage = enabled && config.usageFlushMs > 0 ? new UsageRecorder(store, config.env, app.log, now) : null;
    app.decorate('usageRecorder', usage);
    if (usage) {
      usage.start(config.usageFlushMs);
      app.addHook('onClose', () => usage.stop());
    }
  },
  { name: PLUGIN.usage, fastify: '5.x' },
);
