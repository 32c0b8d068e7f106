import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config.ts';
import { can, type Permission } from '../../domain/staff.ts';
import type { Clock } from '../../domain/time.ts';
import type { BucketStore } from '../../http/rate-limit.ts';
import { resumeSession, staffActor, type ConsoleUser } from '../../services/console-sessions.service.ts';
import type { BackupService } from '../../services/backup-runs.service.ts';
import { clearTokensOnWrite, type TokenCache } from '../../services/merchants.service.ts';
import type { Store } from '../../store/db.ts';
import { htmxAsset, installWebFrontEnd, sharedAssets, uplotAssets } from '../foundation.ts';
import { webResource } from '../resources.ts';
import { CONSOLE_COOKIE, CONSOLE_PREFIX, SIGN_IN_PATH, consoleRouteFor } from './console-routes.ts';
import type { ConsolePageContext, NavLink } from './pages/context.ts';
import { CONSOLE_PAGES } from './pages/index.ts';
import { consoleChrome } from './present.ts';
import { CONSOLE_VIEWS, type ConsoleViews } from './views.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in staff member of a console request (null: none, or not a console route). */
    consoleUser: ConsoleUser | null;
  }
  interface FastifyContextConfig {
    /** The permission a console route needs (set from CONSOLE_ROUTES). */
    permission?: Permission | 'public';
    /** The route's form applies once: it must carry a one-time form key (web/foundation.ts). */
    once?: boolean;
  }
}

export interface ConsoleOptions {
  config: Config;
  store: Store;
  /** The rate-limit buckets of the app (in process, or Redis): sign-in attempts draw on them. */
  buckets: BucketStore;
  /** The process's cache of token lookups: cleared by every console write (revoke a token, disable a merchant). */
  tokens: TokenCache;
  now: Clock;
  /** Scheduled and requested backups, for the Backups page. */
  backups: BackupService;
}

/** Files the pages load; nothing else is served, and nothing from a CDN. */
const assetFiles = () => ({
  'htmx.min.js': htmxAsset(),
  ...sharedAssets('console'),
  ...uplotAssets(),
  'console-chart.js': { file: webResource('console', 'assets', 'console-chart.js'), type: 'text/javascript; charset=utf-8' },
});

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
export const consolePlugin: FastifyPluginAsyncTypebox<ConsoleOptions> = async (app, { config, store, buckets, tokens, now, backups }) => {
  const { db } = store;
  const sessionLimits = { idleMs: config.consoleSessionIdleMinutes * 60_000, maxMs: config.consoleSessionMaxHours * 3_600_000 };
  app.decorateRequest('consoleUser', null);
  const { page, signedIn, forms } = await installWebFrontEnd<ConsoleUser, ConsoleViews>(app, config, {
    name: 'console',
    views: CONSOLE_VIEWS,
    assets: assetFiles(),
    cookie: CONSOLE_COOKIE,
    signInPath: SIGN_IN_PATH,
    home: CONSOLE_PREFIX,
    db,
    now,
    routeFor: consoleRouteFor,
    tableName: 'CONSOLE_ROUTES (src/web/console/console-routes.ts)',
    resume: (sessionId) => resumeSession(db, sessionId, sessionLimits, now()),
    getUser: (request) => request.consoleUser,
    setUser: (request, user) => {
      request.consoleUser = user;
    },
    refusal: (user, permission) => (can(user.role, permission as Permission) ? null : `the ${user.role} role may not do this (${permission})`),
    chrome: (user, request) => consoleChrome(user, user ? navFor(user) : [], request.url.split('?')[0]),
  });

  // A token revoked or a merchant disabled here is refused from the next request on (issue 29, 3).
  app.addHook('onSend', clearTokensOnWrite(tokens));

  const context: ConsolePageContext = {
    config,
    store,
    buckets,
    backups,
    now,
    sessionLimits,
    page,
    forms,
    user: signedIn,
    actor: (request) => ({ ...staffActor(signedIn(request), request.id), formKey: forms.formKey(request) }),
  };
  for (const consolePage of CONSOLE_PAGES) await app.register(consolePage.routes, context);
};
