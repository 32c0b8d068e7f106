import { createRequire } from 'node:module';
import fs from 'node:fs/promises';
import path from 'node:path';
import formbody from '@fastify/formbody';
import fastifyView from '@fastify/view';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { Eta } from 'eta';
import type { Config } from '../../config.ts';
import { AppError, forbidden, notFound, unauthorized } from '../../domain/errors.ts';
import { hashSecret, secretsEqual } from '../../domain/secrets.ts';
import { can, emailKey, SIGN_IN_LIMITS, type Permission } from '../../domain/staff.ts';
import type { Clock } from '../../domain/time.ts';
import type { BucketStore } from '../../http/rate-limit.ts';
import { AssetParams, ConsolePageQuery, ConsoleRefundParams, CsrfForm, RefundDecisionForm, SignInForm } from '../../schemas/console.ts';
import { resumeSession, signIn, signOut, staffActor, type ConsoleUser } from '../../services/console-sessions.service.ts';
import { dashboard } from '../../services/dashboard.service.ts';
import { listRefundsForOperator, reviewRefund } from '../../services/refunds.service.ts';
import type { Store } from '../../store/db.ts';
import {
  clearSessionCookie,
  cookieName,
  installHtmlErrors,
  installPageHeaders,
  isSecure,
  readCookie,
  sameOriginProblem,
  setSessionCookie,
} from '../foundation.ts';
import { webResource } from '../resources.ts';
import { CONSOLE_PREFIX, consoleRouteFor } from './console-routes.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in staff member of a console request (null: none, or not a console route). */
    consoleUser: ConsoleUser | null;
  }
  interface FastifyContextConfig {
    /** The permission a console route needs (set from CONSOLE_ROUTES). */
    permission?: Permission | 'public';
  }
}

export interface ConsoleOptions {
  config: Config;
  store: Store;
  /** The rate-limit buckets of the app (in process, or Redis): sign-in attempts draw on them. */
  buckets: BucketStore;
  now: Clock;
}

const COOKIE = 'stockist_console';
const SIGN_IN = `${CONSOLE_PREFIX}/sign-in`;

/** Files the pages load; nothing else is served, and nothing from a CDN. */
function assetFiles(): Record<string, { file: string; type: string }> {
  const htmx = path.join(path.dirname(createRequire(import.meta.url).resolve('htmx.org/package.json')), 'dist/htmx.min.js');
  return {
    'htmx.min.js': { file: htmx, type: 'text/javascript; charset=utf-8' },
    'console.js': { file: webResource('console', 'assets', 'console.js'), type: 'text/javascript; charset=utf-8' },
    'console.css': { file: webResource('console', 'assets', 'console.css'), type: 'text/css; charset=utf-8' },
  };
}

/** Every console route must be in CONSOLE_ROUTES, which sets the permission it needs. */
function permissionFromTable(route: RouteOptions) {
  for (const method of [route.method].flat()) {
    const entry = consoleRouteFor(method, route.url ?? '');
    if (!entry) throw new Error(`console route ${method} ${route.url} is not in CONSOLE_ROUTES (src/web/console/console-routes.ts)`);
    route.config = { ...(route.config ?? {}), permission: entry.permission, envelope: false } as typeof route.config;
  }
}

const isFormBody = (request: FastifyRequest) => {
  const type = request.headers['content-type'];
  const hasBody = request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] ?? '0') !== '0';
  if (!hasBody) return true;
  return typeof type === 'string' && /^application\/x-www-form-urlencoded\s*(;|$)/i.test(type);
};

/** Seconds until a bucket that refused has a token again. */
const retryAfter = (tokens: number, limits: { capacity: number; refillMs: number }) =>
  Math.max(1, Math.ceil(((1 - tokens) * limits.refillMs) / limits.capacity / 1000));

/**
 * The operator console (SPEC §14), server-rendered with Eta, htmx for in-place updates. Sessions,
 * CSRF and roles: docs/decisions.md, "Console sessions and CSRF".
 */
export const consolePlugin: FastifyPluginAsyncTypebox<ConsoleOptions> = async (app, { config, store, buckets, now }) => {
  const { db } = store;
  const limits = { idleMs: config.consoleSessionIdleMinutes * 60_000, maxMs: config.consoleSessionMaxHours * 3_600_000 };
  const assets = assetFiles();
  const assetCache = new Map<string, Buffer>();

  app.addHook('onRoute', permissionFromTable);
  await app.register(formbody);
  await app.register(fastifyView, { engine: { eta: new Eta({ autoEscape: true, cache: true }) }, root: webResource('console', 'views'), production: true });
  app.decorateRequest('consoleUser', null);
  installPageHeaders(app);

  const page = (reply: FastifyReply, status: number, view: string, data: Record<string, unknown> = {}) => {
    const user = reply.request.consoleUser;
    const nav = user ? navFor(user) : [];
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .view(view, { user, nav, csrf: user?.csrfSecret ?? null, path: reply.request.url.split('?')[0], ...data });
  };
  installHtmlErrors(app, (reply, status, message) => page(reply, status, 'error', { title: `Error ${status}`, status, message }));

  app.addHook('onRequest', async (request) => {
    const secure = isSecure(config, request);
    if (request.method === 'POST') {
      // Before the body is read or the session looked up: a cross-site form post goes no further.
      const problem = sameOriginProblem(request, secure);
      if (problem) throw forbidden(`refused: this request did not come from a console page (${problem})`);
      if (!isFormBody(request)) throw new AppError(415, 41500, 'console forms are sent as application/x-www-form-urlencoded');
    }
    const sessionId = readCookie(request, cookieName(COOKIE, secure));
    if (sessionId) request.consoleUser = await resumeSession(db, sessionId, limits, now());
  });

  // After parsing (the form's token is in the body), before the schema: who may do this, and is it really them.
  app.addHook('preValidation', async (request, reply) => {
    const permission = request.routeOptions.config?.permission;
    if (permission === undefined || permission === 'public') return;
    const user = request.consoleUser;
    if (!user) {
      if (request.method === 'GET' || request.method === 'HEAD') return reply.redirect(SIGN_IN, 303);
      reply.header('HX-Redirect', SIGN_IN);
      throw unauthorized('your session has ended; sign in again');
    }
    if (!can(user.role, permission)) throw forbidden(`the ${user.role} role may not do this (${permission})`);
    if (request.method === 'POST') {
      const sent = (request.body as { _csrf?: unknown } | undefined)?._csrf ?? request.headers['x-csrf-token'];
      if (typeof sent !== 'string' || !secretsEqual(sent, user.csrfSecret))
        throw forbidden('refused: the form’s security token is missing or out of date; reload the page and try again');
    }
  });

  app.get('/assets/:file', { schema: { params: AssetParams } }, async (request, reply) => {
    const asset = Object.hasOwn(assets, request.params.file) ? assets[request.params.file] : undefined;
    if (!asset) throw notFound(`asset ${request.params.file}`);
    let content = assetCache.get(request.params.file);
    if (!content) assetCache.set(request.params.file, (content = await fs.readFile(asset.file)));
    return reply.type(asset.type).header('Cache-Control', 'public, max-age=3600').send(content);
  });

  app.get('/sign-in', async (request, reply) => {
    if (request.consoleUser) return reply.redirect(CONSOLE_PREFIX, 303);
    return page(reply, 200, 'sign-in', { title: 'Sign in', email: '', error: null });
  });

  app.post('/sign-in', { schema: { body: SignInForm } }, async (request, reply) => {
    const { email, password } = request.body;
    // Counted before the password is checked (successes too), per account and per address.
    const account = await buckets.take(`console:acct:${hashSecret(emailKey(email)).slice(0, 32)}`, SIGN_IN_LIMITS.account, 1);
    const address = await buckets.take(`console:addr:${request.ip}`, SIGN_IN_LIMITS.address, 1);
    if (!account.allowed || !address.allowed) {
      const wait = Math.max(
        account.allowed ? 0 : retryAfter(account.tokens, SIGN_IN_LIMITS.account),
        address.allowed ? 0 : retryAfter(address.tokens, SIGN_IN_LIMITS.address),
      );
      request.log.warn({ email: emailKey(email), address: request.ip }, 'console sign-in limited');
      reply.header('Retry-After', String(wait));
      return page(reply, 429, 'sign-in', { title: 'Sign in', email, error: `Too many sign-in attempts; try again in ${wait} s.` });
    }
    const started = await signIn(db, { email, password, address: request.ip, requestId: request.id }, limits, now());
    if (!started) {
      request.log.warn({ email: emailKey(email), address: request.ip }, 'console sign-in failed');
      return page(reply, 401, 'sign-in', { title: 'Sign in', email, error: 'Wrong email or password, or the account is disabled.' });
    }
    const secure = isSecure(config, request);
    setSessionCookie(reply, cookieName(COOKIE, secure), started.sessionId, secure, Math.floor(limits.maxMs / 1000));
    return reply.redirect(CONSOLE_PREFIX, 303);
  });

  app.post('/sign-out', { schema: { body: CsrfForm } }, async (request, reply) => {
    await signOut(db, request.consoleUser!, request.id, now());
    clearSessionCookie(reply, cookieName(COOKIE, isSecure(config, request)), isSecure(config, request));
    return reply.redirect(SIGN_IN, 303);
  });

  app.get('', async (_request, reply) => page(reply, 200, 'dashboard', { title: 'Dashboard', stats: await dashboard(db, config, now()) }));

  app.get('/refunds', { schema: { querystring: ConsolePageQuery } }, async (request, reply) => {
    const pageNumber = Number(request.query.page ?? 1);
    const refunds = await listRefundsForOperator(db, config, 'pending_review', pageNumber, 50, now());
    return page(reply, 200, 'refunds', { title: 'Refund review', refunds, canReview: can(request.consoleUser!.role, 'refunds:review') });
  });

  for (const verb of ['approve', 'reject'] as const) {
    app.post(`/refunds/:refundNo/${verb}`, { schema: { params: ConsoleRefundParams, body: RefundDecisionForm } }, async (request, reply) => {
      const decision = verb === 'approve' ? { approve: true as const } : { approve: false as const, reason: request.body.reason || 'rejected by the operator' };
      const refund = await reviewRefund(db, staffActor(request.consoleUser!, request.id), request.params.refundNo, decision);
      // htmx swaps the row in place; without JavaScript the form posts and the queue reloads.
      if (request.headers['hx-request'] === 'true') return page(reply, 200, 'refund-decided', { refund });
      return reply.redirect(`${CONSOLE_PREFIX}/refunds`, 303);
    });
  }
};

/** The pages a role may open, for the navigation bar. */
function navFor(user: ConsoleUser) {
  const links: { href: string; label: string; permission: Permission }[] = [
    { href: CONSOLE_PREFIX, label: 'Dashboard', permission: 'dashboard:read' },
    { href: `${CONSOLE_PREFIX}/refunds`, label: 'Refund review', permission: 'refunds:read' },
  ];
  return links.filter((l) => can(user.role, l.permission));
}
