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
import { secretsEqual } from '../../domain/secrets.ts';
import { can, type Permission } from '../../domain/staff.ts';
import type { Clock } from '../../domain/time.ts';
import type { BucketStore } from '../../http/rate-limit.ts';
import { AssetParams } from '../../schemas/console.ts';
import { resumeSession, staffActor, type ConsoleUser } from '../../services/console-sessions.service.ts';
import type { Store } from '../../store/db.ts';
import { cookieName, installHtmlErrors, installPageHeaders, isSecure, readCookie, sameOriginProblem } from '../foundation.ts';
import { webResource } from '../resources.ts';
import { CONSOLE_COOKIE, SIGN_IN_PATH, consoleRouteFor } from './console-routes.ts';
import type { ConsolePageContext, NavLink } from './pages/context.ts';
import { CONSOLE_PAGES } from './pages/index.ts';

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

/** The links of every page module, in CONSOLE_PAGES order. */
const NAV: readonly NavLink[] = CONSOLE_PAGES.flatMap((p) => p.nav);

/** The pages a role may open, for the navigation bar. */
const navFor = (user: ConsoleUser) => NAV.filter((l) => can(user.role, l.permission));

/**
 * The operator console (SPEC §14), server-rendered with Eta, htmx for in-place updates. Sessions,
 * CSRF and roles: docs/decisions.md, "Console sessions and CSRF". This plugin holds what every
 * page shares (session, CSRF, the permission table, assets, errors as pages); the pages themselves
 * are the modules of pages/ (pages/index.ts lists them).
 */
export const consolePlugin: FastifyPluginAsyncTypebox<ConsoleOptions> = async (app, { config, store, buckets, now }) => {
  const { db } = store;
  const sessionLimits = { idleMs: config.consoleSessionIdleMinutes * 60_000, maxMs: config.consoleSessionMaxHours * 3_600_000 };
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
    const sessionId = readCookie(request, cookieName(CONSOLE_COOKIE, secure));
    if (sessionId) request.consoleUser = await resumeSession(db, sessionId, sessionLimits, now());
  });

  // After parsing (the form's token is in the body), before the schema: who may do this, and is it really them.
  app.addHook('preValidation', async (request, reply) => {
    const permission = request.routeOptions.config?.permission;
    if (permission === undefined || permission === 'public') return;
    const user = request.consoleUser;
    if (!user) {
      if (request.method === 'GET' || request.method === 'HEAD') return reply.redirect(SIGN_IN_PATH, 303);
      reply.header('HX-Redirect', SIGN_IN_PATH);
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

  const signedIn = (request: FastifyRequest) => {
    // The preValidation hook has refused every request without a session on a non-public route.
    if (!request.consoleUser) throw unauthorized('your session has ended; sign in again');
    return request.consoleUser;
  };
  const context: ConsolePageContext = {
    config,
    store,
    buckets,
    now,
    sessionLimits,
    page,
    user: signedIn,
    actor: (request) => staffActor(signedIn(request), request.id),
  };
  for (const consolePage of CONSOLE_PAGES) await app.register(consolePage.routes, context);
};
