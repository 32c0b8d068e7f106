import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { httpsRequired } from '../domain/errors.ts';

/** One year; browsers (and careful HTTP clients) then never try plain HTTP for this host. */
export const HSTS = 'max-age=31536000';

/** Probes from a load balancer arrive over plain HTTP without X-Forwarded-Proto; they carry no data. */
const PLAIN_HTTP_ALLOWED = new Set(['/healthz', '/readyz']);

/**
 * SPEC §2.5. With TLS on, every response carries HSTS. Behind a proxy (TRUST_PROXY=1), the last
 * `X-Forwarded-Proto` entry (the one our proxy added) says how the client connected: https gets
 * HSTS, and in production anything else is refused with 403/40301 before authentication, so a
 * token sent in clear is at least never accepted. (The config check makes TRUST_PROXY=1 mandatory
 * in production with TLS=off.)
 */
export function installHttpsPolicy(app: FastifyInstance, config: Config) {
  const enforce = config.env === 'production' && !config.tls;
  app.addHook('onRequest', async (request, reply) => {
    // Scheme names are case-insensitive (RFC 3986 §3.1): `HTTPS` from a proxy is https.
    const https = config.tls || (config.trustProxy && request.protocol?.toLowerCase() === 'https');
    if (https) {
      reply.header('Strict-Transport-Security', HSTS);
      return;
    }
    if (enforce && !PLAIN_HTTP_ALLOWED.has(request.url.split('?')[0])) throw httpsRequired();
  });
}
