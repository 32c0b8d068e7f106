import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { trustsProxy, type Config } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import { isStorageUnavailable } from '../store/faults.ts';

/**
 * What the web front ends share (SPEC §14): the session cookie, the same-origin check on every
 * state-changing request, the security headers of every page, and errors as pages rather than
 * JSON. The design is in docs/decisions.md, "Console sessions and CSRF".
 */

/** The client reached us over HTTPS: TLS here, or (behind TRUST_PROXY) the proxy says so. */
export const isSecure = (config: Config, request: FastifyRequest) =>
  config.tls || (trustsProxy(config.trustProxy) && request.protocol?.toLowerCase() === 'https');

/**
 * Under HTTPS the cookie is `__Host-…`: the browser then only accepts it Secure, for Path=/ and
 * without Domain, so no sibling subdomain or plain-HTTP page can plant or overwrite it.
 */
export const cookieName = (base: string, secure: boolean) => (secure ? `__Host-${base}` : base);

export function readCookie(request: FastifyRequest, name: string): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9]{1,128}$/.test(value) ? value : null;
    }
  }
  return null;
}

export function setSessionCookie(reply: FastifyReply, name: string, value: string, secure: boolean, maxAgeSeconds: number) {
  reply.header('Set-Cookie', `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`);
}

export function clearSessionCookie(reply: FastifyReply, name: string, secure: boolean) {
  reply.header('Set-Cookie', `${name}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`);
}

/**
 * A state-changing request must come from our own pages: the browser's `Origin` (or, where an old
 * browser sends none, `Referer`) must be this server's origin, and `Sec-Fetch-Site` must not say
 * cross-site. A request with neither header is refused: browsers send Origin on every POST.
 */
export function sameOriginProblem(request: FastifyRequest, secure: boolean): string | null {
  const fetchSite = request.headers['sec-fetch-site'];
  if (fetchSite === 'cross-site' || fetchSite === 'same-site') return `Sec-Fetch-Site is ${fetchSite}`;
  // request.host: the Host header, or behind TRUST_PROXY the proxy's X-Forwarded-Host (the name the browser used).
  const expected = `${secure ? 'https' : 'http'}://${request.host ?? ''}`.toLowerCase();
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== 'null') return origin.toLowerCase() === expected ? null : `Origin ${origin} is not ${expected}`;
  const referer = request.headers.referer;
  if (typeof referer === 'string') {
    try {
      return new URL(referer).origin.toLowerCase() === expected ? null : `Referer is not from ${expected}`;
    } catch {
      return 'Referer is not a URL';
    }
  }
  return 'neither Origin nor Referer was sent';
}

/** Every asset is ours: no inline script or style, no framing, forms post only here; pages are never cached. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function installPageHeaders(app: FastifyInstance) {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('Content-Security-Policy', CSP);
    reply.header('X-Frame-Options', 'DENY');
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'same-origin');
    if (!request.url.includes('/assets/')) reply.header('Cache-Control', 'no-store');
    return payload;
  });
}

export type ErrorPage = (reply: FastifyReply, status: number, message: string) => FastifyReply | Promise<FastifyReply>;

/** Failures inside a web front end are pages with the right status, not the API's JSON envelope. */
export function installHtmlErrors(app: FastifyInstance, page: ErrorPage) {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      if (error.headers) reply.headers(error.headers);
      const detail = error.errors?.length ? `: ${error.errors.map((e) => `${e.field} ${e.message}`).join('; ')}` : '';
      return page(reply, error.status, `${error.message}${detail}`);
    }
    if (error.validation) return page(reply, 400, `The form was not filled in as expected (${error.message}).`);
    if (isStorageUnavailable(error)) {
      request.log.error({ err: error }, 'storage unavailable');
      reply.header('Retry-After', '1');
      return page(reply, 503, 'Storage is unavailable; try again shortly.');
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) return page(reply, error.statusCode, error.message);
    request.log.error({ err: error }, 'unhandled error');
    return page(reply, 500, `Something went wrong on our side; quote request ${request.id} when reporting it.`);
  });
  app.setNotFoundHandler((request, reply) => page(reply, 404, `There is no page at ${request.url.split('?')[0]}.`));
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * Failures Fastify meets before routing (a URL that does not decode, a path parameter over the
 * limit) under a web front end's prefix: a plain page too, as no template engine is reached yet.
 */
export function webFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const status = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
  const message = status === 414 ? 'A part of the address is longer than the limit.' : 'The address is malformed.';
  return reply
    .code(status)
    .header('X-Request-Id', request.id)
    .header('Content-Security-Policy', CSP)
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Error ${status}</title></head><body><main><h1>Error ${status}</h1><p>${escapeHtml(message)}</p></main></body></html>\n`,
    );
}
