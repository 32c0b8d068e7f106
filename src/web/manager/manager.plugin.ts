import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config.ts';
import { MAX_CLAIM_EVIDENCE, MAX_EVIDENCE_BYTES } from '../../domain/claims.ts';
import { mayManage, type ManagerPermission } from '../../domain/merchant-users.ts';
import type { Clock } from '../../domain/time.ts';
import type { HostResolver } from '../../domain/webhook-url.ts';
import type { BucketStore } from '../../http/rate-limit.ts';
import { merchantUserActor, resumeSession, type ManagerUser } from '../../services/manager-sessions.service.ts';
import { clearTokensOnWrite, type TokenCache } from '../../services/merchants.service.ts';
import type { Db, Store } from '../../store/db.ts';
import { forMerchant, type MerchantScope } from '../../store/tenancy.ts';
import { htmxAsset, installWebFrontEnd, publicOrigin, sharedAssets, uplotAssets } from '../foundation.ts';
import { webResource } from '../resources.ts';
import { MANAGER_COOKIE, MANAGER_PREFIX, MANAGER_SIGN_IN_PATH, managerRouteFor } from './manager-routes.ts';
import type { ManagerPageContext, ManagerNavLink } from './pages/context.ts';
import type { StatementBuilds } from '../../services/statement-builds.ts';
import { MANAGER_PAGES } from './pages/index.ts';
import { managerChrome } from './present.ts';
import { MANAGER_VIEWS, type ManagerViews } from './views.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in business manager user (null: none, or not a /manager route). */
    managerUser: ManagerUser | null;
  }
}

export interface ManagerOptions {
  config: Config;
  store: Store;
  buckets: BucketStore;
  /** The merchant API's token cache: dropped after every change made here (revocations take effect at once). */
  tokens: TokenCache;
  now: Clock;
  resolveHost?: HostResolver;
  /** Where statements are made (the PDF worker pool and the per-merchant limit). */
  statements: StatementBuilds;
}

/** The design system's stylesheet and scripts (src/web/shared/assets/) serve the manager as they serve the console: one look, one copy. */
const assetFiles = () => ({
  'htmx.min.js': htmxAsset(),
  ...sharedAssets('manager'),
  ...uplotAssets(),
  'usage-chart.js': { file: webResource('manager', 'assets', 'usage-chart.js'), type: 'text/javascript; charset=utf-8' },
  'claim-upload.js': { file: webResource('manager', 'assets', 'claim-upload.js'), type: 'text/javascript; charset=utf-8' },
});

const NAV: readonly ManagerNavLink[] = MANAGER_PAGES.flatMap((p) => p.nav);

/** The pages a user may open, once signed in completely (no code or enrolment still due). */
const navFor = (user: ManagerUser | null) =>
  user && user.stage === 'complete' && !user.mustEnrol ? NAV.filter((l) => mayManage(user.role, l.permission)) : [];

/** Where a signed-in user must go first: the TOTP code of a half-done sign-in, or the enrolment the team requires. */
function detour(user: ManagerUser, permission: string) {
  if (permission === 'pending') return user.stage === 'complete' ? { to: MANAGER_PREFIX, reason: 'you are signed in already' } : null;
  if (permission === 'session') return null;
  if (user.stage === 'password') return { to: `${MANAGER_PREFIX}/sign-in/code`, reason: 'enter the code from your authenticator app first' };
  if (user.mustEnrol && permission !== 'account:self')
    return { to: `${MANAGER_PREFIX}/two-factor`, reason: 'your team requires two-factor sign-in: turn it on for your account first' };
  return null;
}

/**
 * The merchant's business manager (SPEC §14, issue 20) on the public port: the same foundation as
 * the console (src/web/foundation.ts), its own users, sessions and role table. Pages: pages/.
 */
export const managerPlugin: FastifyPluginAsyncTypebox<ManagerOptions> = async (app, { config, store, buckets, tokens, now, resolveHost, statements }) => {
  const { db } = store;
  const sessionLimits = { idleMs: config.managerSessionIdleMinutes * 60_000, maxMs: config.managerSessionMaxHours * 3_600_000 };
  app.decorateRequest('managerUser', null);
  const { page, signedIn, forms } = await installWebFrontEnd<ManagerUser, ManagerViews>(app, config, {
    name: 'business manager',
    views: MANAGER_VIEWS,
    assets: assetFiles(),
    cookie: MANAGER_COOKIE,
    signInPath: MANAGER_SIGN_IN_PATH,
    home: MANAGER_PREFIX,
    db,
    now,
    routeFor: managerRouteFor,
    tableName: 'MANAGER_ROUTES (src/web/manager/manager-routes.ts)',
    resume: (sessionId) => resumeSession(db, sessionId, sessionLimits, now()),
    getUser: (request) => request.managerUser,
    setUser: (request, user) => {
      request.managerUser = user;
    },
    detour,
    refusal: (user, permission) =>
      permission === 'pending' || permission === 'session' || mayManage(user.role, permission as ManagerPermission)
        ? null
        : `the ${user.role} role may not do this (${permission})`,
    chrome: (user, request) => managerChrome(user, navFor(user), request.url.split('?')[0], config.env),
    // The claim form sent without script carries its files: at most 6 of 5 MB, and the fields.
    multipartLimit: MAX_CLAIM_EVIDENCE * MAX_EVIDENCE_BYTES + 256 * 1024,
  });
  // Credentials change here too (revoke a token or a client): every write drops cached token lookups before its answer goes out.
  app.addHook('onSend', clearTokensOnWrite(tokens));

  const scopes = new WeakMap<object, MerchantScope<Db>>();
  const context: ManagerPageContext = {
    config,
    store,
    buckets,
    now,
    sessionLimits,
    page,
    forms,
    resolveHost,
    statements,
    origin: (request) => publicOrigin(config, request),
    user: signedIn,
    merchant: (request) => {
      let scope = scopes.get(request);
      if (!scope) scopes.set(request, (scope = forMerchant(store.db, signedIn(request).merchantId)));
      return scope;
    },
    actor: (request) => ({ ...merchantUserActor(signedIn(request), request.id), formKey: forms.formKey(request) }),
  };
  for (const managerPage of MANAGER_PAGES) await app.register(managerPage.routes, context);
};
