import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { Config } from '../config.ts';
import { forbidden, unauthorized } from '../domain/errors.ts';
import { secretsEqual } from '../domain/secrets.ts';
import { authenticate, type LastUsedRecorder, type Principal, type TokenCache } from '../services/merchants.service.ts';
import { merchantRouteFor } from './merchant-routes.ts';
import type { Clock } from '../domain/time.ts';
import type { Db, Store } from '../store/db.ts';
import type { MerchantScope } from '../store/tenancy.ts';
import { scopeOfToken } from '../store/edge-scopes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /** The authenticated merchant's scope on the database, made once here: services take it, never the number. */
    merchant: MerchantScope<Db> | null;
  }
}

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** Operator routes: `Authorization: Bearer <ADMIN_API_KEY>`. */
export function requireAdmin(app: FastifyInstance, adminApiKey: string) {
  app.addHook('onRequest', async (request) => {
    const token = bearerToken(request);
    if (!token) throw unauthorized('missing bearer token: send Authorization: Bearer <ADMIN_API_KEY>');
    if (!secretsEqual(token, adminApiKey)) throw unauthorized('wrong admin API key');
  });
}

/**
 * Every merchant route must be in the scope table (src/http/merchant-routes.ts), which sets its
 * scope: a route cannot be added without deciding who may call it. A route that also names a scope
 * in its own config must agree with the table.
 */
function scopeFromTable(route: RouteOptions) {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  for (const method of methods) {
    const entry = merchantRouteFor(method, route.url ?? '');
    if (!entry) throw new Error(`merchant route ${method} ${route.url} is not in MERCHANT_ROUTES (src/http/merchant-routes.ts)`);
    const configured = (route.config as { scope?: string } | undefined)?.scope;
    if (configured && configured !== entry.scope) {
      throw new Error(`merchant route ${method} ${route.url}: config.scope ${configured} differs from the table's ${entry.scope}`);
    }
    route.config = { ...(route.config ?? {}), scope: entry.scope } as typeof route.config;
  }
}

/** Merchant routes: a live token of this environment, an active merchant and the route's scope. */
export function requireMerchant(app: FastifyInstance, config: Config, store: Store, tokens?: TokenCache, now: Clock = Date.now, lastUsed?: LastUsedRecorder) {
  app.decorateRequest('principal', null);
  app.decorateRequest('merchant', null);
  app.addHook('onRoute', scopeFromTable);
  app.addHook('onRequest', async (request) => {
    const principal = await authenticate(store.db, config.env, bearerToken(request), now(), tokens, lastUsed);
    // Set before the scope check: a refused scope is still this merchant's request (usage counters).
    request.principal = principal;
    request.merchant = scopeOfToken(store.db, principal);
    const scope = request.routeOptions.config?.scope;
    if (scope && !principal.scopes.has(scope)) throw forbidden(`this token lacks the ${scope} scope`);
  });
}
