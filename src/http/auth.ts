import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import { forbidden, unauthorized } from '../domain/errors.ts';
import { secretsEqual } from '../domain/secrets.ts';
import { authenticate, type Principal } from '../services/merchants.service.ts';
import type { Store } from '../store/db.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function bearerToken(request: FastifyRequest): string | null {
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

/** Merchant routes: a live token of this environment, an active merchant and the route's scope. */
export function requireMerchant(app: FastifyInstance, config: Config, store: Store) {
  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request) => {
    const principal = await authenticate(store.db, config.env, bearerToken(request), Date.now());
    const scope = request.routeOptions.config?.scope;
    if (scope && !principal.scopes.has(scope)) throw forbidden(`this token lacks the ${scope} scope`);
    request.principal = principal;
  });
}
