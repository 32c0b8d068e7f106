import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import { requireAdmin, requireMerchant } from './http/auth.ts';
import { installEnvelope, requestIdFor } from './http/envelope.ts';
import { installErrorHandling } from './http/errors.ts';
import { adminCatalogRoutes } from './http/routes/admin/catalog.ts';
import { adminMerchantRoutes } from './http/routes/admin/merchants.ts';
import { healthRoutes } from './http/routes/health.ts';
import { catalogRoutes } from './http/routes/merchant/catalog.ts';
import { stockChangesRoutes } from './http/routes/merchant/stock-changes.ts';
import { stockRoutes } from './http/routes/merchant/stocks.ts';
import { validatorCompiler } from './http/validation.ts';
import type { Store } from './store/db.ts';

export interface AppDeps {
  config: Config;
  store: Store;
  /** The resolved operator key (from the environment or the data directory). */
  adminApiKey: string;
}

export interface BuildOptions {
  /** Which APIs this listener serves; ADMIN_PORT splits them over two listeners. */
  surfaces?: { merchant: boolean; admin: boolean };
  https?: { key: string | Buffer; cert: string | Buffer } | null;
  logger?: FastifyServerOptions['logger'];
}

/** The published samples repeat the base segment; serve `/openapi/openapi/...` as `/openapi/...`. */
export function rewriteAlias(url: string): string {
  return url.startsWith('/openapi/openapi/') || url === '/openapi/openapi' ? url.slice('/openapi'.length) : url;
}

export async function buildApp(deps: AppDeps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const { config, store } = deps;
  const surfaces = options.surfaces ?? { merchant: true, admin: true };
  const app = Fastify({
    ...(options.https ? { https: options.https } : {}),
    logger: options.logger ?? {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization'], censor: '[redacted]' },
    },
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    genReqId: requestIdFor,
    requestIdHeader: false,
    rewriteUrl: (req) => rewriteAlias(req.url ?? '/'),
    return503OnClosing: true,
    // Slow or stalled clients must not hold connections forever.
    requestTimeout: 30_000,
    connectionTimeout: 60_000,
    keepAliveTimeout: 5_000,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler());
  // Only JSON bodies are accepted; anything else is 415 (SPEC §1).
  app.removeContentTypeParser(['text/plain']);
  installEnvelope(app);
  installErrorHandling(app);

  await app.register(healthRoutes, { store });
  if (surfaces.admin) {
    await app.register(
      async (admin) => {
        requireAdmin(admin, deps.adminApiKey);
        await admin.register(adminCatalogRoutes, { store });
        await admin.register(adminMerchantRoutes, { store, config });
      },
      { prefix: '/admin/v1' },
    );
  }
  if (surfaces.merchant) {
    await app.register(
      async (merchant) => {
        requireMerchant(merchant, config, store);
        await merchant.register(stockRoutes, { store });
        await merchant.register(stockChangesRoutes, { store });
        await merchant.register(catalogRoutes, { store });
      },
      { prefix: '/openapi' },
    );
  }
  return app;
}
