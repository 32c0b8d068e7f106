import type { FastifyInstance } from 'fastify';
import { trustsProxy, type Config, type TrustProxy } from '../config.ts';
import { httpsRequired } from '../domain/errors.ts';

/** One year; browsers (and careful HTTP clients) then never try plain HTTP for this host. */
export const HSTS = 'max-age=31536000';

/** Probes from a load balancer arrive over plain HTTP without X-Forwarded-Proto; they carry no data. */
const PLAIN_HTTP_ALLOWED = new Set(['/healthz', '/readyz']);

/**
 * TRUST_PROXY as Fastify's `trustProxy` option (SPEC §2.4). A hop count becomes a function trusting
 * the `hops` addresses nearest to us — the peer and then X-Forwarded-For from the right — because
 * Fastify 5 reads a bare number as "trust nothing". Either way `request.ip` is the address the
 * outermost trusted proxy saw, never an entry the client wrote to the left of it.
 */
export function trustProxyOption(trustProxy: TrustProxy): false | string[] | ((address: string, hop: number) => boolean) {
  if (Array.isArray(trustProxy)) return trustProxy.length > 0 ? trustProxy : false;
  const hops = trustProxy;
  return hops > 0 ? (_address, hop) => hop < hops : false;
}

/**
 * SPEC §2.5. With TLS on, every response carries HSTS. Behind a proxy (TRUST_PROXY), the last
 * `X-Forwarded-Proto` entry (the one the nearest proxy added) says how the client connected: https
 * gets HSTS, and in production anything else is refused with 403/40301 before authentication, so a
 * token sent in clear is at least never accepted. Fastify's `request.protocol` reads that entry
 * only when the connection comes from a trusted proxy (any peer for a hop count; a listed address
 * otherwise), so a client connecting directly cannot claim https. (The config check makes
 * TRUST_PROXY mandatory in production with TLS=off.)
 */
export function installHttpsPolicy(app: FastifyInstance, config: Config) {
  const enforce = config.env === 'production' && !config.tls;
  const behindProxy = trustsProxy(config.trustProxy);
  app.addHook('onRequest', async (request, reply) => {
    // Scheme names are case-insensitive (RFC 3986 §3.1): `HTTPS` from a proxy is https.
    const https = config.tls || (behindProxy && request.protocol?.toLowerCase() === 'https');
    if (https) {
      reply.header('Strict-Transport-Security', HSTS);
      return;
    }
    if (enforce && !PLAIN_HTTP_ALLOWED.has(request.url.split('?')[0])) throw httpsRequired();
  });
}
