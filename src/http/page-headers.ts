import type { FastifyInstance } from 'fastify';

/** Every asset is ours: no inline script or style, no framing, forms post only here. */
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * The security headers of every page and file a browser is given (both web front ends, /sdk):
 * the CSP, no framing, no content sniffing (a file is what its Content-Type says), and the
 * referrer kept to this origin. Caching is each route's own.
 */
export const PAGE_SECURITY_HEADERS = {
  'Content-Security-Policy': PAGE_CSP,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
} as const;

/**
 * Adds PAGE_SECURITY_HEADERS to every answer of `app` (an encapsulated plugin: its routes only). A
 * route that set its own Content-Security-Policy keeps it: the console's evidence files carry the
 * operator download's `sandbox` policy, stricter than a page's.
 */
export function installPageSecurityHeaders(app: FastifyInstance) {
  app.addHook('onSend', async (_request, reply, payload) => {
    const own = reply.getHeader('content-security-policy');
    reply.headers(PAGE_SECURITY_HEADERS);
    if (own !== undefined) reply.header('content-security-policy', own);
    return payload;
  });
}
